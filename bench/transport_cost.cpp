// The transport's CPU cost, one thread, two rc::Devices joined by an in-memory wire (no
// threads, no shared memory, no system calls): what the state machines themselves cost per
// message and per byte, the floor under every link. Anchor: memcpy of the same bytes in the
// same run (the bulk path can do no better than one copy per packet at the responder plus
// one at the requester).
//   bench_transport_cost [--quick] [--only send|pingpong|write] [--scale K]   (K times the iterations: for profiles)
// Prints JSON lines. A diagnostic for the data-path design, not one of issue 5's targets
// (those are between two processes: bench/verbs_*).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "bench_util.hpp"
#include "rc/device.hpp"
#include "support/rc_connect.hpp"
#include "verbs/caps.hpp"

using namespace softib;
using namespace softib::verbs;

namespace {

struct Wire final : rc::FrameSink {
  // Fixed 8 KiB buffers from a free list: no allocation or zero-fill per frame.
  struct Frame {
    rc::FrameAddr addr;
    std::unique_ptr<uint8_t[]> data;
    size_t len = 0;
    rc::Burst burst{};
    wire::ByteSpan bytes() const { return wire::ByteSpan(data.get(), len); }
  };
  // Frames up to 64 KiB: the wire takes bursts (rc/frame.hpp) as the shared-memory link does.
  static constexpr size_t kBurst = 64 * 1024;
  static constexpr size_t kFrameMax = kBurst + 256;
  size_t max_burst_bytes() const override { return kBurst; }
  void commit_burst(size_t len, const rc::Burst& b) override { q.push_back({to_, std::move(building), len, b}); }
  std::deque<Frame> q;
  std::vector<std::unique_ptr<uint8_t[]>> spare;
  std::unique_ptr<uint8_t[]> building;
  rc::FrameAddr to_;
  wire::MutByteSpan reserve(const rc::FrameAddr& to, Qpn /*dest_qp*/, size_t len) override {
    to_ = to;
    if (!building) {
      if (!spare.empty()) {
        building = std::move(spare.back());
        spare.pop_back();
      } else {
        building = std::make_unique<uint8_t[]>(kFrameMax);
      }
    }
    return wire::MutByteSpan(building.get(), len);
  }
  void commit(size_t len) override { q.push_back({to_, std::move(building), len, rc::Burst{}}); }
};

struct Side {
  Side(Wire& out, const Clock& clock, uint16_t lid, size_t bytes)
      : dev(default_caps(), test::port_with_lid(Lid(lid)), out, clock), buf(bytes) {
    pd = dev.alloc_pd();
    cq = *dev.create_cq(32767, nullptr);
    mr = *dev.mrs().reg(pd, buf.data(), buf.size(), reinterpret_cast<uint64_t>(buf.data()),
                        access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead);
    QpInitAttr init;
    init.cap = {16384, 16384, 1, 1, 64};
    qp = *dev.create_qp(pd, cq, cq, nullptr, init, nullptr);
  }
  rc::Device dev;
  std::vector<uint8_t> buf;
  Pd* pd;
  Cq* cq;
  const Mr* mr;
  rc::Qp* qp;
};

void connect(Side& s, const Side& peer, uint16_t dlid) {
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = access::kRemoteWrite | access::kRemoteRead;
  (void)s.dev.modify_qp(s.qp, a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
  a = {};
  a.qp_state = QpState::kRtr;
  a.path_mtu = Mtu::k4096;
  a.dest_qp_num = peer.qp->qpn();
  a.ah_attr.dlid = Lid(dlid);
  a.ah_attr.port_num = 1;
  a.max_dest_rd_atomic = 16;
  a.min_rnr_timer = 1;
  (void)s.dev.modify_qp(s.qp, a, attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                                     attr::kMaxDestRdAtomic | attr::kMinRnrTimer);
  a = {};
  a.qp_state = QpState::kRts;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 16;
  (void)s.dev.modify_qp(s.qp, a, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry |
                                     attr::kMaxQpRdAtomic);
}

struct Bench {
  SteadyClock& clock = SteadyClock::instance();
  Wire to_b, to_a;
  Side a{to_b, clock, 1, 8 << 20};
  Side b{to_a, clock, 2, 8 << 20};
  Bench() {
    connect(a, b, 2);
    connect(b, a, 1);
  }
  void pump() {
    for (;;) {
      bool did = a.dev.progress() | b.dev.progress();
      while (!to_b.q.empty()) {
        b.dev.receive(to_b.q.front().addr, to_b.q.front().bytes(), to_b.q.front().burst);
        to_b.spare.push_back(std::move(to_b.q.front().data));
        to_b.q.pop_front();
        did = true;
      }
      while (!to_a.q.empty()) {
        a.dev.receive(to_a.q.front().addr, to_a.q.front().bytes(), to_a.q.front().burst);
        to_a.spare.push_back(std::move(to_a.q.front().data));
        to_a.q.pop_front();
        did = true;
      }
      if (!did) return;
    }
  }
  size_t drain(Cq* cq) {
    // Built once: an array of 64 fresh completions is a 3 KiB zero-fill per call, which
    // cost more than the polls it served (a benchmark artifact, not the transport's cost).
    static std::array<WorkCompletion, 64> wc;
    size_t total = 0, n;
    while ((n = cq->poll(wc)) > 0) total += n;
    return total;
  }
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  int scale = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") quick = true;
    if (arg == "--only" && i + 1 < argc) only = argv[++i];
    if (arg == "--scale" && i + 1 < argc) scale = std::max(1, std::atoi(argv[++i]));
  }
  Bench bench;
  size_t bad;

  // 1. SEND message rate, 64 bytes, batches of 256.
  if (only.empty() || only == "send") {
    const int batches = (quick ? 200 : 2000) * scale;
    Sge s{reinterpret_cast<uint64_t>(bench.a.buf.data()), 64, bench.a.mr->lkey};
    Sge r{reinterpret_cast<uint64_t>(bench.b.buf.data()), 64, bench.b.mr->lkey};
    SendWr wr;
    wr.sg_list = {&s, 1};
    wr.send_flags = send_flag::kSignaled;
    RecvWr rwr{0, {&r, 1}};
    const double t0 = bench::now_ms();
    size_t done = 0;
    for (int k = 0; k < batches; ++k) {
      for (int i = 0; i < 256; ++i) {
        (void)bench.b.dev.post_recv(bench.b.qp, {&rwr, 1}, &bad);
        (void)bench.a.dev.post_send(bench.a.qp, {&wr, 1}, &bad);
      }
      bench.pump();
      done += bench.drain(bench.b.cq);
      bench.drain(bench.a.cq);
    }
    const double ms = bench::now_ms() - t0;
    fmt::print("{{\"bench\":\"transport_cost\",\"case\":\"send_64B_rate\",\"messages\":{},\"softib_msgs_per_s\":{:.0f},"
               "\"ns_per_message\":{:.1f}}}\n",
               done, static_cast<double>(done) / (ms / 1000), ms * 1e6 / static_cast<double>(done));
  }

  // 2. Ping-pong, 8 bytes: the CPU cost of one round trip through both sides.
  if (only.empty() || only == "pingpong") {
    const int iters = (quick ? 20000 : 200000) * scale;
    Sge sa{reinterpret_cast<uint64_t>(bench.a.buf.data()), 8, bench.a.mr->lkey};
    Sge sb{reinterpret_cast<uint64_t>(bench.b.buf.data()), 8, bench.b.mr->lkey};
    SendWr wa, wb;
    wa.sg_list = {&sa, 1};
    wb.sg_list = {&sb, 1};
    wa.send_flags = wb.send_flags = send_flag::kSignaled | send_flag::kInline;
    RecvWr ra{0, {&sa, 1}}, rb{0, {&sb, 1}};
    const double t0 = bench::now_ms();
    for (int i = 0; i < iters; ++i) {
      (void)bench.b.dev.post_recv(bench.b.qp, {&rb, 1}, &bad);
      (void)bench.a.dev.post_recv(bench.a.qp, {&ra, 1}, &bad);
      (void)bench.a.dev.post_send(bench.a.qp, {&wa, 1}, &bad);
      bench.pump();
      bench.drain(bench.b.cq);
      (void)bench.b.dev.post_send(bench.b.qp, {&wb, 1}, &bad);
      bench.pump();
      bench.drain(bench.a.cq);
    }
    const double ms = bench::now_ms() - t0;
    fmt::print("{{\"bench\":\"transport_cost\",\"case\":\"pingpong_8B\",\"round_trips\":{},\"ns_per_round_trip\":{:.1f}}}\n",
               iters, ms * 1e6 / iters);
  }

  // 3. RDMA WRITE 1 MiB at MTU 4096 against memcpy of 1 MiB.
  if (only.empty() || only == "write") {
    const int iters = (quick ? 200 : 2000) * scale;
    const uint32_t len = 1 << 20;
    Sge s{reinterpret_cast<uint64_t>(bench.a.buf.data()), len, bench.a.mr->lkey};
    SendWr wr;
    wr.opcode = WrOpcode::kRdmaWrite;
    wr.sg_list = {&s, 1};
    wr.send_flags = send_flag::kSignaled;
    wr.rdma = {reinterpret_cast<uint64_t>(bench.b.buf.data()) + (4 << 20), bench.b.mr->rkey};
    double t0 = bench::now_ms();
    for (int i = 0; i < iters; ++i) {
      (void)bench.a.dev.post_send(bench.a.qp, {&wr, 1}, &bad);
      bench.pump();
      bench.drain(bench.a.cq);
    }
    const double ms = bench::now_ms() - t0;
    t0 = bench::now_ms();
    for (int i = 0; i < iters; ++i) {
      std::memcpy(bench.b.buf.data() + (4 << 20), bench.a.buf.data(), len);
      asm volatile("" ::: "memory");
    }
    const double memcpy_ms = bench::now_ms() - t0;
    const double gbps = static_cast<double>(len) * iters / (ms / 1000) / 1e9;
    const double memcpy_gbps = static_cast<double>(len) * iters / (memcpy_ms / 1000) / 1e9;
    fmt::print("{{\"bench\":\"transport_cost\",\"case\":\"rdma_write_1MiB\",\"softib_GBps\":{:.2f},"
               "\"anchor\":\"memcpy 1MiB\",\"anchor_GBps\":{:.2f},\"ratio\":{:.2f}}}\n",
               gbps, memcpy_gbps, gbps / memcpy_gbps);
  }
  return 0;
}
