// Notice DataDetails of trap 144 (a port's CapabilityMask, or another local attribute,
// changed), IBA 14.2.5.1 (54 bytes, at Notice byte 10). The change flags are those OpenSM
// handles (ib_types.h TRAP_144_MASK_*).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-------------------------------+-------------------------------+
//  |           Reserved            |            LIDADDR            |  0
//  +---------------+-------------+-+-------------------------------+
//  |   Reserved    |  Reserved   |O|     CAPABILITYMASK (high)     |  4
//  +---------------+-------------+-+-------------------+-+-+-+-+-+-+
//  |     CAPABILITYMASK (low)      | Reserved (10 bits)|C|H|S|L|W|N|  8
//  +-------------------------------+-------------------+-+-+-+-+-+-+
//  |        CapabilityMask2        |     Reserved (40 bytes) ..53  | 12
//  +-------------------------------+-------------------------------+
// O: OtherLocalChanges; C: CapabilityMask2Change; H: HierarchyInfoChange; S:
// SMPriorityChange; L: LinkSpeedEnabledChange; W: LinkWidthEnabledChange; N:
// NodeDescriptionChange.
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/codec.hpp"
#include "mad/notice.hpp"
#include "mad/row.hpp"

namespace softib::mad {

inline constexpr uint16_t kTrapLocalChanges = 144;

struct Trap144Details {
  Lid lid;
  bool other_local_changes = false;
  uint32_t capability_mask = 0;
  bool capability_mask2_change = false;
  bool hierarchy_info_change = false;
  bool sm_priority_change = false;
  bool link_speed_enabled_change = false;
  bool link_width_enabled_change = false;
  bool node_description_change = false;
  uint16_t capability_mask2 = 0;

  friend bool operator==(const Trap144Details&, const Trap144Details&) = default;
};

template <>
struct Layout<Trap144Details> {
  using T = Trap144Details;
  using P = Printer;
  static constexpr std::string_view kName = "Trap144";
  static constexpr std::array kRows{
      reserved<T>(0, 16),
      row("LIDADDR", 16, 16, "NoticeDataTrap144LID", P::kUint, member<&T::lid>()),
      reserved<T>(32, 15),
      row("OtherLocalChanges", 47, 1, "OtherLocalChanges", P::kUint,
          member<&T::other_local_changes>()),
      row("CAPABILITYMASK", 48, 32, "NoticeDataTrap144CapMask", P::kUint,
          member<&T::capability_mask>()),
      reserved<T>(80, 10),
      row("CapabilityMask2Change", 90, 1, "CapabilityMask2Change", P::kUint,
          member<&T::capability_mask2_change>()),
      row("HierarchyInfoChange", 91, 1, "HierarchyInfoChange", P::kUint,
          member<&T::hierarchy_info_change>()),
      row("SMPriorityChange", 92, 1, "SMPriorityChange", P::kUint, member<&T::sm_priority_change>()),
      row("LinkSpeedEnabledChange", 93, 1, "LinkSpeedEnabledChange", P::kUint,
          member<&T::link_speed_enabled_change>()),
      row("LinkWidthEnabledChange", 94, 1, "LinkWidthEnabledChange", P::kUint,
          member<&T::link_width_enabled_change>()),
      row("NodeDescriptionChange", 95, 1, "NodeDescriptionChange", P::kUint,
          member<&T::node_description_change>()),
      row("CAPABILITYMASK2", 96, 16, "CapabilityMask2", P::kHex, member<&T::capability_mask2>()),
      reserved<T>(112, 320),
  };
};
static_assert(wire_size<Trap144Details> == Notice::kDataDetailsSize);

}  // namespace softib::mad
