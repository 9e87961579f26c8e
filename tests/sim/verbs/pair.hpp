// Two softib devices joined by a SimFabric in virtual time, each with a PD, CQs, one
// registered buffer and helpers to connect QPs and to post and reap work: the fixture of
// the RC/UC/UD suites. A failing test prints its seed (SCOPED_TRACE).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "link/sim_fabric.hpp"
#include "rc/device.hpp"
#include "verbs/caps.hpp"

namespace softib::testing {

using namespace softib::verbs;

struct Node {
  Node(link::SimFabric& fabric, ManualClock& clock, Lid lid, size_t buffer_bytes = 1 << 20)
      : device(default_caps(), port_attr(lid), fabric.sink_for(lid), clock), buffer(buffer_bytes) {
    fabric.attach(lid, &device);
    pd = device.alloc_pd();
    scq = *device.create_cq(4096, nullptr);
    rcq = *device.create_cq(4096, nullptr);
    mr = *device.mrs().reg(pd, buffer.data(), buffer.size(), reinterpret_cast<uint64_t>(buffer.data()),
                           access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
  }
  static rc::PortAttr port_attr(Lid lid) {
    rc::PortAttr p;
    p.lid = lid;
    p.gids.push_back(Gid(Gid::kDefaultSubnetPrefix, Guid(0x0002c90300000000ULL | lid.value())));
    return p;
  }
  uint64_t addr(size_t offset = 0) const { return reinterpret_cast<uint64_t>(buffer.data()) + offset; }
  Sge sge(size_t offset, uint32_t length) const { return Sge{addr(offset), length, mr->lkey}; }

  rc::Qp* create_qp(QpType type, uint32_t depth = 256, Srq* srq = nullptr) {
    QpInitAttr init;
    init.qp_type = type;
    init.cap = {depth, depth, 4, 4, 128};
    auto qp = device.create_qp(pd, scq, rcq, srq, init, nullptr);
    EXPECT_TRUE(qp.ok()) << qp.error().to_string();
    return *qp;
  }

  rc::Device device;
  std::vector<uint8_t> buffer;
  Pd* pd = nullptr;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  const Mr* mr = nullptr;
};

struct ConnectOptions {
  Mtu mtu = Mtu::k1024;
  uint8_t timeout = 14;    // 67 ms
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;  // 0.01 ms
  uint8_t rd_atomic = 16;
  uint32_t access = access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
  uint32_t psn_a = 0x1000;
  uint32_t psn_b = 0x2000;
};

class Pair : public ::testing::Test {
 protected:
  explicit Pair(uint64_t seed = 1) : fabric(clock, seed), a(fabric, clock, Lid(1)), b(fabric, clock, Lid(2)) {}

  static Status modify(rc::Device& d, rc::Qp* qp, QpAttr attr, uint32_t mask) { return d.modify_qp(qp, attr, mask); }

  // The ibv_rc_pingpong sequence on both sides (UC: the same without the RC-only attributes).
  void connect(rc::Qp* qa, rc::Qp* qb, const ConnectOptions& o = {}) {
    const bool rc = qa->type() == QpType::kRc;
    for (int side = 0; side < 2; ++side) {
      rc::Device& d = side == 0 ? a.device : b.device;
      rc::Qp* qp = side == 0 ? qa : qb;
      rc::Qp* peer = side == 0 ? qb : qa;
      QpAttr at;
      at.qp_state = QpState::kInit;
      at.pkey_index = 0;
      at.port_num = 1;
      at.qp_access_flags = o.access & (rc ? ~0u : access::kRemoteWrite);
      ASSERT_TRUE(modify(d, qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
      at = {};
      at.qp_state = QpState::kRtr;
      at.path_mtu = o.mtu;
      at.dest_qp_num = peer->qpn();
      at.rq_psn = Psn(side == 0 ? o.psn_b : o.psn_a);
      at.ah_attr.dlid = Lid(side == 0 ? 2 : 1);
      at.ah_attr.port_num = 1;
      at.max_dest_rd_atomic = o.rd_atomic;
      at.min_rnr_timer = o.min_rnr_timer;
      uint32_t mask = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn;
      if (rc) mask |= attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
      Status s = modify(d, qp, at, mask);
      ASSERT_TRUE(s.ok()) << s.to_string();
      at = {};
      at.qp_state = QpState::kRts;
      at.sq_psn = Psn(side == 0 ? o.psn_a : o.psn_b);
      at.timeout = o.timeout;
      at.retry_cnt = o.retry_cnt;
      at.rnr_retry = o.rnr_retry;
      at.max_rd_atomic = o.rd_atomic;
      mask = attr::kState | attr::kSqPsn;
      if (rc) mask |= attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic;
      s = modify(d, qp, at, mask);
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
  }

  // UD: INIT with a Q_Key, RTR, RTS.
  void ready_ud(rc::Device& d, rc::Qp* qp, uint32_t qkey) {
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qkey = QKey(qkey);
    ASSERT_TRUE(modify(d, qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey).ok());
    at.qp_state = QpState::kRtr;
    ASSERT_TRUE(modify(d, qp, at, attr::kState).ok());
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0);
    ASSERT_TRUE(modify(d, qp, at, attr::kState | attr::kSqPsn).ok());
  }

  Status post_send(Node& n, rc::Qp* qp, SendWr wr) {
    size_t bad = 0;
    return n.device.post_send(qp, std::span<const SendWr>(&wr, 1), &bad);
  }
  Status post_recv(Node& n, rc::Qp* qp, uint64_t wr_id, std::vector<Sge> sges) {
    RecvWr wr{wr_id, sges};
    size_t bad = 0;
    return n.device.post_recv(qp, std::span<const RecvWr>(&wr, 1), &bad);
  }

  // Runs the fabric until `cq` holds `count` completions (or virtual `limit` passes) and
  // returns what it polled.
  std::vector<WorkCompletion> reap(Cq* cq, size_t count, Duration limit = std::chrono::seconds(60)) {
    std::vector<WorkCompletion> out;
    fabric.run_until(
        [&] {
          WorkCompletion wc[64];
          size_t n;
          while ((n = cq->poll(wc)) > 0) out.insert(out.end(), wc, wc + n);
          return out.size() >= count;
        },
        limit);
    return out;
  }

  // Runs the fabric for `d` of virtual time (everything in flight arrives).
  void drain(Duration d = std::chrono::milliseconds(1)) {
    fabric.run_until([] { return false; }, d);
  }

  ManualClock clock;
  link::SimFabric fabric;
  Node a;
  Node b;
};

inline void fill_pattern(std::vector<uint8_t>& buf, size_t offset, size_t len, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    buf[offset + i] = static_cast<uint8_t>(x >> 16);
  }
}

}  // namespace softib::testing
