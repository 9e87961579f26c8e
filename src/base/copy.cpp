#include "base/copy.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace softib {

void copy_streaming(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  // Up to the first 16-byte boundary of the destination (stream stores need alignment).
  const size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head != 0) {
    const size_t h = std::min(head, n);
    std::memcpy(d, s, h);
    d += h;
    s += h;
    n -= h;
  }
  // SSE2 (every x86-64): the write-combining buffers fill a line from four 16-byte stores as
  // well as from one 64-byte store.
  for (; n >= 64; d += 64, s += 64, n -= 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  if (n != 0) std::memcpy(d, s, n);
  // Non-temporal stores are weakly ordered: fence them before whatever publishes them.
  _mm_sfence();
#else
  std::memcpy(dst, src, n);
#endif
}

}  // namespace softib
