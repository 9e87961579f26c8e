#include "base/clock.hpp"

#include <time.h>

#include "base/assert.hpp"

namespace softib {

TimePoint SteadyClock::now() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimePoint(Duration(int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
}

SteadyClock& SteadyClock::instance() {
  static SteadyClock clock;
  return clock;
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
