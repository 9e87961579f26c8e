// The Rc fixture of the verbs suite (verbs_suite_test.cpp, lease_suite_test.cpp: one binary,
// instantiated over every link there): two contexts with a connected RC QP pair, and the
// helpers the completion-channel and lease tests share.
#pragma once

#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>

#include "link/shm_inbox.hpp"
#include "link/shm_link.hpp"
#include "verbs/fixture.hpp"

namespace softib::testing {

// A lease far longer than polls take (link::kLeaseMaxNs), for tests that must tell "ended
// early" from "ran out".
constexpr uint64_t kTestLeaseNs = 1'000'000'000;

class Rc : public VerbsSuite {
 protected:
  void SetUp() override {
    VerbsSuite::SetUp();
    if (HasFatalFailure()) return;
    qa = create_qp(a, QpType::kRc);
    qb = create_qp(b, QpType::kRc);
    connect(qa, qb);
  }
  rc::Qp* qa = nullptr;
  rc::Qp* qb = nullptr;

  // The ping-pong tests with the engines stopped (lease_suite_test.cpp): one thread plays both
  // sides, with four 64-byte receives posted on each QP (prepost_pingpong). take_one polls s's
  // cq until it holds one completion, checks it is a successful `op`, and returns it;
  // meanwhile `other`, if given, polls its send CQ (empty) so that its idle steps send what
  // they held (20 s safety limit, as reap()). send_value posts a 4-byte SEND of `v` (wr_id
  // `wr_id`) from s; receive_value takes a receive on s, reposts it, and returns its value.
  void prepost_pingpong() {
    for (uint32_t i = 0; i < 4; ++i) {
      ASSERT_TRUE(post_recv(a, qa, i, {a.sge(4096 + 64 * i, 64)}).ok());
      ASSERT_TRUE(post_recv(b, qb, i, {b.sge(4096 + 64 * i, 64)}).ok());
    }
  }
  WorkCompletion take_one(Side& s, Cq* cq, WcOpcode op, Side* other = nullptr) {
    std::array<WorkCompletion, 1> wc;
    size_t got = 0;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (got == 0 && std::chrono::steady_clock::now() < limit) {
      got = s.ctx->poll_cq(cq, wc);
      std::array<WorkCompletion, 1> none;
      if (got == 0 && other != nullptr) {
        EXPECT_EQ(other->ctx->poll_cq(other->scq, none), 0u);
      }
    }
    EXPECT_EQ(got, 1u);
    EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
    EXPECT_EQ(wc[0].opcode, op);
    return wc[0];
  }
  void send_value(Side& s, rc::Qp* q, uint64_t wr_id, uint32_t v, bool signaled) {
    std::memcpy(s.buffer.data(), &v, 4);
    const Sge sge = s.sge(0, 4);
    SendWr wr;
    wr.wr_id = wr_id;
    wr.send_flags = signaled ? send_flag::kSignaled : 0u;
    wr.sg_list = {&sge, 1};
    EXPECT_TRUE(post_send(s, q, wr).ok());
  }
  uint32_t receive_value(Side& s, rc::Qp* q) {
    const WorkCompletion in = take_one(s, s.rcq, WcOpcode::kRecv);
    uint32_t v = 0;
    std::memcpy(&v, s.buffer.data() + 4096 + 64 * in.wr_id, 4);
    EXPECT_TRUE(post_recv(s, q, in.wr_id, {s.sge(4096 + 64 * in.wr_id, 64)}).ok());
    return v;
  }

  // The placement tests (lease_suite_test.cpp). The CPUs this thread may use, when an
  // engine has a lease to sleep under (the shared-memory link) and somewhere else to go.
  std::optional<cpu_set_t> cpus_to_place_an_engine_on() {
    cpu_set_t allowed;
    if (b.ctx->shm_link() == nullptr || ::sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
        CPU_COUNT(&allowed) < 2)
      return std::nullopt;
    return allowed;
  }
  // Calls `between()` until `watched`'s thread may run on every CPU of `allowed` (20 s at most).
  static void expect_engine_back_on_every_cpu(engine::Engine& watched, const cpu_set_t& allowed,
                                              const std::function<void()>& between) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      between();
      const std::optional<cpu_set_t> engine = watched.thread_cpus();
      ASSERT_TRUE(engine.has_value());
      if (CPU_EQUAL(&*engine, &allowed)) return;
      ASSERT_LT(std::chrono::steady_clock::now(), limit) << "the engine stays kept off";
    }
  }
  // This thread polls `poller`'s empty receive
  // CQ (the lease; its refreshes record the CPU) and calls `between()` after each poll, until
  // `watched`'s thread may run on every CPU of `allowed` but one (10 s at most); then that
  // CPU must be one this thread polled on.
  void expect_engine_to_leave_a_polled_cpu(Side& poller, engine::Engine& watched, const cpu_set_t& allowed,
                                           const std::function<void()>& between) {
    std::array<WorkCompletion, 4> wc;
    cpu_set_t polled_on;
    CPU_ZERO(&polled_on);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::optional<cpu_set_t> engine;
    for (;;) {
      EXPECT_EQ(poller.ctx->poll_cq(poller.rcq, wc), 0u);
      if (const int cpu = ::sched_getcpu(); cpu >= 0) CPU_SET(static_cast<size_t>(cpu), &polled_on);
      between();
      engine = watched.thread_cpus();
      ASSERT_TRUE(engine.has_value());
      if (CPU_COUNT(&*engine) == CPU_COUNT(&allowed) - 1) break;
      ASSERT_LT(std::chrono::steady_clock::now(), limit) << "the engine still may run on every CPU";
    }
    cpu_set_t left;
    CPU_XOR(&left, &allowed, &*engine);
    ASSERT_EQ(CPU_COUNT(&left), 1);
    cpu_set_t both;
    CPU_AND(&both, &left, &polled_on);
    EXPECT_EQ(CPU_COUNT(&both), 1) << "the CPU it left is one this thread polled on";
  }
  // A 512-byte RDMA WRITE from A to B's buffer, which B's engine serves while B makes no call.
  void expect_a_write_served_without_b(uint8_t pattern, uint64_t wr_id) {
    fill_pattern(a.buffer, 0, 512, pattern);
    const Sge s = a.sge(0, 512);
    ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(0), b.mr->rkey, wr_id)).ok());
    auto swc = reap(a, a.scq, 1);
    ASSERT_EQ(swc.size(), 1u);
    EXPECT_EQ(swc[0].status, WcStatus::kSuccess);
    EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 512, b.buffer.begin()));
  }

  // A QP of B whose receive CQ reports to a completion channel, connected to a new QP of A.
  struct Channelled {
    provider::CompChannel* ch = nullptr;
    Cq* cq = nullptr;
    rc::Qp* q = nullptr;  // A's
    rc::Qp* p = nullptr;  // B's
  };
  // An 8-byte SEND from A's QP of `c` to B's.
  Status send_8_bytes(const Channelled& c, uint32_t flags = 0) {
    const Sge s = a.sge(0, 8);
    SendWr wr;
    wr.sg_list = {&s, 1};
    wr.send_flags = flags;
    return post_send(a, c.q, wr);
  }
  void channelled(Channelled& c) {
    auto ch = b.ctx->create_comp_channel();
    ASSERT_TRUE(ch.ok());
    auto cq = b.ctx->create_cq(64, nullptr, *ch);
    ASSERT_TRUE(cq.ok());
    c.ch = *ch;
    c.cq = *cq;
    c.q = create_qp(a, QpType::kRc);
    QpInitAttr init;
    init.cap = {16, 16, 1, 1, 0};
    c.p = *b.ctx->create_qp(b.pd, b.scq, c.cq, nullptr, init, nullptr);
    connect_one(a, c.q, b, c.p);
    connect_one(b, c.p, a, c.q);
  }
  // B's application polls `cq` (empty) for 20 ms, so its lease stretches to its longest and
  // its engine sleeps, then takes a lease of a second as such polls do (a shorter one may have
  // run out before the test looks, on a loaded machine) and makes no call. B's link, or
  // nullptr on the loopback link (no lease there).
  const link::ShmLink* hold_lease_then_stop(Cq* cq) {
    std::array<WorkCompletion, 4> wc;
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(20)) EXPECT_EQ(b.ctx->poll_cq(cq, wc), 0u);
    const link::ShmLink* shm = b.ctx->shm_link();
    if (shm != nullptr) {
      shm->inbox().take_lease(link::monotonic_ns(), kTestLeaseNs);
      EXPECT_GT(shm->inbox().lease_until(), link::monotonic_ns()) << "B holds the lease";
    }
    return shm;
  }
};

// An epoll set watching `fd` for input (the caller closes it), or -1 when epoll refuses the
// fd (a completion channel's is a real fd, as libibverbs' are).
inline int epoll_on(int fd) {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (ep >= 0 && ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
    ::close(ep);
    return -1;
  }
  return ep;
}

}  // namespace softib::testing
