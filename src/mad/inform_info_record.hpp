// InformInfoRecord, IBA 15.2.5.12 (60 bytes): a subscription the SA holds, by the
// subscriber's GID and an enumerator among that subscriber's subscriptions.
//
//   0               1               2               3
//  +---------------------------------------------------------------+
//  |                     SubscriberGID (16 bytes)                  |  0
//  +-------------------------------+-------------------------------+
//  |            Enum               |           Reserved            | 16
//  +-------------------------------+-------------------------------+
//  |                           Reserved                            | 20
//  +---------------------------------------------------------------+
//  |                  InformInfo (36 bytes, inform_info.hpp)       | 24..59
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/inform_info.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct InformInfoRecord {
  Gid subscriber_gid;
  uint16_t subscriber_enum = 0;
  InformInfo inform_info;

  friend bool operator==(const InformInfoRecord&, const InformInfoRecord&) = default;
};

template <>
struct Layout<InformInfoRecord> {
  using T = InformInfoRecord;
  using P = Printer;
  static constexpr std::string_view kName = "InformInfoRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kInformInfoRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("SubscriberGID", 0, 128, "SubscriberGID", P::kArray, member<&T::subscriber_gid>()),
          row("Enum", 128, 16, "Enum", P::kUint, member<&T::subscriber_enum>()),
          reserved<T>(144, 48),
      },
      embed<&T::inform_info, Layout<InformInfo>::kRows>(192));
};
static_assert(wire_size<InformInfoRecord> == 60);

}  // namespace softib::mad
