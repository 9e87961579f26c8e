// VLArbitrationTable, IBA 14.2.5.9 (64 bytes): one block of 32 (VL, Weight) entries of the
// high or low priority arbitration table (which one in the attribute modifier).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-------+-------+---------------+-------+-------+---------------+
//  | Resv  | VL[0] |   Weight[0]   | Resv  | VL[1] |   Weight[1]   |  0
//  |                              ...                              |
//  | Resv  |VL[30] |  Weight[30]   | Resv  |VL[31] |  Weight[31]   | 60
//  +-------+-------+---------------+-------+-------+---------------+
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct VlArbEntry {
  uint8_t vl = 0;  // 4 bits
  uint8_t weight = 0;
  friend bool operator==(const VlArbEntry&, const VlArbEntry&) = default;
};

struct VLArbitrationTable {
  static constexpr size_t kEntriesPerBlock = 32;
  std::array<VlArbEntry, kEntriesPerBlock> entries{};

  friend bool operator==(const VLArbitrationTable&, const VLArbitrationTable&) = default;
};

namespace detail {

inline constexpr auto kVlArbVlNames = indexed_names<VLArbitrationTable::kEntriesPerBlock>("VL[", "]");
inline constexpr auto kVlArbWeightNames =
    indexed_names<VLArbitrationTable::kEntriesPerBlock>("Weight[", "]");

template <size_t... I>
constexpr auto vl_arbitration_rows(std::index_sequence<I...>) {
  using T = VLArbitrationTable;
  return concat(std::array{
      reserved<T>(static_cast<uint32_t>(16 * I), 4),
      row(kVlArbVlNames[I], static_cast<uint32_t>(16 * I + 4), 4, kVlArbVlNames[I], Printer::kUint,
          element<&T::entries, I, &VlArbEntry::vl>()),
      row(kVlArbWeightNames[I], static_cast<uint32_t>(16 * I + 8), 8, kVlArbWeightNames[I],
          Printer::kUint, element<&T::entries, I, &VlArbEntry::weight>()),
  }...);
}

}  // namespace detail

template <>
struct Layout<VLArbitrationTable> {
  static constexpr std::string_view kName = "VLArbitrationTable";
  static constexpr SmpAttr kAttributeId = SmpAttr::kVLArbitrationTable;
  static constexpr DumpStyle kDumpStyle = DumpStyle::kVlArbitration;
  static constexpr std::array kRows = detail::vl_arbitration_rows(
      std::make_index_sequence<VLArbitrationTable::kEntriesPerBlock>{});
};
static_assert(wire_size<VLArbitrationTable> == 64);

}  // namespace softib::mad
