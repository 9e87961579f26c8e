// RC under seeded loss, reordering and duplication (virtual time): every work request
// completes exactly once, in order, successfully, and every byte lands where it should.
// UC under loss: the sender completes everything, the receiver gets whole messages or none.
#include <map>
#include <random>
#include <set>

#include "sim/verbs/pair.hpp"

namespace softib::testing {
namespace {

struct Case {
  double loss, reorder, duplicate;
  uint64_t seed;
  int ops;
};

class RcImpaired : public Pair, public ::testing::WithParamInterface<Case> {
 protected:
  RcImpaired() : Pair(GetParam().seed) {}
};

enum class Op { kSend, kWrite, kRead, kFetchAdd };

TEST_P(RcImpaired, EveryRequestCompletesOnceInOrderWithItsBytes) {
  const Case c = GetParam();
  SCOPED_TRACE(::testing::Message() << "seed " << c.seed << " loss " << c.loss);
  a.buffer.assign(8 << 20, 0);
  b.buffer.assign(8 << 20, 0);
  ASSERT_TRUE(a.device.mrs().dereg(a.mr->lkey).ok());
  ASSERT_TRUE(b.device.mrs().dereg(b.mr->lkey).ok());
  const uint32_t all = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
  a.mr = *a.device.mrs().reg(a.pd, a.buffer.data(), a.buffer.size(), a.addr(), all);
  b.mr = *b.device.mrs().reg(b.pd, b.buffer.data(), b.buffer.size(), b.addr(), all);

  rc::Qp* qa = a.create_qp(QpType::kRc, 1024);
  rc::Qp* qb = b.create_qp(QpType::kRc, 1024);
  ConnectOptions o;
  o.timeout = 8;  // 1 ms
  o.mtu = Mtu::k1024;
  connect(qa, qb, o);
  fabric.set_impairment({c.loss, c.duplicate, c.reorder, std::chrono::microseconds(2), std::chrono::microseconds(30)});

  std::mt19937 rng(static_cast<uint32_t>(c.seed));
  const size_t kSlot = 16 << 10;  // each op owns one 16 KiB slot on each side
  struct Posted {
    Op op;
    uint32_t len;
  };
  std::vector<Posted> posted;
  int sends = 0, adds = 0;
  // B's read sources and the FAA counter.
  fill_pattern(b.buffer, 4 << 20, 2 << 20, 99);
  const size_t counter_at = 7 << 20;
  for (int i = 0; i < c.ops; ++i) {
    const Op op = static_cast<Op>(rng() % 4);
    const uint32_t len = op == Op::kFetchAdd ? 8 : rng() % 3 == 0 ? rng() % 64 : rng() % static_cast<uint32_t>(kSlot);
    posted.push_back({op, len});
    SendWr wr;
    wr.wr_id = static_cast<uint64_t>(i);
    wr.send_flags = send_flag::kSignaled;
    Sge s = a.sge(static_cast<size_t>(i) * kSlot % (4 << 20), len);
    wr.sg_list = {&s, 1};
    switch (op) {
      case Op::kSend:
        fill_pattern(a.buffer, static_cast<size_t>(i) * kSlot % (4 << 20), len, static_cast<uint32_t>(i));
        ASSERT_TRUE(post_recv(b, qb, static_cast<uint64_t>(i), {b.sge((2 << 20) + static_cast<size_t>(sends) * kSlot % (2 << 20), static_cast<uint32_t>(kSlot))}).ok());
        ++sends;
        wr.opcode = WrOpcode::kSend;
        break;
      case Op::kWrite:
        fill_pattern(a.buffer, static_cast<size_t>(i) * kSlot % (4 << 20), len, static_cast<uint32_t>(i));
        wr.opcode = WrOpcode::kRdmaWrite;
        wr.rdma = {b.addr(static_cast<size_t>(i) * kSlot % (2 << 20)), b.mr->rkey};
        break;
      case Op::kRead:
        wr.opcode = WrOpcode::kRdmaRead;
        wr.rdma = {b.addr((4 << 20) + static_cast<size_t>(i) * 4096 % (1 << 20)), b.mr->rkey};
        break;
      case Op::kFetchAdd:
        wr.opcode = WrOpcode::kAtomicFetchAndAdd;
        wr.atomic = {b.addr(counter_at), 1, 0, b.mr->rkey};
        ++adds;
        break;
    }
    Status st = post_send(a, qa, wr);
    ASSERT_TRUE(st.ok()) << st.to_string();
    // Check each op as it completes, before a later op reuses its slot: run in batches.
    if ((i + 1) % 64 != 0 && i + 1 != c.ops) continue;
    auto wc = reap(a.scq, posted.size());
    ASSERT_EQ(wc.size(), posted.size()) << "completions missing; fabric lost " << fabric.frames_lost();
    auto rwc = reap(b.rcq, static_cast<size_t>(sends));
    ASSERT_EQ(rwc.size(), static_cast<size_t>(sends));
    const int base = i + 1 - static_cast<int>(posted.size());
    int recv_i = 0;
    std::vector<uint8_t> want;
    for (size_t k = 0; k < posted.size(); ++k) {
      const int id = base + static_cast<int>(k);
      ASSERT_EQ(wc[k].wr_id, static_cast<uint64_t>(id)) << "out of order";
      ASSERT_EQ(wc[k].status, WcStatus::kSuccess) << "op " << id << ": " << to_string(wc[k].status);
      const size_t slot = static_cast<size_t>(id) * kSlot % (4 << 20);
      want.assign(a.buffer.size() > 0 ? posted[k].len : 0, 0);
      switch (posted[k].op) {
        case Op::kSend: {
          const auto& r = rwc[static_cast<size_t>(recv_i)];
          ASSERT_EQ(r.status, WcStatus::kSuccess);
          ASSERT_EQ(r.byte_len, posted[k].len);
          const size_t rslot = (2 << 20) + static_cast<size_t>(recv_i) * kSlot % (2 << 20);
          ASSERT_TRUE(std::equal(a.buffer.begin() + static_cast<long>(slot), a.buffer.begin() + static_cast<long>(slot + posted[k].len),
                                 b.buffer.begin() + static_cast<long>(rslot)))
              << "send " << id;
          ++recv_i;
          break;
        }
        case Op::kWrite:
          ASSERT_TRUE(std::equal(a.buffer.begin() + static_cast<long>(slot), a.buffer.begin() + static_cast<long>(slot + posted[k].len),
                                 b.buffer.begin() + static_cast<long>(static_cast<size_t>(id) * kSlot % (2 << 20))))
              << "write " << id;
          break;
        case Op::kRead: {
          const size_t src = (4 << 20) + static_cast<size_t>(id) * 4096 % (1 << 20);
          ASSERT_TRUE(std::equal(b.buffer.begin() + static_cast<long>(src), b.buffer.begin() + static_cast<long>(src + posted[k].len),
                                 a.buffer.begin() + static_cast<long>(slot)))
              << "read " << id;
          break;
        }
        case Op::kFetchAdd: break;
      }
    }
    posted.clear();
    sends = 0;
  }
  // Each FAA ran exactly once although requests and responses were lost and duplicated.
  uint64_t counter;
  std::memcpy(&counter, &b.buffer[counter_at], 8);
  EXPECT_EQ(counter, static_cast<uint64_t>(adds));
  EXPECT_EQ(qa->state(), QpState::kRts);
  EXPECT_EQ(qb->state(), QpState::kRts);
  if (c.loss > 0) {
    EXPECT_GT(a.device.counters().retransmits, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeded, RcImpaired,
                         ::testing::Values(Case{0.0, 0.0, 0.0, 1, 256}, Case{0.01, 0.0, 0.0, 2, 256},
                                           Case{0.05, 0.2, 0.05, 3, 256}, Case{0.10, 0.1, 0.1, 4, 256},
                                           Case{0.30, 0.3, 0.1, 5, 128}, Case{0.0, 0.5, 0.3, 6, 256}));

// Many QPs at once, so that most of those awaiting ACKs are parked (rc::Device::park) and
// come back by their ACKs or their deadlines while frames are lost, reordered and duplicated.
class RcImpairedManyQps : public Pair, public ::testing::WithParamInterface<Case> {
 protected:
  RcImpairedManyQps() : Pair(GetParam().seed) {}
};

TEST_P(RcImpairedManyQps, EachQpsRequestsCompleteOnceInOrderWithTheirBytes) {
  const Case c = GetParam();
  SCOPED_TRACE(::testing::Message() << "seed " << c.seed << " loss " << c.loss);
  constexpr size_t kQps = 12;
  constexpr size_t kPerRound = 8;  // requests per QP per round
  constexpr size_t kSlot = 2048;   // each request's slot on each side; READ sources from kReadAt
  constexpr size_t kReadAt = kQps * kPerRound * kSlot;
  static_assert(2 * kReadAt <= (1 << 20), "within the Node's buffer");
  std::vector<rc::Qp*> qa, qb;
  ConnectOptions o;
  o.timeout = 8;  // 1 ms
  for (size_t k = 0; k < kQps; ++k) {
    qa.push_back(a.create_qp(QpType::kRc, 64));
    qb.push_back(b.create_qp(QpType::kRc, 64));
    connect(qa.back(), qb.back(), o);
  }
  fabric.set_impairment({c.loss, c.duplicate, c.reorder, std::chrono::microseconds(2), std::chrono::microseconds(30)});
  std::mt19937 rng(static_cast<uint32_t>(c.seed));
  struct Posted {
    Op op;
    uint32_t len;
    size_t slot;
  };
  for (int round = 0; round < c.ops; ++round) {
    std::map<uint64_t, Posted> posted;  // by wr_id
    std::map<uint32_t, std::vector<uint64_t>> order;  // a's QPN -> its wr_ids as posted
    size_t sends = 0;
    for (size_t j = 0; j < kPerRound; ++j) {
      for (size_t k = 0; k < kQps; ++k) {
        const size_t slot = k * kPerRound + j;
        const uint64_t id = static_cast<uint64_t>(round) << 32 | slot;
        const Op op = static_cast<Op>(rng() % 3);  // SEND, WRITE, READ
        const uint32_t len = static_cast<uint32_t>(rng() % kSlot);
        posted[id] = {op, len, slot};
        order[qa[k]->qpn().value()].push_back(id);
        SendWr wr;
        wr.wr_id = id;
        wr.send_flags = send_flag::kSignaled;
        Sge s = a.sge(slot * kSlot, len);
        wr.sg_list = {&s, 1};
        if (op == Op::kRead) {
          fill_pattern(b.buffer, kReadAt + slot * kSlot, len, static_cast<uint32_t>(id));
          wr.opcode = WrOpcode::kRdmaRead;
          wr.rdma = {b.addr(kReadAt + slot * kSlot), b.mr->rkey};
        } else {
          fill_pattern(a.buffer, slot * kSlot, len, static_cast<uint32_t>(id));
          if (op == Op::kSend) {
            ASSERT_TRUE(post_recv(b, qb[k], id, {b.sge(slot * kSlot, static_cast<uint32_t>(kSlot))}).ok());
            ++sends;
            wr.opcode = WrOpcode::kSend;
          } else {
            wr.opcode = WrOpcode::kRdmaWrite;
            wr.rdma = {b.addr(slot * kSlot), b.mr->rkey};
          }
        }
        Status st = post_send(a, qa[k], wr);
        ASSERT_TRUE(st.ok()) << st.to_string();
      }
    }
    const auto wc = reap(a.scq, posted.size());
    ASSERT_EQ(wc.size(), posted.size()) << "completions missing; fabric lost " << fabric.frames_lost();
    const auto rwc = reap(b.rcq, sends);
    ASSERT_EQ(rwc.size(), sends);
    // Each QP's completions in the order it was posted to; each exactly once.
    std::map<uint32_t, size_t> next;
    for (const WorkCompletion& w : wc) {
      ASSERT_EQ(w.status, WcStatus::kSuccess) << w.wr_id << ": " << to_string(w.status);
      const uint32_t qpn = w.qp_num.value();
      const auto& want = order[qpn];
      ASSERT_LT(next[qpn], want.size()) << "a completion too many on QP " << qpn;
      ASSERT_EQ(w.wr_id, want[next[qpn]++]) << "out of order on QP " << qpn;
      const Posted& p = posted[w.wr_id];
      const auto at = static_cast<long>(p.slot * kSlot);
      if (p.op == Op::kRead) {
        ASSERT_TRUE(std::equal(b.buffer.begin() + static_cast<long>(kReadAt) + at,
                               b.buffer.begin() + static_cast<long>(kReadAt) + at + p.len, a.buffer.begin() + at))
            << "read " << w.wr_id;
      } else {
        ASSERT_TRUE(std::equal(a.buffer.begin() + at, a.buffer.begin() + at + p.len, b.buffer.begin() + at))
            << (p.op == Op::kSend ? "send " : "write ") << w.wr_id;
      }
    }
    for (const WorkCompletion& r : rwc) {
      ASSERT_EQ(r.status, WcStatus::kSuccess);
      ASSERT_EQ(r.byte_len, posted[r.wr_id].len) << r.wr_id;
    }
  }
  for (size_t k = 0; k < kQps; ++k) {
    EXPECT_EQ(qa[k]->state(), QpState::kRts);
    EXPECT_EQ(qb[k]->state(), QpState::kRts);
  }
  EXPECT_GT(a.device.counters().qp_parks, 0u) << "more QPs awaited ACKs than stay active";
  if (c.loss > 0) {
    EXPECT_GT(a.device.counters().retransmits, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeded, RcImpairedManyQps,
                         ::testing::Values(Case{0.0, 0.0, 0.0, 21, 4}, Case{0.05, 0.1, 0.05, 22, 6},
                                           Case{0.20, 0.2, 0.1, 23, 4}, Case{0.0, 0.5, 0.3, 24, 6}));

class UcLossy : public Pair {};

TEST_F(UcLossy, WholeMessagesOrNone) {
  const uint64_t seed = 17;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  rc::Qp* qa = a.create_qp(QpType::kUc, 512);
  rc::Qp* qb = b.create_qp(QpType::kUc, 512);
  connect(qa, qb);
  fabric.set_impairment({0.05, 0, 0, std::chrono::microseconds(1), {}});
  const uint32_t len = 3000;  // 3 packets at MTU 1024
  const int n = 200;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(post_recv(b, qb, static_cast<uint64_t>(i), {b.sge(0, 4096)}).ok());
  for (int i = 0; i < n; ++i) {
    fill_pattern(a.buffer, static_cast<size_t>(i) * 4096, len, static_cast<uint32_t>(i));
    SendWr wr;
    wr.wr_id = static_cast<uint64_t>(i);
    wr.send_flags = send_flag::kSignaled;
    Sge s = a.sge(static_cast<size_t>(i) * 4096, len);
    wr.sg_list = {&s, 1};
    ASSERT_TRUE(post_send(a, qa, wr).ok());
    fabric.settle();
  }
  auto swc = reap(a.scq, n);
  ASSERT_EQ(swc.size(), static_cast<size_t>(n));  // UC completes at the sender regardless of loss
  for (const auto& w : swc) EXPECT_EQ(w.status, WcStatus::kSuccess);
  auto rwc = reap(b.rcq, n, std::chrono::milliseconds(10));
  EXPECT_LT(rwc.size(), static_cast<size_t>(n));
  EXPECT_GT(rwc.size(), static_cast<size_t>(n) / 2);
  for (const auto& w : rwc) {
    EXPECT_EQ(w.status, WcStatus::kSuccess);
    EXPECT_EQ(w.byte_len, len);
  }
  EXPECT_GT(b.device.counters().dropped(rc::Drop::kUcMessageLost), 0u);
}

}  // namespace
}  // namespace softib::testing
