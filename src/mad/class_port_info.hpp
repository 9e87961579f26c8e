// ClassPortInfo, IBA 13.4.8.1 (72 bytes): what a class agent supports and where to redirect
// requests or send traps. Common to all GSI classes (attribute 0x0001).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+---------------+-------------------------------+
//  |  BaseVersion  | ClassVersion  |        CapabilityMask         |  0
//  +---------------+---------------+-------------------+-----------+
//  |                 CapabilityMask2                   | RespTime  |  4
//  +---------------------------------------------------+-----------+
//  |                      RedirectGID (16 bytes)                   |  8
//  +---------------+-------+---------------------------------------+
//  |  RedirectTC   |RedirSL|              RedirectFL               | 24
//  +---------------+-------+-------+-------------------------------+
//  |          RedirectLID          |         RedirectP_Key         | 28
//  +---------------+---------------+-------------------------------+
//  |   Reserved    |                  RedirectQP                   | 32
//  +---------------+-----------------------------------------------+
//  |                         RedirectQ_Key                         | 36
//  +---------------------------------------------------------------+
//  |                        TrapGID (16 bytes)                     | 40
//  +---------------+-------+---------------------------------------+
//  |    TrapTC     |TrapSL |                TrapFL                 | 56
//  +---------------+-------+-------+-------------------------------+
//  |            TrapLID            |          TrapP_Key            | 60
//  +---------------+---------------+-------------------------------+
//  |    TrapHL     |                    TrapQP                     | 64
//  +---------------+-----------------------------------------------+
//  |                          TrapQ_Key                            | 68
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct ClassPortInfo {
  uint8_t base_version = 1;
  uint8_t class_version = 1;
  uint16_t capability_mask = 0;
  uint32_t capability_mask2 = 0;  // 27 bits
  uint8_t resp_time_value = 0;    // 5 bits
  Gid redirect_gid;
  uint8_t redirect_tc = 0;
  uint8_t redirect_sl = 0;   // 4 bits
  uint32_t redirect_fl = 0;  // 20 bits
  Lid redirect_lid;
  PKey redirect_pkey;
  Qpn redirect_qp;
  QKey redirect_qkey;
  Gid trap_gid;
  uint8_t trap_tc = 0;
  uint8_t trap_sl = 0;
  uint32_t trap_fl = 0;
  Lid trap_lid;
  PKey trap_pkey;
  uint8_t trap_hl = 0;
  Qpn trap_qp;
  QKey trap_qkey;

  friend bool operator==(const ClassPortInfo&, const ClassPortInfo&) = default;
};

template <>
struct Layout<ClassPortInfo> {
  using T = ClassPortInfo;
  using P = Printer;
  static constexpr std::string_view kName = "ClassPortInfo";
  static constexpr PmaAttr kAttributeId = PmaAttr::kClassPortInfo;
  static constexpr std::array kRows{
      row("BaseVersion", 0, 8, "BaseVersion", P::kUint, member<&T::base_version>()),
      row("ClassVersion", 8, 8, "ClassVersion", P::kUint, member<&T::class_version>()),
      row("CapabilityMask", 16, 16, "CapabilityMask", P::kHex, member<&T::capability_mask>()),
      row("CapabilityMask2", 32, 27, "CapabilityMask2", P::kHex, member<&T::capability_mask2>()),
      row("RespTimeValue", 59, 5, "RespTimeVal", P::kUint, member<&T::resp_time_value>()),
      row("RedirectGID", 64, 128, "RedirectGID", P::kArray, member<&T::redirect_gid>()),
      row("RedirectTC", 192, 8, "RedirectTC", P::kHex, member<&T::redirect_tc>()),
      row("RedirectSL", 200, 4, "RedirectSL", P::kUint, member<&T::redirect_sl>()),
      row("RedirectFL", 204, 20, "RedirectFL", P::kHex, member<&T::redirect_fl>()),
      row("RedirectLID", 224, 16, "RedirectLID", P::kUint, member<&T::redirect_lid>()),
      row("RedirectP_Key", 240, 16, "RedirectPKey", P::kHex, member<&T::redirect_pkey>()),
      reserved<T>(256, 8),
      row("RedirectQP", 264, 24, "RedirectQP", P::kHex, member<&T::redirect_qp>()),
      row("RedirectQ_Key", 288, 32, "RedirectQKey", P::kHex, member<&T::redirect_qkey>()),
      row("TrapGID", 320, 128, "TrapGID", P::kArray, member<&T::trap_gid>()),
      row("TrapTC", 448, 8, "TrapTC", P::kHex, member<&T::trap_tc>()),
      row("TrapSL", 456, 4, "TrapSL", P::kUint, member<&T::trap_sl>()),
      row("TrapFL", 460, 20, "TrapFL", P::kHex, member<&T::trap_fl>()),
      row("TrapLID", 480, 16, "TrapLID", P::kUint, member<&T::trap_lid>()),
      row("TrapP_Key", 496, 16, "TrapPKey", P::kHex, member<&T::trap_pkey>()),
      row("TrapHL", 512, 8, "TrapHL", P::kUint, member<&T::trap_hl>()),
      row("TrapQP", 520, 24, "TrapQP", P::kHex, member<&T::trap_qp>()),
      row("TrapQ_Key", 544, 32, "TrapQKey", P::kHex, member<&T::trap_qkey>()),
  };
};
static_assert(wire_size<ClassPortInfo> == 72);

}  // namespace softib::mad
