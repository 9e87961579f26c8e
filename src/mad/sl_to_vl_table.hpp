// SLtoVLMappingTable, IBA 14.2.5.8 (8 bytes): the VL each SL maps to (for one input/output
// port pair of a switch, given by the attribute modifier).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-------+-------+-------+-------+-------+-------+-------+-------+
//  |SL0toVL|SL1toVL|SL2toVL|SL3toVL|SL4toVL|SL5toVL|SL6toVL|SL7toVL|  0
//  +-------+-------+-------+-------+-------+-------+-------+-------+
//  |SL8toVL|SL9toVL|  ...                                 |SL15toVL|  4
//  +-------+-------+-------+-------+-------+-------+-------+-------+
#pragma once

#include <array>
#include <cstdint>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct SLtoVLMappingTable {
  static constexpr size_t kSls = 16;
  std::array<uint8_t, kSls> vl_for_sl{};  // 4 bits each

  friend bool operator==(const SLtoVLMappingTable&, const SLtoVLMappingTable&) = default;
};

namespace detail {
inline constexpr auto kSlToVlNames = indexed_names<SLtoVLMappingTable::kSls>("SL", "toVL");
}  // namespace detail

template <>
struct Layout<SLtoVLMappingTable> {
  static constexpr std::string_view kName = "SLtoVLMappingTable";
  static constexpr SmpAttr kAttributeId = SmpAttr::kSLtoVLMappingTable;
  static constexpr DumpStyle kDumpStyle = DumpStyle::kSlToVl;
  static constexpr std::array kRows = repeat<&SLtoVLMappingTable::vl_for_sl>(
      detail::kSlToVlNames, detail::kSlToVlNames, 0, 4, 4, Printer::kUint);
};
static_assert(wire_size<SLtoVLMappingTable> == 8);

}  // namespace softib::mad
