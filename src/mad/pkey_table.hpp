// P_KeyTable, IBA 14.2.5.7 (64 bytes): a block of 32 P_Keys (block number in the attribute
// modifier). Each P_Key is the membership bit and a 15-bit base (base/ids.hpp PKey).
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |           P_Key[0]            |           P_Key[1]            |  0
//  |              ...              |              ...              |
//  |           P_Key[30]           |           P_Key[31]           | 60
//  +-------------------------------+-------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PKeyTable {
  static constexpr size_t kPKeysPerBlock = 32;
  std::array<PKey, kPKeysPerBlock> pkeys{};

  friend bool operator==(const PKeyTable&, const PKeyTable&) = default;
};

namespace detail {
inline constexpr auto kPKeyNames = indexed_names<PKeyTable::kPKeysPerBlock>("P_Key[", "]");
}  // namespace detail

template <>
struct Layout<PKeyTable> {
  static constexpr std::string_view kName = "P_KeyTable";
  static constexpr SmpAttr kAttributeId = SmpAttr::kP_KeyTable;
  static constexpr std::array kRows = repeat<&PKeyTable::pkeys>(
      detail::kPKeyNames, detail::kPKeyNames, 0, 16, 16, Printer::kHex);
};
static_assert(wire_size<PKeyTable> == 64);

}  // namespace softib::mad
