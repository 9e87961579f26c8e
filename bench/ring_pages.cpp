// What mapping a shared-memory ring's pages costs (link::ShmRegion::prefault, issue 5: a
// connection's first message waited for it). A diagnostic: no issue sets a target. The
// anchor is the way the project did it before, MADV_POPULATE_WRITE, run on the same kinds of
// pages in the same run, alternating with ours, each on a fresh memfd:
//   fresh    pages no one has allocated yet (a sender's claim of a cold channel)
//   present  pages another mapping of the file allocated (a claim of a channel the owner
//            warmed, link::ShmLink::warm_spare_channel; the owner's first read of a ring its
//            sender allocated)
// One JSON line per kind: median microseconds over --runs, ours and the anchor's, and the
// ratio (ours / anchor: lower is better).
//   bench_ring_pages [--bytes N] [--runs R]
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "link/shm_region.hpp"

using namespace softib;

namespace {

// Microseconds `populate` takes over `bytes` of a new mapping of a fresh memfd; with
// `present`, another mapping of the file allocated the pages first.
template <class F>
double time_one(size_t bytes, bool present, F&& populate) {
  auto region = link::ShmRegion::create("bench-ring-pages", bytes);
  if (!region) {
    fmt::print(stderr, "ring_pages: {}\n", region.error().to_string());
    std::exit(1);
  }
  if (present) std::memset(region->data(), 1, bytes);  // allocated through the first mapping
  void* second = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, region->fd(), 0);
  if (second == MAP_FAILED) std::exit(1);
  const double t0 = bench::now_ms();
  populate(static_cast<uint8_t*>(second), bytes);
  const double us = (bench::now_ms() - t0) * 1000.0;
  ::munmap(second, bytes);
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  size_t bytes = 1 << 20;  // the default ring
  int runs = 9;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--bytes") bytes = std::strtoull(argv[i + 1], nullptr, 0);
    else if (k == "--runs") runs = std::atoi(argv[i + 1]);
  }
  auto ours = [](uint8_t* p, size_t n) { link::ShmRegion::prefault(p, n); };
  auto anchor = [](uint8_t* p, size_t n) { (void)::madvise(p, n, MADV_POPULATE_WRITE); };
  for (const bool present : {false, true}) {
    std::vector<double> o, a;
    for (int r = 0; r < runs; ++r) {
      o.push_back(time_one(bytes, present, ours));
      a.push_back(time_one(bytes, present, anchor));
    }
    const double mo = bench::median(o), ma = bench::median(a);
    fmt::print("{{\"bench\":\"ring_pages\",\"pages\":\"{}\",\"bytes\":{},\"us\":{:.1f},\"anchor\":"
               "\"madv_populate_write\",\"anchor_us\":{:.1f},\"ratio\":{:.3f},\"better\":\"lower\",\"runs\":{}}}\n",
               present ? "present" : "fresh", bytes, mo, ma, ma > 0 ? mo / ma : 0.0, runs);
  }
  return 0;
}
