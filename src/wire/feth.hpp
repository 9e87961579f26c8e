// FLUSH Extended Transport Header, IBA 1.5 memory placement extensions (4 bytes): the
// placement type and selectivity level of an RC FLUSH.
//
//   0               1               2               3
//  +---------------------------------------------------+---+-------+
//  |                    Reserved (26)                  |SEL|  PLT  |
//  +---------------------------------------------------+---+-------+
// SEL = Selectivity Level, PLT = Placement Type.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Feth {
  static constexpr std::string_view kName = "FETH";
  static constexpr Field kReserved{"Reserved", 0, 26};
  static constexpr Field kSel{"SEL", 26, 2};
  static constexpr Field kPlt{"PLT", 28, 4};
  static constexpr std::array kFields{kReserved, kSel, kPlt};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 4 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint8_t selectivity_level = 0;  // 2 bits
  uint8_t placement_type = 0;     // 4 bits

  static Parsed<Feth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return Feth{get_u8(in, kSel), get_u8(in, kPlt)};
  }
  // REQUIRES: out.size() >= kLen, selectivity_level < 4, placement_type < 16.
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    std::fill_n(out.begin(), kLen, uint8_t{0});
    set(out, kSel, selectivity_level);
    set(out, kPlt, placement_type);
  }
  friend bool operator==(const Feth&, const Feth&) = default;
};

}  // namespace softib::wire
