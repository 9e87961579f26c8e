// LinearForwardingTable, IBA 14.2.5.10 (64 bytes): the egress port for 64 consecutive LIDs
// (block number in the attribute modifier: LIDs 64 * block .. 64 * block + 63).
//
//   0               1               2               3
//  +---------------+---------------+---------------+---------------+
//  |    Port[0]    |    Port[1]    |    Port[2]    |    Port[3]    |  0
//  |                              ...                              |
//  |   Port[60]    |   Port[61]    |   Port[62]    |   Port[63]    | 60
//  +---------------+---------------+---------------+---------------+
#pragma once

#include <array>
#include <cstdint>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct LinearForwardingTable {
  static constexpr size_t kLidsPerBlock = 64;
  std::array<uint8_t, kLidsPerBlock> ports{};

  friend bool operator==(const LinearForwardingTable&, const LinearForwardingTable&) = default;
};

namespace detail {
inline constexpr auto kLftPortNames = indexed_names<LinearForwardingTable::kLidsPerBlock>("Port[", "]");
}  // namespace detail

template <>
struct Layout<LinearForwardingTable> {
  static constexpr std::string_view kName = "LinearForwardingTable";
  static constexpr SmpAttr kAttributeId = SmpAttr::kLinearForwardingTable;
  static constexpr std::array kRows = repeat<&LinearForwardingTable::ports>(
      detail::kLftPortNames, detail::kLftPortNames, 0, 8, 8, Printer::kUint);
};
static_assert(wire_size<LinearForwardingTable> == 64);

}  // namespace softib::mad
