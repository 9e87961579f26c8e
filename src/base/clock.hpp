// Time for state machines comes from an injected Clock, never from the system directly, so
// that whole fabrics run in virtual time in tests (ManualClock) and in real time in
// production (SteadyClock) with the same code.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace softib {

using Duration = std::chrono::nanoseconds;

// The time base shared by every softib Clock: nanoseconds since the clock's epoch.
struct ClockBase {
  using rep = int64_t;
  using period = std::nano;
  using duration = Duration;
  using time_point = std::chrono::time_point<ClockBase, Duration>;
  static constexpr bool is_steady = true;
};
using TimePoint = ClockBase::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  // A cheaper reading that may lag now() by up to coarse_resolution() and never leads it:
  // coarse_now() <= now() < coarse_now() + coarse_resolution(). For timers far from due.
  virtual TimePoint coarse_now() const { return now(); }
  // Zero: no coarse clock (coarse_now() is now()). Not virtual: the transport asks on every
  // timer it arms and checks.
  Duration coarse_resolution() const { return coarse_res_; }

  // A deadline at least `d` from now, read cheaply when `d` dwarfs the coarse clock's
  // resolution (late by at most one resolution: IBA timers are lower bounds).
  TimePoint deadline_after(Duration d) const {
    const Duration res = coarse_resolution();
    if (res != Duration::zero() && d >= 16 * res) return coarse_now() + d + res;
    return now() + d;
  }
  // Whether `deadline` has passed; the precise clock is read only near it.
  bool reached(TimePoint deadline) const {
    const Duration res = coarse_resolution();
    if (res != Duration::zero() && deadline > coarse_now() + res) return false;
    return now() >= deadline;
  }

 protected:
  Duration coarse_res_ = Duration::zero();
};

// CLOCK_MONOTONIC (40 ns a reading on these virtual machines); CLOCK_MONOTONIC_COARSE for the
// coarse reading (10 ns, a tick's resolution).
class SteadyClock final : public Clock {
 public:
  SteadyClock();
  TimePoint now() const override;
  TimePoint coarse_now() const override;
  static SteadyClock& instance();
};

// A cheap, monotonic count for measuring short spans on the hot path (rate limits, copy
// throughput): the time-stamp counter where there is one (12 ns a reading here against 40 ns
// for CLOCK_MONOTONIC), else the steady clock's nanoseconds. Only differences mean anything
// (the CPUs' counters disagree a little: ticks_since), and only as a lower bound on elapsed
// time: no counter runs under 1 GHz. Not for protocol time (Clock).
inline uint64_t cycle_ticks() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// cycle_ticks() from `since` to `now`; 0 when `now` reads earlier. The counter is per CPU,
// and on these VMs one vCPU's reads up to ~2,000 ticks behind the other's, so a thread that
// moved, or that reads a stamp another thread wrote, can see time run backwards:
// a plain unsigned difference then wraps to "ages ago". It did: the engine took a busy
// ping-pong for a stalled peer and rang it (ShmLink::wake_stalled) 150-200 times in 0.2 s,
// each ring waking the peer's engine, which pre-empts a polling thread (8-byte half round
// trip, interleaved runs: mean 0.45 -> 0.29 us, p999 13.5 -> 1.2 us with this).
constexpr uint64_t ticks_since(uint64_t since, uint64_t now) { return now > since ? now - since : 0; }

// Virtual time: moves only when told to. Starts at `start` (default: the epoch).
// Thread: any thread may read; advancing is for the thread that drives the simulation.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint{}) : now_ns_(start.time_since_epoch().count()) {}
  TimePoint now() const override { return TimePoint(Duration(now_ns_.load(std::memory_order_acquire))); }
  // REQUIRES: d >= 0
  void advance(Duration d);
  // REQUIRES: t >= now()
  void set(TimePoint t);

 private:
  std::atomic<int64_t> now_ns_;
};

}  // namespace softib
