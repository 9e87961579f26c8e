// MulticastForwardingTable, IBA 14.2.5.12 (64 bytes): PortMask bits (one per port of a
// 16-port position) for 32 consecutive multicast LIDs; the attribute modifier gives the
// block and the port position.
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |          PortMask[0]          |          PortMask[1]          |  0
//  |              ...              |              ...              |
//  |         PortMask[30]          |         PortMask[31]          | 60
//  +-------------------------------+-------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct MulticastForwardingTable {
  static constexpr size_t kLidsPerBlock = 32;
  std::array<uint16_t, kLidsPerBlock> port_masks{};

  friend bool operator==(const MulticastForwardingTable&, const MulticastForwardingTable&) = default;
};

namespace detail {
inline constexpr auto kMftMaskNames =
    indexed_names<MulticastForwardingTable::kLidsPerBlock>("PortMask[", "]");
}  // namespace detail

template <>
struct Layout<MulticastForwardingTable> {
  static constexpr std::string_view kName = "MulticastForwardingTable";
  static constexpr SmpAttr kAttributeId = SmpAttr::kMulticastForwardingTable;
  static constexpr std::array kRows = repeat<&MulticastForwardingTable::port_masks>(
      detail::kMftMaskNames, detail::kMftMaskNames, 0, 16, 16, Printer::kHex);
};
static_assert(wire_size<MulticastForwardingTable> == 64);

}  // namespace softib::mad
