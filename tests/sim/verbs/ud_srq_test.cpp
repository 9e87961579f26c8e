// UD (address handles, Q_Keys, the 40-byte GRH area) and shared receive queues.
#include <arpa/inet.h>

#include "sim/verbs/pair.hpp"
#include "wire/grh.hpp"

#include <set>

namespace softib::testing {
namespace {

class Ud : public Pair {
 protected:
  void SetUp() override {
    qa = a.create_qp(QpType::kUd);
    qb = b.create_qp(QpType::kUd);
    ready_ud(a.device, qa, 0x1234);
    ready_ud(b.device, qb, 0x1234);
    AhAttr at;
    at.dlid = Lid(2);
    at.sl = 3;
    at.port_num = 1;
    ah = *a.device.create_ah(a.pd, at);
    at.is_global = true;
    at.grh.dgid = b.device.port().gids[0];
    at.grh.hop_limit = 64;
    at.grh.flow_label = 0x12345;
    ah_global = *a.device.create_ah(a.pd, at);
  }
  SendWr wr_to_b(uint32_t len, const Ah* to, uint32_t qkey = 0x1234) {
    SendWr wr;
    wr.opcode = WrOpcode::kSend;
    wr.send_flags = send_flag::kSignaled;
    sge = a.sge(0, len);
    wr.sg_list = {&sge, 1};
    wr.ud = {to, qb->qpn(), QKey(qkey)};
    return wr;
  }
  rc::Qp* qa = nullptr;
  rc::Qp* qb = nullptr;
  Ah* ah = nullptr;
  Ah* ah_global = nullptr;
  Sge sge;
};

TEST_F(Ud, SendLeavesTheGrhAreaAndReportsTheSource) {
  fill_pattern(a.buffer, 0, 500, 5);
  std::fill(b.buffer.begin(), b.buffer.begin() + 40, 0xEE);
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 40 + 1024)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr_to_b(500, ah)).ok());
  auto wc = reap(b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].byte_len, 540u);
  EXPECT_EQ(wc[0].src_qp, qa->qpn());
  EXPECT_EQ(wc[0].slid, Lid(1));
  EXPECT_EQ(wc[0].sl, 3);
  EXPECT_EQ(wc[0].wc_flags & wc_flag::kGrh, 0u);
  EXPECT_EQ(b.buffer[0], 0xEE) << "no GRH: the first 40 bytes are not written";
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 500, b.buffer.begin() + 40));
  auto swc = reap(a.scq, 1);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
}

TEST_F(Ud, GlobalRouteWritesTheGrh) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 40 + 64)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr_to_b(64, ah_global)).ok());
  auto wc = reap(b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wc_flags & wc_flag::kGrh, wc_flag::kGrh);
  auto grh = wire::Grh::decode(wire::ByteSpan(b.buffer.data(), 40));
  ASSERT_TRUE(grh.ok());
  EXPECT_EQ(grh->sgid, a.device.port().gids[0]);
  EXPECT_EQ(grh->dgid, b.device.port().gids[0]);
  EXPECT_EQ(grh->hop_lmt, 64);
  EXPECT_EQ(grh->flow_label, 0x12345u);
}

TEST_F(Ud, QkeyMismatchIsDroppedAndControlledQkeyUsesTheQps) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 100)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr_to_b(8, ah, 0x9999)).ok());
  drain();
  EXPECT_EQ(b.rcq->queued(), 0u);
  EXPECT_EQ(b.device.counters().dropped(rc::Drop::kBadQkey), 1u);
  // IBA 10.2.4: a WR Q_Key with the high bit set sends the QP's own Q_Key (0x1234).
  ASSERT_TRUE(post_send(a, qa, wr_to_b(8, ah, 0x80000000)).ok());
  EXPECT_EQ(reap(b.rcq, 1).size(), 1u);
}

TEST_F(Ud, LongerThanTheMtuFailsLocally) {
  ASSERT_TRUE(post_send(a, qa, wr_to_b(4097, ah)).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocLenErr);
}

// A UD QP has no path MTU (Modify QP does not take one): its limit is the port's MTU, 4096
// here, not the 1024 of an unset path_mtu (perftest's ib_send_bw -c UD sends 2048 on a
// 2048-byte port).
TEST_F(Ud, AMessageAsLongAsThePortMtuIsSent) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 40 + 4096)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr_to_b(4096, ah)).ok());
  auto swc = reap(a.scq, 1);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
  auto rwc = reap(b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].byte_len, 40u + 4096u);
}

TEST_F(Ud, NoReceiveWqeLosesTheMessage) {
  ASSERT_TRUE(post_send(a, qa, wr_to_b(8, ah)).ok());
  auto wc = reap(a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);  // UD has no acknowledgements
  drain();
  EXPECT_EQ(b.device.counters().dropped(rc::Drop::kNoReceiveWqe), 1u);
}

TEST_F(Ud, ReceiveBufferWithoutRoomForTheGrhIsALengthError) {
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 60)}).ok());
  ASSERT_TRUE(post_send(a, qa, wr_to_b(30, ah)).ok());
  auto wc = reap(b.rcq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocLenErr);
  EXPECT_EQ(qb->state(), QpState::kRts) << "a UD receive error does not stop the QP";
}

TEST_F(Ud, PostWithoutAnAddressHandleIsEinval) {
  SendWr wr = wr_to_b(8, nullptr);
  EXPECT_EQ(post_send(a, qa, wr).to_errno(), EINVAL);
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.ud.ah = ah;
  EXPECT_EQ(post_send(a, qa, wr).to_errno(), EINVAL) << "UD carries no RDMA";
}

class SharedRq : public Pair {};

TEST_F(SharedRq, TwoQpsDrawFromOneSrqAndTheLimitFiresOnce) {
  Srq* srq = *b.device.create_srq(b.pd, 16, 2, 0, nullptr);
  rc::Qp* a1 = a.create_qp(QpType::kRc);
  rc::Qp* a2 = a.create_qp(QpType::kRc);
  rc::Qp* b1 = b.create_qp(QpType::kRc, 64, srq);
  rc::Qp* b2 = b.create_qp(QpType::kRc, 64, srq);
  connect(a1, b1);
  connect(a2, b2);
  EXPECT_EQ(post_recv(b, b1, 0, {b.sge(0, 8)}).to_errno(), EINVAL) << "a QP on an SRQ has no receive queue";
  for (int i = 0; i < 6; ++i) {
    RecvWr wr{static_cast<uint64_t>(100 + i), {}};
    Sge s = b.sge(static_cast<size_t>(i) * 4096, 4096);
    wr.sg_list = {&s, 1};
    size_t bad;
    ASSERT_TRUE(b.device.post_srq_recv(srq, {&wr, 1}, &bad).ok());
  }
  srq->set_limit(3);
  for (int i = 0; i < 4; ++i) {
    SendWr wr;
    wr.wr_id = static_cast<uint64_t>(i);
    Sge s = a.sge(static_cast<size_t>(i) * 8, 3000);  // multi-packet: both QPs interleave
    wr.sg_list = {&s, 1};
    ASSERT_TRUE(post_send(a, i % 2 == 0 ? a1 : a2, wr).ok());
  }
  auto wc = reap(b.rcq, 4);
  ASSERT_EQ(wc.size(), 4u);
  std::set<uint64_t> ids;
  for (const auto& w : wc) {
    EXPECT_EQ(w.status, WcStatus::kSuccess);
    EXPECT_EQ(w.byte_len, 3000u);
    ids.insert(w.wr_id);
  }
  EXPECT_EQ(ids.size(), 4u) << "each SRQ WQE is used once";
  auto events = b.device.take_async_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, AsyncEventType::kSrqLimitReached);
  EXPECT_EQ(events[0].srq, srq);
  EXPECT_EQ(srq->limit(), 0u) << "the limit disarms once it fired";
  EXPECT_EQ(b.device.destroy_srq(srq).to_errno(), EBUSY);
}

}  // namespace
}  // namespace softib::testing
