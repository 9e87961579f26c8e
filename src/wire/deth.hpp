// Datagram Extended Transport Header, IBA 9.3.2 (8 bytes): UD and RD.
//
//  +---------------------------------------------------------------+
//  |                            Q_Key                              |
//  +---------------+-----------------------------------------------+
//  |     Resv8     |                     SrcQP                     |
//  +---------------+-----------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Deth {
  static constexpr std::string_view kName = "DETH";
  static constexpr Field kQKey{"Q_Key", 0, 32};
  static constexpr Field kResv8{"Resv8", 32, 8};
  static constexpr Field kSrcQp{"SrcQP", 40, 24};
  static constexpr std::array kFields{kQKey, kResv8, kSrcQp};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 8 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  QKey qkey;
  Qpn src_qp;

  static Parsed<Deth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return Deth{QKey(get_aligned<kQKey>(in)), Qpn(get_aligned<kSrcQp>(in))};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set_aligned<kQKey>(out, qkey.value());
    set_aligned<kResv8>(out, 0);
    set_aligned<kSrcQp>(out, src_qp.value());
  }
  friend bool operator==(const Deth&, const Deth&) = default;
};

}  // namespace softib::wire
