// InformInfo, IBA 13.4.8.3 (36 bytes): a subscription to (or, in a Set to the SA, a request
// for) forwarding of traps: which GID or LID range, generic trap number or vendor device.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                          GID (16 bytes)                       |  0
//  +-------------------------------+-------------------------------+
//  |         LIDRangeBegin         |          LIDRangeEnd          | 16
//  +-------------------------------+---------------+---------------+
//  |           Reserved            |   IsGeneric   |   Subscribe   | 20
//  +-------------------------------+---------------+---------------+
//  |             Type              |      TrapNumber / DeviceID    | 24
//  +-------------------------------+---------------+-----+---------+
//  |                      QPN                      |Resv |RespTime | 28
//  +---------------+-------------------------------+-----+---------+
//  |   Reserved    |           ProducerType / VendorID             | 32
//  +---------------+-----------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct InformInfo {
  Gid gid;
  Lid lid_range_begin;
  Lid lid_range_end;
  uint8_t is_generic = 0;
  uint8_t subscribe = 0;
  uint16_t type = 0;
  uint16_t trap_number_or_device_id = 0;
  Qpn qpn;
  uint8_t resp_time_value = 0;               // 5 bits
  uint32_t producer_type_or_vendor_id = 0;  // 24 bits

  friend bool operator==(const InformInfo&, const InformInfo&) = default;
};

template <>
struct Layout<InformInfo> {
  using T = InformInfo;
  using P = Printer;
  static constexpr std::string_view kName = "InformInfo";
  static constexpr SaAttr kAttributeId = SaAttr::kInformInfo;
  static constexpr std::array kRows{
      row("GID", 0, 128, "GID", P::kArray, member<&T::gid>()),
      row("LIDRangeBegin", 128, 16, "LIDRangeBegin", P::kUint, member<&T::lid_range_begin>()),
      row("LIDRangeEnd", 144, 16, "LIDRangeEnd", P::kUint, member<&T::lid_range_end>()),
      reserved<T>(160, 16),
      row("IsGeneric", 176, 8, "IsGeneric", P::kUint, member<&T::is_generic>()),
      row("Subscribe", 184, 8, "Subscribe", P::kUint, member<&T::subscribe>()),
      row("Type", 192, 16, "Type", P::kUint, member<&T::type>()),
      row("TrapNumber/DeviceID", 208, 16, "TrapNumber/DeviceID", P::kUint,
          member<&T::trap_number_or_device_id>()),
      row("QPN", 224, 24, "QPN", P::kHex, member<&T::qpn>()),
      reserved<T>(248, 3),
      row("RespTimeValue", 251, 5, "RespTimeValue", P::kUint, member<&T::resp_time_value>()),
      reserved<T>(256, 8),
      row("ProducerType/VendorID", 264, 24, "ProducerType/VendorID", P::kHex,
          member<&T::producer_type_or_vendor_id>()),
  };
};
static_assert(wire_size<InformInfo> == 36);

}  // namespace softib::mad
