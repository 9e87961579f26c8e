// Immediate Data Extended Transport Header, IBA 9.3.7 (4 bytes). The value is opaque to the
// transport: it travels in network order and verbs hand it to the consumer as __be32.
//
//  +---------------------------------------------------------------+
//  |                        Immediate Data                         |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct ImmDt {
  static constexpr std::string_view kName = "ImmDt";
  static constexpr Field kImmDt{"ImmDt", 0, 32};
  static constexpr std::array kFields{kImmDt};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 4 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint32_t imm = 0;  // the 4 bytes read big-endian

  static Parsed<ImmDt> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return ImmDt{get_aligned<kImmDt>(in)};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set_aligned<kImmDt>(out, imm);
  }
  friend bool operator==(const ImmDt&, const ImmDt&) = default;
};

}  // namespace softib::wire
