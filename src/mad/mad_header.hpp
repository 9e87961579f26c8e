// The common MAD header, IBA 13.4.2 (24 bytes), first in every MAD of every class.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+---------------+---------------+-+-------------+
//  |  BaseVersion  |   MgmtClass   | ClassVersion  |R|   Method    |  0
//  +---------------+---------------+---------------+-+-------------+
//  |            Status             |         ClassSpecific         |  4
//  +-------------------------------+-------------------------------+
//  |                         TransactionID                         |  8
//  +                                                               +
//  |                                                               | 12
//  +-------------------------------+-------------------------------+
//  |          AttributeID          |           Reserved            | 16
//  +-------------------------------+-------------------------------+
//  |                       AttributeModifier                       | 20
//  +---------------------------------------------------------------+
// A MAD is 256 bytes (IBA 13.4.1). The directed-route SMP replaces Status/ClassSpecific with
// D, Status, HopPointer and HopCount (mad/dr_smp.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "mad/codec.hpp"
#include "mad/mad_status.hpp"
#include "mad/method.hpp"
#include "mad/mgmt_class.hpp"
#include "mad/row.hpp"

namespace softib::mad {

inline constexpr size_t kMadSize = 256;
inline constexpr uint8_t kBaseVersion = 1;  // IBA 13.4.2: BaseVersion is 1

struct MadHeader {
  uint8_t base_version = kBaseVersion;
  MgmtClass mgmt_class = MgmtClass::kSubnLid;
  uint8_t class_version = 1;
  Method method = Method::kGet;  // R bit included: GetResp is 0x81
  MadStatus status;
  uint16_t class_specific = 0;
  uint64_t transaction_id = 0;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;

  friend bool operator==(const MadHeader&, const MadHeader&) = default;
};

template <>
struct Layout<MadHeader> {
  using T = MadHeader;
  static constexpr std::string_view kName = "MAD";
  static constexpr std::array kRows{
      row("BaseVersion", 0, 8, "MadBaseVersion", Printer::kUint, member<&T::base_version>(),
          Legal::exactly(kBaseVersion)),
      row("MgmtClass", 8, 8, "MadMgmtClass", Printer::kUint, member<&T::mgmt_class>()),
      row("ClassVersion", 16, 8, "MadClassVersion", Printer::kUint, member<&T::class_version>()),
      row("R", 24, 1, "MadIsResponse", Printer::kUint, bits<&T::method, 7, 1>()),
      row("Method", 25, 7, "MadMethod", Printer::kHex, bits<&T::method, 0, 7>()),
      row("Status", 32, 16, "MadStatus", Printer::kHex, member<&T::status>()),
      row("ClassSpecific", 48, 16, "MadClassSpecific", Printer::kHex, member<&T::class_specific>()),
      row("TransactionID", 64, 64, "MadTRID", Printer::kHex, member<&T::transaction_id>()),
      row("AttributeID", 128, 16, "MadAttr", Printer::kHex, member<&T::attribute_id>()),
      reserved<T>(144, 16),
      row("AttributeModifier", 160, 32, "MadModifier", Printer::kHex,
          member<&T::attribute_modifier>()),
  };
};
static_assert(wire_size<MadHeader> == 24);

// The common header rows at the start of a class layout whose header member is M, with the
// class (and optionally the class version) pinned.
template <auto M>
constexpr auto class_header_rows(Legal mgmt_class, Legal class_version = {}) {
  return with_legal(with_legal(embed<M, Layout<MadHeader>::kRows>(0), "MgmtClass", mgmt_class),
                    "ClassVersion", class_version);
}

}  // namespace softib::mad
