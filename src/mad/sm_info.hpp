// SMInfo, IBA 14.2.5.13 (21 bytes): an SM's GUID, key, activity counter, priority and
// state, exchanged between SMs to elect the master.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                         GUID (8 bytes)                        |  0
//  +---------------------------------------------------------------+
//  |                        SM_Key (8 bytes)                       |  8
//  +---------------------------------------------------------------+
//  |                           ActCount                            | 16
//  +-------+-------+-----------------------------------------------+
//  |Priorit|SMState|                                                 20
//  +-------+-------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

// IBA 14.4.1 SM states.
enum class SmState : uint8_t { kNotActive = 0, kDiscovering = 1, kStandby = 2, kMaster = 3 };
std::string_view to_string(SmState s);  // "NotActive", "Discovering", "Standby", "Master"

struct SMInfo {
  Guid guid;
  uint64_t sm_key = 0;
  uint32_t act_count = 0;
  uint8_t priority = 0;  // 4 bits
  SmState sm_state = SmState::kNotActive;  // 4 bits

  friend bool operator==(const SMInfo&, const SMInfo&) = default;
};

template <>
struct Layout<SMInfo> {
  using T = SMInfo;
  static constexpr std::string_view kName = "SMInfo";
  static constexpr SmpAttr kAttributeId = SmpAttr::kSMInfo;
  static constexpr std::array kRows{
      row("GUID", 0, 64, "SmInfoGuid", Printer::kHex, member<&T::guid>()),
      row("SM_Key", 64, 64, "SmInfoKey", Printer::kHex, member<&T::sm_key>()),
      row("ActCount", 128, 32, "SmActivity", Printer::kUint, member<&T::act_count>()),
      row("Priority", 160, 4, "SmPriority", Printer::kUint, member<&T::priority>()),
      row("SMState", 164, 4, "SmState", Printer::kUint, member<&T::sm_state>()),
  };
};
static_assert(wire_size<SMInfo> == 21);

}  // namespace softib::mad
