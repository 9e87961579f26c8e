// Atomic Acknowledge Extended Transport Header, IBA 9.3.6 (8 bytes): the original remote
// data an atomic operation found.
//
//  +---------------------------------------------------------------+
//  |                  Original Remote Data (64)                    |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct AtomicAckEth {
  static constexpr std::string_view kName = "AtomicAckETH";
  static constexpr Field kOrigRemDt{"OrigRemDt", 0, 64};
  static constexpr std::array kFields{kOrigRemDt};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 8 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint64_t orig_remote_data = 0;

  static Parsed<AtomicAckEth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return AtomicAckEth{get_aligned<kOrigRemDt>(in)};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set_aligned<kOrigRemDt>(out, orig_remote_data);
  }
  friend bool operator==(const AtomicAckEth&, const AtomicAckEth&) = default;
};

}  // namespace softib::wire
