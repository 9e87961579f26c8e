// Reliable Datagram Extended Transport Header, IBA 9.3.1 (4 bytes).
//
//  +---------------+-----------------------------------------------+
//  |     Resv8     |                    EECnxt                     |
//  +---------------+-----------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Rdeth {
  static constexpr std::string_view kName = "RDETH";
  static constexpr Field kResv8{"Resv8", 0, 8};
  static constexpr Field kEeCnxt{"EECnxt", 8, 24};
  static constexpr std::array kFields{kResv8, kEeCnxt};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 4 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint32_t ee_context = 0;  // 24 bits

  static Parsed<Rdeth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return Rdeth{get_u32(in, kEeCnxt)};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    std::fill_n(out.begin(), kLen, uint8_t{0});
    set(out, kEeCnxt, ee_context);
  }
  friend bool operator==(const Rdeth&, const Rdeth&) = default;
};

}  // namespace softib::wire
