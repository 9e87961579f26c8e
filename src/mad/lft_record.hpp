// LinearForwardingTableRecord, IBA 15.2.5.6 (72 bytes): one 64-LID block of a switch's
// linear forwarding table. The block is one SA component.
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |              LID              |           BlockNum            |  0
//  +-------------------------------+-------------------------------+
//  |                           Reserved                            |  4
//  +---------------------------------------------------------------+
//  |   LinearForwardingTable (64 bytes, linear_forwarding_table.hpp)  |  8..71
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/linear_forwarding_table.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct LinearForwardingTableRecord {
  Lid lid;
  uint16_t block_num = 0;
  LinearForwardingTable lft;

  friend bool operator==(const LinearForwardingTableRecord&,
                         const LinearForwardingTableRecord&) = default;
};

template <>
struct Layout<LinearForwardingTableRecord> {
  using T = LinearForwardingTableRecord;
  static constexpr std::string_view kName = "LinearForwardingTableRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kLinearForwardingTableRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          row("BlockNum", 16, 16, "BlockNum", Printer::kUint, member<&T::block_num>()),
          reserved<T>(32, 32),
      },
      embed<&T::lft, Layout<LinearForwardingTable>::kRows>(64, Components::kOne));
};
static_assert(wire_size<LinearForwardingTableRecord> == 72);

}  // namespace softib::mad
