// The verbs data path between two processes on shared memory, through the native C++ API
// (include/softib/verbs.hpp), as issue 5's targets measure it:
//
//   bench_verbs lat  --size 8 --iters N        RC SEND/RECV ping-pong: half round trip
//                    [--perftest]               the same in perftest's ib_send_lat loop
//                    [--event]                  each side sleeps for its receive's completion
//                                               on a completion channel (perftest's -e)
//                    [--slow-log PATH]          writes each round trip of 10 us and more: its
//                                               end (CLOCK_MONOTONIC ns) and length (us), for
//                                               bench/stalls.py to set against perf's trace
//   bench_verbs bw   --op write|read --size N --iters K   RDMA WRITE/READ bandwidth
//   bench_verbs rate --size 64 --iters N       SEND message rate
//
// and two diagnostics of the ping-pong's software, with no anchor and no target:
//
//   bench_verbs selflat --size 8 --iters N     the ping-pong with both sides in one thread
//   bench_verbs emptypoll --iters N            a poll of an empty CQ (one side, no peer)
//
// lat and selflat take --idle-qps N: N more RC QPs on each side, in RTS and idle (a server's
// other connections), which should cost the ping-pong nothing (rc::Device::activate); and
// --waiting-qps N: N more, each with a SEND awaiting an ACK that never comes (a server's
// connections with requests in flight), likewise (their timers are parked, rc::Device::park).
//
// Each prints one JSON line. The anchors (UCX, libfabric, the cache-line ping-pong) are run
// next to it by bench/datapath.py. The fabric is a private softibd started from the build
// tree (../bin/softibd next to this binary) unless --socket names one; the parent process is
// host-a's side, a forked child host-b's.
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "softib/verbs.hpp"
#include "support/softibd_process.hpp"

using namespace softib;

namespace {

struct Args {
  std::string mode;
  std::string op = "write";
  uint32_t size = 8;
  uint64_t iters = 0;
  uint32_t window = 0;
  std::string socket;
  bool pin = false;
  bool perftest = false;  // lat: perftest's ib_send_lat loop (see latency())
  bool event = false;     // lat: receives' completions awaited on a completion channel
  uint32_t idle_qps = 0;  // lat, selflat: more RC QPs on each side, in RTS, that carry nothing
  uint32_t waiting_qps = 0;  // lat, selflat: more RC QPs on each side, each awaiting an ACK
  std::string slow_log;      // lat: where to write each round trip of 10 us and more (bench/stalls.py)
  uint64_t warmup = 0;       // lat: round trips before the timed ones (0: iters / 10, at least 100)
};

// Written whole to the other process: no padding (memcheck reported its uninitialised bytes).
struct Peer {
  uint16_t lid;
  uint16_t reserved0 = 0;
  uint32_t qpn;
  uint32_t rkey;
  uint32_t reserved1 = 0;
  uint64_t addr;
};
static_assert(sizeof(Peer) == 2 + 2 + 4 + 4 + 4 + 8);

// The fabric this run started (none with --socket), and the process that started it.
std::unique_ptr<testing::SoftibdProcess> g_daemon;
pid_t g_daemon_owner = 0;

// Ends the program with `code`. The process that started softibd stops it and removes its
// directory first (std::exit runs no destructor of main's); the forked side leaves both to
// it and skips the static destructors, the fabric's among them.
[[noreturn]] void die(int code) {
  if (::getpid() != g_daemon_owner) {
    std::fflush(nullptr);
    ::_exit(code);
  }
  g_daemon.reset();
  std::exit(code);
}

[[noreturn]] void usage() {
  std::fprintf(stderr,
               "usage: bench_verbs lat|bw|rate|selflat|emptypoll [--size N] [--iters N] [--op write|read] [--window N] "
               "[--socket PATH] [--pin] [--perftest] [--event] [--idle-qps N] [--waiting-qps N] [--slow-log PATH] [--warmup N]\n");
  die(2);
}

Args parse(int argc, char** argv) {
  if (argc < 2) usage();
  Args a;
  a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (k == "--size") a.size = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--iters") a.iters = std::stoull(next());
    else if (k == "--op") a.op = next();
    else if (k == "--window") a.window = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--socket") a.socket = next();
    else if (k == "--pin") a.pin = true;
    else if (k == "--perftest") a.perftest = true;
    else if (k == "--event") a.event = true;
    else if (k == "--idle-qps") a.idle_qps = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--waiting-qps") a.waiting_qps = static_cast<uint32_t>(std::stoul(next()));
    else if (k == "--slow-log") a.slow_log = next();
    else if (k == "--warmup") a.warmup = std::stoull(next());
    else usage();
  }
  if (a.mode != "lat" && a.mode != "bw" && a.mode != "rate" && a.mode != "selflat" && a.mode != "emptypoll") usage();
  if (a.op != "write" && a.op != "read") usage();
  if (a.event && (a.mode != "lat" || a.perftest)) usage();
  if ((!a.slow_log.empty() || a.warmup != 0) && a.mode != "lat") usage();
  return a;
}

std::string softibd_path() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string self(buf, n > 0 ? static_cast<size_t>(n) : 0);
  return self.substr(0, self.rfind('/')) + "/../bin/softibd";
}

void pin_to(size_t cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof set, &set);
}

void write_all(int fd, const void* p, size_t n) {
  if (::write(fd, p, n) != static_cast<ssize_t>(n)) die(3);
}
void read_all(int fd, void* p, size_t n) {
  if (::read(fd, p, n) != static_cast<ssize_t>(n)) die(3);
}

// One side: a context on its device, an RC QP, CQs and a registered buffer; with `event`, the
// receive CQ reports to a completion channel.
struct Side {
  Side(const Options& o, int device, size_t bytes, bool event = false)
      : ctx(Context::open(devices(o).at(static_cast<size_t>(device)), o)),
        channel(event ? std::make_unique<CompletionChannel>(ctx.create_comp_channel()) : nullptr),
        pd(ctx.alloc_pd()),
        scq(ctx.create_cq(8192)),
        rcq(ctx.create_cq(8192, channel.get())),
        buf(bytes),
        mr(pd.reg_mr(buf.data(), buf.size(), access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead)),
        qp(pd.create_qp(init(), scq, rcq)) {}
  static QpInitAttr init() {
    QpInitAttr i;
    i.qp_type = QpType::kRc;
    i.cap = {4096, 4096, 1, 1, 64};
    return i;
  }
  Peer me() {
    return Peer{.lid = ctx.query_port(1).port.lid, .qpn = qp.qp_num(), .rkey = mr.rkey(),
                .addr = reinterpret_cast<uint64_t>(buf.data())};
  }
  void connect(const Peer& p) { connect_qp(qp, p); }
  // `n` more RC QPs, each connected to itself and idle: a server's other connections. A step
  // of the device should cost the same with them as without (rc::Device::activate).
  void add_idle(uint32_t n) { add_qps(n, kItself, 14, false); }
  // `n` more RC QPs, each with a zero-length SEND in flight to a QPN that no QP has: the frame
  // is dropped, and the QP awaits an ACK for its retransmission timeout (timeout 31: 2.4 hours)
  // with nothing else to do (rc::Device::park).
  void add_waiting(uint32_t n) { add_qps(n, 0xFFFFFE, 31, true); }  // above any QPN handed out
  static constexpr uint32_t kItself = 0;
  void add_qps(uint32_t n, uint32_t dest_qpn, uint8_t timeout, bool send) {
    QpInitAttr small = init();
    small.cap = {16, 16, 1, 1, 64};
    const uint16_t lid = ctx.query_port(1).port.lid;
    for (uint32_t i = 0; i < n; ++i) {
      QueuePair& q = idle.emplace_back(pd.create_qp(small, scq, rcq));
      connect_qp(q, Peer{.lid = lid, .qpn = dest_qpn == kItself ? q.qp_num() : dest_qpn, .rkey = 0, .addr = 0}, timeout);
      SendWr wr;
      wr.wr_id = i;
      wr.opcode = WrOpcode::kSend;
      if (send && q.post_send(wr) != 0) die(4);
    }
  }
  void connect_qp(QueuePair& q, const Peer& p, uint8_t timeout = 14) {
    QpAttr a;
    a.qp_state = QpState::kInit;
    a.port_num = 1;
    a.qp_access_flags = access::kRemoteWrite | access::kRemoteRead;
    q.modify(a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
    a = {};
    a.qp_state = QpState::kRtr;
    a.path_mtu = static_cast<Mtu>(ctx.query_port(1).port.active_mtu);  // as perftest: the port's MTU
    a.dest_qp_num = Qpn(p.qpn);
    a.rq_psn = Psn(0);
    a.ah_attr.dlid = Lid(p.lid);
    a.ah_attr.port_num = 1;
    a.max_dest_rd_atomic = 16;
    a.min_rnr_timer = 1;
    q.modify(a, attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn | attr::kMaxDestRdAtomic |
                    attr::kMinRnrTimer);
    a = {};
    a.qp_state = QpState::kRts;
    a.sq_psn = Psn(0);
    a.timeout = timeout;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 16;
    q.modify(a, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic);
  }
  void post_recv(uint64_t id, uint32_t len) {
    const Sge s = mr.sge(0, len);
    if (qp.post_recv(RecvWr{id, {&s, 1}}) != 0) die(4);
  }
  // A failed completion ends the program (exit 5), with this side's counters (report()).
  const WorkCompletion& succeeded(const WorkCompletion& wc) const {
    if (wc.status != WcStatus::kSuccess) {
      std::fprintf(stderr, "completion failed: %s\n", std::string(verbs::to_string(wc.status)).c_str());
      report_failure();
      die(5);
    }
    return wc;
  }
  WorkCompletion wait(CompletionQueue& cq) {
    WorkCompletion wc;
    while (cq.poll({&wc, 1}) == 0) ++empty_polls;
    return succeeded(wc);
  }
  // Polls that found nothing (wait()): in the ping-pong, how long a side waited for the
  // reply, in polls. Near 0 a round trip, the reply was there at the first look: the side's
  // own work between its send and its poll, not the peer, set the pace.
  uint64_t empty_polls = 0;
  // The next completion of the armed receive CQ, as an event loop takes it (perftest -e,
  // ibv_rc_pingpong -e): a poll of an armed CQ does not step the transport, so an empty one
  // sleeps on the channel until the engine delivers the completion, then re-arms and polls.
  WorkCompletion wait_event() {
    WorkCompletion wc;
    while (rcq.poll({&wc, 1}) == 0) {
      if (!channel->get_event()) {
        std::perror("get_event");
        die(5);
      }
      rcq.req_notify();
    }
    return succeeded(wc);
  }

  ~Side() {
    if (std::getenv("BENCH_VERBOSE") != nullptr) report();
  }
  // The engine's, the link's and the device's counters, on stderr.
  void report() const {
    const auto& e = ctx.native().engine().counters();
    const auto* l = ctx.native().shm_link();
    const auto& d = ctx.native().device().counters();
    std::fprintf(stderr,
                 "pid %d: engine steps %lu (own %lu) sleeps %lu (rung %lu) wakeups %lu inline %lu busy posts %lu busy yields %lu "
                 "idle yields %lu (ran another %lu); "
                 "shm sent %lu received %lu refused %lu lost %lu/%lu/%lu (port down/no endpoint/dead peer) malformed %lu "
                 "reclaimed %lu doorbells %lu stall rings %lu (away %lu); "
                 "device tx %lu rx %lu retransmits %lu timeouts %lu (%lu spent no retry) rnr sent %lu received %lu "
                 "seq naks sent %lu received %lu duplicates replayed %lu drops %lu walks skipped %lu\n",
                 ::getpid(), e.steps.load(), e.engine_steps.load(), e.sleeps.load(), e.rung_wakes.load(), e.wakeups.load(),
                 e.inline_steps.load(), e.busy_posts.load(), e.busy_yields.load(), e.idle_yields.load(),
                 e.idle_yields_ran_other.load(),
                 l ? l->counters().frames_sent : 0, l ? l->counters().frames_received : 0, l ? l->counters().refused : 0,
                 l ? l->counters().lost_port_down : 0, l ? l->counters().lost_no_endpoint : 0,
                 l ? l->counters().lost_dead_peer : 0, l ? l->counters().malformed : 0, l ? l->counters().reclaimed : 0,
                 l ? l->counters().doorbells : 0, l ? l->counters().stall_rings : 0, l ? l->counters().away_rings : 0,
                 d.tx_packets, d.rx_packets, d.retransmits, d.timeouts, d.timeouts_copy_later, d.rnr_naks_sent,
                 d.rnr_naks_received, d.seq_naks_sent, d.seq_naks_received, d.duplicates_replayed,
                 std::accumulate(d.drops.begin(), d.drops.end(), uint64_t{0}), d.walks_skipped);
  }
  // report(), and the shared-memory link's channels (ShmLink::describe_channels).
  void report_failure() const {
    report();
    if (const auto* l = ctx.native().shm_link()) {
      std::lock_guard lock(ctx.native().device().lock());
      std::fprintf(stderr, "pid %d: %s\n", ::getpid(), l->describe_channels().c_str());
    }
  }
  Context ctx;
  std::unique_ptr<CompletionChannel> channel;
  ProtectionDomain pd;
  CompletionQueue scq, rcq;
  std::vector<uint8_t> buf;
  MemoryRegion mr;
  QueuePair qp;
  std::vector<QueuePair> idle;  // add_idle, add_waiting: destroyed first
};

constexpr uint32_t kPrepost = 512;

// The time-stamp counter (per-iteration round trips; converted with the steady clock over
// the whole run, so no frequency is assumed). Elsewhere, the steady clock itself.
uint64_t stamp() {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// A round trip this long or longer is slow: a thread pre-empted, an engine woken on a busy
// vCPU, the hypervisor holding a vCPU (rtts_over_10us, --slow-log, bench/stalls.py).
constexpr double kSlowRttUs = 10.0;

// Each slow round trip, one a line: "END_NS LENGTH_US", END_NS on CLOCK_MONOTONIC
// (steady_clock here; `perf record -k CLOCK_MONOTONIC` stamps its events on the same clock).
// No reading in the timed loop: a round trip ends where the next begins, so the ends are the
// running sum of the lengths from the run's start.
void write_slow_log(const std::string& path, const std::vector<uint64_t>& rtt, std::chrono::steady_clock::time_point start,
                    double us_per_stamp) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::perror(path.c_str());
    die(1);
  }
  const double start_ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count());
  uint64_t elapsed = 0;
  for (uint64_t r : rtt) {
    elapsed += r;
    const double us = static_cast<double>(r) * us_per_stamp;
    if (us >= kSlowRttUs) std::fprintf(f, "%.0f %.2f\n", start_ns + static_cast<double>(elapsed) * us_per_stamp * 1000.0, us);
  }
  std::fclose(f);
}

struct Latency {
  double mean_us = 0;  // half round trip, averaged over every iteration (the target's figure)
  double p50_us = 0;   // half round trip, percentiles of the individual round trips
  double p99_us = 0;
  double p999_us = 0;
  uint64_t slow_rtts = 0;  // round trips of 10 us and more
  double slow_share = 0;   // their share of the timed run
  double empty_polls = 0;  // the timing side's polls that found nothing, a round trip (Side::empty_polls)
};

// RC SEND/RECV ping-pong: both sides keep receives posted; A sends, B answers. A (the
// client) also times each round trip: on these VMs a timer interrupt or a context switch
// costs tens of microseconds, so the mean and the median tell different stories.
Latency latency(Side& s, bool client, const Args& a, int sync) {
  const uint64_t warm = a.warmup != 0 ? a.warmup : std::max<uint64_t>(a.iters / 10, 100);
  // --perftest: never inline. perftest turns inline data off on a device it does not know by
  // its vendor part ID (ctx_set_max_inline: "Device not recognized to implement inline
  // feature", as on rxe), so its ib_send_lat on softib posts every send with an SGE; the
  // native loop set against it does the same work.
  const bool inl = a.size <= 64 && !a.perftest;
  for (uint32_t i = 0; i < kPrepost; ++i) s.post_recv(i, a.size);
  char c = 0;
  write_all(sync, &c, 1);
  read_all(sync, &c, 1);
  const Sge sge = s.mr.sge(0, a.size);
  SendWr wr;
  wr.opcode = WrOpcode::kSend;
  wr.sg_list = {&sge, 1};
  if (a.event) s.rcq.req_notify();
  uint32_t sends_owed = 0;  // --event: signaled sends not yet completed
  auto send = [&](uint64_t i) {
    // Signal every 64th send so the send queue's slots come back without a poll per message.
    // --perftest: every send, and its completion (the peer's ACK) is awaited before the
    // reply, as perftest's ib_send_lat does (its tx depth 1 makes every send signaled).
    const bool signaled = a.perftest || i % 64 == 63;
    wr.send_flags = (inl ? send_flag::kInline : 0u) | (signaled ? send_flag::kSignaled : 0u);
    if (s.qp.post_send(wr) != 0) die(6);
    // --event: a send's completion needs the peer's ACK, which its engine sends once woken;
    // waiting for it here would put a second wake-up in the round trip. It is collected
    // after a later receive, which the ACK (sent ahead of the reply) has reached by then.
    if (signaled && !a.event) s.wait(s.scq);
    if (signaled && a.event) ++sends_owed;
  };
  // A receive taken is replaced after the next send is posted, while the peer works on it
  // (kPrepost stay posted): off the path from a message's arrival to its answer, as UCX's
  // tag_lat posts its receive before it waits.
  auto recv = [&] {
    if (!a.event) {
      s.wait(s.rcq);
      return;
    }
    s.wait_event();
    WorkCompletion wc;
    while (sends_owed != 0 && s.scq.poll({&wc, 1}) == 1) {
      s.succeeded(wc);
      --sends_owed;
    }
    if (sends_owed > 32) {  // the send queue's 4096 slots come back 64 at a time
      s.wait(s.scq);
      --sends_owed;
    }
  };
  std::vector<uint64_t> rtt(client ? a.iters : 0);
  std::chrono::steady_clock::time_point start;
  uint64_t start_stamp = 0;
  uint64_t last = stamp();
  for (uint64_t i = 0; i < warm + a.iters; ++i) {
    if (i == warm) {
      start = std::chrono::steady_clock::now();
      start_stamp = last = stamp();
      s.empty_polls = 0;
    }
    if (a.perftest) {
      // perftest's ib_send_lat loop (run_iter_lat_send): a receive taken is replaced at once,
      // before the send that answers it; every send is awaited. The native program to set
      // the drop-in's ib_send_lat against (bench/dropin.py): the same work in the same order.
      if (client) {
        send(i);
        recv();
        s.post_recv(i, a.size);
        const uint64_t t = stamp();
        if (i >= warm) rtt[i - warm] = t - last;
        last = t;
      } else {
        recv();
        s.post_recv(i, a.size);
        send(i);
      }
    } else if (client) {
      // One reading of the counter an iteration, as ucx_perftest takes one: this round trip
      // ends where the next begins (the loop's top does nothing between them).
      send(i);
      if (i != 0) s.post_recv(i - 1, a.size);
      recv();
      const uint64_t t = stamp();
      if (i >= warm) rtt[i - warm] = t - last;
      last = t;
    } else {
      recv();
      send(i);
      s.post_recv(i, a.size);
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  Latency l;
  l.mean_us = ns / 2 / static_cast<double>(a.iters) / 1000.0;
  l.empty_polls = static_cast<double>(s.empty_polls) / static_cast<double>(a.iters);
  if (client && !rtt.empty()) {
    const double us_per_stamp = ns / 1000.0 / static_cast<double>(stamp() - start_stamp);
    if (!a.slow_log.empty()) write_slow_log(a.slow_log, rtt, start, us_per_stamp);
    std::sort(rtt.begin(), rtt.end());
    auto half = [&](double q) {
      return static_cast<double>(rtt[static_cast<size_t>(q * static_cast<double>(rtt.size() - 1))]) * us_per_stamp / 2;
    };
    l.p50_us = half(0.5);
    l.p99_us = half(0.99);
    l.p999_us = half(0.999);
    // Where the mean and the median part: round trips of 10 us and more (a thread pre-empted,
    // an engine woken on a busy vCPU), their number and their share of the timed run.
    const auto slow_from = std::lower_bound(rtt.begin(), rtt.end(), static_cast<uint64_t>(kSlowRttUs / us_per_stamp));
    l.slow_rtts = static_cast<uint64_t>(rtt.end() - slow_from);
    double slow_us = 0;
    for (auto it = slow_from; it != rtt.end(); ++it) slow_us += static_cast<double>(*it) * us_per_stamp;
    l.slow_share = slow_us / (ns / 1000.0);
    if (std::getenv("BENCH_VERBOSE") != nullptr) {
      // Where the mean goes: the share of the timed run spent in round trips of each size.
      // Round trips (not halves) under each edge; the last bin holds the rest.
      const double edges_us[] = {0.4, 0.6, 1, 2, kSlowRttUs};
      double share[std::size(edges_us) + 1] = {};
      for (uint64_t r : rtt) {
        const double us = static_cast<double>(r) * us_per_stamp;
        size_t b = 0;
        while (b < std::size(edges_us) && us >= edges_us[b]) ++b;
        share[b] += us;
      }
      std::fprintf(stderr, "half rtt p10 %.3f p90 %.3f p9999 %.3f us; run time in round trips", half(0.1), half(0.9),
                   half(0.9999));
      for (size_t b = 0; b < std::size(edges_us); ++b) std::fprintf(stderr, " <%g us %.3f,", edges_us[b], share[b] / (ns / 1000.0));
      std::fprintf(stderr, " longer %.3f\n", share[std::size(edges_us)] / (ns / 1000.0));
    }
  }
  return l;
}

// RDMA WRITE or READ of `size` bytes, `window` in flight, B idle (its engine alone serves).
double bandwidth(Side& s, const Peer& peer, const Args& a) {
  const uint32_t window = a.window != 0 ? a.window : std::max<uint32_t>(4, std::min<uint32_t>(1024, (8u << 20) / a.size));
  const Sge sge = s.mr.sge(0, a.size);
  SendWr wr;
  wr.opcode = a.op == "read" ? WrOpcode::kRdmaRead : WrOpcode::kRdmaWrite;
  wr.sg_list = {&sge, 1};
  wr.rdma = {peer.addr, RKey(peer.rkey)};
  const uint64_t warm = std::max<uint64_t>(a.iters / 10, window);
  const uint64_t total = warm + a.iters;
  uint64_t posted = 0, done = 0;
  std::chrono::steady_clock::time_point start;
  WorkCompletion wcs[64];
  while (done < total) {
    while (posted < total && posted - done < window) {
      wr.wr_id = posted;
      wr.send_flags = send_flag::kSignaled;
      if (s.qp.post_send(wr) != 0) die(6);
      ++posted;
    }
    const size_t n = s.scq.poll(wcs);
    for (size_t i = 0; i < n; ++i) {
      s.succeeded(wcs[i]);
      if (++done == warm) start = std::chrono::steady_clock::now();
    }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(a.iters) * a.size / sec / 1e6;  // MB/s
}

// SEND message rate: A posts batches of 32 (one signaled), B keeps receives posted and counts.
double rate(Side& s, bool client, const Args& a, int sync) {
  constexpr uint32_t kBatch = 32;
  // Whole batches: the clock starts at the first batch acknowledged at or past the warm-up.
  const uint64_t warm = (std::max<uint64_t>(a.iters / 10, 10000) + kBatch - 1) / kBatch * kBatch;
  const uint64_t total = warm + a.iters;
  char c = 0;
  if (!client) {
    for (uint32_t i = 0; i < 4096; ++i) s.post_recv(i, a.size);
    write_all(sync, &c, 1);
    uint64_t got = 0;
    WorkCompletion wcs[64];
    std::vector<RecvWr> again;
    const Sge sge = s.mr.sge(0, a.size);
    while (got < total) {
      const size_t n = s.rcq.poll(wcs);
      again.clear();
      for (size_t i = 0; i < n; ++i) again.push_back(RecvWr{wcs[i].wr_id, {&sge, 1}});
      if (n != 0 && s.qp.post_recv(again) != 0) die(4);
      got += n;
    }
    write_all(sync, &c, 1);
    return 0;
  }
  read_all(sync, &c, 1);
  const Sge sge = s.mr.sge(0, a.size);
  std::vector<SendWr> batch(kBatch);
  for (uint32_t i = 0; i < kBatch; ++i) {
    batch[i].opcode = WrOpcode::kSend;
    batch[i].sg_list = {&sge, 1};
    batch[i].send_flags = send_flag::kInline | (i + 1 == kBatch ? send_flag::kSignaled : 0u);
  }
  uint64_t sent = 0, acked = 0, timed_from = 0;
  std::chrono::steady_clock::time_point start;
  bool started = false;
  WorkCompletion wcs[64];
  while (acked < total) {
    // Up to 8 batches in flight (the receiver has 4096 receives posted).
    while (sent < total && sent - acked < 8 * kBatch) {
      if (s.qp.post_send(batch) != 0) die(6);
      sent += kBatch;
    }
    const size_t n = s.scq.poll(wcs);
    for (size_t i = 0; i < n; ++i) {
      s.succeeded(wcs[i]);
      acked += kBatch;
      if (!started && acked >= warm) {
        start = std::chrono::steady_clock::now();
        started = true;
        timed_from = acked;
      }
    }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  read_all(sync, &c, 1);
  return static_cast<double>(total - timed_from) / sec / 1e6;  // M messages/s
}

// The ping-pong's software alone: both sides in this one thread, each side's step run by the
// other's wait, so no cache line crosses between cores and no thread waits on another. The
// half round trip is then the instructions (and local cache misses) a message costs on the
// path from a frame's arrival to the answer's publication: a diagnostic for that path, on
// which the noise of the two vCPUs' distance does not fall (not an issue target).
double self_latency(Side& a, Side& b, const Args& args) {
  const uint64_t warm = std::max<uint64_t>(args.iters / 10, 100);
  for (uint32_t i = 0; i < kPrepost; ++i) {
    a.post_recv(i, args.size);
    b.post_recv(i, args.size);
  }
  const Sge sa = a.mr.sge(0, args.size), sb = b.mr.sge(0, args.size);
  SendWr wa, wb;
  wa.opcode = wb.opcode = WrOpcode::kSend;
  wa.sg_list = {&sa, 1};
  wb.sg_list = {&sb, 1};
  const bool inl = args.size <= 64;
  std::chrono::steady_clock::time_point start;
  for (uint64_t i = 0; i < warm + args.iters; ++i) {
    if (i == warm) start = std::chrono::steady_clock::now();
    const uint32_t flags = (inl ? send_flag::kInline : 0u) | (i % 64 == 63 ? send_flag::kSignaled : 0u);
    wa.send_flags = wb.send_flags = flags;
    if (a.qp.post_send(wa) != 0) die(6);
    if (i != 0) a.post_recv(i - 1, args.size);
    b.wait(b.rcq);
    if (b.qp.post_send(wb) != 0) die(6);
    b.post_recv(i, args.size);
    a.wait(a.rcq);
    if (i % 64 == 63) {
      a.wait(a.scq);
      b.wait(b.scq);
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  return ns / 2 / static_cast<double>(args.iters) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  if (a.iters == 0) a.iters = a.mode == "lat" || a.mode == "selflat" ? 200000 : a.mode == "rate" ? 2000000 : std::max<uint64_t>(200, (4ull << 30) / a.size);
  if (a.mode == "rate") a.iters = (a.iters + 31) / 32 * 32;
  if (a.socket.empty()) {
    g_daemon = std::make_unique<testing::SoftibdProcess>(softibd_path(), "switch:hosts=2", true);
    g_daemon_owner = ::getpid();
    if (!g_daemon->ready()) {
      std::fprintf(stderr, "bench_verbs: softibd did not start (%s)\n", softibd_path().c_str());
      die(1);
    }
    a.socket = g_daemon->socket();
  }
  Options o;
  o.socket = a.socket;
  o.host = "all";
  if (a.mode == "emptypoll") {
    // A polling loop sees a frame at its next look: on average half an empty poll after the
    // frame's line arrives.
    Side x(o, 0, 4096);
    WorkCompletion wc;
    size_t got = 0;
    for (int i = 0; i < 1000000; ++i) got += x.rcq.poll({&wc, 1});
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < a.iters; ++i) got += x.rcq.poll({&wc, 1});
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("empty poll {:.2f} ns ({})\n", ns / static_cast<double>(a.iters), got);
    return 0;
  }
  if (a.mode == "selflat") {
    if (a.pin) pin_to(0);
    const size_t bytes = std::max<size_t>(a.size, 4096);
    Side x(o, 0, bytes), y(o, 1, bytes);
    x.connect(y.me());
    y.connect(x.me());
    for (Side* s : {&x, &y}) {
      s->add_idle(a.idle_qps);
      s->add_waiting(a.waiting_qps);
    }
    const double us = self_latency(x, y, a);
    fmt::print("{{\"bench\":\"verbs_rc_send_selflat\",\"size\":{},\"half_rtt_us\":{:.4f},\"iters\":{},\"idle_qps\":{},"
               "\"waiting_qps\":{}}}\n",
               a.size, us, a.iters, a.idle_qps, a.waiting_qps);
    return 0;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 1;
  const size_t bytes = std::max<size_t>(a.size, 4096);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(sv[0]);
    if (a.pin) pin_to(1);
    {
      Side s(o, 1, bytes, a.event);
      Peer me = s.me(), peer{};
      write_all(sv[1], &me, sizeof me);
      read_all(sv[1], &peer, sizeof peer);
      s.connect(peer);
      s.add_idle(a.idle_qps);
      s.add_waiting(a.waiting_qps);
      char c = 0;
      write_all(sv[1], &c, 1);  // connected
      if (a.mode == "lat") latency(s, false, a, sv[1]);
      if (a.mode == "rate") rate(s, false, a, sv[1]);
      read_all(sv[1], &c, 1);  // the client is done
    }
    ::_exit(0);
  }
  ::close(sv[1]);
  if (a.pin) pin_to(0);
  double value = 0;
  {
    Side s(o, 0, bytes, a.event);
    Peer me = s.me(), peer{};
    read_all(sv[0], &peer, sizeof peer);
    write_all(sv[0], &me, sizeof me);
    s.connect(peer);
    s.add_idle(a.idle_qps);
    s.add_waiting(a.waiting_qps);
    char c = 0;
    read_all(sv[0], &c, 1);
    if (a.mode == "lat") {
      const Latency l = latency(s, true, a, sv[0]);
      value = l.mean_us;
      fmt::print("{{\"bench\":\"verbs_rc_send_{}\",\"size\":{},\"half_rtt_us\":{:.4f},\"half_rtt_us_p50\":{:.4f},"
                 "\"half_rtt_us_p99\":{:.4f},\"half_rtt_us_p999\":{:.4f},\"rtts_over_10us\":{},"
                 "\"time_share_over_10us\":{:.4f},\"empty_polls_per_rtt\":{:.2f},\"iters\":{},\"idle_qps\":{},"
                 "\"waiting_qps\":{}}}\n",
                 a.event ? "event_lat" : "lat", a.size, value, l.p50_us, l.p99_us, l.p999_us, l.slow_rtts, l.slow_share,
                 l.empty_polls, a.iters, a.idle_qps, a.waiting_qps);
    } else if (a.mode == "bw") {
      value = bandwidth(s, peer, a);
      fmt::print("{{\"bench\":\"verbs_rc_{}_bw\",\"size\":{},\"MBps\":{:.1f},\"iters\":{}}}\n", a.op, a.size, value, a.iters);
    } else {
      value = rate(s, true, a, sv[0]);
      fmt::print("{{\"bench\":\"verbs_rc_send_rate\",\"size\":{},\"Mmsgs\":{:.3f},\"iters\":{}}}\n", a.size, value, a.iters);
    }
    std::fflush(stdout);
    write_all(sv[0], &c, 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
