// The requester and the completer (IBA 9.7.1-9.7.6) driven packet by packet: what a posted WR
// puts on the wire, what an ACK, NAK or read response completes, and what is sent again after a
// NAK, an RNR NAK or a timeout, in virtual time.
#include <fmt/format.h>

#include "packet/wr_opcode.hpp"
#include "protocol/rc_fixture.hpp"
#include "rc/timers.hpp"

namespace softib::testing {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

class RcRequesterProtocol : public RcProtocol {
 protected:
  void SetUp() override { qp = connect(QpType::kRc, options); }
  Psn sq_psn() const { return Psn(options.sq_psn); }
  // An acknowledgement from the peer for sq_psn + offset.
  void ack_at(uint32_t offset, uint32_t msn = 0) { deliver(ack(qp, sq_psn() + offset, wire::Aeth::ack(msn))); }
  void nak_at(uint32_t offset, wire::NakCode code) { deliver(ack(qp, sq_psn() + offset, wire::Aeth::nak(0, code))); }
  void rnr_nak_at(uint32_t offset, uint8_t timer) {
    deliver(ack(qp, sq_psn() + offset, wire::Aeth::rnr_nak(0, timer)));
  }
  // A read response from the peer for sq_psn + offset carrying peer_memory[from, from + len).
  void read_response(Opcode op, uint32_t offset, size_t from, size_t len) {
    TransportHeaders h = hdr(qp, op, sq_psn() + offset);
    if (op != Opcode::kRcRdmaReadResponseMiddle) h.aeth = wire::Aeth::ack(1);
    deliver(h, wire::ByteSpan(peer_memory.data() + from, len));
  }
  static std::vector<Psn> psns(const std::vector<Sent>& sent) {
    std::vector<Psn> out;
    for (const Sent& s : sent) out.push_back(s.psn());
    return out;
  }

  QpOptions options;
  rc::Qp* qp = nullptr;
  // What the imaginary peer's memory holds, for read responses.
  std::vector<uint8_t> peer_memory = [] {
    std::vector<uint8_t> m(4096);
    for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<uint8_t>(i * 13 + 5);
    return m;
  }();
  static constexpr uint64_t kPeerVa = 0x7f0000100000;
  static constexpr RKey kPeerRkey{0x1234};
};

TEST_F(RcRequesterProtocol, ThreePacketSendGoesOutFirstMiddleLast) {
  fill(0, 600, 4);
  post_send(qp, 1, 0, 600);
  EXPECT_TRUE(sink.frames.empty()) << "nothing goes out before progress()";
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 3u);
  const Opcode want[3] = {Opcode::kRcSendFirst, Opcode::kRcSendMiddle, Opcode::kRcSendLast};
  const uint32_t len[3] = {256, 256, 88};
  size_t at = 0;
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(sent[i].opcode, want[i]);
    EXPECT_EQ(sent[i].psn(), sq_psn() + static_cast<uint32_t>(i));
    EXPECT_EQ(sent[i].h.bth.ack_req, i == 2) << "AckReq on the last packet";
    EXPECT_EQ(sent[i].h.bth.dest_qp, kPeerQpn);
    EXPECT_EQ(sent[i].h.bth.pkey, PKey::default_full());
    EXPECT_EQ(sent[i].to.dlid, kPeerLid);
    EXPECT_EQ(sent[i].to.slid, kLocalLid);
    ASSERT_EQ(sent[i].payload.size(), len[i]);
    EXPECT_TRUE(std::equal(sent[i].payload.begin(), sent[i].payload.end(), buffer.data() + at));
    at += len[i];
  }
  EXPECT_TRUE(progress().empty());
}

// A QP moved back to RESET and connected again sends only what is posted after: the
// requester starts where the emptied send queue is. It used to start at position 0 and walk
// to the queue's tail, sending the stale slots of the first connection again (found by
// rc_fast_path_test, which restarts QPs).
TEST_F(RcRequesterProtocol, AQpResetAfterSendingSendsOnlyWhatIsPostedAfter) {
  fill(0, 256, 9);
  for (uint64_t id = 1; id <= 3; ++id) post_send(qp, id, 0, 64);
  ASSERT_EQ(progress().size(), 3u);
  ack_at(2);
  ASSERT_EQ(poll(scq).size(), 3u);
  QpAttr at;
  at.qp_state = QpState::kReset;
  ASSERT_TRUE(device.modify_qp(qp, at, attr::kState).ok());
  options.sq_psn = 0x9000;
  bring_up(qp, options);
  post_send(qp, 7, 100, 32);
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u) << "only the SEND posted after the reset";
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly);
  EXPECT_EQ(sent[0].psn(), Psn(0x9000));
  ASSERT_EQ(sent[0].payload.size(), 32u);
  EXPECT_TRUE(std::equal(sent[0].payload.begin(), sent[0].payload.end(), buffer.data() + 100));
  ack_at(0);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
}

// Every request shape the requester writes its own headers for (rc/requester.cpp
// write_request_headers): SEND, SEND with immediate or invalidate, RDMA WRITE and WRITE with
// immediate, on RC, UC and UD, inline or gathered, for lengths around the pad and the PMTU.
// The packets carry the right headers and the message's bytes, and CaptureSink holds every
// frame to the builder's bytes for its headers.
TEST_F(RcRequesterProtocol, EveryRequestShapeCarriesItsHeadersAndBytes) {
  rc::Qp* uc = connect(QpType::kUc, options);
  rc::Qp* udqp = ready_ud(0x1111);
  AhAttr ah_attr;
  ah_attr.dlid = kPeerLid;
  ah_attr.port_num = 1;
  auto ah = device.create_ah(pd, ah_attr);
  ASSERT_TRUE(ah.ok()) << ah.error().to_string();
  fill(0, 1024, 9);
  struct Shape {
    QpType type;
    WrOpcode op;
  };
  const Shape shapes[] = {
      {QpType::kRc, WrOpcode::kSend},      {QpType::kRc, WrOpcode::kSendWithImm},      {QpType::kRc, WrOpcode::kSendWithInv},
      {QpType::kRc, WrOpcode::kRdmaWrite}, {QpType::kRc, WrOpcode::kRdmaWriteWithImm}, {QpType::kUc, WrOpcode::kSend},
      {QpType::kUc, WrOpcode::kSendWithImm}, {QpType::kUc, WrOpcode::kRdmaWrite}, {QpType::kUc, WrOpcode::kRdmaWriteWithImm},
      {QpType::kUd, WrOpcode::kSend},      {QpType::kUd, WrOpcode::kSendWithImm},
  };
  uint64_t wr_id = 0;
  for (const Shape& shape : shapes) {
    for (const uint32_t len : {0u, 1u, 3u, 4u, 60u, 256u, 257u, 600u}) {
      for (const bool in_line : {false, true}) {
        if (in_line && len > 64) continue;
        SCOPED_TRACE(fmt::format("{} {} {} bytes{}", shape.type == QpType::kRc ? "RC" : shape.type == QpType::kUc ? "UC" : "UD", packet::wr_opcode_info(shape.op).name,
                                 len, in_line ? " inline" : ""));
        rc::Qp* q = shape.type == QpType::kRc ? qp : shape.type == QpType::kUc ? uc : udqp;
        const bool imm = shape.op == WrOpcode::kSendWithImm || shape.op == WrOpcode::kRdmaWriteWithImm;
        const bool inv = shape.op == WrOpcode::kSendWithInv;
        const bool write = shape.op == WrOpcode::kRdmaWrite || shape.op == WrOpcode::kRdmaWriteWithImm;
        Sge s = sge(len % 8, len);
        SendWr wr;
        wr.wr_id = ++wr_id;
        wr.opcode = shape.op;
        wr.send_flags = send_flag::kSignaled | send_flag::kSolicited | (in_line ? send_flag::kInline : 0u);
        wr.sg_list = {&s, 1};
        wr.imm_data = 0x01020304;
        wr.rdma = {kPeerVa + len, kPeerRkey};
        wr.ud = {*ah, kPeerQpn, QKey(0x2222)};
        post_send(q, wr);
        const auto sent = progress();
        const size_t want_packets = shape.type == QpType::kUd ? 1 : std::max<size_t>(1, (len + kMtu - 1) / kMtu);
        ASSERT_EQ(sent.size(), want_packets);
        std::vector<uint8_t> message;
        for (size_t i = 0; i < sent.size(); ++i) {
          SCOPED_TRACE(i);
          const Sent& p = sent[i];
          const bool first = i == 0;
          const bool last = i + 1 == sent.size();
          const auto want = packet::requester_opcode(
              shape.type, shape.op,
              first && last ? packet::Position::kOnly
                            : (first ? packet::Position::kFirst : (last ? packet::Position::kLast : packet::Position::kMiddle)));
          ASSERT_TRUE(want.has_value());
          EXPECT_EQ(p.opcode, *want);
          EXPECT_EQ(p.h.bth.dest_qp, kPeerQpn);
          EXPECT_EQ(p.h.bth.solicited, last) << "SE on the last packet only";
          EXPECT_EQ(p.h.reth.has_value(), write && first);
          if (p.h.reth) {
            EXPECT_EQ(*p.h.reth, (wire::Reth{kPeerVa + len, kPeerRkey, len}));
          }
          EXPECT_EQ(p.h.immdt.has_value(), imm && last);
          if (p.h.immdt) {
            EXPECT_EQ(p.h.immdt->imm, 0x04030201u) << "the immediate is carried as the consumer gave it";
          }
          EXPECT_EQ(p.h.ieth.has_value(), inv && last);
          if (p.h.ieth) {
            EXPECT_EQ(p.h.ieth->rkey, RKey(0x01020304));
          }
          EXPECT_EQ(p.h.deth.has_value(), shape.type == QpType::kUd);
          if (p.h.deth) {
            EXPECT_EQ(*p.h.deth, (wire::Deth{QKey(0x2222), udqp->qpn()}));
          }
          message.insert(message.end(), p.payload.begin(), p.payload.end());
        }
        ASSERT_EQ(message.size(), len);
        EXPECT_TRUE(std::equal(message.begin(), message.end(), buffer.data() + len % 8));
        if (shape.type == QpType::kRc) ack_at(static_cast<uint32_t>(Psn::distance(sq_psn(), sent.back().psn())));
      }
    }
  }
  EXPECT_EQ(poll(scq).size(), wr_id) << "every WR completed";
}

// Flow control (rc/frame.hpp): a packet the link refuses is sent on a later step, with the
// same PSN and payload; it is not a retransmission and costs no retry.
TEST_F(RcRequesterProtocol, ARefusedPacketGoesOutOnALaterStep) {
  fill(0, 600, 4);
  post_send(qp, 1, 0, 600);
  sink.refuse = 2;  // the FIRST packet is refused on two steps
  EXPECT_TRUE(progress().empty());
  EXPECT_TRUE(device.output_blocked());
  EXPECT_TRUE(progress().empty());
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(sent[i].psn(), sq_psn() + static_cast<uint32_t>(i));
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendFirst);
  EXPECT_TRUE(std::equal(sent[2].payload.begin(), sent[2].payload.end(), buffer.data() + 512));
  EXPECT_EQ(device.counters().retransmits, 0u);
  EXPECT_FALSE(device.output_blocked());
}

TEST_F(RcRequesterProtocol, ARefusalMidMessageResumesAtThatPacket) {
  fill(0, 600, 4);
  post_send(qp, 1, 0, 600);
  sink.pass = 1;  // FIRST goes out, MIDDLE is refused
  sink.refuse = 1;
  auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendFirst);
  sent = progress();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendMiddle);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 1);
  EXPECT_FALSE(sent[0].h.bth.ack_req) << "the refused attempt did not count towards AckReq";
  EXPECT_TRUE(std::equal(sent[0].payload.begin(), sent[0].payload.end(), buffer.data() + 256));
  EXPECT_EQ(sent[1].opcode, Opcode::kRcSendLast);
  ack_at(2, 1);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(device.counters().retransmits, 0u);
}

TEST_F(RcRequesterProtocol, ARefusedReadRequestIsSentLater) {
  post_read(qp, 1, 0, 300, kPeerVa, kPeerRkey);
  sink.refuse = 1;
  EXPECT_TRUE(progress().empty());
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn());
  EXPECT_EQ(sent[0].h.reth->dma_len, 300u);
}

TEST_F(RcRequesterProtocol, AckForTheMiddleCompletesNothingAckForTheLastCompletes) {
  post_send(qp, 1, 0, 600);
  ASSERT_EQ(progress().size(), 3u);
  ack_at(1);
  EXPECT_TRUE(poll(scq).empty());
  ack_at(2, 1);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kSend);
  EXPECT_EQ(wc[0].byte_len, 600u);
  EXPECT_EQ(wc[0].qp_num, qp->qpn());
  // Nothing is outstanding: the ACK timer is off and nothing is sent again.
  EXPECT_FALSE(device.next_deadline().has_value());
  clock.advance(std::chrono::seconds(1));
  EXPECT_TRUE(progress().empty());
}

// A retransmission is a PSN sent before, wherever in the 24-bit PSN space the QP starts
// (perftest picks a random sq_psn): the first packets from any start are not counted as sent
// again, the packets a sequence NAK sends again are, across the wrap from 0xFFFFFF to 0 too.
class RcRequesterFromAnyPsn : public RcRequesterProtocol, public ::testing::WithParamInterface<uint32_t> {
 protected:
  void SetUp() override {
    options.sq_psn = GetParam();
    RcRequesterProtocol::SetUp();
  }
};

TEST_P(RcRequesterFromAnyPsn, OnlyPacketsSentAgainCountAsRetransmitted) {
  post_send(qp, 1, 0, 600);
  ASSERT_EQ(psns(progress()), (std::vector<Psn>{sq_psn(), sq_psn() + 1, sq_psn() + 2}));
  EXPECT_EQ(device.counters().retransmits, 0u) << "first sends";
  nak_at(1, wire::NakCode::kPsnSequenceError);
  ASSERT_EQ(psns(progress()), (std::vector<Psn>{sq_psn() + 1, sq_psn() + 2}));
  EXPECT_EQ(device.counters().retransmits, 2u);
  ack_at(2, 1);
  ASSERT_EQ(poll(scq).size(), 1u);
  post_send(qp, 2, 0, 8);
  ASSERT_EQ(psns(progress()), std::vector<Psn>{sq_psn() + 3});
  EXPECT_EQ(device.counters().retransmits, 2u) << "a new message's packet is a first send";
}

INSTANTIATE_TEST_SUITE_P(Starts, RcRequesterFromAnyPsn, ::testing::Values(0u, 0x500u, 0x7FFFFEu, 0x800000u, 0xC00000u, 0xFFFFFEu),
                         [](const ::testing::TestParamInfo<uint32_t>& i) { return fmt::format("Psn{:06X}", i.param); });

TEST_F(RcRequesterProtocol, SequenceNakResendsFromItsPsnOnce) {
  post_send(qp, 1, 0, 600);
  ASSERT_EQ(progress().size(), 3u);
  nak_at(1, wire::NakCode::kPsnSequenceError);
  auto sent = progress();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendMiddle);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 1);
  EXPECT_EQ(sent[1].opcode, Opcode::kRcSendLast);
  EXPECT_EQ(sent[1].psn(), sq_psn() + 2);
  EXPECT_EQ(device.counters().retransmits, 2u);

  // The same NAK again (the responder's duplicate, or a late copy): no second go-back.
  nak_at(1, wire::NakCode::kPsnSequenceError);
  EXPECT_TRUE(progress().empty());
  EXPECT_EQ(device.counters().seq_naks_received, 2u);
  EXPECT_TRUE(poll(scq).empty());
  ack_at(2, 1);
  ASSERT_EQ(poll(scq).size(), 1u);
}

TEST_F(RcRequesterProtocol, RnrNakWaitsItsTimerThenResends) {
  post_send(qp, 1, 0, 16);
  ASSERT_EQ(progress().size(), 1u);
  rnr_nak_at(0, 1);  // timer code 1: 0.01 ms
  EXPECT_TRUE(progress().empty());
  clock.advance(microseconds(10) - nanoseconds(1));
  EXPECT_TRUE(progress().empty()) << "nothing before 10 us";
  clock.advance(nanoseconds(1));
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly);
  EXPECT_EQ(sent[0].psn(), sq_psn());
  EXPECT_EQ(device.counters().rnr_naks_received, 1u);
  ack_at(0, 1);
  ASSERT_EQ(poll(scq).size(), 1u);
}

TEST_F(RcRequesterProtocol, RnrRetryExhaustedFailsTheWr) {
  post_send(qp, 1, 0, 16);
  post_send(qp, 2, 0, 16);
  ASSERT_EQ(progress().size(), 2u);
  for (uint8_t i = 0; i < options.rnr_retry; ++i) {
    SCOPED_TRACE(i);
    rnr_nak_at(0, 1);
    clock.advance(rc::rnr_delay(1));
    EXPECT_EQ(progress().size(), 2u);  // both go again
    EXPECT_TRUE(poll(scq).empty());
  }
  rnr_nak_at(0, 1);
  progress();
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(qp->state(), QpState::kError);
}

TEST_F(RcRequesterProtocol, AckTimeoutResendsThenRetryExhaustedFailsAndFlushes) {
  ASSERT_EQ(rc::local_ack_timeout(10), nanoseconds(4194304));  // timeout 10 = 4.19 ms
  post_send(qp, 1, 0, 16);
  post_send(qp, 2, 0, 16);
  post_send(qp, 3, 0, 16);
  ASSERT_EQ(progress().size(), 3u);
  clock.advance(rc::local_ack_timeout(10) - nanoseconds(1));
  EXPECT_TRUE(progress().empty()) << "nothing before the deadline";
  for (uint8_t i = 0; i < options.retry_cnt; ++i) {
    SCOPED_TRACE(i);
    clock.advance(i == 0 ? nanoseconds(1) : rc::local_ack_timeout(10));
    const auto sent = progress();
    EXPECT_EQ(psns(sent), (std::vector<Psn>{sq_psn(), sq_psn() + 1, sq_psn() + 2}));
    EXPECT_TRUE(poll(scq).empty());
  }
  clock.advance(rc::local_ack_timeout(10));
  EXPECT_TRUE(progress().empty());
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].status, WcStatus::kRetryExcErr);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[2].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->state(), QpState::kError);
  EXPECT_EQ(device.counters().timeouts, options.retry_cnt + 1u);
  EXPECT_EQ(device.counters().retransmits, 3u * options.retry_cnt);
}

TEST_F(RcRequesterProtocol, TimersPutOffByProgressCallsAreLookedAtWithinKMaxTimerDeferralsCalls) {
  // A thread whose every step hands back an answer asks for Timers::kLater each time: a
  // retransmission is late by at most kMaxTimerDeferrals of its calls, not for as long as
  // the answers keep coming.
  post_send(qp, 1, 0, 16);
  ASSERT_EQ(progress().size(), 1u);  // a kRun call: the count of deferrals starts afresh
  clock.advance(rc::local_ack_timeout(10));
  using Timers = rc::Device::Timers;
  for (uint32_t i = 1; i < rc::Device::kMaxTimerDeferrals; ++i) {
    device.progress(rc::Device::AckPolicy::kHoldOneStep, Timers::kLater);
    ASSERT_TRUE(sink.take().empty()) << "call " << i << " put the timer off";
  }
  EXPECT_EQ(device.counters().timeouts, 0u);
  device.progress(rc::Device::AckPolicy::kHoldOneStep, Timers::kLater);
  EXPECT_EQ(psns(sink.take()), std::vector<Psn>{sq_psn()}) << "the last deferral looks and retransmits";
  EXPECT_EQ(device.counters().timeouts, 1u);
  // And a kRun call looks at once.
  clock.advance(rc::local_ack_timeout(10));
  device.progress(rc::Device::AckPolicy::kHoldOneStep, Timers::kLater);
  EXPECT_TRUE(sink.take().empty());
  EXPECT_EQ(psns(progress()), std::vector<Psn>{sq_psn()});
  EXPECT_EQ(device.counters().timeouts, 2u);
}

TEST_F(RcRequesterProtocol, AnAckThatMovesForwardRestartsTheRetryBudget) {
  post_send(qp, 1, 0, 16);
  post_send(qp, 2, 0, 16);
  ASSERT_EQ(progress().size(), 2u);
  for (uint8_t i = 0; i < options.retry_cnt; ++i) {
    clock.advance(rc::local_ack_timeout(10));
    ASSERT_EQ(progress().size(), 2u);
  }
  ack_at(0, 1);  // progress: retry_cnt retries are available again
  ASSERT_EQ(poll(scq).size(), 1u);
  for (uint8_t i = 0; i < options.retry_cnt; ++i) {
    clock.advance(rc::local_ack_timeout(10));
    ASSERT_EQ(progress().size(), 1u);
  }
  EXPECT_EQ(qp->state(), QpState::kRts);
}

struct NakCase {
  wire::NakCode code;
  WcStatus status;
};

class RcRequesterProtocolNak : public RcRequesterProtocol, public ::testing::WithParamInterface<NakCase> {};

TEST_P(RcRequesterProtocolNak, FailsTheWrWithItsStatus) {
  post_send(qp, 1, 0, 600);
  post_send(qp, 2, 0, 16);
  ASSERT_EQ(progress().size(), 4u);
  nak_at(1, GetParam().code);
  progress();
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, GetParam().status);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->state(), QpState::kError);
  EXPECT_TRUE(progress().empty());
}

INSTANTIATE_TEST_SUITE_P(Codes, RcRequesterProtocolNak,
                         ::testing::Values(NakCase{wire::NakCode::kRemoteAccessError, WcStatus::kRemAccessErr},
                                           NakCase{wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr},
                                           NakCase{wire::NakCode::kRemoteOperationalError, WcStatus::kRemOpErr},
                                           NakCase{wire::NakCode::kInvalidRdRequest, WcStatus::kRemInvRdReqErr}));

// ---- RDMA READ ----

TEST_F(RcRequesterProtocol, LostMiddleReadResponseIsAskedForAgain) {
  post_read(qp, 1, 8192, 600, kPeerVa, kPeerRkey);
  auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn());
  EXPECT_EQ(sent[0].h.reth->va, kPeerVa);
  EXPECT_EQ(sent[0].h.reth->rkey, kPeerRkey);
  EXPECT_EQ(sent[0].h.reth->dma_len, 600u);

  read_response(Opcode::kRcRdmaReadResponseFirst, 0, 0, 256);
  read_response(Opcode::kRcRdmaReadResponseLast, 2, 512, 88);  // MIDDLE lost
  sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 1);
  EXPECT_EQ(sent[0].h.reth->va, kPeerVa + kMtu);
  EXPECT_EQ(sent[0].h.reth->rkey, kPeerRkey);
  EXPECT_EQ(sent[0].h.reth->dma_len, 600u - kMtu);
  EXPECT_TRUE(poll(scq).empty());

  // The responder answers the new request as one (FIRST, LAST from the missing PSN).
  read_response(Opcode::kRcRdmaReadResponseFirst, 1, 256, 256);
  read_response(Opcode::kRcRdmaReadResponseLast, 2, 512, 88);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kRdmaRead);
  EXPECT_TRUE(std::equal(peer_memory.begin(), peer_memory.begin() + 600, buffer.begin() + 8192));
  EXPECT_TRUE(progress().empty());
}

TEST_F(RcRequesterProtocol, AckBeyondAnOutstandingReadReRequestsItOnce) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);  // PSN 0
  post_send(qp, 2, 0, 16);                           // PSN 1
  ASSERT_EQ(progress().size(), 2u);
  // The SEND's ACK arrives, the READ's response never did (IBA 9.7.5.2.1: implied NAK).
  ack_at(1, 2);
  auto sent = progress();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn());
  EXPECT_EQ(sent[0].h.reth->va, kPeerVa);
  EXPECT_EQ(sent[0].h.reth->dma_len, 100u);
  EXPECT_TRUE(poll(scq).empty()) << "completions stay in order behind the READ";
  // More copies of the ACK: no more re-requests.
  ack_at(1, 2);
  ack_at(1, 2);
  EXPECT_TRUE(progress().empty());
  read_response(Opcode::kRcRdmaReadResponseOnly, 0, 0, 100);
  ack_at(1, 2);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_TRUE(std::equal(peer_memory.begin(), peer_memory.begin() + 100, buffer.begin() + 8192));
}

TEST_F(RcRequesterProtocol, AckThatCompletesASendAndPassesALostReadReRequestsItOnce) {
  post_send(qp, 1, 0, 16);                           // PSN 0
  post_read(qp, 2, 8192, 100, kPeerVa, kPeerRkey);  // PSN 1
  post_send(qp, 3, 0, 16);                           // PSN 2
  ASSERT_EQ(progress().size(), 3u);
  ack_at(2, 3);  // completes the first SEND and passes the READ
  EXPECT_EQ(poll(scq).size(), 1u);
  auto sent = progress();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 1);
  // The same ACK again (a duplicate): the go-back is under way, no second one.
  ack_at(2, 3);
  ack_at(2, 3);
  EXPECT_TRUE(progress().empty());
  EXPECT_EQ(device.counters().retransmits, 2u);
}

TEST_F(RcRequesterProtocol, AtomicAckBeyondALostReadResponseGoesBackToTheRead) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);  // PSN 0
  SendWr wr;
  wr.wr_id = 2;
  wr.opcode = WrOpcode::kAtomicFetchAndAdd;
  wr.send_flags = send_flag::kSignaled;
  Sge s = sge(9000, 8);
  wr.sg_list = {&s, 1};
  wr.atomic = {kPeerVa + 64, 1, 0, kPeerRkey};
  post_send(qp, wr);                                 // PSN 1
  ASSERT_EQ(progress().size(), 2u);
  // The atomic's acknowledgement says the READ before it was executed: its response was lost.
  TransportHeaders h = hdr(qp, Opcode::kRcAtomicAcknowledge, sq_psn() + 1);
  h.aeth = wire::Aeth::ack(2);
  h.atomic_ack_eth = wire::AtomicAckEth{77};
  deliver(h);
  const auto sent = progress();
  EXPECT_EQ(psns(sent), (std::vector<Psn>{sq_psn(), sq_psn() + 1}));
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  read_response(Opcode::kRcRdmaReadResponseOnly, 0, 0, 100);
  deliver(h);  // the responder replays the saved atomic result
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[1].status, WcStatus::kSuccess);
  EXPECT_EQ(load64(9000), 77u);
}

TEST_F(RcRequesterProtocol, SequenceNakBeyondALostReadResponseGoesBackToTheRead) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);  // PSN 0
  post_send(qp, 2, 0, 16);                           // PSN 1
  post_send(qp, 3, 0, 16);                           // PSN 2
  ASSERT_EQ(progress().size(), 3u);
  // The responder executed the READ and PSN 1 and lost PSN 2; the READ response was lost too.
  // The NAK says everything before PSN 2 was executed, so the READ must be asked for again
  // (rxe check_psn: COMPST_ERROR_RETRY) and the go-back starts there, not at PSN 2.
  nak_at(2, wire::NakCode::kPsnSequenceError);
  const auto sent = progress();
  EXPECT_EQ(psns(sent), (std::vector<Psn>{sq_psn(), sq_psn() + 1, sq_psn() + 2}));
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  read_response(Opcode::kRcRdmaReadResponseOnly, 0, 0, 100);
  ack_at(2, 3);
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(peer_memory.begin(), peer_memory.begin() + 100, buffer.begin() + 8192));
}

TEST_F(RcRequesterProtocol, SequenceNakRightAfterALostReadResponseGoesBackToTheRead) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);  // PSN 0
  post_send(qp, 2, 0, 16);                           // PSN 1
  post_send(qp, 3, 0, 16);                           // PSN 2
  ASSERT_EQ(progress().size(), 3u);
  // The READ was executed (the responder expects PSN 1), its response lost.
  nak_at(1, wire::NakCode::kPsnSequenceError);
  const auto sent = progress();
  EXPECT_EQ(psns(sent), (std::vector<Psn>{sq_psn(), sq_psn() + 1, sq_psn() + 2}));
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
}

TEST_F(RcRequesterProtocol, RnrNakBeyondALostReadResponseGoesBackToTheRead) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);  // PSN 0
  post_send(qp, 2, 0, 16);                           // PSN 1
  ASSERT_EQ(progress().size(), 2u);
  rnr_nak_at(1, 1);
  clock.advance(rc::rnr_delay(1));
  const auto sent = progress();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn());
}

TEST_F(RcRequesterProtocol, BadLkeyBehindAnOutstandingSendFailsInOrder) {
  post_send(qp, 1, 0, 16);
  Sge bad{addr(0), 16, LKey(mr->lkey.value() ^ 0x55)};
  SendWr wr;
  wr.wr_id = 2;
  wr.send_flags = send_flag::kSignaled;
  wr.sg_list = {&bad, 1};
  post_send(qp, wr);
  post_send(qp, 3, 0, 16);
  const auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);  // the first; the second fails before a byte of it goes out
  EXPECT_EQ(qp->state(), QpState::kError);
  // IBA 10.8.3.1 / 11.4.2: completions in order; the outstanding SEND is flushed.
  const auto wc = poll(scq);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, WcStatus::kLocProtErr);
  EXPECT_EQ(wc[2].wr_id, 3u);
  EXPECT_EQ(wc[2].status, WcStatus::kWrFlushErr);
}

class RcRequesterProtocolOneRead : public RcRequesterProtocol {
 protected:
  RcRequesterProtocolOneRead() { options.max_rd_atomic = 1; }
};

TEST_F(RcRequesterProtocolOneRead, SecondReadWaitsForTheFirst) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);
  post_read(qp, 2, 9000, 100, kPeerVa + 100, kPeerRkey);
  auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].h.reth->va, kPeerVa);
  EXPECT_TRUE(progress().empty());
  read_response(Opcode::kRcRdmaReadResponseOnly, 0, 0, 100);
  ASSERT_EQ(poll(scq).size(), 1u);
  sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 1);
  EXPECT_EQ(sent[0].h.reth->va, kPeerVa + 100);
}

TEST_F(RcRequesterProtocol, FencedSendWaitsForAnOutstandingRead) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);
  post_send(qp, 2, 0, 16, send_flag::kSignaled | send_flag::kFence);
  auto sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcRdmaReadRequest);
  EXPECT_TRUE(progress().empty());
  read_response(Opcode::kRcRdmaReadResponseOnly, 0, 0, 100);
  sent = progress();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 1);
}

TEST_F(RcRequesterProtocol, UnfencedSendDoesNotWaitForARead) {
  post_read(qp, 1, 8192, 100, kPeerVa, kPeerRkey);
  post_send(qp, 2, 0, 16);
  EXPECT_EQ(progress().size(), 2u);
}

class RcRequesterProtocolDeep : public RcRequesterProtocol {
 protected:
  RcRequesterProtocolDeep() { options.depth = rc::kMaxUnackedPackets + 128; }
};

TEST_F(RcRequesterProtocolDeep, WindowStopsAtMaxUnackedPackets) {
  for (uint64_t i = 0; i < rc::kMaxUnackedPackets + 72; ++i) post_send(qp, i, 0, 8);
  auto sent = progress();
  ASSERT_EQ(sent.size(), rc::kMaxUnackedPackets);
  EXPECT_EQ(sent.back().psn(), sq_psn() + (rc::kMaxUnackedPackets - 1));
  EXPECT_TRUE(progress().empty());
  // An ACK for the first 10 opens the window by 10.
  ack_at(9, 10);
  sent = progress();
  ASSERT_EQ(sent.size(), 10u);
  EXPECT_EQ(sent.front().psn(), sq_psn() + rc::kMaxUnackedPackets);
  EXPECT_EQ(poll(scq).size(), 10u);
}

TEST_F(RcRequesterProtocol, StaleAndGhostResponsesAreDropped) {
  post_send(qp, 1, 0, 16);
  ASSERT_EQ(progress().size(), 1u);
  ack_at(5);              // beyond anything sent
  deliver(ack(qp, sq_psn() - 1, wire::Aeth::ack(0)));  // before it
  EXPECT_EQ(device.counters().dropped(rc::Drop::kStaleResponse), 2u);
  EXPECT_TRUE(poll(scq).empty());
  read_response(Opcode::kRcRdmaReadResponseOnly, 0, 0, 16);  // a read response for a SEND
  EXPECT_TRUE(poll(scq).empty());
  EXPECT_EQ(qp->state(), QpState::kRts);
}

}  // namespace
}  // namespace softib::testing

namespace softib::testing {
namespace {

// IBA 10.3.1, Send Queue Drain: the message being sent finishes, nothing new starts, and once
// what was sent is acknowledged the QP reports IBV_EVENT_SQ_DRAINED (when asked); attributes
// change only after that; SQD -> RTS resumes.
TEST_F(RcRequesterProtocol, SqdFinishesTheMessageInProgressThenReportsDrained) {
  fill(0, 600, 4);
  post_send(qp, 1, 0, 600);
  post_send(qp, 2, 0, 100);
  sink.pass = 1;  // FIRST goes out, then the link is full
  sink.refuse = 1;
  ASSERT_EQ(progress().size(), 1u);
  QpAttr at;
  at.qp_state = QpState::kSqd;
  at.en_sqd_async_notify = 1;
  ASSERT_TRUE(device.modify_qp(qp, at, attr::kState | attr::kEnSqdAsyncNotify).ok());
  auto sent = progress();
  ASSERT_EQ(sent.size(), 2u) << "the message in progress finishes";
  EXPECT_EQ(sent[1].opcode, Opcode::kRcSendLast);
  EXPECT_TRUE(progress().empty()) << "the next WR does not start";
  at = {};
  at.qp_state = QpState::kSqd;
  EXPECT_EQ(device.modify_qp(qp, at, attr::kState).to_errno(), EINVAL) << "still draining";
  EXPECT_TRUE(device.take_async_events().empty());
  ack_at(2, 1);
  progress();
  auto events = device.take_async_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, AsyncEventType::kSqDrained);
  EXPECT_EQ(events[0].qp, qp);
  at = {};
  at.qp_state = QpState::kRts;
  ASSERT_TRUE(device.modify_qp(qp, at, attr::kState).ok());
  sent = progress();
  ASSERT_EQ(sent.size(), 1u) << "back in RTS, the second WR goes out";
  EXPECT_EQ(sent[0].opcode, Opcode::kRcSendOnly);
  EXPECT_EQ(sent[0].psn(), sq_psn() + 3);
}

}  // namespace
}  // namespace softib::testing
