// MulticastForwardingTableRecord, IBA 15.2.5.8 (72 bytes): one block (32 MLIDs from
// 0xC000 + 32 * BlockNum) of one position (ports 16 * Position .. +15) of a switch's
// MulticastForwardingTable. The component order is OpenSM's (IB_MFTR_COMPMASK_*): LID,
// Position, Reserved, BlockNum; the table is one component.
//
//   0               1               2               3
//  +-------------------------------+-------+-----+-----------------+
//  |              LID              |Positn.|Resv.|    BlockNum     |  0
//  +-------------------------------+-------+-----+-----------------+
//  |                           Reserved                            |  4
//  +---------------------------------------------------------------+
//  |  MulticastForwardingTable (64 bytes, multicast_forwarding_..)  |  8..71
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/multicast_forwarding_table.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct MulticastForwardingTableRecord {
  Lid lid;
  uint8_t position = 0;     // 4 bits
  uint16_t block_num = 0;   // 9 bits
  MulticastForwardingTable mft;

  friend bool operator==(const MulticastForwardingTableRecord&, const MulticastForwardingTableRecord&) = default;
};

template <>
struct Layout<MulticastForwardingTableRecord> {
  using T = MulticastForwardingTableRecord;
  static constexpr std::string_view kName = "MulticastForwardingTableRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kMulticastForwardingTableRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          row("Position", 16, 4, "Position", Printer::kUint, member<&T::position>()),
          reserved<T>(20, 3),
          row("BlockNum", 23, 9, "BlockNum", Printer::kUint, member<&T::block_num>()),
          reserved<T>(32, 32),
      },
      embed<&T::mft, Layout<MulticastForwardingTable>::kRows>(64, Components::kOne));
};
static_assert(wire_size<MulticastForwardingTableRecord> == 72);

}  // namespace softib::mad
