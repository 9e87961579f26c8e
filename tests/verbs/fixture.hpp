// Two channel adapters, A and B, each opened as a provider::Context, joined either by the
// in-process loopback link (a LocalFabric) or by shared memory through a private softibd (the
// default fabric: one switch, host-a and host-b, with the SM). Each side has a PD, a send and
// a receive CQ, and a 4 MiB registered buffer. Waits are for completions, with a generous
// safety limit, never sleeps.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "provider/context.hpp"
#include "provider/local_fabric.hpp"
#include "support/softibd_process.hpp"

namespace softib::testing {

using namespace softib::verbs;

// kRoce: shared memory through a softibd in RoCE mode (Ethernet link layer, addresses are
// RoCE v2 GIDs, every packet has a GRH).
enum class LinkKind { kLoopback, kShm, kRoce };

inline std::string link_name(const ::testing::TestParamInfo<LinkKind>& p) {
  return p.param == LinkKind::kLoopback ? "loopback" : p.param == LinkKind::kShm ? "shm" : "roce";
}

inline void fill_pattern(std::vector<uint8_t>& buf, size_t offset, size_t len, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < len; ++i) {
    x = x * 1103515245u + 12345u;
    buf[offset + i] = static_cast<uint8_t>(x >> 16);
  }
}

// A signaled one-sided work request (RDMA WRITE/READ) of one SGE.
inline SendWr one_sided(WrOpcode op, const Sge& s, uint64_t remote, RKey rkey, uint64_t wr_id = 0) {
  SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.send_flags = send_flag::kSignaled;
  wr.sg_list = {&s, 1};
  wr.rdma = {remote, rkey};
  return wr;
}

struct Side {
  std::unique_ptr<provider::Context> ctx;
  Pd* pd = nullptr;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(4 << 20);
  const Mr* mr = nullptr;
  Lid lid{};
  Gid gid{};

  uint64_t addr(size_t offset = 0) const { return reinterpret_cast<uint64_t>(buffer.data()) + offset; }
  Sge sge(size_t offset, uint32_t length) const { return Sge{addr(offset), length, mr->lkey}; }
};

struct Connect {
  Mtu mtu = Mtu::k1024;
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;
  uint8_t rd_atomic = 16;
  uint32_t access = access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
};

class VerbsSuite : public ::testing::TestWithParam<LinkKind> {
 protected:
  void SetUp() override {
    if (GetParam() != LinkKind::kLoopback) {
      daemon = roce() ? std::make_unique<SoftibdProcess>("switch:hosts=2", true, std::vector<std::string>{"--roce"})
                      : std::make_unique<SoftibdProcess>();
      ASSERT_TRUE(daemon->ready()) << "softibd did not start";
      options.socket = daemon->socket();
      options.host = "all";
      auto devs = provider::list_devices(options);
      ASSERT_TRUE(devs.ok()) << devs.error().to_string();
      ASSERT_EQ(devs->size(), 2u);
      for (int i = 0; i < 2; ++i) {
        auto c = provider::Context::open((*devs)[static_cast<size_t>(i)], options);
        ASSERT_TRUE(c.ok()) << c.error().to_string();
        side(i).ctx = std::move(*c);
      }
    } else {
      local = std::make_unique<provider::LocalFabric>(2);
      for (int i = 0; i < 2; ++i) {
        auto c = provider::Context::open_local(*local, static_cast<uint32_t>(i));
        ASSERT_TRUE(c.ok()) << c.error().to_string();
        side(i).ctx = std::move(*c);
      }
    }
    for (Side* s : {&a, &b}) {
      equip(*s);
      if (HasFatalFailure()) return;
    }
  }
  // A side's PD, CQs and MR on its opened context, and its port's LID and GID (for a test's
  // own extra context too).
  void equip(Side& s) {
    s.pd = s.ctx->alloc_pd();
    s.scq = *s.ctx->create_cq(4096, nullptr, nullptr);
    s.rcq = *s.ctx->create_cq(4096, nullptr, nullptr);
    s.mr = *s.ctx->reg_mr(s.pd, s.buffer.data(), s.buffer.size(), s.addr(),
                          access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
    auto port = s.ctx->query_port(1);
    ASSERT_TRUE(port.ok());
    ASSERT_EQ(port->port.state, 4) << "the port is Active";
    s.lid = Lid(port->port.lid);
    s.gid = *s.ctx->query_gid(1, gid_index());
  }
  void TearDown() override {
    a.ctx.reset();
    b.ctx.reset();
  }

  Side& side(int i) { return i == 0 ? a : b; }
  bool roce() const { return GetParam() == LinkKind::kRoce; }
  // The GID a connection uses: on RoCE the IPv4-mapped one, as applications pick (-g 1).
  uint8_t gid_index() const { return roce() ? 1 : 0; }
  // The address of `peer` as an application sets it: its LID, or on RoCE its GID.
  AhAttr address_of(const Side& peer) const {
    AhAttr ah;
    ah.dlid = peer.lid;
    ah.port_num = 1;
    if (roce()) {
      ah.is_global = true;
      ah.grh.dgid = peer.gid;
      ah.grh.sgid_index = gid_index();
      ah.grh.hop_limit = 64;
    }
    return ah;
  }

  rc::Qp* create_qp(Side& s, QpType type, uint32_t depth = 256, Srq* srq = nullptr, Cq* scq = nullptr) {
    QpInitAttr init;
    init.qp_type = type;
    init.cap = {depth, depth, 4, 4, 128};
    auto qp = s.ctx->create_qp(s.pd, scq ? scq : s.scq, s.rcq, srq, init, nullptr);
    EXPECT_TRUE(qp.ok()) << qp.error().to_string();
    return qp.ok() ? *qp : nullptr;
  }

  // The ibv_rc_pingpong sequence on one side (UC: without the RC-only attributes).
  void connect_one(Side& s, rc::Qp* qp, const Side& peer, rc::Qp* pqp, const Connect& o = {}) {
    const bool rc = qp->type() == QpType::kRc;
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qp_access_flags = o.access & (rc ? ~0u : access::kRemoteWrite);
    ASSERT_TRUE(s.ctx->modify_qp(qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
    at = {};
    at.qp_state = QpState::kRtr;
    at.path_mtu = o.mtu;
    at.dest_qp_num = pqp->qpn();
    at.rq_psn = Psn(0x100);
    at.ah_attr = address_of(peer);
    at.max_dest_rd_atomic = o.rd_atomic;
    at.min_rnr_timer = o.min_rnr_timer;
    uint32_t mask = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn;
    if (rc) mask |= attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
    Status st = s.ctx->modify_qp(qp, at, mask);
    ASSERT_TRUE(st.ok()) << st.to_string();
    at = {};
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0x100);
    at.timeout = o.timeout;
    at.retry_cnt = o.retry_cnt;
    at.rnr_retry = o.rnr_retry;
    at.max_rd_atomic = o.rd_atomic;
    mask = attr::kState | attr::kSqPsn;
    if (rc) mask |= attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic;
    st = s.ctx->modify_qp(qp, at, mask);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  void connect(rc::Qp* qa, rc::Qp* qb, const Connect& o = {}) {
    connect_one(a, qa, b, qb, o);
    connect_one(b, qb, a, qa, o);
  }
  void ready_ud(Side& s, rc::Qp* qp, uint32_t qkey) {
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qkey = QKey(qkey);
    ASSERT_TRUE(s.ctx->modify_qp(qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey).ok());
    at.qp_state = QpState::kRtr;
    ASSERT_TRUE(s.ctx->modify_qp(qp, at, attr::kState).ok());
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0);
    ASSERT_TRUE(s.ctx->modify_qp(qp, at, attr::kState | attr::kSqPsn).ok());
  }

  static Status post_send(Side& s, rc::Qp* qp, const SendWr& wr) {
    size_t bad = 0;
    return s.ctx->post_send(qp, std::span<const SendWr>(&wr, 1), &bad);
  }
  static Status post_recv(Side& s, rc::Qp* qp, uint64_t wr_id, std::vector<Sge> sges) {
    RecvWr wr{wr_id, sges};
    size_t bad = 0;
    return s.ctx->post_recv(qp, std::span<const RecvWr>(&wr, 1), &bad);
  }

  // Polls `cq` (as an application does: an empty poll runs the transport inline) until it
  // holds `count` completions; the safety limit is 20 s of real time.
  std::vector<WorkCompletion> reap(Side& s, Cq* cq, size_t count) {
    std::vector<WorkCompletion> out;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    WorkCompletion wc[64];
    while (out.size() < count) {
      const size_t n = s.ctx->poll_cq(cq, wc);
      out.insert(out.end(), wc, wc + n);
      if (n == 0 && std::chrono::steady_clock::now() > limit) {
        ADD_FAILURE() << "only " << out.size() << " of " << count << " completions";
        break;
      }
    }
    return out;
  }
  // Waits (without polling) until `cq` holds `count` completions: the engines alone must get
  // them there.
  static bool wait_queued(Cq* cq, size_t count) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (cq->queued() < count) {
      if (std::chrono::steady_clock::now() > limit) return false;
      std::this_thread::yield();
    }
    return true;
  }

  provider::Options options;
  std::unique_ptr<SoftibdProcess> daemon;
  std::unique_ptr<provider::LocalFabric> local;
  Side a, b;
};

}  // namespace softib::testing
