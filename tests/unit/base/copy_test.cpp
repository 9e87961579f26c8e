// copy_small / copy_for_peer / copy_streaming: the same bytes as memcpy for every length and alignment
// (the non-temporal path has an unaligned head, 64-byte blocks and a tail), and nothing
// written outside the destination.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "base/copy.hpp"

namespace softib {
namespace {

void check(size_t len, size_t src_off, size_t dst_off, void (*copy)(void*, const void*, size_t)) {
  constexpr size_t kGuard = 64;
  std::vector<uint8_t> src(len + src_off + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  std::vector<uint8_t> dst(len + dst_off + 2 * kGuard, 0xEE);
  copy(dst.data() + kGuard + dst_off, src.data() + src_off, len);
  for (size_t i = 0; i < dst.size(); ++i) {
    const bool inside = i >= kGuard + dst_off && i < kGuard + dst_off + len;
    const uint8_t want = inside ? src[src_off + (i - kGuard - dst_off)] : 0xEE;
    ASSERT_EQ(dst[i], want) << "len " << len << " src+" << src_off << " dst+" << dst_off << " at " << i;
  }
}

TEST(Copy, StreamingCopiesExactlyTheBytesAtEveryAlignment) {
  for (size_t len : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 127u, 200u, 4095u, 4096u, 4097u, 70000u})
    for (size_t so : {0u, 1u, 8u, 31u})
      for (size_t d : {0u, 1u, 7u, 15u, 16u, 33u}) check(len, so, d, &copy_streaming);
}

TEST(Copy, CopyForPeerCopiesExactlyTheBytesOnBothSidesOfItsThreshold) {
  for (size_t len : {kStreamingCopyMin - 1, kStreamingCopyMin, kStreamingCopyMin + 1, size_t{64}, size_t{1} << 20})
    for (size_t d : {0u, 5u})
      check(len, 3, d, [](void* dst, const void* src, size_t n) { copy_for_peer(dst, src, n, copy_streaming); });
}

TEST(Copy, CopySmallCopiesExactlyTheBytesOfEveryLengthAroundItsCases) {
  for (size_t len = 0; len <= 40; ++len)
    for (size_t so : {0u, 1u, 7u})
      for (size_t d : {0u, 3u, 9u}) check(len, so, d, &copy_small);
}

}  // namespace
}  // namespace softib
