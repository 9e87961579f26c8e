// The ShmLink tests' fixture: two endpoints (two rc::Devices, `Side`) joined through
// shared-memory inboxes and a directory as softibd would write it, driven step by step in
// virtual time (ShmLinkTest::wait). Used by shm_link_test.cpp and shm_link_pages_test.cpp.
#pragma once

#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "link/shm_link.hpp"
#include "support/rc_connect.hpp"
#include "verbs/caps.hpp"

namespace softib::link {

using namespace softib::verbs;

inline PortSnapshot port_state(uint16_t lid, uint8_t state = 4) {
  PortSnapshot s;
  s.state = state;
  s.phys_state = 5;
  s.lid = lid;
  s.num_pkeys = 1;
  s.pkeys[0] = 0xFFFF;
  return s;
}

inline int dup_fd(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); }

struct Side {
  Side(ShmDirectory& dir, const ShmLink::Resolver& resolver, uint32_t node, uint16_t lid, ManualClock& clock,
       uint32_t capacity)
      : hca(*dir.hca_slot(node, 0x1000 + node)),
        port(*dir.port_slot(hca, 1)),
        ep(set_up(dir, lid)),
        bell(*Doorbell::create()),
        link(dir, ep.id, port, *ShmInbox::create(ep.id, static_cast<uint32_t>(::getpid()), 4, capacity), resolver),
        device(default_caps(), test::port_with_lid(Lid(lid)), link, clock),
        buffer(1 << 20) {
    device.set_qpn_range(ep.block * kQpnBlock + (ep.block == 0 ? kFirstQpn : 0), ep.block * kQpnBlock + kQpnBlock - 1);
    pd = device.alloc_pd();
    cq = *device.create_cq(1024, nullptr);
    mr = *device.mrs().reg(pd, buffer.data(), buffer.size(), reinterpret_cast<uint64_t>(buffer.data()),
                           access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
    QpInitAttr init;
    init.cap = {256, 256, 2, 2, 64};
    qp = *device.create_qp(pd, cq, cq, nullptr, init, nullptr);
  }
  ShmDirectory::NewEndpoint set_up(ShmDirectory& dir, uint16_t lid) {
    dir.write_port(port, port_state(lid));
    return *dir.add_endpoint(hca, static_cast<uint32_t>(::getpid()));
  }
  uint64_t addr(size_t off) const { return reinterpret_cast<uint64_t>(buffer.data()) + off; }

  uint32_t hca, port;
  ShmDirectory::NewEndpoint ep;
  Doorbell bell;
  ShmLink link;
  rc::Device device;
  std::vector<uint8_t> buffer;
  Pd* pd;
  Cq* cq;
  const Mr* mr;
  rc::Qp* qp;
};

class ShmLinkTest : public ::testing::Test {
 protected:
  // Finds a side's inbox and doorbell through the directory's endpoint id, as softibd would.
  ShmLink::Resolver resolver() {
    return [this](uint32_t id) -> Result<ShmLink::PeerFds> {
      for (Side* s : {a.get(), b.get(), third.get()}) {
        if (s != nullptr && s->ep.id == id)
          return ShmLink::PeerFds{dup_fd(s->link.inbox().region().fd()), dup_fd(s->bell.fd())};
      }
      return Status(Code::kNotFound, "no such endpoint");
    };
  }
  // Sides a (LID 1) and b (LID 2), each finding the other's inbox through the directory; not
  // yet connected.
  void make_sides(uint32_t capacity = 64 * 1024) {
    a = std::make_unique<Side>(dir, resolver(), 0, 1, clock, capacity);
    b = std::make_unique<Side>(dir, resolver(), 1, 2, clock, capacity);
  }
  // A third side (LID 3), its QP connected to a second QP of `to`, which is returned.
  rc::Qp* add_third(Side& to, uint32_t capacity = 64 * 1024) {
    third = std::make_unique<Side>(dir, resolver(), 2, 3, clock, capacity);
    QpInitAttr init;
    init.cap = {256, 256, 2, 2, 64};
    rc::Qp* qp = *to.device.create_qp(to.pd, to.cq, to.cq, nullptr, init, nullptr);
    test::RcPath there{qp->qpn(), to.device.port().lid};
    test::RcPath back{third->qp->qpn(), Lid(3)};
    EXPECT_TRUE(test::connect_rc(third->device, third->qp, there).ok());
    EXPECT_TRUE(test::connect_rc(to.device, qp, back).ok());
    return qp;
  }
  // Both sides, connected to each other.
  void build(uint32_t capacity = 64 * 1024, size_t burst = 0) {
    make_sides(capacity);
    a->link.set_max_burst_bytes(burst);
    b->link.set_max_burst_bytes(burst);
    // Bursts by reference as large as the others here: many of them in a small transfer.
    a->link.set_max_reference_burst_bytes(burst);
    b->link.set_max_reference_burst_bytes(burst);
    connect(*a, *b, 2);
    connect(*b, *a, 1);
  }
  // Runs f(op, sender, receiver) for an RDMA WRITE (a's bytes into b) and an RDMA READ (b's
  // bytes into a), each on sides built afresh (build()); a posts both.
  template <class F>
  void for_each_one_sided(uint32_t capacity, size_t burst, F&& f) {
    for (const WrOpcode op : {WrOpcode::kRdmaWrite, WrOpcode::kRdmaRead}) {
      const bool write = op == WrOpcode::kRdmaWrite;
      SCOPED_TRACE(write ? "WRITE" : "READ");
      build(capacity, burst);
      f(op, write ? *a : *b, write ? *b : *a);
    }
  }
  static void connect(Side& s, const Side& peer, uint16_t dlid) {
    test::RcPath path{peer.qp->qpn(), Lid(dlid)};
    path.timeout = 10;
    path.retry_cnt = 2;
    const Status st = test::connect_rc(s.device, s.qp, path);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  // Steps both sides until `s` has a completion (virtual time jumps to the next timer).
  WorkCompletion wait(Side& s, bool b_polls = true) {
    WorkCompletion wc{};
    for (int i = 0; i < 100000; ++i) {
      a->link.poll(a->device);
      a->device.progress();
      if (b_polls) b->link.poll(b->device);
      b->device.progress();
      if (s.cq->poll({&wc, 1}) == 1) return wc;
      auto da = a->device.next_deadline(), db = b->device.next_deadline();
      // Time moves only when nothing is in flight: no frame waits, no output is held back.
      const bool busy = a->link.ready() || b->link.ready() || a->device.output_blocked() || b->device.output_blocked();
      if (!busy && (da || db)) {
        TimePoint t = da && db ? std::min(*da, *db) : (da ? *da : *db);
        if (t > clock.now()) clock.advance(t - clock.now());
      }
    }
    ADD_FAILURE() << "no completion";
    return wc;
  }
  void post_recv(Side& s, uint64_t id, size_t off, uint32_t len) {
    Sge g{s.addr(off), len, s.mr->lkey};
    RecvWr rw{id, {&g, 1}};
    size_t bad;
    ASSERT_TRUE(s.device.post_recv(s.qp, {&rw, 1}, &bad).ok());
  }
  // `rkey_flip`: bits flipped in the peer's R_Key (a bad key).
  void post(Side& s, WrOpcode op, size_t off, uint32_t len, uint64_t remote, uint32_t rkey_flip = 0) {
    Sge sge{s.addr(off), len, s.mr->lkey};
    SendWr wr;
    wr.wr_id = off;
    wr.opcode = op;
    wr.send_flags = send_flag::kSignaled;
    wr.sg_list = {&sge, 1};
    wr.rdma.remote_addr = remote;
    wr.rdma.rkey = RKey((&s == a.get() ? b : a)->mr->rkey.value() ^ rkey_flip);
    size_t bad;
    ASSERT_TRUE(s.device.post_send(s.qp, {&wr, 1}, &bad).ok());
  }

  ManualClock clock;
  ShmDirectory dir = *ShmDirectory::create({8, 8, 8});
  std::unique_ptr<Side> a, b, third;
};

}  // namespace softib::link
