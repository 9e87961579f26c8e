// GUIDInfo, IBA 14.2.5.5 (64 bytes): a block of eight of a port's GUIDs (block number in
// the attribute modifier).
//
//  +---------------------------------------------------------------+
//  |                     GUID0 (8 bytes)                           |  0
//  |                       ...                                     |
//  |                     GUID7 (8 bytes)                           | 56
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct GUIDInfo {
  static constexpr size_t kGuidsPerBlock = 8;
  std::array<Guid, kGuidsPerBlock> guids{};

  friend bool operator==(const GUIDInfo&, const GUIDInfo&) = default;
};

namespace detail {
inline constexpr auto kGuidNames = indexed_names<GUIDInfo::kGuidsPerBlock>("GUID");
}  // namespace detail

template <>
struct Layout<GUIDInfo> {
  static constexpr std::string_view kName = "GUIDInfo";
  static constexpr SmpAttr kAttributeId = SmpAttr::kGUIDInfo;
  static constexpr std::array kRows = repeat<&GUIDInfo::guids>(
      detail::kGuidNames, detail::kGuidNames, 0, 64, 64, Printer::kHex);
};
static_assert(wire_size<GUIDInfo> == 64);

}  // namespace softib::mad
