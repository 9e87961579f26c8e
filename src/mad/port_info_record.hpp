// PortInfoRecord, IBA 15.2.5.3 (68 bytes; 72 padded): the PortInfo of one port of the
// node with EndportLID.
//
//   0               1               2               3
//  +-------------------------------+---------------+---------------+
//  |          EndportLID           |    PortNum    |    Options    |  0
//  +-------------------------------+---------------+---------------+
//  |                  PortInfo (64 bytes, port_info.hpp)           |  4..67
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/port_info.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PortInfoRecord {
  Lid endport_lid;
  uint8_t port_num = 0;
  uint8_t options = 0;
  PortInfo port_info;

  friend bool operator==(const PortInfoRecord&, const PortInfoRecord&) = default;
};

template <>
struct Layout<PortInfoRecord> {
  using T = PortInfoRecord;
  static constexpr std::string_view kName = "PortInfoRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kPortInfoRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("EndportLID", 0, 16, "EndportLid", Printer::kUint, member<&T::endport_lid>()),
          row("PortNum", 16, 8, "PortNum", Printer::kUint, member<&T::port_num>()),
          row("Options", 24, 8, "Options", Printer::kHex, member<&T::options>()),
      },
      embed<&T::port_info, Layout<PortInfo>::kRows>(32));
};
static_assert(wire_size<PortInfoRecord> == 68);

}  // namespace softib::mad
