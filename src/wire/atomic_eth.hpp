// Atomic Extended Transport Header, IBA 9.3.4 (28 bytes): CmpSwap and FetchAdd requests.
//
//  +---------------------------------------------------------------+
//  |                     Virtual Address (64)                      |
//  +---------------------------------------------------------------+
//  |                            R_Key                              |
//  +---------------------------------------------------------------+
//  |                   Swap (or Add) Data (64)                     |
//  +---------------------------------------------------------------+
//  |                      Compare Data (64)                        |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct AtomicEth {
  static constexpr std::string_view kName = "AtomicETH";
  static constexpr Field kVa{"VA", 0, 64};
  static constexpr Field kRKey{"R_Key", 64, 32};
  static constexpr Field kSwapData{"SwapData", 96, 64};
  static constexpr Field kCmpData{"CmpData", 160, 64};
  static constexpr std::array kFields{kVa, kRKey, kSwapData, kCmpData};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 28 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint64_t va = 0;
  RKey rkey;
  uint64_t swap_add = 0;  // swap value (CmpSwap) or addend (FetchAdd)
  uint64_t compare = 0;   // ignored by FetchAdd

  static Parsed<AtomicEth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return AtomicEth{get_aligned<kVa>(in), RKey(get_aligned<kRKey>(in)), get_aligned<kSwapData>(in), get_aligned<kCmpData>(in)};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set_aligned<kVa>(out, va);
    set_aligned<kRKey>(out, rkey.value());
    set_aligned<kSwapData>(out, swap_add);
    set_aligned<kCmpData>(out, compare);
  }
  friend bool operator==(const AtomicEth&, const AtomicEth&) = default;
};

}  // namespace softib::wire
