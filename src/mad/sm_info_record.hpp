// SMInfoRecord, IBA 15.2.5.13 (25 bytes): an SM's port LID and its SMInfo.
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |              LID              |           Reserved            |  0
//  +-------------------------------+-------------------------------+
//  |                  SMInfo (21 bytes, sm_info.hpp)               |  4..24
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"
#include "mad/sm_info.hpp"

namespace softib::mad {

struct SMInfoRecord {
  Lid lid;
  SMInfo sm_info;

  friend bool operator==(const SMInfoRecord&, const SMInfoRecord&) = default;
};

template <>
struct Layout<SMInfoRecord> {
  using T = SMInfoRecord;
  static constexpr std::string_view kName = "SMInfoRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kSMInfoRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("LID", 0, 16, "Lid", Printer::kUint, member<&T::lid>()),
          reserved<T>(16, 16),
      },
      embed<&T::sm_info, Layout<SMInfo>::kRows>(32));
};
static_assert(wire_size<SMInfoRecord> == 25);

}  // namespace softib::mad
