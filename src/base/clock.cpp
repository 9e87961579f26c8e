#include "base/clock.hpp"

#include <time.h>

#include "base/assert.hpp"

namespace softib {

SteadyClock::SteadyClock() {
  timespec res{};
  // A clock whose resolution the kernel does not tell is never read coarsely.
  coarse_res_ = clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0
                    ? Duration(int64_t{res.tv_sec} * 1'000'000'000 + res.tv_nsec)
                    : Duration::zero();
}

TimePoint SteadyClock::coarse_now() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return TimePoint(Duration(int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
}

TimePoint SteadyClock::now() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimePoint(Duration(int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
}

SteadyClock& SteadyClock::instance() {
  // Never destroyed: engine threads of a program that exits without closing its devices keep
  // reading it while static destructors run.
  static SteadyClock* clock = new SteadyClock();
  return *clock;
}

void ManualClock::advance(Duration d) {
  SOFTIB_ASSERT(d.count() >= 0);
  now_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
}

void ManualClock::set(TimePoint t) {
  SOFTIB_ASSERT(t >= now());
  now_ns_.store(t.time_since_epoch().count(), std::memory_order_release);
}

}  // namespace softib
