// VLArbitrationTableRecord, IBA 15.2.5.9 (72 bytes): one block of a port's VL arbitration
// table (1: low priority 0-31, 2: high priority 0-31, 3: low 32-63, 4: high 32-63). The
// table is one SA component.
//
//   0               1               2               3
//  +-------------------------------+---------------+---------------+
//  |              LID              | OutputPortNum |   BlockNum    |  0
//  +-------------------------------+---------------+---------------+
//  |                           Reserved                            |  4
//  +---------------------------------------------------------------+
//  |      VLArbitrationTable (64 bytes, vl_arbitration_table.hpp)  |  8..71
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"
#include "mad/vl_arbitration_table.hpp"

namespace softib::mad {

struct VLArbitrationTableRecord {
  Lid lid;
  uint8_t output_port_num = 0;
  uint8_t block_num = 0;
  VLArbitrationTable table;

  friend bool operator==(const VLArbitrationTableRecord&, const VLArbitrationTableRecord&) = default;
};

template <>
struct Layout<VLArbitrationTableRecord> {
  using T = VLArbitrationTableRecord;
  static constexpr std::string_view kName = "VLArbitrationTableRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kVLArbitrationTableRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          row("OutputPortNum", 16, 8, "OutputPortNum", Printer::kUint, member<&T::output_port_num>()),
          row("BlockNum", 24, 8, "BlockNum", Printer::kUint, member<&T::block_num>()),
          reserved<T>(32, 32),
      },
      embed<&T::table, Layout<VLArbitrationTable>::kRows>(64, Components::kOne));
};
static_assert(wire_size<VLArbitrationTableRecord> == 72);

}  // namespace softib::mad
