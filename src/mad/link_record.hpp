// LinkRecord, IBA 15.2.5.13 (6 bytes; 8 padded): one link, from a port to a port.
//
//   0               1               2               3
//  +-------------------------------+---------------+---------------+
//  |            FromLID            |   FromPort    |    ToPort     |  0
//  +-------------------------------+---------------+---------------+
//  |             ToLID             |                                  4
//  +-------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct LinkRecord {
  Lid from_lid;
  uint8_t from_port = 0;
  uint8_t to_port = 0;
  Lid to_lid;

  friend bool operator==(const LinkRecord&, const LinkRecord&) = default;
};

template <>
struct Layout<LinkRecord> {
  using T = LinkRecord;
  static constexpr std::string_view kName = "LinkRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kLinkRecord;
  static constexpr std::array kRows{
      row("FromLID", 0, 16, "FromLID", Printer::kUint, member<&T::from_lid>()),
      row("FromPort", 16, 8, "FromPort", Printer::kUint, member<&T::from_port>()),
      row("ToPort", 24, 8, "ToPort", Printer::kUint, member<&T::to_port>()),
      row("ToLID", 32, 16, "ToLID", Printer::kUint, member<&T::to_lid>()),
  };
};
static_assert(wire_size<LinkRecord> == 6);

}  // namespace softib::mad
