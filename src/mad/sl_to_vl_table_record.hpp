// SLtoVLMappingTableRecord, IBA 15.2.5.4 (16 bytes): the SL to VL table a port uses for
// packets from InputPortNum out of OutputPortNum (switches; 0/0 for a CA or router port).
// The table is one SA component.
//
//   0               1               2               3
//  +-------------------------------+---------------+---------------+
//  |              LID              | InputPortNum  | OutputPortNum |  0
//  +-------------------------------+---------------+---------------+
//  |                           Reserved                            |  4
//  +---------------------------------------------------------------+
//  |            SLtoVLMappingTable (8 bytes, sl_to_vl_table.hpp)   |  8..15
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"
#include "mad/sl_to_vl_table.hpp"

namespace softib::mad {

struct SLtoVLMappingTableRecord {
  Lid lid;
  uint8_t input_port_num = 0;
  uint8_t output_port_num = 0;
  SLtoVLMappingTable table;

  friend bool operator==(const SLtoVLMappingTableRecord&, const SLtoVLMappingTableRecord&) = default;
};

template <>
struct Layout<SLtoVLMappingTableRecord> {
  using T = SLtoVLMappingTableRecord;
  static constexpr std::string_view kName = "SLtoVLMappingTableRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kSLtoVLMappingTableRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          row("InputPortNum", 16, 8, "InputPortNum", Printer::kUint, member<&T::input_port_num>()),
          row("OutputPortNum", 24, 8, "OutputPortNum", Printer::kUint, member<&T::output_port_num>()),
          reserved<T>(32, 32),
      },
      embed<&T::table, Layout<SLtoVLMappingTable>::kRows>(64, Components::kOne));
};
static_assert(wire_size<SLtoVLMappingTableRecord> == 16);

}  // namespace softib::mad
