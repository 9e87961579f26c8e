#include "verbs/cq.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace softib::verbs {
namespace {

bool push_id(Cq& cq, uint64_t wr_id) {
  return cq.emplace(false, [&](WorkCompletion& wc) { wc.wr_id = wr_id; });
}

// A poll that steps the transport itself gets the first completion of its step in its own
// array (Cq::offer_direct, made under the progress lock around that step), never out of
// order with what the ring holds.
TEST(CqDirect, TheOfferingThreadsFirstCompletionGoesStraightToItsSlot) {
  Cq cq(4, nullptr);
  std::array<WorkCompletion, 2> out{};
  cq.offer_direct(out.data());
  ASSERT_TRUE(push_id(cq, 7));
  EXPECT_EQ(out[0].wr_id, 7u);
  EXPECT_EQ(cq.queued(), 1u);  // counted: the step knows its caller has its answer
  ASSERT_TRUE(push_id(cq, 8));  // the offer is used up: the ring, behind it
  EXPECT_EQ(cq.queued(), 2u);
  EXPECT_EQ(cq.withdraw_direct(), 1u);
  EXPECT_EQ(cq.queued(), 1u);
  EXPECT_EQ(cq.poll(std::span(out).subspan(1)), 1u);
  EXPECT_EQ(out[1].wr_id, 8u);
  EXPECT_EQ(cq.poll(out), 0u);
}

TEST(CqDirect, NothingJumpsAheadOfACompletionAlreadyQueued) {
  Cq cq(4, nullptr);
  ASSERT_TRUE(push_id(cq, 1));
  WorkCompletion slot{};
  slot.wr_id = 99;
  cq.offer_direct(&slot);
  ASSERT_TRUE(push_id(cq, 2));
  EXPECT_EQ(cq.withdraw_direct(), 0u);
  EXPECT_EQ(slot.wr_id, 99u);  // untouched
  std::array<WorkCompletion, 4> out{};
  ASSERT_EQ(cq.poll(out), 2u);
  EXPECT_EQ(out[0].wr_id, 1u);
  EXPECT_EQ(out[1].wr_id, 2u);
}

TEST(CqDirect, AWithdrawnOfferIsUnused) {
  Cq cq(4, nullptr);
  WorkCompletion slot{};
  slot.wr_id = 99;
  cq.offer_direct(&slot);
  EXPECT_EQ(cq.withdraw_direct(), 0u);  // the step pushed nothing
  ASSERT_TRUE(push_id(cq, 6));         // a later step's push, with no offer in force
  EXPECT_EQ(slot.wr_id, 99u);
  std::array<WorkCompletion, 4> out{};
  ASSERT_EQ(cq.poll(out), 1u);
  EXPECT_EQ(out[0].wr_id, 6u);
}

// A direct completion is still an armed CQ's event (IBA 11.4.2.2), as one pushed to the ring.
TEST(CqDirect, ADirectCompletionFiresTheArmedNotification) {
  Cq cq(2, nullptr);
  int notified = 0;
  cq.on_notify([&](Cq&) { ++notified; });
  cq.arm(false);
  WorkCompletion slot{};
  cq.offer_direct(&slot);
  ASSERT_TRUE(push_id(cq, 3));
  EXPECT_EQ(cq.withdraw_direct(), 1u);
  EXPECT_EQ(notified, 1);
  EXPECT_FALSE(cq.armed());
}

// A full ring still overruns: an offer does not take what the ring could not hold, since
// something older is queued whenever the ring is full.
TEST(CqDirect, AFullRingStillOverruns) {
  Cq cq(1, nullptr);
  int overruns = 0;
  cq.on_overrun([&](Cq&) { ++overruns; });
  ASSERT_TRUE(push_id(cq, 1));
  WorkCompletion slot{};
  cq.offer_direct(&slot);
  EXPECT_FALSE(push_id(cq, 2));
  EXPECT_EQ(cq.withdraw_direct(), 0u);
  EXPECT_EQ(overruns, 1);
  EXPECT_TRUE(cq.overrun());
}

}  // namespace
}  // namespace softib::verbs
