// RC over a simulated link in virtual time: every operation, the error completions the IBA
// defines, and retransmission.
#include <arpa/inet.h>

#include "rc/timers.hpp"
#include "sim/verbs/pair.hpp"

namespace softib::testing {
namespace {

class Rc : public Pair {
 protected:
  void SetUp() override {
    qa = a.create_qp(QpType::kRc);
    qb = b.create_qp(QpType::kRc);
    connect(qa, qb, options);
  }
  ConnectOptions options;
  rc::Qp* qa = nullptr;
  rc::Qp* qb = nullptr;
};

TEST_F(Rc, SendRecvAcrossPacketSizes) {
  for (uint32_t len : {0u, 1u, 4u, 1023u, 1024u, 1025u, 4096u, 65536u, 300001u}) {
    SCOPED_TRACE(len);
    fill_pattern(a.buffer, 0, len, len);
    std::fill(b.buffer.begin(), b.buffer.begin() + len + 16, 0);
    ASSERT_TRUE(post_recv(b, qb, 7, {b.sge(0, len + 16)}).ok());
    SendWr wr;
    wr.wr_id = 42;
    wr.opcode = WrOpcode::kSend;
    wr.send_flags = send_flag::kSignaled;
    Sge s = a.sge(0, len);
    wr.sg_list = {&s, 1};
    ASSERT_TRUE(post_send(a, qa, wr).ok());
    auto rwc = reap(b.rcq, 1);
    auto swc = reap(a.scq, 1);
    ASSERT_EQ(rwc.size(), 1u);
    ASSERT_EQ(swc.size(), 1u);
    EXPECT_EQ(rwc[0].status, WcStatus::kSuccess);
    EXPECT_EQ(rwc[0].opcode, WcOpcode::kRecv);
    EXPECT_EQ(rwc[0].wr_id, 7u);
    EXPECT_EQ(rwc[0].byte_len, len);
    EXPECT_EQ(rwc[0].qp_num, qb->qpn());
    EXPECT_EQ(rwc[0].wc_flags, 0u);
    EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
    EXPECT_EQ(swc[0].opcode, WcOpcode::kSend);
    EXPECT_EQ(swc[0].wr_id, 42u);
    EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + len, b.buffer.begin()));
    EXPECT_EQ(b.buffer[len], 0);  // nothing beyond the message
  }
  EXPECT_EQ(a.device.counters().retransmits, 0u);
}

TEST_F(Rc, SendWithImmAndSolicited) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 64)}).ok());
  SendWr wr;
  wr.opcode = WrOpcode::kSendWithImm;
  wr.imm_data = htonl(0xdeadbeef);
  wr.send_flags = send_flag::kSignaled | send_flag::kSolicited;
  Sge s = a.sge(0, 8);
  wr.sg_list = {&s, 1};
  bool notified = false;
  b.rcq->on_notify([&](Cq&) { notified = true; });
  b.rcq->arm(true);
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wc_flags, wc_flag::kWithImm);
  EXPECT_EQ(ntohl(wc[0].imm_data), 0xdeadbeefu);
  EXPECT_TRUE(notified);
}

TEST_F(Rc, SolicitedOnlyNotificationIgnoresUnsolicited) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 64)}).ok());
  bool notified = false;
  b.rcq->on_notify([&](Cq&) { notified = true; });
  b.rcq->arm(true);
  SendWr wr;
  Sge s = a.sge(0, 8);
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  ASSERT_EQ(reap(b.rcq, 1).size(), 1u);
  EXPECT_FALSE(notified);
}

TEST_F(Rc, RdmaWriteAndWriteWithImm) {
  fill_pattern(a.buffer, 0, 10000, 3);
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 10000);
  wr.sg_list = {&s, 1};
  wr.rdma = {b.addr(4096), b.mr->rkey};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kRdmaWrite);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 10000, b.buffer.begin() + 4096));
  EXPECT_EQ(b.rcq->queued(), 0u);  // a plain WRITE consumes no receive WQE

  ASSERT_TRUE(post_recv(b, qb, 9, {b.sge(0, 0)}).ok());
  wr.opcode = WrOpcode::kRdmaWriteWithImm;
  wr.imm_data = htonl(77);
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto rwc = reap(b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(rwc[0].wr_id, 9u);
  EXPECT_EQ(rwc[0].byte_len, 10000u);
  EXPECT_EQ(ntohl(rwc[0].imm_data), 77u);
}

TEST_F(Rc, RdmaReadMultiPacketAndZeroLength) {
  fill_pattern(b.buffer, 8192, 50000, 11);
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaRead;
  wr.send_flags = send_flag::kSignaled;
  Sge s[2] = {a.sge(0, 20000), a.sge(100000, 30000)};
  wr.sg_list = s;
  wr.rdma = {b.addr(8192), b.mr->rkey};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kRdmaRead);
  EXPECT_TRUE(std::equal(b.buffer.begin() + 8192, b.buffer.begin() + 8192 + 20000, a.buffer.begin()));
  EXPECT_TRUE(std::equal(b.buffer.begin() + 28192, b.buffer.begin() + 58192, a.buffer.begin() + 100000));

  wr.sg_list = {};
  wr.rdma = {0, RKey(0)};  // a zero-length READ names no memory (IBA 9.4.3)
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
}

TEST_F(Rc, Atomics) {
  uint64_t v = 100;
  std::memcpy(&b.buffer[64], &v, 8);
  SendWr wr;
  wr.opcode = WrOpcode::kAtomicFetchAndAdd;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 8);
  wr.sg_list = {&s, 1};
  wr.atomic = {b.addr(64), 5, 0, b.mr->rkey};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  wr.opcode = WrOpcode::kAtomicCmpAndSwp;
  wr.atomic = {b.addr(64), 105, 7, b.mr->rkey};  // compare 105 (matches), swap 7
  Sge s2 = a.sge(8, 8);
  wr.sg_list = {&s2, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  wr.atomic = {b.addr(64), 1, 9, b.mr->rkey};  // compare 1 fails
  Sge s3 = a.sge(16, 8);
  wr.sg_list = {&s3, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 3);
  ASSERT_EQ(wc.size(), 3u);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kFetchAdd);
  EXPECT_EQ(wc[1].opcode, WcOpcode::kCompSwap);
  uint64_t r[3];
  std::memcpy(r, a.buffer.data(), 24);
  EXPECT_EQ(r[0], 100u);
  EXPECT_EQ(r[1], 105u);
  EXPECT_EQ(r[2], 7u);
  std::memcpy(&v, &b.buffer[64], 8);
  EXPECT_EQ(v, 7u);
}

TEST_F(Rc, InlineAndMultipleSgesAndUnsignaled) {
  const char* text = "inline data needs no key";
  SendWr wr;
  wr.opcode = WrOpcode::kSend;
  wr.send_flags = send_flag::kInline;  // unsignaled
  Sge s{reinterpret_cast<uint64_t>(text), static_cast<uint32_t>(std::strlen(text)), LKey(0)};
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 10), b.sge(500, 100)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].byte_len, std::strlen(text));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(&b.buffer[0]), 10), std::string(text, 10));
  EXPECT_EQ(std::string(reinterpret_cast<char*>(&b.buffer[500]), std::strlen(text) - 10), std::string(text + 10));
  fabric.settle();
  EXPECT_EQ(a.scq->queued(), 0u);  // unsignaled: no completion

  // Inline beyond max_inline_data is refused at post time.
  std::vector<char> big(1000, 'x');
  s = {reinterpret_cast<uint64_t>(big.data()), 1000, LKey(0)};
  EXPECT_EQ(post_send(a, qa, wr).to_errno(), EINVAL);
}

TEST_F(Rc, RnrRetryThenSuccess) {
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 16);
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  drain();
  EXPECT_GT(b.device.counters().rnr_naks_sent, 0u);
  EXPECT_EQ(a.scq->queued(), 0u);
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 16)}).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
}

class RcNoRnrRetry : public Rc {
 protected:
  RcNoRnrRetry() { options.rnr_retry = 0; }
};

TEST_F(RcNoRnrRetry, RnrRetryExhaustedFlushesTheRest) {
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 16);
  wr.sg_list = {&s, 1};
  wr.wr_id = 1;
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  wr.wr_id = 2;
  wr.send_flags = 0;  // unsignaled, but a flushed WR completes anyway
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(qa->state(), QpState::kError);
}

TEST_F(Rc, RemoteAccessErrors) {
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 64);
  wr.sg_list = {&s, 1};
  wr.rdma = {b.addr(b.buffer.size() - 32), b.mr->rkey};  // runs past the region
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(qa->state(), QpState::kError);
  EXPECT_EQ(qb->state(), QpState::kError);
}

TEST_F(Rc, BadRkeyOnRead) {
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaRead;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 64);
  wr.sg_list = {&s, 1};
  wr.rdma = {b.addr(0), RKey(b.mr->rkey.value() ^ 0x1)};  // stale generation
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRemAccessErr);
}

TEST_F(Rc, LocalProtectionError) {
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s{a.addr(0), 64, LKey(12345)};
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 64)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocProtErr);
  EXPECT_EQ(qa->state(), QpState::kError);
}

TEST_F(Rc, ReceiveBufferTooSmall) {
  ASSERT_TRUE(post_recv(b, qb, 5, {b.sge(0, 100)}).ok());
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 200);
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto swc = reap(a.scq, 1);
  auto rwc = reap(b.rcq, 1);
  ASSERT_EQ(swc.size(), 1u);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kRemInvReqErr);
  EXPECT_EQ(rwc[0].status, WcStatus::kLocLenErr);
}

// A receive WQE whose SGE names no MR (IBA 9.9.3 class B at the responder): the receive
// completes with a local protection error, the requester hears a remote operational error
// through the NAK, and both QPs go on to Error; the next WQE is untouched. For a SEND in one
// packet, taken straight from the queue's front.
TEST_F(Rc, AReceiveWqeWithABadLkeyFailsBothSides) {
  for (const uint32_t len : {16u, 3000u}) {  // one packet; several (the WQE copied and filled)
    SCOPED_TRACE(len);
    Sge bad = b.sge(0, 4096);
    bad.lkey = LKey(bad.lkey.value() + 0x100);
    ASSERT_TRUE(post_recv(b, qb, 9, {bad}).ok());
    ASSERT_TRUE(post_recv(b, qb, 10, {b.sge(0, 4096)}).ok());
    SendWr wr;
    wr.wr_id = 3;
    wr.send_flags = send_flag::kSignaled;
    Sge s = a.sge(0, len);
    wr.sg_list = {&s, 1};
    ASSERT_TRUE(post_send(a, qa, wr).ok());
    auto swc = reap(a.scq, 1);
    auto rwc = reap(b.rcq, 2);
    ASSERT_EQ(swc.size(), 1u);
    EXPECT_EQ(swc[0].status, WcStatus::kRemOpErr);
    ASSERT_EQ(rwc.size(), 2u);
    EXPECT_EQ(rwc[0].wr_id, 9u);
    EXPECT_EQ(rwc[0].status, WcStatus::kLocProtErr);
    EXPECT_EQ(rwc[1].wr_id, 10u);
    EXPECT_EQ(rwc[1].status, WcStatus::kWrFlushErr) << "the responder's QP is in Error: the rest is flushed";
    EXPECT_EQ(qa->state(), QpState::kError);
    qa = a.create_qp(QpType::kRc);  // a fresh pair for the next length
    qb = b.create_qp(QpType::kRc);
    connect(qa, qb, options);
  }
}

class RcShortRetry : public Rc {
 protected:
  RcShortRetry() {
    options.retry_cnt = 3;
    options.timeout = 10;  // 4.2 ms
  }
};

TEST_F(RcShortRetry, RetryExhaustedWithinTheTimeoutBudget) {
  fabric.set_filter([](const rc::FrameAddr& to, wire::ByteSpan) { return to.dlid == Lid(2); });
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 16);
  wr.sg_list = {&s, 1};
  const TimePoint start = clock.now();
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRetryExcErr);
  // 1 + retry_cnt timeouts of 4.096 us * 2^10.
  const Duration took = clock.now() - start;
  EXPECT_GE(took, rc::local_ack_timeout(10) * 4);
  EXPECT_LT(took, rc::local_ack_timeout(10) * 5);
  EXPECT_EQ(a.device.counters().timeouts, 4u);
  EXPECT_EQ(a.device.counters().retransmits, 3u);
}

TEST_F(Rc, PostSendInWrongStateIsEinval) {
  rc::Qp* q = a.create_qp(QpType::kRc);
  SendWr wr;
  EXPECT_EQ(post_send(a, q, wr).to_errno(), EINVAL);
  QpAttr at;
  at.qp_state = QpState::kRtr;
  EXPECT_EQ(a.device.modify_qp(q, at, attr::kState).to_errno(), EINVAL);  // RESET -> RTR is illegal
}

TEST_F(Rc, ModifyToErrorFlushesReceives) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 8)}).ok());
  ASSERT_TRUE(post_recv(b, qb, 2, {b.sge(0, 8)}).ok());
  QpAttr at;
  at.qp_state = QpState::kError;
  ASSERT_TRUE(b.device.modify_qp(qb, at, attr::kState).ok());
  auto wc = reap(b.rcq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].wr_id, 2u);
  // Posting in Error completes with a flush error too.
  ASSERT_TRUE(post_recv(b, qb, 3, {b.sge(0, 8)}).ok());
  wc = reap(b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 3u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
}

TEST_F(Rc, CqOverrunRaisesAnAsyncEvent) {
  Cq* tiny = *b.device.create_cq(2, nullptr);
  rc::Qp* q = b.create_qp(QpType::kRc);
  (void)tiny;
  // A QP whose receive CQ holds 2: three flushed receives overrun it.
  rc::Device& d = b.device;
  QpInitAttr init;
  init.cap = {8, 8, 1, 1, 0};
  rc::Qp* small = *d.create_qp(b.pd, b.scq, tiny, nullptr, init, nullptr);
  QpAttr to_init;
  to_init.qp_state = QpState::kInit;
  to_init.port_num = 1;
  ASSERT_TRUE(d.modify_qp(small, to_init, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
  EXPECT_EQ(post_recv(b, q, 9, {b.sge(0, 8)}).to_errno(), EINVAL) << "RESET takes no receives";
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(post_recv(b, small, static_cast<uint64_t>(i), {b.sge(0, 8)}).ok());
  QpAttr at;
  at.qp_state = QpState::kError;
  ASSERT_TRUE(d.modify_qp(small, at, attr::kState).ok());
  fabric.settle();
  auto events = d.take_async_events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].type, AsyncEventType::kCqErr);
  EXPECT_EQ(events[0].cq, tiny);
  EXPECT_TRUE(tiny->overrun());
  (void)q;
}

}  // namespace
}  // namespace softib::testing
