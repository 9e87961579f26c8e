// P_KeyTableRecord, IBA 15.2.5.11 (72 bytes): one 32-entry block of a port's P_Key table.
// The block is one SA component.
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |              LID              |           BlockNum            |  0
//  +---------------+---------------+-------------------------------+
//  |    PortNum    |                   Reserved                    |  4
//  +---------------+-----------------------------------------------+
//  |               P_KeyTable (64 bytes, pkey_table.hpp)           |  8..71
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/pkey_table.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PKeyTableRecord {
  Lid lid;
  uint16_t block_num = 0;
  uint8_t port_num = 0;
  PKeyTable pkey_table;

  friend bool operator==(const PKeyTableRecord&, const PKeyTableRecord&) = default;
};

template <>
struct Layout<PKeyTableRecord> {
  using T = PKeyTableRecord;
  static constexpr std::string_view kName = "P_KeyTableRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kP_KeyTableRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          row("BlockNum", 16, 16, "BlockNum", Printer::kUint, member<&T::block_num>()),
          row("PortNum", 32, 8, "PortNum", Printer::kUint, member<&T::port_num>()),
          reserved<T>(40, 24),
      },
      embed<&T::pkey_table, Layout<PKeyTable>::kRows>(64, Components::kOne));
};
static_assert(wire_size<PKeyTableRecord> == 72);

}  // namespace softib::mad
