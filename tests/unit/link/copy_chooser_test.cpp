// CopyChooser: a channel's large copies take the way (ordinary or non-temporal stores) whose
// measured throughput is higher, starting from the consumer's distance; idle gaps and the
// ring's fill after a change do not count. Time here is a plain tick count the test moves.
#include <gtest/gtest.h>

#include "link/copy_chooser.hpp"

namespace softib::link {
namespace {

constexpr size_t kCopy = 64 * 1024;
constexpr uint64_t kRing = 1 << 20;

// A channel sending copies of kCopy bytes back to back: each takes the ticks its way's rate
// (bytes per tick) says, then the next starts.
struct Channel {
  CopyChooser chooser;
  uint64_t now = 1'000;
  double rate_cached = 10;
  double rate_streamed = 10;
  bool near = true;
  uint64_t full = 0;  // the ring's times_full
  uint64_t cached = 0;
  uint64_t streamed = 0;

  // One copy; returns its way.
  bool copy(uint64_t gap_before = 0) {
    now += gap_before;
    const bool c = chooser.cached(now, kCopy, near, kRing, full);
    ++(c ? cached : streamed);
    now += static_cast<uint64_t>(static_cast<double>(kCopy) / (c ? rate_cached : rate_streamed));
    return c;
  }
  // `bytes` worth of copies; the share of them that went cached.
  double run(uint64_t bytes) {
    const uint64_t c0 = cached, s0 = streamed;
    for (uint64_t b = 0; b < bytes; b += kCopy) copy();
    return static_cast<double>(cached - c0) / static_cast<double>(cached - c0 + streamed - s0);
  }
};

constexpr uint64_t kWindow = CopyChooser::kWindowBytes;

TEST(CopyChooser, StartsTheWayTheConsumersDistanceSays) {
  Channel near;
  EXPECT_TRUE(near.copy());
  Channel far;
  far.near = false;
  EXPECT_FALSE(far.copy());
}

TEST(CopyChooser, TakesTheOtherWayWhenItMeasuresFaster) {
  Channel ch;  // near: starts cached
  ch.rate_cached = 4;
  ch.rate_streamed = 6;
  // Settling, one window cached, then a try of streaming (settling, then its window).
  ch.run(kRing + kWindow + kRing + kWindow + kCopy);
  EXPECT_EQ(ch.chooser.switches(), 1u);
  // From there on it streams, but for one try of the old way after kExploreFirst windows.
  const double share = ch.run(64 * kWindow);
  EXPECT_LT(share, 0.1) << "cached share " << share;
  EXPECT_GT(share, 0.0) << "the losing way is tried again (the state may change)";
  EXPECT_EQ(ch.chooser.switches(), 1u) << "a try that loses changes nothing";
}

TEST(CopyChooser, KeepsItsWayWhenTheOtherIsNoBetterAndTriesItLessOften) {
  Channel ch;
  ch.rate_cached = 6;
  ch.rate_streamed = 6 * 1.04;  // within kSwitchMargin: not worth a change
  // Tries back off from every kExploreFirst windows to every kExploreMax (8, 32, 128, 256).
  const uint64_t before = 8 + 32 + 128 + 256 + 8;
  const uint64_t s0 = ch.streamed;
  ch.run(before * kWindow);
  EXPECT_EQ(ch.chooser.switches(), 0u);
  EXPECT_GE((ch.streamed - s0) * kCopy, 4 * (kRing + kWindow)) << "one try after each of the first waits";
  // From then on one try (a settle and a window) in every kExploreMax + 1 windows.
  const uint64_t s1 = ch.streamed;
  ch.run((2 * CopyChooser::kExploreMax + 40) * kWindow);
  const uint64_t tried = (ch.streamed - s1) * kCopy;
  EXPECT_GE(tried, 2 * (kRing + kWindow));
  EXPECT_LE(tried, 3 * (kRing + kWindow + kCopy));
}

// Far vCPUs: ordinary stores a quarter as fast, 1,000 windows long. Returns the bytes the tries
// of ordinary stores took.
uint64_t tried_on_far_vcpus(bool quick_loss) {
  Channel ch;
  ch.chooser = CopyChooser(quick_loss);
  ch.near = false;
  ch.rate_cached = 2;
  ch.rate_streamed = 8;
  ch.run(1000 * kWindow);
  EXPECT_EQ(ch.chooser.switches(), 0u);
  return ch.cached * kCopy;
}

TEST(CopyChooser, ATryThatLosesByFarEndsEarly) {
  // Each try ends after kQuickLossBytes, not a settle and a whole window (5 MiB).
  const uint64_t tried = tried_on_far_vcpus(true);
  EXPECT_GT(tried, 0u);
  EXPECT_LE(tried, 10 * (CopyChooser::kQuickLossBytes + kCopy)) << "at most 10 tries in 1,000 windows";
}

TEST(CopyChooser, FollowsAChangeOfState) {
  Channel ch;
  ch.rate_cached = 8;
  ch.rate_streamed = 4;
  EXPECT_GT(ch.run(40 * kWindow), 0.9);
  // The same distance, but now ordinary stores are slow (the second near state).
  ch.rate_cached = 3;
  ch.run((CopyChooser::kExploreMax + 10) * kWindow);  // within the next try
  EXPECT_LT(ch.run(40 * kWindow), 0.1);
  EXPECT_EQ(ch.chooser.switches(), 1u);
}

TEST(CopyChooser, ANewDistanceStartsOverFromItsGuess) {
  Channel ch;
  ch.rate_cached = 8;
  ch.rate_streamed = 4;
  ch.run(20 * kWindow);
  ch.near = false;
  EXPECT_FALSE(ch.copy()) << "far: streaming first, whatever near measured";
  ch.run(kRing + kWindow + kRing + kWindow);
  EXPECT_TRUE(ch.copy()) << "then measured again: cached is faster here";
}

TEST(CopyChooser, IdleGapsAreNotCounted) {
  // Cached is faster while busy, and every fourth cached copy is followed by a long idle gap
  // (the application stopped sending): counted, the gaps would make streaming win its tries.
  Channel ch;
  ch.rate_cached = 8;
  ch.rate_streamed = 4;
  bool gap = false;
  for (int i = 0; i < 4000; ++i) gap = ch.copy(gap ? CopyChooser::kBusyGapTicks + 1 : 0) && i % 4 == 0;
  EXPECT_GT(ch.chooser.windows(), 2u);
  EXPECT_EQ(ch.chooser.switches(), 0u);
}

TEST(CopyChooser, AWaitForRoomInTheRingIsCountedHoweverLong) {
  // Streaming copies are fast, but then the ring is full and the producer waits for its
  // consumer longer than an idle gap (an engine sending READ responses waits for the
  // requester's next frame): that wait is the consumer's pace and counts.
  Channel ch;
  ch.rate_cached = 4;
  ch.rate_streamed = 8;
  bool wait = false;
  for (int i = 0; i < 4000; ++i) {
    if (wait) ++ch.full;
    wait = !ch.copy(wait ? 2 * CopyChooser::kBusyGapTicks : 0);
  }
  EXPECT_GT(ch.chooser.windows(), 2u);
  EXPECT_EQ(ch.chooser.switches(), 0u);
}

TEST(CopyChooser, TheRingsFillAfterAChangeIsNotCounted) {
  // Right after a change the ring fills at the new way's pace: a try whose first ring of
  // bytes goes 100 times faster, and the rest under cached's rate, loses (counted, the fill
  // would make it win by 8 %).
  Channel fill;
  uint64_t streamed_bytes = 0;
  for (uint64_t b = 0; b < 40 * kWindow; b += kCopy) {
    const bool c = fill.chooser.cached(fill.now, kCopy, true, kRing, 0);
    streamed_bytes = c ? 0 : streamed_bytes + kCopy;
    const double rate = c ? 8 : (streamed_bytes <= kRing ? 400 : 6.5);
    fill.now += static_cast<uint64_t>(static_cast<double>(kCopy) / rate);
  }
  EXPECT_EQ(fill.chooser.switches(), 0u);
}

// At the receiver (ShmLink::choose_way) a try that loses by far is not ended early: there the
// settle disfavours the way tried. A try then costs a settle and a whole window, and the tries
// still thin out (8, 32, 128, then every 256 windows).
TEST(CopyChooser, WithoutTheEarlyEndATryRunsItsWindowAndTriesStillThinOut) {
  const uint64_t tried = tried_on_far_vcpus(false);
  EXPECT_GE(tried, kRing + kWindow) << "the first try ran its settle and window";
  EXPECT_GT(tried, 10 * (CopyChooser::kQuickLossBytes + kCopy)) << "not ended early";
  EXPECT_LE(tried, 8 * (kRing + kWindow + kCopy)) << "at most 8 tries in 1,000 windows";
}

// A receiver that sees bursts of the other way go by (a SEND's bursts always come through the
// ring, between WRITEs by reference) skips them: the time they took is not the way's. Here
// the way tried is twice as fast, and every burst of it follows a slow burst of the other
// way; counted, that time made the try lose (a third slower than home).
TEST(CopyChooser, TimeOnBurstsOfTheOtherWayIsNotCounted) {
  CopyChooser chooser(false);
  uint64_t now = 1'000;
  const double rate[2] = {4, 8};  // ring, by reference
  for (uint64_t b = 0; b < 200 * kWindow; b += kCopy) {
    const bool way = chooser.cached(now, kCopy, false, kRing, 0);
    now += static_cast<uint64_t>(static_cast<double>(kCopy) / rate[way ? 1 : 0]);
    // A SEND burst through the ring: the ring way's own, or another way's, which ends the
    // last one's time.
    if (way)
      chooser.done(now, kRing);
    else
      (void)chooser.cached(now, kCopy, false, kRing, 0);
    now += static_cast<uint64_t>(static_cast<double>(kCopy) / rate[0]);
  }
  EXPECT_GE(chooser.switches(), 1u);
  EXPECT_TRUE(chooser.way());
}

}  // namespace
}  // namespace softib::link
