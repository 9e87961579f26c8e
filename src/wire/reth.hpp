// RDMA Extended Transport Header, IBA 9.3.3 (16 bytes): first packet of an RDMA WRITE and
// every RDMA READ request.
//
//  +---------------------------------------------------------------+
//  |                     Virtual Address (64)                      |
//  +---------------------------------------------------------------+
//  |                            R_Key                              |
//  +---------------------------------------------------------------+
//  |                         DMA Length                            |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Reth {
  static constexpr std::string_view kName = "RETH";
  static constexpr Field kVa{"VA", 0, 64};
  static constexpr Field kRKey{"R_Key", 64, 32};
  static constexpr Field kDmaLen{"DMALen", 96, 32};
  static constexpr std::array kFields{kVa, kRKey, kDmaLen};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 16 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint64_t va = 0;
  RKey rkey;
  uint32_t dma_len = 0;

  static Parsed<Reth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return Reth{get_aligned<kVa>(in), RKey(get_aligned<kRKey>(in)), get_aligned<kDmaLen>(in)};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set_aligned<kVa>(out, va);
    set_aligned<kRKey>(out, rkey.value());
    set_aligned<kDmaLen>(out, dma_len);
  }
  friend bool operator==(const Reth&, const Reth&) = default;
};

}  // namespace softib::wire
