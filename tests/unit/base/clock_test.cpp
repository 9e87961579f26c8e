#include <gtest/gtest.h>

#include "base/clock.hpp"

namespace softib {
namespace {

using namespace std::chrono_literals;

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock clock;
  const Clock& c = clock;  // state machines see only the interface
  EXPECT_EQ(c.now().time_since_epoch(), 0ns);
  clock.advance(5us);
  EXPECT_EQ(c.now().time_since_epoch(), 5000ns);
  clock.set(TimePoint(1s));
  EXPECT_EQ(c.now().time_since_epoch(), 1s);
}

TEST(SteadyClock, IsMonotonic) {
  const Clock& c = SteadyClock::instance();
  const TimePoint a = c.now();
  const TimePoint b = c.now();
  EXPECT_LE(a, b);
}

TEST(ManualClockDeathTest, CannotGoBack) {
  ManualClock clock(TimePoint(10s));
  EXPECT_DEATH(clock.set(TimePoint(1s)), "assertion failed");
}

}  // namespace
}  // namespace softib
