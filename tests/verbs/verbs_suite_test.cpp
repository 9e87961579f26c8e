// The verbs data path between two contexts, over the in-process loopback link and over shared
// memory through softibd: the same suite on both. RC (every operation, RNR, error completions
// and the flush that follows), UC, UD (address handles, the GRH area, Q_Keys), SRQs,
// completion channels (real, pollable fds; solicited-only), CQ overrun, asynchronous events,
// and threads sharing a QP and its CQs. The engine and its lease: lease_suite_test.cpp.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/epoll.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "ipc/client.hpp"
#include "link/shm_inbox.hpp"
#include "link/shm_link.hpp"
#include "verbs/rc_suite.hpp"

namespace softib::testing {
namespace {

TEST_P(Rc, SendRecvAcrossSizes) {
  for (uint32_t len : {0u, 1u, 1023u, 1024u, 1025u, 65536u, 1000001u}) {
    SCOPED_TRACE(len);
    fill_pattern(a.buffer, 0, len, len);
    std::fill(b.buffer.begin(), b.buffer.begin() + len + 16, 0);
    ASSERT_TRUE(post_recv(b, qb, 7, {b.sge(0, len + 16)}).ok());
    SendWr wr;
    wr.wr_id = 42;
    wr.send_flags = send_flag::kSignaled;
    Sge s = a.sge(0, len);
    wr.sg_list = {&s, 1};
    ASSERT_TRUE(post_send(a, qa, wr).ok());
    auto rwc = reap(b, b.rcq, 1);
    auto swc = reap(a, a.scq, 1);
    ASSERT_EQ(rwc.size(), 1u);
    ASSERT_EQ(swc.size(), 1u);
    EXPECT_EQ(rwc[0].status, WcStatus::kSuccess);
    EXPECT_EQ(rwc[0].wr_id, 7u);
    EXPECT_EQ(rwc[0].byte_len, len);
    EXPECT_EQ(rwc[0].qp_num, qb->qpn());
    EXPECT_EQ(rwc[0].src_qp, qa->qpn());
    EXPECT_EQ(rwc[0].slid, a.lid);
    EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
    EXPECT_EQ(swc[0].wr_id, 42u);
    EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + len, b.buffer.begin()));
    EXPECT_EQ(b.buffer[len], 0);
  }
}

TEST_P(Rc, ThreadsSharingAQueuePairAndItsCqsGetEveryMessageExactlyOnce) {
  // The post and poll locks are biased to the first thread that takes them (base/
  // biased_lock.hpp). Here a second thread takes each of them while the first is still at
  // work: two threads post SENDs on one QP, two post B's receives, two poll each CQ.
  // Every message arrives once, intact, and every work request completes once.
  constexpr uint32_t kPerThread = 1000;
  constexpr uint32_t kTotal = 2 * kPerThread;
  rc::Qp* sa = create_qp(a, QpType::kRc, 2 * kTotal);
  rc::Qp* sb = create_qp(b, QpType::kRc, 2 * kTotal);
  connect(sa, sb);
  std::fill(b.buffer.begin(), b.buffer.begin() + 8 * kTotal, 0xFF);
  auto post_receives = [&](uint32_t from) {
    for (uint32_t i = from; i < from + kPerThread; ++i) ASSERT_TRUE(post_recv(b, sb, i, {b.sge(8 * i, 8)}).ok());
  };
  auto send = [&](uint32_t from) {
    for (uint32_t i = from; i < from + kPerThread; ++i) {
      const uint64_t payload = 0x5e00000000ull + i;
      const Sge sg{reinterpret_cast<uint64_t>(&payload), 8, LKey()};
      SendWr wr;
      wr.wr_id = i;
      wr.send_flags = send_flag::kSignaled | send_flag::kInline;
      wr.sg_list = {&sg, 1};
      ASSERT_TRUE(post_send(a, sa, wr).ok());
    }
  };
  std::thread r1(post_receives, 0);
  std::thread r2(post_receives, kPerThread);
  r1.join();
  r2.join();
  // Two pollers per CQ, each keeping what it took.
  auto poll_until = [](Side& s, Cq* cq, std::atomic<uint32_t>& taken, std::vector<WorkCompletion>& mine) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    WorkCompletion wc[16];
    while (taken.load() < kTotal && std::chrono::steady_clock::now() < limit) {
      const size_t n = s.ctx->poll_cq(cq, wc);
      mine.insert(mine.end(), wc, wc + n);
      taken += static_cast<uint32_t>(n);
    }
  };
  std::atomic<uint32_t> received{0}, sent{0};
  std::array<std::vector<WorkCompletion>, 4> got;
  std::thread p1(poll_until, std::ref(b), b.rcq, std::ref(received), std::ref(got[0]));
  std::thread p2(poll_until, std::ref(b), b.rcq, std::ref(received), std::ref(got[1]));
  std::thread p3(poll_until, std::ref(a), a.scq, std::ref(sent), std::ref(got[2]));
  std::thread p4(poll_until, std::ref(a), a.scq, std::ref(sent), std::ref(got[3]));
  std::thread s1(send, 0);
  std::thread s2(send, kPerThread);
  for (std::thread* t : {&s1, &s2, &p1, &p2, &p3, &p4}) t->join();
  ASSERT_EQ(received.load(), kTotal);
  ASSERT_EQ(sent.load(), kTotal);
  std::vector<bool> recv_seen(kTotal), send_seen(kTotal), payload_seen(kTotal);
  for (int side = 0; side < 2; ++side)
    for (int poller = 0; poller < 2; ++poller)
      for (const WorkCompletion& c : got[static_cast<size_t>(2 * side + poller)]) {
        ASSERT_EQ(c.status, WcStatus::kSuccess);
        ASSERT_LT(c.wr_id, kTotal);
        std::vector<bool>& seen = side == 0 ? recv_seen : send_seen;
        ASSERT_FALSE(seen[c.wr_id]) << (side == 0 ? "receive " : "send ") << c.wr_id << " completed twice";
        seen[c.wr_id] = true;
        if (side == 0) {
          ASSERT_EQ(c.byte_len, 8u);
        }
      }
  for (uint32_t i = 0; i < kTotal; ++i) {
    uint64_t v;
    std::memcpy(&v, b.buffer.data() + 8 * i, 8);
    ASSERT_EQ(v >> 32, 0x5eu) << "receive buffer " << i;
    const uint64_t id = v & 0xFFFFFFFFu;
    ASSERT_LT(id, kTotal);
    ASSERT_FALSE(payload_seen[id]) << "message " << id << " arrived twice";
    payload_seen[id] = true;
  }
}

TEST_P(Rc, InlineImmediateSolicitedAndScatterGather) {
  // Two receive SGEs, a three-SGE send with immediate data and the solicited bit.
  ASSERT_TRUE(post_recv(b, qb, 1, {b.sge(0, 100), b.sge(1000, 5000)}).ok());
  fill_pattern(a.buffer, 0, 4000, 9);
  SendWr wr;
  wr.wr_id = 2;
  wr.opcode = WrOpcode::kSendWithImm;
  wr.imm_data = htonl(0xC0FFEE);
  wr.send_flags = send_flag::kSignaled | send_flag::kSolicited;
  Sge s[3] = {a.sge(0, 10), a.sge(10, 90), a.sge(100, 3900)};
  wr.sg_list = s;
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  auto rwc = reap(b, b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].wc_flags, wc_flag::kWithImm);
  EXPECT_EQ(ntohl(rwc[0].imm_data), 0xC0FFEEu);
  EXPECT_EQ(rwc[0].byte_len, 4000u);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 100, b.buffer.begin()));
  EXPECT_TRUE(std::equal(a.buffer.begin() + 100, a.buffer.begin() + 4000, b.buffer.begin() + 1000));
  ASSERT_EQ(reap(a, a.scq, 1).size(), 1u);

  // Inline: the caller's buffer may change as soon as the post returns.
  ASSERT_TRUE(post_recv(b, qb, 3, {b.sge(0, 200)}).ok());
  uint8_t inline_data[100];
  for (int i = 0; i < 100; ++i) inline_data[i] = static_cast<uint8_t>(i + 1);
  SendWr in;
  in.wr_id = 4;
  in.send_flags = send_flag::kSignaled | send_flag::kInline;
  Sge is{reinterpret_cast<uint64_t>(inline_data), 100, LKey(0)};  // no key: inline needs none
  in.sg_list = {&is, 1};
  ASSERT_TRUE(post_send(a, qa, in).ok());
  std::memset(inline_data, 0, sizeof inline_data);
  rwc = reap(b, b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].byte_len, 100u);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(b.buffer[static_cast<size_t>(i)], i + 1);
  EXPECT_EQ(reap(a, a.scq, 1)[0].status, WcStatus::kSuccess);
}

TEST_P(Rc, WriteReadAndWriteWithImmOfAMebibyte) {
  constexpr uint32_t kLen = 1 << 20;
  fill_pattern(a.buffer, 0, kLen, 3);
  const Sge w = a.sge(0, kLen);
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, w, b.addr(kLen), b.mr->rkey, 1)).ok());
  auto wc = reap(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kRdmaWrite);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + kLen, b.buffer.begin() + kLen));
  EXPECT_EQ(b.rcq->queued(), 0u) << "a plain WRITE consumes no receive";

  fill_pattern(b.buffer, 2 * kLen, kLen, 5);
  const Sge r = a.sge(2 * kLen, kLen);
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaRead, r, b.addr(2 * kLen), b.mr->rkey, 2)).ok());
  wc = reap(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].opcode, WcOpcode::kRdmaRead);
  EXPECT_EQ(wc[0].byte_len, kLen);
  EXPECT_TRUE(std::equal(b.buffer.begin() + 2 * kLen, b.buffer.begin() + 3 * kLen, a.buffer.begin() + 2 * kLen));

  ASSERT_TRUE(post_recv(b, qb, 9, {b.sge(0, 0)}).ok());
  SendWr imm = one_sided(WrOpcode::kRdmaWriteWithImm, a.sge(0, 5000), b.addr(3 * kLen), b.mr->rkey, 3);
  const Sge s5000 = a.sge(0, 5000);
  imm.sg_list = {&s5000, 1};
  imm.imm_data = htonl(77);
  ASSERT_TRUE(post_send(a, qa, imm).ok());
  auto rwc = reap(b, b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].opcode, WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(rwc[0].byte_len, 5000u);
  EXPECT_EQ(ntohl(rwc[0].imm_data), 77u);
  EXPECT_EQ(reap(a, a.scq, 1).size(), 1u);
}

TEST_P(Rc, AtomicsAreAtomicAcrossQueuePairs) {
  // Two QPs from A and one from B itself hammer the same counter at B.
  rc::Qp* qa2 = create_qp(a, QpType::kRc);
  rc::Qp* qb2 = create_qp(b, QpType::kRc);
  connect(qa2, qb2);
  uint64_t* counter = reinterpret_cast<uint64_t*>(b.buffer.data() + 4096);
  *counter = 1000;
  constexpr int kPerQp = 300;
  std::atomic<int> errors{0};
  auto hammer = [&](rc::Qp* qp, size_t result_at) {
    for (int i = 0; i < kPerQp; ++i) {
      const Sge s = a.sge(result_at + 8 * static_cast<size_t>(i), 8);
      SendWr wr;
      wr.wr_id = static_cast<uint64_t>(i);
      wr.opcode = WrOpcode::kAtomicFetchAndAdd;
      wr.send_flags = send_flag::kSignaled;
      wr.sg_list = {&s, 1};
      wr.atomic.remote_addr = b.addr(4096);
      wr.atomic.rkey = b.mr->rkey;
      wr.atomic.compare_add = 1;
      size_t bad;
      while (true) {
        Status st = a.ctx->post_send(qp, std::span<const SendWr>(&wr, 1), &bad);
        if (st.ok()) break;
        if (st.code() != Code::kResourceExhausted) {
          ++errors;
          return;
        }
        std::this_thread::yield();  // the send queue is full: completions free it
      }
    }
  };
  Cq* cq2 = a.scq;
  std::thread t1(hammer, qa, 0);
  std::thread t2(hammer, qa2, 8 * kPerQp);
  auto wc = reap(a, cq2, 2 * kPerQp);
  t1.join();
  t2.join();
  EXPECT_EQ(errors.load(), 0);
  ASSERT_EQ(wc.size(), 2u * kPerQp);
  for (const auto& c : wc) ASSERT_EQ(c.status, WcStatus::kSuccess);
  EXPECT_EQ(*counter, 1000u + 2 * kPerQp);
  // Every fetched value is distinct: no two fetch-and-adds saw the same counter.
  std::vector<uint64_t> seen(reinterpret_cast<uint64_t*>(a.buffer.data()),
                             reinterpret_cast<uint64_t*>(a.buffer.data()) + 2 * kPerQp);
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1000 + i);

  // Compare and swap: the first succeeds, the second sees the new value.
  const Sge cs = a.sge(100000, 8);
  SendWr wr;
  wr.opcode = WrOpcode::kAtomicCmpAndSwp;
  wr.send_flags = send_flag::kSignaled;
  wr.sg_list = {&cs, 1};
  wr.atomic = {b.addr(4096), 1000u + 2 * kPerQp, 5, b.mr->rkey};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  wc = reap(a, a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(*counter, 5u);
  uint64_t got;
  std::memcpy(&got, a.buffer.data() + 100000, 8);
  EXPECT_EQ(got, 5u) << "the second compare saw the swapped value";
}

// An unsignaled SEND asks for no ACK (rc::Device::asks_ack): the last of a run is
// acknowledged lazily, by a step of the responder that takes no frame (its application's idle
// poll, or its engine once the application stops), not by a timeout. With a 2.4-hour timeout,
// the send queue's drain (SQD, which waits for every ACK) must end, and report
// IBV_EVENT_SQ_DRAINED, within the test, and nothing is sent twice.
TEST_P(Rc, AnUnsignaledTailIsAcknowledgedLazilyNotByATimeout) {
  Connect slow;
  slow.timeout = 31;
  rc::Qp* q = create_qp(a, QpType::kRc);
  rc::Qp* p = create_qp(b, QpType::kRc);
  connect_one(a, q, b, p, slow);
  connect_one(b, p, a, q, slow);
  fill_pattern(a.buffer, 0, 64, 5);
  for (uint64_t i = 0; i < 3; ++i) {
    const Status st = post_recv(b, p, i, {b.sge(64 * i, 64)});
    ASSERT_TRUE(st.ok()) << st.to_string();
    SendWr wr;
    wr.wr_id = i;
    Sge s = a.sge(0, 64);
    wr.sg_list = {&s, 1};
    ASSERT_TRUE(post_send(a, q, wr).ok());
  }
  const auto rwc = reap(b, b.rcq, 3);
  ASSERT_EQ(rwc.size(), 3u);
  for (const WorkCompletion& w : rwc) EXPECT_EQ(w.status, WcStatus::kSuccess);
  QpAttr at;
  at.qp_state = QpState::kSqd;
  at.en_sqd_async_notify = 1;
  ASSERT_TRUE(a.ctx->modify_qp(q, at, attr::kState | attr::kEnSqdAsyncNotify).ok());
  // The drained event is the handshake; 20 s stand for "never" (the timeout is hours).
  pollfd pfd{a.ctx->async_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 20000), 1) << "the ACK of the last unsignaled SEND never came";
  auto e = a.ctx->get_async_event();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, AsyncEventType::kSqDrained);
  std::lock_guard lock(a.ctx->device().lock());
  EXPECT_FALSE(q->req_draining());
  EXPECT_EQ(a.ctx->device().counters().retransmits, 0u);
  EXPECT_EQ(a.ctx->device().counters().timeouts, 0u);
}

TEST_P(Rc, RnrRetriesUntilAReceiveIsPosted) {
  SendWr wr;
  wr.wr_id = 1;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 64);
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  // No receive yet: the responder answers RNR NAKs, the requester waits and retries (7 =
  // forever). A receive posted later lets it through.
  WorkCompletion wc[1];
  for (int i = 0; i < 50; ++i) ASSERT_EQ(a.ctx->poll_cq(a.scq, wc), 0u);
  ASSERT_TRUE(post_recv(b, qb, 2, {b.sge(0, 64)}).ok());
  EXPECT_EQ(reap(b, b.rcq, 1)[0].status, WcStatus::kSuccess);
  EXPECT_EQ(reap(a, a.scq, 1)[0].status, WcStatus::kSuccess);
}

TEST_P(Rc, RequestsLostOnManyQpsRetryOutWithTheEnginesAlone) {
  // More QPs await ACKs than the device keeps active (rc::Device::kFewActive): the first posted
  // are parked, and the engine, with no application polling, must wake at their deadlines,
  // retransmit, and fail each WR once its retries are spent. The peers stay in RESET, where
  // every request to them is dropped. The QPs posted last, which stay active, have a timeout
  // of 2.4 hours: an engine that slept until the active QPs' deadlines, or until its
  // housekeeping (every 500 ms), would be far later than the parked QPs' 1 ms timeouts.
  constexpr size_t kShort = 2 * rc::Device::kFewActive;
  Connect fast;
  fast.timeout = 8;  // 1 ms
  fast.retry_cnt = 1;
  Connect slow;
  slow.timeout = 31;
  const Sge s = a.sge(0, 8);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t k = 0; k < kShort + rc::Device::kFewActive; ++k) {
    rc::Qp* q = create_qp(a, QpType::kRc);
    rc::Qp* p = create_qp(b, QpType::kRc);
    connect_one(a, q, b, p, k < kShort ? fast : slow);
    ASSERT_TRUE(post_send(a, q, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey, k)).ok());
  }
  ASSERT_TRUE(wait_queued(a.scq, kShort)) << a.scq->queued() << " of " << kShort;
  // Two 1 ms timeouts each, and the engine's wake-ups: milliseconds. Sleeping past the parked
  // deadlines would take at least two 500 ms housekeeping rounds.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  const auto wc = reap(a, a.scq, kShort);
  ASSERT_EQ(wc.size(), kShort);
  for (const WorkCompletion& w : wc) {
    EXPECT_LT(w.wr_id, kShort);
    EXPECT_EQ(w.status, WcStatus::kRetryExcErr) << w.wr_id;
  }
}

TEST_P(Rc, ABadRkeyIsARemoteAccessErrorAndTheRestIsFlushed) {
  const Sge s = a.sge(0, 100);
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), RKey(b.mr->rkey.value() ^ 0x100), 1)).ok());
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey, 2)).ok());
  auto wc = reap(a, a.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(qa->state(), QpState::kError);
  // A post to a QP in Error completes at once, flushed (IBA 10.3.1).
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey, 3)).ok());
  wc = reap(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kWrFlushErr);
}

TEST_P(Rc, ABadLkeyIsALocalProtectionError) {
  const Sge s{a.addr(0), 100, LKey(a.mr->lkey.value() + 0x100)};
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey, 1)).ok());
  auto wc = reap(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kLocProtErr);
}

TEST_P(Rc, MisuseReturnsTheErrnoLibibverbsReturns) {
  rc::Qp* fresh = create_qp(a, QpType::kRc);
  const Sge s = a.sge(0, 8);
  SendWr wr = one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey);
  EXPECT_EQ(post_send(a, fresh, wr).to_errno(), EINVAL) << "a QP in RESET takes no sends";
  QpAttr at;
  at.qp_state = QpState::kRtr;
  EXPECT_EQ(a.ctx->modify_qp(fresh, at, attr::kState).to_errno(), EINVAL) << "RESET -> RTR is not a transition";
  EXPECT_EQ(a.ctx->dealloc_pd(a.pd).to_errno(), EBUSY) << "QPs and MRs use the PD";
  EXPECT_EQ(a.ctx->destroy_cq(a.scq).to_errno(), EBUSY);
  EXPECT_EQ(a.ctx->reg_mr(a.pd, a.buffer.data(), 64, a.addr(), access::kRemoteWrite).error().to_errno(), EINVAL)
      << "remote write without local write";
  EXPECT_EQ(a.ctx->query_port(2).error().to_errno(), EINVAL);
}

TEST_P(Rc, CqOverrunRaisesAnAsyncEvent) {
  auto tiny = a.ctx->create_cq(2, reinterpret_cast<void*>(0x1234), nullptr);
  ASSERT_TRUE(tiny.ok());
  rc::Qp* q = create_qp(a, QpType::kRc, 16, nullptr, *tiny);
  rc::Qp* p = create_qp(b, QpType::kRc);
  connect_one(a, q, b, p);
  connect_one(b, p, a, q);
  const Sge s = a.sge(0, 8);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(post_send(a, q, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey)).ok());
  ASSERT_TRUE(wait_queued(*tiny, 2));
  auto e = a.ctx->get_async_event();  // blocks until it arrives
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, AsyncEventType::kCqErr);
  EXPECT_EQ(e->object, reinterpret_cast<void*>(0x1234));
}

TEST_P(Rc, CompletionChannelsArePollableFds) {
  Channelled c;
  channelled(c);
  if (HasFatalFailure()) return;
  auto& [ch, cq, q, p] = c;
  ASSERT_TRUE(post_recv(b, p, 1, {b.sge(0, 64)}).ok());
  ASSERT_TRUE(post_recv(b, p, 2, {b.sge(64, 64)}).ok());
  // Solicited only: an unsolicited send does not wake the channel, a solicited one does.
  ASSERT_TRUE(b.ctx->req_notify_cq(cq, true).ok());
  const int ep = epoll_on(ch->fd());
  ASSERT_GE(ep, 0) << "a real fd, as libibverbs' channels are";
  epoll_event ev{};
  ASSERT_TRUE(send_8_bytes(c).ok());
  ASSERT_TRUE(wait_queued(cq, 1));
  EXPECT_EQ(::epoll_wait(ep, &ev, 1, 50), 0) << "unsolicited: no event";
  ASSERT_TRUE(send_8_bytes(c, send_flag::kSolicited).ok());
  EXPECT_EQ(::epoll_wait(ep, &ev, 1, 20000), 1) << "solicited: the fd becomes readable";
  auto got = b.ctx->get_cq_event(ch);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, cq);
  ::close(ep);
  EXPECT_EQ(b.ctx->destroy_comp_channel(ch).to_errno(), EBUSY) << "the CQ still uses it";
}

// ---- UC ----

// Waits up to 20 s for `n` bytes at `at` to equal `want`: bytes that another side's engine
// thread writes with no completion to say so (a UC WRITE), as an RDMA program polls memory.
// The reads race with those writes by design (tests/tsan.supp names this function); the
// fence orders each look after the writes it saw.
[[gnu::noinline]] bool await_bytes_written_without_a_completion(const uint8_t* want, const uint8_t* at, size_t n) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    std::atomic_thread_fence(std::memory_order_acquire);
    if (std::equal(want, want + n, at)) return true;
    if (std::chrono::steady_clock::now() >= limit) return false;
    std::this_thread::yield();
  }
}

TEST_P(Rc, UcSendAndWrite) {
  rc::Qp* ua = create_qp(a, QpType::kUc);
  rc::Qp* ub = create_qp(b, QpType::kUc);
  connect(ua, ub);
  fill_pattern(a.buffer, 0, 20000, 77);
  ASSERT_TRUE(post_recv(b, ub, 5, {b.sge(0, 20000)}).ok());
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 20000);
  wr.sg_list = {&s, 1};
  ASSERT_TRUE(post_send(a, ua, wr).ok());
  auto rwc = reap(b, b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].byte_len, 20000u);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 20000, b.buffer.begin()));
  EXPECT_EQ(reap(a, a.scq, 1)[0].status, WcStatus::kSuccess) << "UC completes once sent";
  ASSERT_TRUE(post_send(a, ua, one_sided(WrOpcode::kRdmaWrite, s, b.addr(100000), b.mr->rkey)).ok());
  EXPECT_EQ(reap(a, a.scq, 1)[0].status, WcStatus::kSuccess);
  // UC is unacknowledged: a completion says it was sent, so wait for the bytes themselves.
  EXPECT_TRUE(await_bytes_written_without_a_completion(a.buffer.data(), b.buffer.data() + 100000, 20000));
}

// ---- UD ----

TEST_P(Rc, UdSendsWithAnAddressHandleTheGrhAreaAndQkeys) {
  rc::Qp* ua = create_qp(a, QpType::kUd);
  rc::Qp* ub = create_qp(b, QpType::kUd);
  ready_ud(a, ua, 0x11111111);
  ready_ud(b, ub, 0x22222222);
  AhAttr at = address_of(b);
  at.is_global = true;
  at.grh.dgid = b.gid;
  at.grh.hop_limit = 64;
  auto ah = a.ctx->create_ah(a.pd, at);
  ASSERT_TRUE(ah.ok());
  ASSERT_TRUE(post_recv(b, ub, 1, {b.sge(0, 40 + 1024)}).ok());
  ASSERT_TRUE(post_recv(b, ub, 2, {b.sge(2048, 40 + 1024)}).ok());
  fill_pattern(a.buffer, 0, 1000, 5);
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 1000);
  wr.sg_list = {&s, 1};
  wr.ud = {*ah, ub->qpn(), QKey(0x33333333)};  // the wrong Q_Key: dropped
  ASSERT_TRUE(post_send(a, ua, wr).ok());
  wr.ud.remote_qkey = QKey(0x22222222);
  ASSERT_TRUE(post_send(a, ua, wr).ok());
  auto rwc = reap(b, b.rcq, 1);
  ASSERT_EQ(rwc.size(), 1u);
  EXPECT_EQ(rwc[0].wr_id, 1u) << "the first message was dropped, so the first WQE took the second";
  EXPECT_EQ(rwc[0].byte_len, 1040u) << "40 bytes of GRH and the payload";
  EXPECT_EQ(rwc[0].src_qp, ua->qpn());
  EXPECT_EQ(rwc[0].slid, a.lid);
  EXPECT_TRUE(rwc[0].wc_flags & wc_flag::kGrh);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 1000, b.buffer.begin() + 40));
  if (roce()) {
    // RoCE v2 over IPv4: the area's last 20 bytes are the IPv4 header (rxe's layout).
    const uint8_t* ip = b.buffer.data() + 20;
    EXPECT_EQ(ip[0], 0x45);
    EXPECT_EQ(ip[9], 17) << "UDP";
    EXPECT_EQ((ip[2] << 8 | ip[3]), 20 + 8 + 12 + 8 + 1000 + 4) << "IPv4, UDP, BTH, DETH, payload, ICRC";
    EXPECT_TRUE(std::equal(ip + 12, ip + 16, a.gid.raw().begin() + 12)) << "source address";
    EXPECT_TRUE(std::equal(ip + 16, ip + 20, b.gid.raw().begin() + 12)) << "destination address";
  }
  EXPECT_EQ(reap(a, a.scq, 2).size(), 2u);
  EXPECT_EQ(b.ctx->device().counters().dropped(rc::Drop::kBadQkey), 1u);
  EXPECT_TRUE(a.ctx->destroy_ah(*ah).ok());
}

// ---- SRQ ----

TEST_P(Rc, TwoQpsDrawFromOneSrqAndItsLimitFiresOnce) {
  auto srq = b.ctx->create_srq(b.pd, 16, 2, 0, reinterpret_cast<void*>(0x5151));
  ASSERT_TRUE(srq.ok());
  rc::Qp* s1 = create_qp(b, QpType::kRc, 64, *srq);
  rc::Qp* s2 = create_qp(b, QpType::kRc, 64, *srq);
  rc::Qp* c1 = create_qp(a, QpType::kRc);
  rc::Qp* c2 = create_qp(a, QpType::kRc);
  connect_one(a, c1, b, s1);
  connect_one(b, s1, a, c1);
  connect_one(a, c2, b, s2);
  connect_one(b, s2, a, c2);
  for (uint64_t i = 0; i < 6; ++i) {
    const Sge g = b.sge(i * 256, 256);
    RecvWr rw{i, {&g, 1}};
    size_t bad;
    ASSERT_TRUE(b.ctx->post_srq_recv(*srq, {&rw, 1}, &bad).ok());
  }
  ASSERT_TRUE(b.ctx->modify_srq(*srq, std::nullopt, 4).ok());
  EXPECT_EQ(b.ctx->modify_srq(*srq, 32u, std::nullopt).to_errno(), EINVAL);
  SendWr wr;
  wr.send_flags = send_flag::kSignaled;
  Sge s = a.sge(0, 100);
  wr.sg_list = {&s, 1};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(post_send(a, c1, wr).ok());
    ASSERT_TRUE(post_send(a, c2, wr).ok());
  }
  auto rwc = reap(b, b.rcq, 4);
  ASSERT_EQ(rwc.size(), 4u);
  std::vector<uint64_t> ids;
  for (const auto& c : rwc) ids.push_back(c.wr_id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3})) << "each WQE used once";
  auto e = b.ctx->get_async_event();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, AsyncEventType::kSrqLimitReached);
  EXPECT_EQ(e->object, reinterpret_cast<void*>(0x5151));
  EXPECT_EQ(b.ctx->destroy_srq(*srq).to_errno(), EBUSY);
}

TEST_P(Rc, PortAttributesAreTheFabrics) {
  auto p = a.ctx->query_port(1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->port.state, 4);
  EXPECT_EQ(p->port.phys_state, 5);
  EXPECT_EQ(a.ctx->query_pkey(1, 0).value(), PKey::default_full());
  EXPECT_EQ(a.ctx->query_gid(1, 0)->interface_id(), a.ctx->info().port_guids[0]);
  if (roce()) {
    // Ethernet: no LID, no SM; GID 0 link-local, GID 1 IPv4-mapped, both RoCE v2.
    EXPECT_EQ(p->port.link_layer, link::kLinkLayerEthernet);
    EXPECT_EQ(p->port.lid, 0);
    EXPECT_EQ(p->port.sm_lid, 0);
    EXPECT_EQ(p->gid_table_len, 2);
    EXPECT_EQ(a.ctx->query_gid(1, 0)->subnet_prefix(), Gid::kDefaultSubnetPrefix);
    EXPECT_TRUE(a.gid.is_ipv4_mapped());
    EXPECT_TRUE(b.gid.is_ipv4_mapped());
    EXPECT_NE(a.gid, b.gid);
    EXPECT_EQ(a.ctx->query_gid_type(1, 1).value(), provider::GidType::kRoceV2);
    EXPECT_EQ(a.ctx->query_gid_type(1, 0).value(), provider::GidType::kRoceV2);
    EXPECT_FALSE(a.ctx->query_gid(1, 2).ok());
  } else {
    EXPECT_NE(p->port.link_layer, link::kLinkLayerEthernet);
    EXPECT_NE(p->port.lid, 0);
    EXPECT_NE(p->port.lid, b.lid.value());
    EXPECT_EQ(a.ctx->query_gid_type(1, 0).value(), provider::GidType::kIb);
  }
  EXPECT_EQ(a.ctx->caps().vendor_id, kSoftibVendorId);
  EXPECT_GT(a.ctx->caps().max_qp, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Link, Rc, ::testing::Values(LinkKind::kLoopback, LinkKind::kShm, LinkKind::kRoce), link_name);

// ---- RoCE: addresses are GIDs ----

class Roce : public VerbsSuite {};

TEST_P(Roce, AnAddressWithoutAGrhIsInvalidAndAnUnknownGidReachesNobody) {
  AhAttr ah;
  ah.dlid = Lid(1);
  ah.port_num = 1;
  EXPECT_EQ(a.ctx->create_ah(a.pd, ah).error().code(), Code::kInvalidArgument) << "EINVAL, as rdma_check_ah_attr";
  rc::Qp* q = create_qp(a, QpType::kRc);
  QpAttr at;
  at.qp_state = QpState::kInit;
  at.port_num = 1;
  ASSERT_TRUE(a.ctx->modify_qp(q, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
  at = {};
  at.qp_state = QpState::kRtr;
  at.path_mtu = Mtu::k1024;
  at.dest_qp_num = Qpn(0x11);
  at.ah_attr = ah;
  at.max_dest_rd_atomic = 1;
  at.min_rnr_timer = 1;
  const uint32_t mask = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                        attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
  EXPECT_EQ(a.ctx->modify_qp(q, at, mask).code(), Code::kInvalidArgument);
  // A GID nobody has: the QP connects, and what it sends is lost (it retries out).
  at.ah_attr.is_global = true;
  at.ah_attr.grh.dgid = Gid::from_ipv4(0x0A000001);
  at.ah_attr.grh.sgid_index = 1;
  ASSERT_TRUE(a.ctx->modify_qp(q, at, mask).ok());
  QpAttr got;
  QpInitAttr init;
  ASSERT_TRUE(a.ctx->query_qp(q, &got, &init).ok());
  EXPECT_EQ(got.ah_attr.dlid, Lid()) << "no LID on Ethernet";
  EXPECT_EQ(got.ah_attr.grh.dgid, Gid::from_ipv4(0x0A000001));
  at = {};
  at.qp_state = QpState::kRts;
  at.timeout = 8;
  at.retry_cnt = 1;
  ASSERT_TRUE(a.ctx->modify_qp(q, at, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt |
                                          attr::kRnrRetry | attr::kMaxQpRdAtomic)
                  .ok());
  const Sge s = a.sge(0, 8);
  ASSERT_TRUE(post_send(a, q, one_sided(WrOpcode::kRdmaWrite, s, 0x1000, RKey(1), 9)).ok());
  auto wc = reap(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRetryExcErr);
}

INSTANTIATE_TEST_SUITE_P(Link, Roce, ::testing::Values(LinkKind::kRoce), link_name);

// ---- only through softibd: the fabric itself ----

class Fabric : public Rc {};

TEST_P(Fabric, ALinkTakenDownIsAPortErrorAndTheQpRetriesOutThenPortActiveReturns) {
  Connect fast;
  fast.timeout = 8;  // 1 ms
  fast.retry_cnt = 2;
  rc::Qp* q = create_qp(a, QpType::kRc);
  rc::Qp* p = create_qp(b, QpType::kRc);
  connect_one(a, q, b, p, fast);
  connect_one(b, p, a, q, fast);
  auto ctl = ipc::Connection::open({}, "test", daemon->socket());
  ASSERT_TRUE(ctl.ok());
  ASSERT_TRUE(ctl->link_set(b.ctx->info().node, 1, ipc::LinkOp::kDown).ok());
  auto e = b.ctx->get_async_event();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, AsyncEventType::kPortErr);
  EXPECT_EQ(e->port_num, 1);
  const Sge s = a.sge(0, 100);
  ASSERT_TRUE(post_send(a, q, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey, 1)).ok());
  auto wc = reap(a, a.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kRetryExcErr);
  EXPECT_GT(a.ctx->shm_link()->counters().lost_port_down, 0u);
  ASSERT_TRUE(ctl->link_set(b.ctx->info().node, 1, ipc::LinkOp::kUp).ok());
  // The SM brings the port back to Active.
  for (;;) {
    auto ev = b.ctx->get_async_event();
    ASSERT_TRUE(ev.ok());
    if (ev->type == AsyncEventType::kPortActive) break;
  }
  EXPECT_EQ(b.ctx->query_port(1)->port.state, 4);
}

INSTANTIATE_TEST_SUITE_P(Link, Fabric, ::testing::Values(LinkKind::kShm), link_name);

}  // namespace
}  // namespace softib::testing
