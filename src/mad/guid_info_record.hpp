// GUIDInfoRecord, IBA 15.2.5.18 (72 bytes): one 8-entry block of a port's GUIDInfo table.
// The block is one SA component per GUID.
//
//   0               1               2               3
//  +-------------------------------+---------------+---------------+
//  |              LID              |   BlockNum    |   Reserved    |  0
//  +-------------------------------+---------------+---------------+
//  |                           Reserved                            |  4
//  +---------------------------------------------------------------+
//  |                  GUIDInfo (64 bytes, guid_info.hpp)           |  8..71
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/guid_info.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct GUIDInfoRecord {
  Lid lid;
  uint8_t block_num = 0;
  GUIDInfo guid_info;

  friend bool operator==(const GUIDInfoRecord&, const GUIDInfoRecord&) = default;
};

template <>
struct Layout<GUIDInfoRecord> {
  using T = GUIDInfoRecord;
  static constexpr std::string_view kName = "GUIDInfoRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kGuidInfoRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          row("BlockNum", 16, 8, "BlockNum", Printer::kUint, member<&T::block_num>()),
          reserved<T>(24, 8),
          reserved<T>(32, 32),
      },
      embed<&T::guid_info, Layout<GUIDInfo>::kRows>(64));
};
static_assert(wire_size<GUIDInfoRecord> == 72);

}  // namespace softib::mad
