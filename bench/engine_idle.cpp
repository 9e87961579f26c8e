// An idle engine's CPU use (issue 5 target: under 1% of a core). Two devices with their
// engine threads over the loopback link finish one RDMA WRITE, then the process sleeps for
// `seconds`; the process's CPU time over that window (getrusage: user + system of every
// thread) divided by the window is the idle cost. Prints one JSON line.
//   bench_engine_idle [seconds]
#include <sys/resource.h>

#include <cstdlib>
#include <thread>

#include "bench_util.hpp"
#include "engine/engine.hpp"
#include "link/loopback.hpp"
#include "support/rc_connect.hpp"
#include "verbs/caps.hpp"

using namespace softib;
using namespace softib::verbs;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Host {
  Host(link::LoopbackHub& hub, uint16_t lid) : device(default_caps(), test::port_with_lid(Lid(lid)), hub.new_sink(), SteadyClock::instance()) {
    engine = engine::Engine::create(device).value();
    hub.attach(Lid(lid), 0, [this](const rc::FrameAddr& f, wire::ByteSpan b) { engine->deliver(f, b); });
    pd = device.alloc_pd();
    cq = *device.create_cq(64, nullptr);
    mr = *device.mrs().reg(pd, buf, sizeof buf, reinterpret_cast<uint64_t>(buf), access::kLocalWrite | access::kRemoteWrite);
    QpInitAttr init;
    init.cap = {16, 16, 1, 1, 0};
    qp = *device.create_qp(pd, cq, cq, nullptr, init, nullptr);
  }
  void connect(const Host& peer, uint16_t dlid) {
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.port_num = 1;
    a.qp_access_flags = access::kRemoteWrite;
    (void)device.modify_qp(qp, a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
    a = {};
    a.qp_state = QpState::kRtr;
    a.path_mtu = Mtu::k1024;
    a.dest_qp_num = peer.qp->qpn();
    a.ah_attr.dlid = Lid(dlid);
    a.ah_attr.port_num = 1;
    a.min_rnr_timer = 1;
    (void)device.modify_qp(qp, a, attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                                      attr::kMaxDestRdAtomic | attr::kMinRnrTimer);
    a = {};
    a.qp_state = QpState::kRts;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    (void)device.modify_qp(qp, a, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry |
                                      attr::kMaxQpRdAtomic);
  }
  rc::Device device;
  std::unique_ptr<engine::Engine> engine;
  uint8_t buf[4096] = {};
  Pd* pd;
  Cq* cq;
  const Mr* mr;
  rc::Qp* qp;
};

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  link::LoopbackHub hub;
  Host a(hub, 1), b(hub, 2);
  a.connect(b, 2);
  b.connect(a, 1);
  a.engine->start();
  b.engine->start();
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.send_flags = send_flag::kSignaled;
  Sge s{reinterpret_cast<uint64_t>(a.buf), 64, a.mr->lkey};
  wr.sg_list = {&s, 1};
  wr.rdma = {reinterpret_cast<uint64_t>(b.buf), b.mr->rkey};
  size_t bad;
  (void)a.device.post_send(a.qp, {&wr, 1}, &bad);
  a.engine->kick();
  WorkCompletion wc;
  while (a.cq->poll({&wc, 1}) == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the spin window
  const double c0 = cpu_seconds(), t0 = bench::now_ms();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double cpu = cpu_seconds() - c0, wall = (bench::now_ms() - t0) / 1000;
  const double pct = 100 * cpu / wall;
  fmt::print("{{\"bench\":\"engine_idle\",\"engines\":2,\"window_s\":{:.2f},\"cpu_percent_of_a_core\":{:.3f},"
             "\"target_percent\":1,\"met\":{}}}\n",
             wall, pct, pct < 1 ? "true" : "false");
  return 0;
}
