// ACK coalescing across the two sides of a QP (IBA 9.7.5.1.1; rc/README.md, Requester and
// Responder): which request packets ask for an ACK (rc::Device::asks_ack, as a ConnectX QP's
// log_ack_req_freq), and how a responder acknowledges those that asked for none
// (ResponderState::ack_lazy): with the next requested ACK, in a NAK's place, or at a step that
// takes no frame (AckPolicy::kSendAll). One rc::Device, hand-built packets, virtual time.
#include "protocol/rc_fixture.hpp"
#include "rc/timers.hpp"

namespace softib::testing {
namespace {

using std::chrono::microseconds;

// A QP whose timeout lets ACKs wait (Qp::acks_may_wait: 13 and more).
class RcAck : public RcProtocol {
 protected:
  void SetUp() override {
    options.timeout = 14;  // 67 ms
    qp = connect(QpType::kRc, options);
  }
  Psn sq_psn() const { return Psn(options.sq_psn); }
  Psn epsn() const { return Psn(options.rq_psn); }
  void ack_at(uint32_t offset, uint32_t msn = 0) { deliver(ack(qp, sq_psn() + offset, wire::Aeth::ack(msn))); }
  TransportHeaders req(Opcode op, uint32_t psn_offset, bool ack_req = false) const {
    return hdr(qp, op, epsn() + psn_offset, ack_req);
  }
  // One one-packet SEND posted and sent; its AckReq bit.
  bool send_asks(uint64_t wr_id, uint32_t flags) {
    post_send(qp, wr_id, 0, 64, flags);
    const auto sent = progress();
    EXPECT_EQ(sent.size(), 1u);
    return !sent.empty() && sent[0].h.bth.ack_req;
  }

  QpOptions options;
  rc::Qp* qp = nullptr;
};

// ---- the requester: AckReq ----


TEST_F(RcAck, AnUnsignaledSendAsksForNoAckASignaledOneDoes) {
  fill(0, 64, 2);
  EXPECT_FALSE(send_asks(1, 0));
  EXPECT_FALSE(send_asks(2, send_flag::kInline));
  EXPECT_TRUE(send_asks(3, send_flag::kSignaled));
  // The ACK of the signaled one retires all three; only it completes.
  ack_at(2, 3);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 3u);
  EXPECT_TRUE(progress().empty());
}

TEST_F(RcAck, UnsignaledSendsAskEveryKAckReqIntervalPackets) {
  fill(0, 64, 2);
  for (uint32_t i = 1; i <= 2 * rc::kAckReqInterval; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(send_asks(i, 0), i % rc::kAckReqInterval == 0);
  }
}

TEST_F(RcAck, ARetransmissionAsksForAnAck) {
  fill(0, 64, 2);
  EXPECT_FALSE(send_asks(1, 0));
  clock.advance(rc::local_ack_timeout(options.timeout) + microseconds(1));
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].psn(), sq_psn());
  EXPECT_TRUE(sent[0].h.bth.ack_req) << "the retry is answered at once";
  EXPECT_EQ(device.counters().retransmits, 1u);
}

TEST_F(RcAck, AShallowSendQueueAsksEveryHalfItsDepth) {
  QpOptions shallow = options;
  shallow.depth = 8;
  qp = connect(QpType::kRc, shallow);
  fill(0, 64, 2);
  for (uint32_t i = 1; i <= 8; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(send_asks(i, 0), i % 4 == 0) << "its slots come back with ACKs";
    if (i % 4 == 0) ack_at(i - 1);
  }
}

TEST_F(RcAck, AQpWithAShortTimeoutAsksForEveryAck) {
  QpOptions short_timeout = options;
  short_timeout.timeout = 10;  // 4 ms: below kHoldAckMinTimeout, a responder's lazy ACK may be late
  qp = connect(QpType::kRc, short_timeout);
  fill(0, 64, 2);
  EXPECT_TRUE(send_asks(1, 0));
}

// ---- the responder: lazy ACKs ----

// A request that asked for no ACK (AckReq clear) is acknowledged lazily: not by the steps of
// a ping-pong (kSendNow, kHoldOneStep), but with the next ACK a request asks for, or by a step
// that took no frame (kSendAll, progress()'s default).
TEST_F(RcAck, ARequestThatAskedForNoAckIsAcknowledgedOnlyByAnIdleStep) {
  post_recv(qp, 1, 4096, 64);
  fill(0, 64, 3);
  deliver(req(Opcode::kRcSendOnly, 0), bytes(0, 64));
  ASSERT_EQ(poll(rcq).size(), 1u) << "executed at once";
  device.progress(rc::Device::AckPolicy::kHoldOneStep);
  device.progress(rc::Device::AckPolicy::kSendNow);
  EXPECT_TRUE(sink.take().empty()) << "nobody waits on it";
  device.progress(rc::Device::AckPolicy::kSendAll);
  const Sent a = only_ack(sink.take());
  EXPECT_EQ(a.psn(), epsn());
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.msn(), 1u);
  EXPECT_TRUE(progress().empty()) << "once";
}

TEST_F(RcAck, ALazyAckGoesWithTheNextOneARequestAsksFor) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  fill(0, 64, 3);
  deliver(req(Opcode::kRcSendOnly, 0), bytes(0, 64));
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 64));
  device.progress(rc::Device::AckPolicy::kSendNow);
  const Sent a = only_ack(sink.take());
  EXPECT_EQ(a.psn(), epsn() + 1) << "one ACK for both";
  EXPECT_EQ(a.msn(), 2u);
  EXPECT_TRUE(progress().empty());
}

TEST_F(RcAck, ANakTakesTheLazyAcksPlaceAndARetryIsAnsweredAtOnce) {
  post_recv(qp, 1, 4096, 64);
  fill(0, 64, 3);
  deliver(req(Opcode::kRcSendOnly, 0), bytes(0, 64));
  deliver(req(Opcode::kRcSendOnly, 2), bytes(0, 64));  // PSN 1 lost
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn() + 1) << "the NAK acknowledges PSN 0 too";
  EXPECT_EQ(n.syndrome(), kNakPsnSequence);
  EXPECT_TRUE(progress().empty()) << "no lazy ACK after it";
  // The requester's retry of PSN 0 (a duplicate), asking for nothing: answered at once.
  deliver(req(Opcode::kRcSendOnly, 0), bytes(0, 64));
  device.progress(rc::Device::AckPolicy::kSendNow);
  const Sent d = only_ack(sink.take());
  EXPECT_EQ(d.psn(), epsn());
}

}  // namespace
}  // namespace softib::testing
