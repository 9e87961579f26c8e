// Copies into memory that another core reads next (a shared-memory ring).
//
// An ordinary copy leaves the destination lines modified in this core's cache, and the
// consumer on the other core then fetches each one from here: on these VMs' "far" vCPUs a
// cross-core line transfer is ~240 ns and limits a two-copy ring to 12-16 GB/s. Large copies
// go instead with non-temporal stores, straight to memory, where the consumer's loads find
// them without snooping this core. Measured with bench/datapath.py --quick on far vCPUs
// (cache-line probe ~210 ns): RDMA WRITE 1 MiB 12-16 -> 22 GB/s, READ 1 MiB 15.5 -> 27.7
// GB/s; 4 KiB WRITEs 4.5 -> 6.2-6.9 GB/s. Copies under 4 KiB stay ordinary: there the
// consumer's few line transfers are cheaper than a trip to memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace softib {

// memcpy for the few bytes of a small message (a ping-pong's payload, copied three times on
// its way: into the send WQE, into the frame, into the receive buffer), inline: up to 16
// bytes as two overlapping loads and stores, without the library call (its dispatch and
// size tests cost more than the copy). Larger sizes call memcpy.
[[gnu::always_inline]] inline void copy_small(void* dst, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (n >= 8 && n <= 16) {
    uint64_t a, b;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + n - 8, &b, 8);
  } else if (n >= 4 && n < 8) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
  } else {
    std::memcpy(d, s, n);
  }
}

// Below this many bytes copy_for_peer() is memcpy.
inline constexpr size_t kStreamingCopyMin = 4 * 1024;

// Non-temporal copy. Ends with a store fence, so a release store after it (publishing the
// bytes) is ordered after them, as after a memcpy. Falls back to memcpy off x86-64.
void copy_streaming(void* dst, const void* src, size_t n);

// The copy below kStreamingCopyMin is memcpy; from there on it is `large(dst, src, n)`:
// copy_streaming, or memcpy where the consumer's core shares this one's cache (PeerCopy).
template <class Large>
void copy_for_peer(void* dst, const void* src, size_t n, Large&& large) {
  if (n >= kStreamingCopyMin)
    large(dst, src, n);
  else
    std::memcpy(dst, src, n);
}

// How large copies into a peer's ring go (SOFTIB_SHM_COPY). When the two cores share a cache
// (the "near" vCPUs: a cross-core line transfer of 30-70 ns), ordinary stores leave the bytes
// where the consumer finds them at once, and streaming them to memory only slows both sides:
// near, bench_verbs bw 1 MiB went 24 -> 36 GB/s (WRITE) and 23 -> 40 GB/s (READ) with
// ordinary copies. When they do not ("far": ~240 ns), streaming wins (above): far, ordinary
// copies gave 22-23 GB/s against 26-28.
enum class PeerCopy : uint8_t {
  kStreaming,  // copy_streaming() from kStreamingCopyMin up
  kCached,     // memcpy
  kAuto,       // as measured, per channel (link::CopyChooser: the consumer's distance, then throughput)
};

}  // namespace softib
