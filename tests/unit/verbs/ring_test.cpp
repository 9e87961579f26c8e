#include "verbs/ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace softib::verbs {
namespace {

// A ring holds exactly its capacity, whatever its slot count.
TEST(WorkRing, HoldsItsCapacityAndNoMore) {
  for (uint32_t cap : {1u, 3u, 4u, 5u, 100u}) {
    WorkRing<uint32_t> r(cap);
    for (uint32_t i = 0; i < cap; ++i) {
      ASSERT_FALSE(r.full()) << "capacity " << cap;
      r.slot_to_fill() = i;
      r.publish();
    }
    EXPECT_TRUE(r.full()) << "capacity " << cap;
    EXPECT_EQ(r.size(), cap);
    for (uint32_t i = 0; i < cap; ++i) EXPECT_EQ(r.peek(i), i);
  }
}

// The free-running 32-bit positions wrap at 2^32; elements stay in order across it, for a
// capacity that is not a power of two too (a slot by remainder would jump there).
TEST(WorkRing, KeepsOrderAcrossThePositionWrap) {
  for (uint32_t cap : {3u, 7u, 8u}) {
    WorkRing<uint64_t> r(cap, UINT32_MAX - 2 * cap);
    uint64_t next_in = 0, next_out = 0;
    for (int round = 0; round < 20; ++round) {
      while (!r.full()) {
        r.slot_to_fill() = next_in++;
        r.publish();
      }
      // Take all but one: the ring's head and tail drift through the wrap at every offset.
      while (r.size() > 1) {
        ASSERT_EQ(r.peek(), next_out) << "capacity " << cap << " round " << round;
        r.release();
        ++next_out;
      }
    }
    EXPECT_GT(r.tail(), 0u);
    EXPECT_LT(r.tail(), UINT32_MAX - 2 * cap) << "the positions wrapped";
  }
}

// resize keeps the queued elements in order, into a ring of another slot count.
TEST(WorkRing, ResizeKeepsWhatIsQueued) {
  WorkRing<uint32_t> r(5, UINT32_MAX - 1);
  for (uint32_t i = 0; i < 4; ++i) {
    r.slot_to_fill() = i;
    r.publish();
  }
  r.release();
  r.resize(9);
  EXPECT_EQ(r.capacity(), 9u);
  ASSERT_EQ(r.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(r.peek(i), i + 1);
  for (uint32_t i = 0; i < 6; ++i) {
    r.slot_to_fill() = 10 + i;
    r.publish();
  }
  EXPECT_TRUE(r.full());
  EXPECT_EQ(r.peek(8), 15u);
}

}  // namespace
}  // namespace softib::verbs
