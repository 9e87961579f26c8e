// The responder (IBA 9.7.5.1, 9.8, 9.9) driven packet by packet: what it acknowledges, what it
// NAKs and with which syndrome, what it executes, what it drops and counts.
#include <arpa/inet.h>

#include <algorithm>

#include "protocol/rc_fixture.hpp"
#include "wire/grh.hpp"

namespace softib::testing {
namespace {

class RcResponderProtocol : public RcProtocol {
 protected:
  void SetUp() override { qp = connect(QpType::kRc, options); }
  Psn epsn() const { return Psn(options.rq_psn); }
  TransportHeaders req(Opcode op, uint32_t psn_offset, bool ack_req = false) const {
    return hdr(qp, op, epsn() + psn_offset, ack_req);
  }
  TransportHeaders write(Opcode op, uint32_t psn_offset, uint64_t va, RKey rkey, uint32_t dma_len,
                         bool ack_req = true) const {
    TransportHeaders h = req(op, psn_offset, ack_req);
    h.reth = wire::Reth{va, rkey, dma_len};
    return h;
  }
  TransportHeaders read(uint32_t psn_offset, uint64_t va, uint32_t dma_len) const {
    TransportHeaders h = req(Opcode::kRcRdmaReadRequest, psn_offset);
    h.reth = wire::Reth{va, mr->rkey, dma_len};
    return h;
  }
  TransportHeaders fetch_add(uint32_t psn_offset, uint64_t va, uint64_t add) const {
    TransportHeaders h = req(Opcode::kRcFetchAdd, psn_offset);
    h.atomic_eth = wire::AtomicEth{va, mr->rkey, add, 0};
    return h;
  }
  QpOptions options;
  rc::Qp* qp = nullptr;
};

// ---- SEND ----

TEST_F(RcResponderProtocol, InOrderSendIsAcknowledgedOnceAtTheLastAckReqPsn) {
  post_recv(qp, 7, 4096, 1024);
  fill(0, 600, 3);
  deliver(req(Opcode::kRcSendFirst, 0), bytes(0, 256));
  deliver(req(Opcode::kRcSendMiddle, 1, true), bytes(256, 256));
  deliver(req(Opcode::kRcSendLast, 2, true), bytes(512, 88));
  EXPECT_TRUE(sink.frames.empty()) << "acknowledgements are coalesced until progress()";
  const Sent a = only_ack(progress());
  EXPECT_EQ(a.psn(), epsn() + 2);
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.msn(), 1u);
  EXPECT_TRUE(progress().empty()) << "one ACK, not one per progress";

  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kRecv);
  EXPECT_EQ(wc[0].byte_len, 600u);
  EXPECT_EQ(wc[0].src_qp, kPeerQpn);
  EXPECT_EQ(wc[0].slid, kPeerLid);
  EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 600, buffer.begin() + 4096));
}

TEST_F(RcResponderProtocol, PsnGapIsNakedOnceWithTheExpectedPsn) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  const Sent n = only_ack(sink.take());  // a NAK goes out at once
  EXPECT_EQ(n.psn(), epsn());
  EXPECT_EQ(n.syndrome(), kNakPsnSequence);
  EXPECT_EQ(n.msn(), 0u);

  // Later out-of-order packets are dropped silently until the expected PSN arrives.
  deliver(req(Opcode::kRcSendOnly, 2, true), bytes(0, 16));
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  EXPECT_TRUE(sink.take().empty());
  EXPECT_TRUE(progress().empty());
  EXPECT_EQ(device.counters().seq_naks_sent, 1u);
  EXPECT_EQ(device.counters().dropped(rc::Drop::kPsnOutOfOrder), 3u);
  EXPECT_TRUE(poll(rcq).empty());

  // The expected PSN, then the retransmitted rest: accepted and acknowledged.
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  const Sent a = only_ack(progress());
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.psn(), epsn() + 1);
  EXPECT_EQ(a.msn(), 2u);
  EXPECT_EQ(poll(rcq).size(), 2u);

  // A new gap after recovery is NAKed again.
  deliver(req(Opcode::kRcSendOnly, 5, true), bytes(0, 16));
  const Sent n2 = only_ack(sink.take());
  EXPECT_EQ(n2.syndrome(), kNakPsnSequence);
  EXPECT_EQ(n2.psn(), epsn() + 2);
}

// An application thread's step holds a coalesced ACK back one step (rc::Device::AckPolicy),
// on QPs whose timeout is at least kHoldAckMinTimeout: the completion is there at once, the
// ACK goes out with the next step, and a NAK never overtakes it.
class RcResponderProtocolHoldsAcks : public RcResponderProtocol {
 protected:
  RcResponderProtocolHoldsAcks() { options.timeout = rc::kHoldAckMinTimeout; }
  void SetUp() override {
    RcResponderProtocol::SetUp();
    // The connection's modifies owe a walk (a new state may give the QP work): the step after
    // them walks, as it does here.
    EXPECT_FALSE(device.hold_acks_without_progress());
    EXPECT_TRUE(progress().empty());
  }
  std::vector<Sent> progress_holding() {
    device.progress(rc::Device::AckPolicy::kHoldOneStep);
    return sink.take();
  }
};

TEST_F(RcResponderProtocolHoldsAcks, TheAckWaitsOneStepAndCoalescesWhatCameMeanwhile) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  EXPECT_TRUE(progress_holding().empty()) << "held for one step";
  EXPECT_EQ(poll(rcq).size(), 1u) << "the completion does not wait";
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  const Sent a = only_ack(progress_holding());
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.psn(), epsn() + 1) << "one ACK for both";
  EXPECT_EQ(a.msn(), 2u);
  EXPECT_TRUE(progress_holding().empty());
  EXPECT_TRUE(progress().empty());
}

TEST_F(RcResponderProtocolHoldsAcks, AnEngineStepSendsAHeldAckAtOnce) {
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  EXPECT_TRUE(progress_holding().empty());
  EXPECT_EQ(only_ack(progress()).psn(), epsn());
}

TEST_F(RcResponderProtocolHoldsAcks, ANakGoesOutAfterTheHeldAck) {
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  EXPECT_TRUE(progress_holding().empty());
  deliver(req(Opcode::kRcSendOnly, 2, true), bytes(0, 16));  // PSN gap
  const std::vector<Sent> sent = sink.take();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].syndrome(), kAckSyndrome);
  EXPECT_EQ(sent[0].psn(), epsn());
  EXPECT_EQ(sent[1].syndrome(), kNakPsnSequence);
  EXPECT_EQ(sent[1].psn(), epsn() + 1);
  EXPECT_TRUE(progress_holding().empty()) << "nothing left to send";
}

// A poll's step holds the ACK so that the answer the application posts next goes ahead of it
// (the ping-pong's latency): the answer, then the ACK.
TEST_F(RcResponderProtocolHoldsAcks, AHeldAckGoesBehindTheAnswerOfTheNextStep) {
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  EXPECT_TRUE(progress_holding().empty());
  post_send(qp, 2, 0, 8);
  const std::vector<Sent> sent = progress_holding();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly) << "the answer first";
  EXPECT_EQ(sent[1].opcode, Opcode::kRcAcknowledge);
  EXPECT_EQ(sent[1].psn(), epsn());
}

// The step of a poll that has its answer skips progress()'s walk over every QP when all it
// would do is hold one fast-path SEND's ACK (Device::hold_acks_without_progress): the same
// frames go out, in the same order, as after a holding progress().
TEST_F(RcResponderProtocolHoldsAcks, APollWithItsAnswerHoldsAFastPathSendsAckWithoutTheWalk) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  EXPECT_EQ(device.counters().fast_received, 1u);
  ASSERT_TRUE(device.hold_acks_without_progress());
  EXPECT_TRUE(sink.take().empty()) << "held";
  EXPECT_EQ(poll(rcq).size(), 1u);
  EXPECT_FALSE(device.hold_acks_without_progress()) << "an ACK is held: the next step must walk to send it";
  post_send(qp, 3, 0, 8);
  std::vector<Sent> sent = progress_holding();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly) << "the answer first";
  EXPECT_EQ(sent[1].opcode, Opcode::kRcAcknowledge);
  EXPECT_EQ(sent[1].psn(), epsn());
  // Held again: the next step's walk sends it, answer or not.
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  ASSERT_TRUE(device.hold_acks_without_progress());
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(only_ack(progress_holding()).psn(), epsn() + 1);
  EXPECT_TRUE(progress().empty());
}

TEST_F(RcResponderProtocolHoldsAcks, AHeldAckIsCoalescedByTheWalkNotHeldAgain) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  ASSERT_TRUE(device.hold_acks_without_progress());
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  ASSERT_FALSE(device.hold_acks_without_progress());
  const Sent a = only_ack(progress_holding());
  EXPECT_EQ(a.psn(), epsn() + 1) << "one ACK for both, not held a second step";
  EXPECT_EQ(a.msn(), 2u);
}

// A one-packet RDMA WRITE is a fast path's too (Device::receive_write_only): its ACK is held
// without the walk, as a fast-path SEND's.
TEST_F(RcResponderProtocolHoldsAcks, AFastPathWritesAckIsHeldAsAFastPathSends) {
  fill(1024, 16, 0);
  deliver(write(Opcode::kRcRdmaWriteOnly, 0, addr(2048), mr->rkey, 16), bytes(1024, 16));
  EXPECT_EQ(device.counters().fast_received, 1u);
  EXPECT_TRUE(std::equal(buffer.begin() + 1024, buffer.begin() + 1040, buffer.begin() + 2048)) << "the bytes landed";
  ASSERT_TRUE(device.hold_acks_without_progress());
  EXPECT_TRUE(sink.take().empty()) << "held";
  EXPECT_EQ(only_ack(progress_holding()).psn(), epsn()) << "the next step's walk sends it";
  EXPECT_TRUE(progress().empty());
}

TEST_F(RcResponderProtocolHoldsAcks, AnythingButAFastPathSendLeavesTheWalkToProgress) {
  // An RDMA WRITE with immediate (the general path: it takes a receive WQE): progress() holds
  // its ACK as before.
  post_recv(qp, 9, 12288, 64);
  TransportHeaders w = write(Opcode::kRcRdmaWriteOnlyWithImmediate, 0, addr(1024), mr->rkey, 16);
  w.immdt = wire::ImmDt{7};
  deliver(w, bytes(0, 16));
  EXPECT_EQ(device.counters().fast_received, 0u);
  EXPECT_EQ(poll(rcq).size(), 1u);
  EXPECT_FALSE(device.hold_acks_without_progress());
  EXPECT_TRUE(sink.take().empty()) << "changed nothing";
  EXPECT_TRUE(progress_holding().empty());
  EXPECT_EQ(only_ack(progress_holding()).psn(), epsn());
  // SENDs to two QPs in one step.
  rc::Qp* other = connect(QpType::kRc, options);
  post_recv(qp, 1, 4096, 64);
  post_recv(other, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  deliver(hdr(other, Opcode::kRcSendOnly, Psn(options.rq_psn), true), bytes(0, 16));
  EXPECT_EQ(device.counters().fast_received, 2u);
  EXPECT_FALSE(device.hold_acks_without_progress());
  EXPECT_TRUE(progress_holding().empty());
  EXPECT_EQ(progress_holding().size(), 2u) << "both ACKs, one step later";
  // An ACK from the peer that completes what was sent and lets nothing out: no walk either
  // (perftest's ib_send_lat: each send's ACK comes in the step that takes the peer's next
  // request, and that step has its answer).
  post_send(qp, 3, 0, 8);
  ASSERT_EQ(progress().size(), 1u);
  deliver(ack(qp, Psn(options.sq_psn), wire::Aeth::ack(1)));
  EXPECT_EQ(poll(scq).size(), 1u);
  EXPECT_TRUE(device.hold_acks_without_progress()) << "the ACK let nothing out";
  // One that opens the window of unacknowledged packets to a request waiting behind it: the
  // walk sends that request.
  post_send(qp, 4, 0, 64 * 1024);  // 256 packets
  post_send(qp, 5, 0, 64 * 1024);  // 256 more: the window (kMaxUnackedPackets) is full
  post_send(qp, 6, 0, 8);          // waits
  ASSERT_EQ(progress().size(), rc::kMaxUnackedPackets);
  deliver(ack(qp, Psn(options.sq_psn) + 1, wire::Aeth::ack(2)));  // the first of the 512
  EXPECT_FALSE(device.hold_acks_without_progress()) << "the ACK let a request out";
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].psn(), Psn(options.sq_psn) + 1 + rc::kMaxUnackedPackets);
  progress();
  EXPECT_TRUE(device.hold_acks_without_progress()) << "nothing came in since the walk: nothing to hold";
}

// Work that reached a QP other than through a fast-path SEND since the last walk leaves the
// walk to progress(): a modify (a new state may let it send, drain or flush), an error (its
// flush), and a post by a thread that could not take the device lock (queued for the walk).
TEST_F(RcResponderProtocolHoldsAcks, AModifyAnErrorOrAnotherThreadsPostLeavesTheWalkToProgress) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  QpAttr at;
  at.qp_access_flags = options.access;  // RTS -> RTS
  const Status st = device.modify_qp(qp, at, attr::kAccessFlags);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(only_ack(sink.take()).psn(), epsn()) << "a modify sends what the QP owes first";
  EXPECT_FALSE(device.hold_acks_without_progress());
  EXPECT_TRUE(progress_holding().empty());
  EXPECT_EQ(poll(rcq).size(), 1u);

  // Another thread's post, queued for the walk: the step that skipped it would leave the
  // request unsent until some later walk.
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  post_send(qp, 3, 0, 8);
  device.queue_posted(*qp);
  EXPECT_FALSE(device.hold_acks_without_progress());
  std::vector<Sent> sent = progress_holding();
  ASSERT_EQ(sent.size(), 1u) << "the request; the ACK held";
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly);
  EXPECT_EQ(only_ack(progress_holding()).psn(), epsn() + 1);
  EXPECT_EQ(poll(rcq).size(), 1u);

  // To Error: the remaining receive WQE is flushed by the walk.
  deliver(req(Opcode::kRcSendOnly, 2, true), bytes(0, 16));  // no receive WQE: the general path
  sink.take();
  progress();
  sink.take();
  post_recv(qp, 4, 4096, 64);
  at = {};
  at.qp_state = QpState::kError;
  ASSERT_TRUE(device.modify_qp(qp, at, attr::kState).ok());
  EXPECT_FALSE(device.hold_acks_without_progress()) << "its flush waits for the walk";
  progress();
  const std::vector<WorkCompletion> flushed = poll(rcq);
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(flushed[0].wr_id, 4u);
}

// An ACK that is not held goes ahead of a request posted after its request arrived, as a
// device sends it on taking the request: a program that waits on one channel for its send's
// event and then for the reply's (perftest 4.5 ib_send_lat -e, one channel for both CQs) gets
// them in that order. The engine's step, woken application posting while it took frames, sent
// the request first, and the program read the reply's event as its send's.
TEST_F(RcResponderProtocolHoldsAcks, AnAckGoesAheadOfRequestsPostedAfterItsRequestArrived) {
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  post_send(qp, 2, 0, 8);
  const std::vector<Sent> sent = progress();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcAcknowledge) << "the ACK first";
  EXPECT_EQ(sent[0].psn(), epsn());
  EXPECT_EQ(sent[1].opcode, Opcode::kRcSendOnly);
}

TEST_F(RcResponderProtocol, AQpWithAShortTimeoutNeverHasItsAckHeld) {
  ASSERT_LT(options.timeout, rc::kHoldAckMinTimeout);
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  device.progress(rc::Device::AckPolicy::kHoldOneStep);
  EXPECT_EQ(only_ack(sink.take()).psn(), epsn());
}

TEST_F(RcResponderProtocol, AQpWithAShortTimeoutHasItsAckSentByTheWalkNotHeldWithoutIt) {
  ASSERT_LT(options.timeout, rc::kHoldAckMinTimeout);
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  EXPECT_FALSE(device.hold_acks_without_progress());
  device.progress(rc::Device::AckPolicy::kHoldOneStep);
  EXPECT_EQ(only_ack(sink.take()).psn(), epsn());
}

TEST_F(RcResponderProtocol, DuplicateSendIsAcknowledgedAgainNotExecuted) {
  post_recv(qp, 1, 4096, 64);
  post_recv(qp, 2, 8192, 64);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  deliver(req(Opcode::kRcSendOnly, 1, true), bytes(0, 16));
  EXPECT_EQ(only_ack(progress()).psn(), epsn() + 1);
  ASSERT_EQ(poll(rcq).size(), 2u);

  // The first one again (its ACK was lost): re-ACK of epsn - 1, the newest PSN executed.
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  const Sent a = only_ack(progress());
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.psn(), epsn() + 1);
  EXPECT_EQ(a.msn(), 2u);
  EXPECT_TRUE(poll(rcq).empty()) << "a duplicate consumes no receive WQE";
  EXPECT_EQ(device.counters().dropped(rc::Drop::kDuplicate), 1u);
}

TEST_F(RcResponderProtocol, NoReceiveWqeIsAnRnrNakThenTheRetryIsAccepted) {
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn());
  EXPECT_EQ(n.syndrome(), rnr_syndrome(options.min_rnr_timer));
  EXPECT_EQ(n.msn(), 0u);
  EXPECT_EQ(device.counters().rnr_naks_sent, 1u);
  EXPECT_EQ(qp->state(), QpState::kRts);

  post_recv(qp, 9, 4096, 64);
  fill(0, 16, 5);
  deliver(req(Opcode::kRcSendOnly, 0, true), bytes(0, 16));
  const Sent a = only_ack(progress());
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.psn(), epsn());
  EXPECT_EQ(a.msn(), 1u);
  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 9u);
  EXPECT_EQ(wc[0].byte_len, 16u);
  EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 16, buffer.begin() + 4096));
}

TEST_F(RcResponderProtocol, MiddleWithoutFirstIsAnInvalidRequest) {
  post_recv(qp, 1, 4096, 1024);
  deliver(req(Opcode::kRcSendMiddle, 0, true), bytes(0, 256));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn());
  EXPECT_EQ(n.syndrome(), kNakInvalidRequest);
  EXPECT_EQ(qp->state(), QpState::kError);
  progress();
  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
}

TEST_F(RcResponderProtocol, FirstInsideASendIsAnInvalidRequest) {
  post_recv(qp, 1, 4096, 1024);
  post_recv(qp, 2, 8192, 1024);
  deliver(req(Opcode::kRcSendFirst, 0), bytes(0, 256));
  deliver(req(Opcode::kRcSendFirst, 1), bytes(0, 256));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn() + 1);
  EXPECT_EQ(n.syndrome(), kNakInvalidRequest);
  EXPECT_EQ(qp->state(), QpState::kError);
  progress();
  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 2u);  // the one the SEND had taken, and the other: in the order posted
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
}

// A multi-packet SEND cut short by the QP's move to Error: the receive WQE it had taken was
// posted first, so it is flushed first (a queue completes in order; it came after the queued
// ones until fuzz_verbs_ops found it).
TEST_F(RcResponderProtocol, ASendCutShortFlushesItsReceiveWqeFirst) {
  for (uint64_t id = 1; id <= 3; ++id) post_recv(qp, id, 4096 * id, 1024);
  deliver(req(Opcode::kRcSendFirst, 0), bytes(0, 256));
  deliver(req(Opcode::kRcSendMiddle, 1), bytes(256, 256));
  QpAttr at;
  at.qp_state = QpState::kError;
  ASSERT_TRUE(device.modify_qp(qp, at, attr::kState).ok());
  progress();
  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 3u);
  for (size_t i = 0; i < wc.size(); ++i) {
    EXPECT_EQ(wc[i].wr_id, i + 1);
    EXPECT_EQ(wc[i].status, WcStatus::kWrFlushErr);
  }
}

TEST_F(RcResponderProtocol, ShortFirstPacketIsAnInvalidRequest) {
  // IBA 9.7.5.1.x / rxe check_length: a FIRST or MIDDLE packet carries exactly one PMTU.
  post_recv(qp, 1, 4096, 1024);
  deliver(req(Opcode::kRcSendFirst, 0), bytes(0, 128));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.syndrome(), kNakInvalidRequest);
  EXPECT_EQ(qp->state(), QpState::kError);
}

// ---- RDMA WRITE ----

TEST_F(RcResponderProtocol, WriteIsPlacedAndAcknowledged) {
  fill(0, 300, 9);
  deliver(write(Opcode::kRcRdmaWriteFirst, 0, addr(8192), mr->rkey, 300, false), bytes(0, 256));
  deliver(req(Opcode::kRcRdmaWriteLast, 1, true), bytes(256, 44));
  const Sent a = only_ack(progress());
  EXPECT_EQ(a.syndrome(), kAckSyndrome);
  EXPECT_EQ(a.psn(), epsn() + 1);
  EXPECT_EQ(a.msn(), 1u);
  EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 300, buffer.begin() + 8192));
  EXPECT_TRUE(poll(rcq).empty());
}

TEST_F(RcResponderProtocol, WriteWithBadRkeyIsARemoteAccessError) {
  deliver(write(Opcode::kRcRdmaWriteOnly, 0, addr(8192), RKey(mr->rkey.value() ^ 1), 16), bytes(0, 16));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn());
  EXPECT_EQ(n.syndrome(), kNakRemoteAccess);
  EXPECT_EQ(qp->state(), QpState::kError);
}

TEST_F(RcResponderProtocol, WriteOutOfBoundsIsARemoteAccessError) {
  deliver(write(Opcode::kRcRdmaWriteOnly, 0, addr(buffer.size() - 8), mr->rkey, 16), bytes(0, 16));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.syndrome(), kNakRemoteAccess);
  EXPECT_EQ(qp->state(), QpState::kError);
}

class RcResponderProtocolNoRemoteWrite : public RcResponderProtocol {
 protected:
  RcResponderProtocolNoRemoteWrite() { options.access = access::kRemoteRead; }
};

TEST_F(RcResponderProtocolNoRemoteWrite, WriteIsARemoteAccessError) {
  std::fill(buffer.begin() + 8192, buffer.begin() + 8192 + 16, 0xAA);
  fill(0, 16, 1);
  deliver(write(Opcode::kRcRdmaWriteOnly, 0, addr(8192), mr->rkey, 16), bytes(0, 16));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.syndrome(), kNakRemoteAccess);
  EXPECT_EQ(qp->state(), QpState::kError);
  EXPECT_EQ(buffer[8192], 0xAA) << "nothing written";
}

TEST_F(RcResponderProtocol, WriteLongerThanItsDmaLenIsAnInvalidRequest) {
  std::fill(buffer.begin() + 8192, buffer.begin() + 8192 + 600, 0xAA);
  deliver(write(Opcode::kRcRdmaWriteFirst, 0, addr(8192), mr->rkey, 300, false), bytes(0, 256));
  deliver(req(Opcode::kRcRdmaWriteLast, 1, true), bytes(256, 256));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn() + 1);
  EXPECT_EQ(n.syndrome(), kNakInvalidRequest);
  EXPECT_EQ(qp->state(), QpState::kError);
  EXPECT_EQ(buffer[8192 + 256], 0xAA) << "the packet that overflows writes nothing";
}

// ---- RDMA READ ----

TEST_F(RcResponderProtocol, ReadIsAnsweredFirstMiddleLast) {
  fill(1000, 600, 17);
  deliver(read(0, addr(1000), 600));
  const auto sent = sink.take();  // responses go out at once
  ASSERT_EQ(sent.size(), 3u);
  const Opcode want[3] = {Opcode::kRcRdmaReadResponseFirst, Opcode::kRcRdmaReadResponseMiddle,
                          Opcode::kRcRdmaReadResponseLast};
  const uint32_t len[3] = {256, 256, 88};
  size_t at = 1000;
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(sent[i].opcode, want[i]);
    EXPECT_EQ(sent[i].psn(), epsn() + static_cast<uint32_t>(i));
    EXPECT_EQ(sent[i].h.bth.dest_qp, kPeerQpn);
    EXPECT_EQ(sent[i].h.aeth.has_value(), i != 1) << "AETH on the first and last only";
    if (sent[i].h.aeth) {
      EXPECT_EQ(sent[i].syndrome(), kAckSyndrome);
      EXPECT_EQ(sent[i].msn(), 1u);
    }
    ASSERT_EQ(sent[i].payload.size(), len[i]);
    EXPECT_TRUE(std::equal(sent[i].payload.begin(), sent[i].payload.end(), buffer.data() + at));
    at += len[i];
  }
  // The next request takes the PSN after the last response.
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 3, true), bytes(0, 8));
  EXPECT_EQ(only_ack(progress()).psn(), epsn() + 3);
}

// Flow control (rc/frame.hpp): a link that cannot take a frame holds the responses back; they
// leave later in the same order, and an acknowledgement never overtakes a response.
TEST_F(RcResponderProtocol, RefusedReadResponsesGoOutLaterInOrder) {
  fill(1000, 600, 17);
  sink.refuse = 1;  // the first response is refused
  deliver(read(0, addr(1000), 600));
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(sink.refused, 1u);
  // A SEND arrives meanwhile: its ACK must wait behind the READ's responses.
  post_recv(qp, 1, 4096, 64);
  deliver(req(Opcode::kRcSendOnly, 3, true), bytes(0, 8));
  sink.refuse = 2;  // two more refusals on the next step: the FIRST again, then it gets through
  EXPECT_TRUE(progress().empty());
  EXPECT_TRUE(device.output_blocked());
  auto sent = progress();
  sent.insert(sent.end(), sink.frames.begin(), sink.frames.end());
  sink.frames.clear();
  auto more = progress();
  sent.insert(sent.end(), more.begin(), more.end());
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadResponseFirst);
  EXPECT_EQ(sent[1].opcode, Opcode::kRcRdmaReadResponseMiddle);
  EXPECT_EQ(sent[2].opcode, Opcode::kRcRdmaReadResponseLast);
  EXPECT_EQ(sent[2].psn(), epsn() + 2);
  EXPECT_TRUE(std::equal(sent[2].payload.begin(), sent[2].payload.end(), buffer.data() + 1512));
  EXPECT_EQ(sent[3].opcode, Opcode::kRcAcknowledge);
  EXPECT_EQ(sent[3].psn(), epsn() + 3);
  EXPECT_FALSE(device.output_blocked());
}

TEST_F(RcResponderProtocol, ARefusedNakIsSentLater) {
  sink.refuse = 1;
  deliver(req(Opcode::kRcSendOnly, 2, true), bytes(0, 16));  // a PSN gap: NAK, refused
  EXPECT_TRUE(sink.frames.empty());
  const Sent n = only_ack(progress());
  EXPECT_EQ(n.syndrome(), kNakPsnSequence);
  EXPECT_EQ(n.psn(), epsn());
}

TEST_F(RcResponderProtocol, DuplicateReadFromTheMiddleIsReplayedFromThatPsn) {
  fill(1000, 600, 17);
  deliver(read(0, addr(1000), 600));
  ASSERT_EQ(sink.take().size(), 3u);
  // The requester lost the MIDDLE response and asks for the rest (IBA 9.7.5.1.3 / o9-21).
  deliver(read(1, addr(1000 + 256), 600 - 256));
  const auto sent = sink.take();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadResponseFirst);
  EXPECT_EQ(sent[0].psn(), epsn() + 1);
  EXPECT_EQ(sent[1].opcode, Opcode::kRcRdmaReadResponseLast);
  EXPECT_EQ(sent[1].psn(), epsn() + 2);
  ASSERT_EQ(sent[0].payload.size(), 256u);
  ASSERT_EQ(sent[1].payload.size(), 88u);
  EXPECT_TRUE(std::equal(sent[0].payload.begin(), sent[0].payload.end(), buffer.begin() + 1256));
  EXPECT_TRUE(std::equal(sent[1].payload.begin(), sent[1].payload.end(), buffer.begin() + 1512));
  EXPECT_EQ(device.counters().duplicates_replayed, 1u);
  EXPECT_EQ(qp->state(), QpState::kRts);
}

TEST_F(RcResponderProtocol, DuplicateReadOutsideTheOriginalIsDropped) {
  // rxe duplicate_request: a repeated READ must ask for the original or a subset of it.
  fill(1000, 600, 17);
  deliver(read(0, addr(1000), 600));
  ASSERT_EQ(sink.take().size(), 3u);
  deliver(read(1, addr(1000 + 256), 600));  // va advanced, length not reduced: runs past the original
  EXPECT_TRUE(sink.take().empty());
  TransportHeaders other_key = read(1, addr(1000 + 256), 600 - 256);
  other_key.reth->rkey = RKey(mr->rkey.value() ^ 1);
  deliver(other_key);
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(device.counters().dropped(rc::Drop::kDuplicate), 2u);
  EXPECT_EQ(qp->state(), QpState::kRts);
}

// ---- atomics ----

TEST_F(RcResponderProtocol, FetchAddReturnsTheOriginalAndADuplicateDoesNotAddAgain) {
  store64(64, 100);
  deliver(fetch_add(0, addr(64), 5));
  auto sent = sink.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcAtomicAcknowledge);
  EXPECT_EQ(sent[0].psn(), epsn());
  EXPECT_EQ(sent[0].syndrome(), kAckSyndrome);
  EXPECT_EQ(sent[0].msn(), 1u);
  EXPECT_EQ(sent[0].h.atomic_ack_eth->orig_remote_data, 100u);
  EXPECT_EQ(load64(64), 105u);

  // The acknowledgement was lost; the requester sends the same PSN again.
  deliver(fetch_add(0, addr(64), 5));
  sent = sink.take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcAtomicAcknowledge);
  EXPECT_EQ(sent[0].psn(), epsn());
  EXPECT_EQ(sent[0].msn(), 1u);
  EXPECT_EQ(sent[0].h.atomic_ack_eth->orig_remote_data, 100u) << "the saved result, not a new one";
  EXPECT_EQ(load64(64), 105u) << "executed once";
}

TEST_F(RcResponderProtocol, MisalignedAtomicIsAnInvalidRequest) {
  store64(64, 100);
  deliver(fetch_add(0, addr(66), 5));
  const Sent n = only_ack(sink.take());
  EXPECT_EQ(n.psn(), epsn());
  EXPECT_EQ(n.syndrome(), kNakInvalidRequest);
  EXPECT_EQ(qp->state(), QpState::kError);
  EXPECT_EQ(load64(64), 100u);
}

// ---- drops ----

TEST_F(RcResponderProtocol, PkeyMismatchIsDroppedAndCounted) {
  post_recv(qp, 1, 4096, 64);
  TransportHeaders h = req(Opcode::kRcSendOnly, 0, true);
  h.bth.pkey = PKey(0x8123);
  deliver(h, bytes(0, 8));
  EXPECT_TRUE(progress().empty());
  EXPECT_EQ(device.counters().dropped(rc::Drop::kBadPkey), 1u);
  EXPECT_TRUE(poll(rcq).empty());
  EXPECT_EQ(qp->state(), QpState::kRts);
}

TEST_F(RcResponderProtocol, MalformedFramesAreDroppedAsMalformed) {
  const auto good = build(req(Opcode::kRcSendOnly, 0, true), bytes(0, 8));
  device.receive(peer(), wire::ByteSpan(good.data(), 8));  // a truncated BTH
  auto reserved = good;
  reserved[0] = 0x15;  // reserved on RC (RESYNC is RD only)
  device.receive(peer(), reserved);
  device.receive(peer(), {});
  EXPECT_EQ(device.counters().dropped(rc::Drop::kMalformed), 3u);
  EXPECT_TRUE(progress().empty());
  EXPECT_EQ(device.counters().rx_packets, 3u);
}

TEST_F(RcResponderProtocol, QpInResetOrInitDropsRequests) {
  rc::Qp* fresh = create(QpType::kRc);
  deliver(hdr(fresh, Opcode::kRcSendOnly, Psn(0), true), bytes(0, 8));
  EXPECT_EQ(device.counters().dropped(rc::Drop::kQpState), 1u);
  QpAttr at;
  at.qp_state = QpState::kInit;
  at.port_num = 1;
  at.qp_access_flags = access::kRemoteWrite;
  ASSERT_TRUE(device.modify_qp(fresh, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
  post_recv(fresh, 1, 4096, 64);
  deliver(hdr(fresh, Opcode::kRcSendOnly, Psn(0), true), bytes(0, 8));
  EXPECT_EQ(device.counters().dropped(rc::Drop::kQpState), 2u);
  EXPECT_TRUE(progress().empty());
  EXPECT_TRUE(poll(rcq).empty());
}

// ---- UD ----

class UdResponderProtocol : public RcProtocol {
 protected:
  static constexpr uint32_t kQkey = 0x11111111;
  void SetUp() override { qp = ready_ud(kQkey); }
  TransportHeaders ud(uint32_t qkey, Qpn src) const {
    TransportHeaders h = hdr(qp, Opcode::kUdSendOnly, Psn(0x42));
    h.deth = wire::Deth{QKey(qkey), src};
    return h;
  }
  rc::Qp* qp = nullptr;
};

TEST_F(UdResponderProtocol, QkeyMismatchIsDroppedAndCounted) {
  post_recv(qp, 1, 4096, 256);
  deliver(ud(0x22222222, Qpn(0x77)), bytes(0, 8));
  EXPECT_EQ(device.counters().dropped(rc::Drop::kBadQkey), 1u);
  EXPECT_TRUE(poll(rcq).empty());
  EXPECT_TRUE(progress().empty());
}

TEST_F(UdResponderProtocol, ReceiveHoldsTheGrhAreaAndTheGrhWhenGlobal) {
  post_recv(qp, 1, 4096, 256);
  post_recv(qp, 2, 8192, 256);
  fill(0, 100, 21);
  rc::FrameAddr from = peer();
  from.global = true;
  from.sgid = Gid(Gid::kDefaultSubnetPrefix, Guid(0x0002c90300000002ULL));
  from.dgid = port_attr().gids[0];
  from.traffic_class = 0x20;
  from.flow_label = 0x12345;
  from.hop_limit = 64;
  deliver(ud(kQkey, Qpn(0x77)), bytes(0, 100), from);
  deliver(ud(kQkey, Qpn(0x78)), bytes(0, 100));  // local: no GRH

  const auto wc = poll(rcq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].byte_len, 100u + wire::Grh::kLen);
  EXPECT_EQ(wc[0].wc_flags, wc_flag::kGrh);
  EXPECT_EQ(wc[0].src_qp, Qpn(0x77));
  EXPECT_EQ(wc[0].slid, kPeerLid);
  auto grh = wire::Grh::decode(bytes(4096, wire::Grh::kLen));
  ASSERT_TRUE(grh.ok()) << grh.error().to_string();
  EXPECT_EQ(grh->sgid, from.sgid);
  EXPECT_EQ(grh->dgid, from.dgid);
  EXPECT_EQ(grh->tclass, 0x20);
  EXPECT_EQ(grh->flow_label, 0x12345u);
  EXPECT_EQ(grh->hop_lmt, 64);
  EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 100, buffer.begin() + 4096 + 40));

  EXPECT_EQ(wc[1].byte_len, 100u + wire::Grh::kLen);
  EXPECT_EQ(wc[1].wc_flags, 0u);
  EXPECT_EQ(wc[1].src_qp, Qpn(0x78));
  EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + 100, buffer.begin() + 8192 + 40));
  EXPECT_TRUE(progress().empty()) << "UD sends no acknowledgements";
}

}  // namespace
}  // namespace softib::testing
