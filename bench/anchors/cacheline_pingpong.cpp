// Anchor: core-to-core cache-line latency (brief §6, the physical limit for a small message
// between two processes). Two processes share one MAP_SHARED page; each is pinned to its own
// CPU when at least two are allowed. The parent stores an odd sequence number into one cache
// line and spins until the child has stored the next even number into the same line; one
// round trip moves the line there and back, so one-way = round trip / 2.
//
// Each run does --iters round trips (or stops at --max-ms, reporting the round trips it did),
// and the JSON line gives the min and the median one-way time over --runs runs:
//   anchor_cacheline_pingpong [--iters N] [--runs R] [--max-ms MS] [--cpus A,B] [--no-pin]
//   {"bench":"cacheline_pingpong","one_way_ns_min":..,"one_way_ns_median":..,...}
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Line = std::atomic<uint64_t>;
static_assert(Line::is_always_lock_free, "the shared line must be lock-free to be address-free");

constexpr uint64_t kExit = ~uint64_t{0};

struct Options {
  uint64_t iters = 20000;
  unsigned runs = 15;
  double max_ms = 200;
  int cpu_a = -1, cpu_b = -1;
  bool pin = true;
};

constexpr anchor::Cli kCli{
    "cacheline_pingpong",
    "usage: anchor_cacheline_pingpong [--iters N] [--runs R] [--max-ms MS] [--cpus A,B] [--no-pin]"};

Options parse(int argc, char** argv) {
  Options o;
  kCli.each(argc, argv, {"--no-pin"}, [&](const std::string& a, const std::string& v) {
    if (a == "--iters") {
      o.iters = kCli.positive(v);
    } else if (a == "--runs") {
      o.runs = static_cast<unsigned>(kCli.positive(v));
    } else if (a == "--max-ms") {
      o.max_ms = static_cast<double>(kCli.positive(v));
    } else if (a == "--cpus") {
      if (std::sscanf(v.c_str(), "%d,%d", &o.cpu_a, &o.cpu_b) != 2 || o.cpu_a < 0 || o.cpu_b < 0) kCli.usage("--cpus A,B");
    } else if (a == "--no-pin") {
      o.pin = false;
    } else {
      return false;
    }
    return true;
  });
  return o;
}

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(static_cast<unsigned>(cpu), &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    fmt::print(stderr, "cacheline_pingpong: sched_setaffinity({}): {}\n", cpu, std::strerror(errno));
    std::exit(1);
  }
}

// The child: answer every odd value v with v + 1 until kExit.
[[noreturn]] void responder(Line& line) {
  uint64_t expect = 1;
  for (;;) {
    uint64_t v = line.load(std::memory_order_acquire);
    if (v == kExit) _exit(0);
    if (v == expect) {
      line.store(v + 1, std::memory_order_release);
      expect += 2;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);

  // Two distinct CPUs from the allowed set, unless given.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(static_cast<unsigned>(c), &allowed)) cpus.push_back(c);
  if (o.cpu_a < 0 && cpus.size() >= 2) {
    o.cpu_a = cpus[0];
    o.cpu_b = cpus[1];
  }
  const bool pinned = o.pin && o.cpu_a >= 0 && o.cpu_a != o.cpu_b;

  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    fmt::print(stderr, "cacheline_pingpong: mmap: {}\n", std::strerror(errno));
    return 1;
  }
  Line& line = *new (page) Line(0);

  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    fmt::print(stderr, "cacheline_pingpong: fork: {}\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    if (pinned) pin_to(o.cpu_b);
    responder(line);
  }
  if (pinned) pin_to(o.cpu_a);

  // Waits for `want`; returns false if the child died (checked every 2^20 spins).
  auto wait_for = [&](uint64_t want) {
    for (uint32_t spins = 1;; ++spins) {
      if (line.load(std::memory_order_acquire) == want) return true;
      if ((spins & 0xFFFFF) == 0 && waitpid(child, nullptr, WNOHANG) != 0) return false;
    }
  };

  uint64_t seq = 1;  // next odd value to send
  // Warm-up: the first round trips fault the page in and wake the child.
  for (int i = 0; i < 1000; ++i, seq += 2) {
    line.store(seq, std::memory_order_release);
    if (!wait_for(seq + 1)) {
      fmt::print(stderr, "cacheline_pingpong: the responder died\n");
      return 1;
    }
  }

  std::vector<double> one_way_ns;
  uint64_t total_round_trips = 0;
  bool capped = false;
  for (unsigned r = 0; r < o.runs; ++r) {
    const auto start = Clock::now();
    const auto limit = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(o.max_ms));
    uint64_t done = 0;
    while (done < o.iters) {
      line.store(seq, std::memory_order_release);
      if (!wait_for(seq + 1)) {
        fmt::print(stderr, "cacheline_pingpong: the responder died\n");
        return 1;
      }
      seq += 2;
      ++done;
      if ((done & 1023) == 0 && Clock::now() > limit) {
        capped = true;
        break;
      }
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    one_way_ns.push_back(ns / static_cast<double>(done) / 2.0);
    total_round_trips += done;
  }
  line.store(kExit, std::memory_order_release);
  int status = 0;
  waitpid(child, &status, 0);
  munmap(page, 4096);

  std::sort(one_way_ns.begin(), one_way_ns.end());
  const double mn = one_way_ns.front();
  const double med = one_way_ns[one_way_ns.size() / 2];
  fmt::print(
      "{{\"bench\":\"cacheline_pingpong\",\"one_way_ns_min\":{:.1f},\"one_way_ns_median\":{:.1f},"
      "\"one_way_ns_max\":{:.1f},\"runs\":{},\"round_trips\":{},\"capped_by_time\":{},\"pinned\":{},"
      "\"cpus\":[{},{}]}}\n",
      mn, med, one_way_ns.back(), o.runs, total_round_trips, capped, pinned, pinned ? o.cpu_a : -1,
      pinned ? o.cpu_b : -1);
  return 0;
}
