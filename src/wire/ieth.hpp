// Invalidate Extended Transport Header, IBA 9.3.8 (4 bytes): SEND with Invalidate carries the
// R_Key the responder invalidates.
//
//  +---------------------------------------------------------------+
//  |                            R_Key                              |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Ieth {
  static constexpr std::string_view kName = "IETH";
  static constexpr Field kRKey{"R_Key", 0, 32};
  static constexpr std::array kFields{kRKey};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 4 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  RKey rkey;

  static Parsed<Ieth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return Ieth{RKey(get_aligned<kRKey>(in))};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set_aligned<kRKey>(out, rkey.value());
  }
  friend bool operator==(const Ieth&, const Ieth&) = default;
};

}  // namespace softib::wire
