// NodeRecord, IBA 15.2.5.2 (108 bytes; 112 with the padding to AttributeOffset): a node's
// LID, its NodeInfo and its NodeDescription. The table embeds theirs.
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |              LID              |           Reserved            |  0
//  +-------------------------------+-------------------------------+
//  |                   NodeInfo (40 bytes, node_info.hpp)          |  4
//  +---------------------------------------------------------------+
//  |            NodeDescription (64 bytes, node_description.hpp)   | 44..107
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/node_description.hpp"
#include "mad/node_info.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct NodeRecord {
  Lid lid;
  NodeInfo node_info;
  NodeDescription node_description;

  friend bool operator==(const NodeRecord&, const NodeRecord&) = default;
};

template <>
struct Layout<NodeRecord> {
  using T = NodeRecord;
  static constexpr std::string_view kName = "NodeRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kNodeRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          reserved<T>(16, 16),
      },
      embed<&T::node_info, Layout<NodeInfo>::kRows>(32),
      embed<&T::node_description, Layout<NodeDescription>::kRows>(352));
};
static_assert(wire_size<NodeRecord> == 108);

}  // namespace softib::mad
