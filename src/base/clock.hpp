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
};

// CLOCK_MONOTONIC.
class SteadyClock final : public Clock {
 public:
  TimePoint now() const override;
  static SteadyClock& instance();
};

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
