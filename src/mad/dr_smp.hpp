// Directed-route subnet management packet, IBA 14.2.1.2 (MgmtClass SubnDirected, 256 bytes).
// The route is carried in the packet: InitialPath[1..HopCount] are the egress ports on the
// way out, ReturnPath records the ingress ports for the way back, HopPointer says where on
// the path the packet is and D which way it travels (mad/dr_route.hpp has the IBA 14.2.2
// rules). DrSLID/DrDLID are the permissive LID 0xFFFF when the path is directed end to end.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+---------------+---------------+-+-------------+
//  |  BaseVersion  |   MgmtClass   | ClassVersion  |R|   Method    |  0
//  +-+-------------+---------------+---------------+---------------+
//  |D|           Status            |  HopPointer   |   HopCount    |  4
//  +-+-----------------------------+---------------+---------------+
//  |                  TransactionID (8 bytes)                      |  8
//  +-------------------------------+-------------------------------+
//  |          AttributeID          |           Reserved            | 16
//  +-------------------------------+-------------------------------+
//  |                       AttributeModifier                       | 20
//  +---------------------------------------------------------------+
//  |                         M_Key (8 bytes)                       | 24
//  +-------------------------------+-------------------------------+
//  |            DrSLID             |            DrDLID             | 32
//  +-------------------------------+-------------------------------+
//  |                       Reserved (28 bytes)                     | 36..63
//  |                       SMP Data (64 bytes)                     | 64..127
//  |                     InitialPath (64 bytes)                    | 128..191
//  |                      ReturnPath (64 bytes)                    | 192..255
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/codec.hpp"
#include "mad/mad_header.hpp"
#include "mad/smp.hpp"

namespace softib::mad {

inline constexpr uint8_t kMaxHopCount = 63;  // IBA 14.2.1.2, C14-6
inline constexpr size_t kPathSize = 64;

struct DrSmp {
  uint8_t base_version = kBaseVersion;
  MgmtClass mgmt_class = MgmtClass::kSubnDirected;
  uint8_t class_version = 1;
  Method method = Method::kGet;
  bool direction = false;  // D: false outbound, true returning
  MadStatus status;        // 15 bits: the D bit is not part of it
  uint8_t hop_pointer = 0;
  uint8_t hop_count = 0;
  uint64_t transaction_id = 0;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;
  uint64_t m_key = 0;
  Lid dr_slid = Lid::permissive();
  Lid dr_dlid = Lid::permissive();
  std::array<uint8_t, kSmpDataSize> data{};
  std::array<uint8_t, kPathSize> initial_path{};
  std::array<uint8_t, kPathSize> return_path{};

  friend bool operator==(const DrSmp&, const DrSmp&) = default;
};

template <>
struct Layout<DrSmp> {
  using T = DrSmp;
  static constexpr std::string_view kName = "DR SMP";
  static constexpr std::array kRows{
      row("BaseVersion", 0, 8, "MadBaseVersion", Printer::kUint, member<&T::base_version>(),
          Legal::exactly(kBaseVersion)),
      row("MgmtClass", 8, 8, "MadMgmtClass", Printer::kUint, member<&T::mgmt_class>(),
          Legal::exactly(0x81)),
      row("ClassVersion", 16, 8, "MadClassVersion", Printer::kUint, member<&T::class_version>(),
          Legal::exactly(1)),
      row("R", 24, 1, "MadIsResponse", Printer::kUint, bits<&T::method, 7, 1>()),
      row("Method", 25, 7, "MadMethod", Printer::kHex, bits<&T::method, 0, 7>()),
      row("D", 32, 1, "DrSmpDirection", Printer::kUint, member<&T::direction>()),
      row("Status", 33, 15, "DrSmpStatus", Printer::kHex, member<&T::status>()),
      row("HopPointer", 48, 8, "DrSmpHopPtr", Printer::kUint, member<&T::hop_pointer>()),
      row("HopCount", 56, 8, "DrSmpHopCnt", Printer::kUint, member<&T::hop_count>(),
          Legal::at_most(kMaxHopCount)),
      row("TransactionID", 64, 64, "MadTRID", Printer::kHex, member<&T::transaction_id>()),
      row("AttributeID", 128, 16, "MadAttr", Printer::kHex, member<&T::attribute_id>()),
      reserved<T>(144, 16),
      row("AttributeModifier", 160, 32, "MadModifier", Printer::kHex,
          member<&T::attribute_modifier>()),
      row("M_Key", 192, 64, "MadMkey", Printer::kHex, member<&T::m_key>()),
      row("DrSLID", 256, 16, "DrSmpSLID", Printer::kUint, member<&T::dr_slid>()),
      row("DrDLID", 272, 16, "DrSmpDLID", Printer::kUint, member<&T::dr_dlid>()),
      reserved<T>(288, 224),
      row("SMPData", 512, 512, "SmpData", Printer::kArray, member<&T::data>()),
      row("InitialPath", 1024, 512, "DrSmpPath", Printer::kArray, member<&T::initial_path>()),
      row("ReturnPath", 1536, 512, "DrSmpRetPath", Printer::kArray, member<&T::return_path>()),
  };
};
static_assert(wire_size<DrSmp> == kMadSize);

}  // namespace softib::mad
