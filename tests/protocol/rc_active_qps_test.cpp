// Device::progress() visits only the QPs that may have work for it (rc::Device::activate):
// a step must cost the same beside thousands of idle connections as alone, and a QP that
// went idle must come back at once when a frame, a post, a modify or an error gives it work.
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

TEST_F(RcActiveQps, IdleQpsAreNotVisited) {
  EXPECT_EQ(device.active_qps(), 0u);
  EXPECT_EQ(visits_of_progress(), 0u);
  post_send(qp, 1, 0, 16);
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(last_sent.size(), 1u);
  EXPECT_EQ(last_sent[0].opcode, Opcode::kRcSendOnly);
  const Psn psn = last_sent[0].psn();
  // Awaiting its ACK (the retransmission timer runs): still visited, alone.
  EXPECT_EQ(device.active_qps(), 1u);
  EXPECT_EQ(visits_of_progress(), 1u);
  deliver(ack(qp, psn, wire::Aeth::ack(1)));
  EXPECT_EQ(visits_of_progress(), 1u);
  ASSERT_EQ(poll(scq).size(), 1u);
  EXPECT_EQ(device.active_qps(), 0u) << "acknowledged and idle: dropped";
  EXPECT_EQ(visits_of_progress(), 0u);
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

}  // namespace
}  // namespace softib::testing
