// RefChooser: a channel's large WRITE bursts go by reference or through the ring, whichever
// measured faster; the other way is tried again now and then, and idle gaps do not count.
// Time here is a plain tick count the test moves.
#include <gtest/gtest.h>

#include "link/ref_chooser.hpp"

namespace softib::link {
namespace {

constexpr uint64_t kBurst = 256 * 1024;
constexpr uint64_t kWindow = RefChooser::kWindowBytes;
constexpr uint64_t kSettle = RefChooser::kSettleBytes;

// A channel sending bursts of kBurst back to back, each taking the ticks its way's rate
// (bytes per tick) says.
struct Channel {
  RefChooser chooser;
  uint64_t now = 1'000;
  double rate_ring = 10;
  double rate_ref = 10;
  uint64_t ring = 0;
  uint64_t ref = 0;

  bool burst(uint64_t gap_before = 0) {
    now += gap_before;
    const bool r = chooser.by_reference();
    ++(r ? ref : ring);
    now += static_cast<uint64_t>(static_cast<double>(kBurst) / (r ? rate_ref : rate_ring));
    chooser.sent(now, kBurst, r);
    return r;
  }
  // `bytes` worth of bursts; the share of them that went by reference.
  double run(uint64_t bytes) {
    const uint64_t r0 = ref, g0 = ring;
    for (uint64_t b = 0; b < bytes; b += kBurst) burst();
    return static_cast<double>(ref - r0) / static_cast<double>(ref - r0 + ring - g0);
  }
};

TEST(RefChooser, StartsThroughTheRing) {
  Channel ch;
  EXPECT_FALSE(ch.burst());
}

TEST(RefChooser, TakesTheReferenceWayWhenItMeasuresFaster) {
  Channel ch;
  ch.rate_ref = 15;
  // One window through the ring, then a try by reference (settling, then its window).
  ch.run(kWindow + kSettle + kWindow + 2 * kBurst);
  EXPECT_EQ(ch.chooser.switches(), 1u);
  EXPECT_TRUE(ch.chooser.by_reference());
  const double share = ch.run(64 * kWindow);
  EXPECT_GT(share, 0.8) << "by-reference share " << share;
  EXPECT_LT(share, 1.0) << "the ring is tried again (the vCPUs may move)";
}

TEST(RefChooser, KeepsTheRingWhenTheReferenceWayIsSlowerAndTriesItLessOften) {
  Channel ch;
  ch.rate_ref = 5;
  ch.run(kWindow + kSettle + kWindow + 2 * kBurst);
  EXPECT_EQ(ch.chooser.switches(), 0u);
  EXPECT_FALSE(ch.chooser.by_reference());
  const double early = ch.run(16 * kWindow);
  const double later = ch.run(256 * kWindow);
  EXPECT_GT(early, 0.0);
  EXPECT_LT(later, early) << "each lost try puts the next further off";
  EXPECT_LT(later, 0.1);
}

TEST(RefChooser, FollowsAChangeOfState) {
  Channel ch;
  ch.rate_ref = 15;
  ch.run(8 * kWindow);
  ASSERT_TRUE(ch.chooser.by_reference());
  ch.rate_ref = 5;  // the vCPUs moved apart: the ring is faster now
  ch.run(64 * kWindow);
  EXPECT_FALSE(ch.chooser.by_reference());
  EXPECT_EQ(ch.chooser.switches(), 2u);
}

TEST(RefChooser, IdleGapsAreNotCounted) {
  Channel ch;
  ch.rate_ref = 9;  // a little slower than the ring
  // The ring's window with an idle gap (the application doing something else) before every
  // fourth burst: counted, the gaps would make the ring measure far slower than the try by
  // reference, which would win.
  for (int i = 0; ch.chooser.windows() == 0; ++i) ch.burst(i % 4 == 0 ? 2 * RefChooser::kBusyGapTicks : 0);
  ch.run(kSettle + kWindow + 2 * kBurst);
  EXPECT_EQ(ch.chooser.windows(), 2u);
  EXPECT_EQ(ch.chooser.switches(), 0u) << "the gaps made the ring look slower than it is";
  EXPECT_FALSE(ch.chooser.by_reference());
}

TEST(RefChooser, ABurstDecidedBeforeAChangeIsNotCounted) {
  RefChooser c;
  c.sent(1'000, kBurst, true);  // by reference, though the chooser says the ring: ignored
  EXPECT_EQ(c.windows(), 0u);
  EXPECT_FALSE(c.by_reference());
}

}  // namespace
}  // namespace softib::link
