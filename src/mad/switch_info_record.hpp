// SwitchInfoRecord, IBA 15.2.5.4 (24 bytes): a switch's LID and its SwitchInfo.
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |              LID              |           Reserved            |  0
//  +-------------------------------+-------------------------------+
//  |                SwitchInfo (20 bytes, switch_info.hpp)         |  4..23
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"
#include "mad/switch_info.hpp"

namespace softib::mad {

struct SwitchInfoRecord {
  Lid lid;
  SwitchInfo switch_info;

  friend bool operator==(const SwitchInfoRecord&, const SwitchInfoRecord&) = default;
};

template <>
struct Layout<SwitchInfoRecord> {
  using T = SwitchInfoRecord;
  static constexpr std::string_view kName = "SwitchInfoRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kSwitchInfoRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          reserved<T>(16, 16),
      },
      embed<&T::switch_info, Layout<SwitchInfo>::kRows>(32));
};
static_assert(wire_size<SwitchInfoRecord> == 24);

}  // namespace softib::mad
