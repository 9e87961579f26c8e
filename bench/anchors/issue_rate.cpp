// Probe: how many instructions a vCPU issues a nanosecond, now. On these VMs a vCPU is one
// hyperthread of a host core, and when the host runs something on that core's other
// hyperthread, the vCPU issues about half as many instructions as when it idles, at the same
// clock. A ping-pong bound by its instructions (src/engine/README.md, "Round trips bound by
// instructions") then slows by up to half, and an anchor with fewer instructions less: a
// latency ratio means something only with the state of both vCPUs beside it.
//
// On each CPU it may run on (pinned there in turn), a loop of six independent register adds
// for --ms milliseconds: the adds it did a nanosecond, on average (not the best of short runs:
// the other hyperthread's work comes and goes within milliseconds, and a 2 ms run often
// misses it). One JSON line:
//   anchor_issue_rate [--ms MS]
//   {"bench":"issue_rate","adds_per_ns":[12.6,6.6],"cpus":[0,1],"min":6.6}
// ~12.6 adds/ns on a vCPU whose sibling idles here (3.6 GHz, 3.5 adds a cycle); 5-7 when the
// host keeps the sibling busy.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli.hpp"

namespace {

struct Options {
  uint64_t ms = 50;
};

constexpr anchor::Cli kCli{"issue_rate", "usage: anchor_issue_rate [--ms MS]"};

Options parse(int argc, char** argv) {
  Options o;
  kCli.each(argc, argv, {}, [&](const std::string& a, const std::string& v) {
    if (a != "--ms") return false;
    o.ms = kCli.positive(v);
    return true;
  });
  return o;
}

// Adds a nanosecond over `ms` milliseconds of six independent adds a loop iteration (the
// loop's own compare and branch issue beside them and are not counted). The clock is read
// every 2^20 iterations (~0.5 ms).
double adds_per_ns(uint64_t ms) {
  uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  const auto t0 = std::chrono::steady_clock::now();
  const auto until = t0 + std::chrono::milliseconds(ms);
  uint64_t iters = 0;
  do {
    iters += kChunk;
    for (uint64_t i = 0; i < kChunk; ++i) {
#if defined(__x86_64__)
      asm volatile("add $1, %0\n\tadd $1, %1\n\tadd $1, %2\n\tadd $1, %3\n\tadd $1, %4\n\tadd $1, %5"
                   : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
#else
      asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
      a += 1, b += 1, c += 1, d += 1, e += 1, f += 1;
#endif
    }
  } while (std::chrono::steady_clock::now() < until);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  if ((a ^ b ^ c ^ d ^ e ^ f) == 0) fmt::print(stderr, " ");  // keeps the registers live
  return static_cast<double>(iters) * 6 / ns;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    fmt::print(stderr, "issue_rate: sched_getaffinity: {}\n", std::strerror(errno));
    return 1;
  }
  std::vector<int> cpus;
  std::vector<double> rates;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(static_cast<unsigned>(c), &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<unsigned>(c), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
      fmt::print(stderr, "issue_rate: sched_setaffinity({}): {}\n", c, std::strerror(errno));
      return 1;
    }
    cpus.push_back(c);
    rates.push_back(std::round(adds_per_ns(o.ms) * 100) / 100);
  }
  sched_setaffinity(0, sizeof allowed, &allowed);
  fmt::print("{{\"bench\":\"issue_rate\",\"adds_per_ns\":[{}],\"cpus\":[{}],\"min\":{}}}\n", fmt::join(rates, ","),
             fmt::join(cpus, ","), *std::min_element(rates.begin(), rates.end()));
  return 0;
}
