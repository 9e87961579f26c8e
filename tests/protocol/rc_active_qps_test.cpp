// Device::progress() visits only the QPs that may have work for it (rc::Device::activate):
// a step must cost the same beside thousands of idle connections as alone, and a QP that
// went idle must come back at once when a frame, a post, a modify or an error gives it work.
// A QP awaiting only a timer (its ACK, an RNR wait) is parked until its deadline.
// Counted with DeviceCounters::qp_visits (no timing: style.md).
#include <vector>

#include "rc/timers.hpp"
#include "rc_fixture.hpp"

namespace softib::testing {
namespace {

constexpr int kIdle = 500;

class RcActiveQps : public RcProtocol {
 protected:
  RcActiveQps() {
    for (int i = 0; i < kIdle; ++i) idle.push_back(connect());
    qp = connect();
    progress();  // the modifies made them active; nothing to do, so none stays
  }
  uint64_t visits() const { return device.counters().qp_visits; }
  // progress(), and how many QPs it looked at.
  uint64_t visits_of_progress() {
    const uint64_t before = visits();
    last_sent = progress();
    return visits() - before;
  }

  std::vector<rc::Qp*> idle;
  rc::Qp* qp = nullptr;
  std::vector<Sent> last_sent;
};

// Every QP whose only work is a timer is parked, however few are active (the threshold that
// keeps a ping-pong's QP active, rc::Device::kFewActive, set to 0).
class RcParkedQps : public RcActiveQps {
 protected:
  RcParkedQps() { device.set_few_active(0); }
};

TEST_F(RcActiveQps, IdleQpsAreNotVisited) {
  EXPECT_EQ(device.active_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), 0u);
  post_send(qp, 1, 0, 16);
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u);
  EXPECT_EQ(last_sent[0].opcode, Opcode::kRcSendOnly);
  const Psn psn = last_sent[0].psn();
  // Awaiting its ACK, the one active QP: kept active (few are), not parked.
  EXPECT_EQ(device.active_qps(), 1u);
  EXPECT_EQ(device.parked_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), 1u);
  deliver(ack(qp, psn, wire::Aeth::ack(1)));
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(poll(scq).size(), 1u);
  EXPECT_EQ(device.active_qps(), 0u) << "acknowledged and idle: dropped";
  EXPECT_EQ(device.parked_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), 0u);
  EXPECT_FALSE(device.next_deadline().has_value());
}

TEST_F(RcActiveQps, AFrameMakesAnIdleQpActive) {
  rc::Qp* target = idle[kIdle / 2];
  post_recv(target, 7, 0, 64);
  const uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  deliver(hdr(target, Opcode::kRcSendOnly, Psn(QpOptions{}.rq_psn), true), payload);
  EXPECT_EQ(device.active_qps(), 1u);
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u) << "the ACK the SEND asked for";
  EXPECT_EQ(last_sent[0].opcode, Opcode::kRcAcknowledge);
  EXPECT_EQ(last_sent[0].to.dlid, kPeerLid);
  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].qp_num, target->qpn());
  EXPECT_EQ(device.active_qps(), 0u);
}

TEST_F(RcActiveQps, TheRetransmissionTimerFiresOnAQpThatNothingElseWakes) {
  post_send(qp, 1, 0, 16);
  ASSERT_EQ(progress().size(), 1u);
  const auto deadline = device.next_deadline();
  ASSERT_TRUE(deadline.has_value()) << "the one running timer, found among the idle QPs";
  clock.advance(rc::local_ack_timeout(QpOptions{}.timeout));
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u) << "retransmitted";
  EXPECT_EQ(device.counters().retransmits, 1u);
}

TEST_F(RcActiveQps, ManyQpsAwaitingAcksAreParkedAllButAFew) {
  // A server with requests in flight on many connections: each QP awaits its ACK with nothing
  // else to do. All but rc::Device::kFewActive are parked; a step visits only those few.
  constexpr size_t kWaiting = 40;
  const Psn psn(QpOptions{}.sq_psn);  // each QP's first
  for (size_t k = 0; k < kWaiting; ++k) post_send(idle[k], k, 0, 16);
  EXPECT_EQ(visits_of_progress(), kWaiting);
  ASSERT_EQ(last_sent.size(), kWaiting);
  for (const Sent& f : last_sent) EXPECT_EQ(f.psn(), psn);
  EXPECT_EQ(device.active_qps(), rc::Device::kFewActive);
  EXPECT_EQ(device.parked_qps(), kWaiting - rc::Device::kFewActive);
  EXPECT_EQ(visits_of_progress(), rc::Device::kFewActive);
  // Their ACKs: each QP is active again for one visit, then idle.
  for (size_t k = 0; k < kWaiting; ++k) deliver(ack(idle[k], psn, wire::Aeth::ack(1)));
  EXPECT_EQ(device.parked_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), kWaiting);
  EXPECT_EQ(poll(scq).size(), kWaiting);
  EXPECT_EQ(device.active_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), 0u);
  EXPECT_FALSE(device.next_deadline().has_value());
}

TEST_F(RcParkedQps, AParkedQpIsNotVisitedBeforeItsDeadlineAndRetransmitsAtIt) {
  post_send(qp, 1, 0, 16);
  ASSERT_EQ(progress().size(), 1u);
  const auto deadline = device.next_deadline();
  ASSERT_TRUE(deadline.has_value()) << "the one running timer, found among the idle QPs";
  EXPECT_GE(*deadline, clock.now() + rc::local_ack_timeout(QpOptions{}.timeout));
  // Up to the deadline no step looks at it.
  clock.set(*deadline - std::chrono::nanoseconds(1));
  EXPECT_EQ(visits_of_progress(), 0u);
  EXPECT_TRUE(last_sent.empty());
  clock.set(*deadline);
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u) << "retransmitted";
  EXPECT_EQ(device.counters().retransmits, 1u);
  // Parked again, behind its new deadline.
  EXPECT_EQ(device.parked_qps(), 1u);
  const auto again = device.next_deadline();
  ASSERT_TRUE(again.has_value());
  EXPECT_GE(*again, *deadline + rc::local_ack_timeout(QpOptions{}.timeout));
  EXPECT_EQ(visits_of_progress(), 0u);
}

TEST_F(RcParkedQps, ParkedQpsWakeEachAtItsOwnDeadline) {
  // Three QPs send 1 ms apart; the first is acknowledged, so the earliest deadline the device
  // noted belongs to a QP no longer parked: the step at that time looks, finds nothing due and
  // moves on to the next.
  rc::Qp* qps[3] = {idle[10], idle[20], idle[30]};
  TimePoint due[3];  // each QP's (virtual time has no coarse clock: the exact timeout)
  Psn first_psn;
  for (size_t k = 0; k < 3; ++k) {
    post_send(qps[k], k, 0, 16);
    const auto sent = progress();
    ASSERT_EQ(sent.size(), 1u);
    if (k == 0) first_psn = sent[0].psn();
    due[k] = clock.now() + rc::local_ack_timeout(QpOptions{}.timeout);
    ASSERT_TRUE(device.next_deadline().has_value());
    EXPECT_EQ(*device.next_deadline(), due[0]);
    clock.advance(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(device.parked_qps(), 3u);
  deliver(ack(qps[0], first_psn, wire::Aeth::ack(1)));
  EXPECT_EQ(visits_of_progress(), 1u);
  EXPECT_EQ(device.parked_qps(), 2u);
  clock.set(due[0]);
  EXPECT_EQ(visits_of_progress(), 0u) << "nothing due yet";
  ASSERT_TRUE(device.next_deadline().has_value());
  EXPECT_EQ(*device.next_deadline(), due[1]) << "the true earliest, found by that look";
  // Each QP is retransmitted at its own deadline, and only it is visited.
  for (size_t k = 1; k < 3; ++k) {
    SCOPED_TRACE(k);
    clock.set(due[k] - std::chrono::nanoseconds(1));
    EXPECT_EQ(visits_of_progress(), 0u);
    clock.set(due[k]);
    EXPECT_EQ(visits_of_progress(), 1u);
    ASSERT_EQ(last_sent.size(), 1u);
    EXPECT_EQ(last_sent[0].h.bth.opcode, static_cast<uint8_t>(Opcode::kRcSendOnly));
  }
  EXPECT_EQ(device.counters().retransmits, 2u);
  EXPECT_EQ(device.parked_qps(), 2u);
}

TEST_F(RcParkedQps, AnRnrWaitIsParkedAndResendsAtItsEnd) {
  post_send(qp, 1, 0, 16);
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  constexpr uint8_t kTimer = 5;  // 0.06 ms
  deliver(ack(qp, sent[0].psn(), wire::Aeth::rnr_nak(0, kTimer)));
  EXPECT_EQ(visits_of_progress(), 1u);
  EXPECT_TRUE(last_sent.empty()) << "waits out the RNR timer";
  EXPECT_EQ(device.parked_qps(), 1u);
  EXPECT_EQ(visits_of_progress(), 0u);
  ASSERT_TRUE(device.next_deadline().has_value());
  EXPECT_LE(*device.next_deadline(), clock.now() + rc::rnr_delay(kTimer) + std::chrono::milliseconds(1));
  clock.advance(rc::rnr_delay(kTimer));
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u) << "the SEND again";
  EXPECT_EQ(last_sent[0].psn(), sent[0].psn());
}

TEST_F(RcParkedQps, ErrorFlushesAParkedQp) {
  post_send(qp, 5, 0, 16);
  ASSERT_EQ(progress().size(), 1u);
  ASSERT_EQ(device.parked_qps(), 1u);
  QpAttr at;
  at.qp_state = QpState::kError;
  ASSERT_TRUE(device.modify_qp(qp, at, attr::kState).ok());
  EXPECT_EQ(device.parked_qps(), 0u);
  progress();
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 5u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(device.active_qps(), 0u);
  EXPECT_FALSE(device.next_deadline().has_value());
}

TEST_F(RcActiveQps, ModifyToErrorFlushesAnIdleQp) {
  rc::Qp* target = idle[3];
  post_recv(target, 11, 0, 64);
  post_recv(target, 12, 64, 64);
  QpAttr at;
  at.qp_state = QpState::kError;
  ASSERT_TRUE(device.modify_qp(target, at, attr::kState).ok());
  progress();
  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[1].wr_id, 12u);
  EXPECT_EQ(device.active_qps(), 0u);
  // A receive posted to it now, idle in Error, is flushed by the next step too (IBA 10.3.1).
  post_recv(target, 13, 0, 64);
  progress();
  const auto more = poll(rcq);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].wr_id, 13u);
  EXPECT_EQ(more[0].status, WcStatus::kWrFlushErr);
}

TEST_F(RcActiveQps, APostToAQpThatWentIdleSendsAgain) {
  for (uint32_t round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    post_send(qp, round, 0, 16);
    const auto sent = progress();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].psn(), Psn(QpOptions{}.sq_psn) + round);
    deliver(ack(qp, sent[0].psn(), wire::Aeth::ack(round + 1)));
    progress();
    ASSERT_EQ(poll(scq).size(), 1u);
    ASSERT_EQ(device.active_qps(), 0u);
  }
}

TEST_F(RcActiveQps, ADestroyedQpLeavesNothingBehindForProgress) {
  // Posted and not yet stepped (queued for the next progress()), then destroyed: the step
  // must not reach it (under ASan a stale entry is a use after free).
  post_send(idle[0], 1, 0, 16);
  post_send(qp, 2, 0, 16);
  ASSERT_TRUE(device.destroy_qp(idle[0]).ok());
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u);
  EXPECT_EQ(last_sent[0].h.bth.dest_qp, kPeerQpn);
  // Active (awaiting its ACK), then destroyed.
  ASSERT_TRUE(device.destroy_qp(qp).ok());
  EXPECT_EQ(device.active_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), 0u);
  EXPECT_FALSE(device.next_deadline().has_value());
}

TEST_F(RcParkedQps, ADestroyedParkedQpLeavesNothingBehind) {
  // Two parked (awaiting their ACKs); one destroyed: the other keeps its index right (a stale
  // one would be a use after free under ASan, or the wrong QP unparked).
  post_send(qp, 2, 0, 16);
  post_send(idle[1], 3, 0, 16);
  ASSERT_EQ(progress().size(), 2u);
  ASSERT_EQ(device.parked_qps(), 2u);
  ASSERT_TRUE(device.destroy_qp(qp).ok());
  EXPECT_EQ(device.active_qps(), 0u);
  EXPECT_EQ(device.parked_qps(), 1u);
  EXPECT_EQ(visits_of_progress(), 0u);
  clock.advance(rc::local_ack_timeout(QpOptions{}.timeout));
  EXPECT_EQ(visits_of_progress(), 1u) << "only the one left";
  ASSERT_EQ(last_sent.size(), 1u);
  EXPECT_EQ(last_sent[0].psn(), Psn(QpOptions{}.sq_psn));
  ASSERT_TRUE(device.destroy_qp(idle[1]).ok());
  EXPECT_EQ(device.parked_qps(), 0u);
  EXPECT_FALSE(device.next_deadline().has_value());
}

}  // namespace
}  // namespace softib::testing
