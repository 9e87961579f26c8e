// Anchor: single-thread memcpy bandwidth per size (brief §6, the physical reference for one
// copy). For each size, one page-aligned source and destination of that size are copied
// repeatedly for at least --min-ms; the best of --runs runs is reported in MB/s (10^6 bytes
// of payload per second, the same unit as every data-path figure). The buffers stay hot in
// the caches that hold them, as the data path's registered buffers do when a benchmark reuses
// them.
//   anchor_memcpy_bw [--sizes 64,4096,...] [--runs R] [--min-ms MS]
//   {"bench":"memcpy_bw","size":N,"MBps":X,"copies":K,"runs":R}   one line per size
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr anchor::Cli kCli{"memcpy_bw", "usage: anchor_memcpy_bw [--sizes 64,4096,...] [--runs R] [--min-ms MS]"};

// Keeps the copy: the compiler must assume the asm reads and writes both buffers.
inline void clobber(void* dst, const void* src) { asm volatile("" : : "r"(dst), "r"(src) : "memory"); }

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes;
  for (size_t s = 64; s <= (size_t{4} << 20); s *= 4) sizes.push_back(s);
  unsigned runs = 5;
  double min_ms = 30;
  kCli.each(argc, argv, {}, [&](const std::string& a, const std::string& v) {
    if (a == "--sizes") {
      sizes.clear();
      for (const std::string& s : anchor::Cli::split(v)) sizes.push_back(kCli.positive(s, "size"));
    } else if (a == "--runs") {
      runs = static_cast<unsigned>(kCli.positive(v));
    } else if (a == "--min-ms") {
      min_ms = static_cast<double>(kCli.positive(v));
    } else {
      return false;
    }
    return true;
  });

  for (const size_t size : sizes) {
    const size_t alloc = (size + 4095) / 4096 * 4096;
    auto* src = static_cast<unsigned char*>(std::aligned_alloc(4096, alloc));
    auto* dst = static_cast<unsigned char*>(std::aligned_alloc(4096, alloc));
    if (src == nullptr || dst == nullptr) {
      fmt::print(stderr, "memcpy_bw: out of memory for {} bytes\n", size);
      return 1;
    }
    std::memset(src, 0x5a, alloc);
    std::memset(dst, 0, alloc);

    double best = 0;
    uint64_t best_copies = 0;
    for (unsigned r = 0; r < runs; ++r) {
      // Batches of copies between clock reads, so the clock costs < 1% at 64 bytes.
      const uint64_t batch = std::max<uint64_t>(1, (uint64_t{1} << 20) / size);
      uint64_t copies = 0;
      const auto start = Clock::now();
      double ms = 0;
      do {
        for (uint64_t k = 0; k < batch; ++k) {
          std::memcpy(dst, src, size);
          clobber(dst, src);
        }
        copies += batch;
        ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      } while (ms < min_ms);
      const double mbps = static_cast<double>(copies) * static_cast<double>(size) / (ms * 1e3);
      if (mbps > best) {
        best = mbps;
        best_copies = copies;
      }
    }
    if (dst[size - 1] != 0x5a) {
      fmt::print(stderr, "memcpy_bw: the copy did not happen\n");
      return 1;
    }
    fmt::print("{{\"bench\":\"memcpy_bw\",\"size\":{},\"MBps\":{:.1f},\"copies\":{},\"runs\":{}}}\n", size, best,
               best_copies, runs);
    std::fflush(stdout);
    std::free(src);
    std::free(dst);
  }
  return 0;
}
