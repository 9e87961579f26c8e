// Real processes on the shared-memory link: one side killed in the middle of a transfer.
//
// This test is the survivor, on host-a. Two verbs_peer processes on host-b hold the other
// ends: the victim, which is sent SIGKILL while RDMA WRITEs stream into it, and a bystander.
// The survivor's QP to the victim must end in IBV_WC_RETRY_EXC_ERR within its retry timeout
// (every later work request flushed, the QP in Error), the QP to the bystander must go on
// moving intact bytes, and nothing may be left behind: softibd's descriptors and the
// survivor's descriptors and shared-memory mappings return to what they were before the
// victim came.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "base/process.hpp"
#include "support/random.hpp"
#include "verbs/fixture.hpp"

namespace softib::testing {
namespace {

size_t count_fds(pid_t pid) {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

size_t count_memfd_mappings() {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("/memfd:") != std::string::npos;
  return n;
}

// A verbs_peer process with its stdin and stdout as pipes.
class Peer {
 public:
  Peer(const std::string& socket, const std::string& host) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::execl(SOFTIB_VERBS_PEER, SOFTIB_VERBS_PEER, socket.c_str(), host.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = ::fdopen(out[0], "r");
  }
  ~Peer() {
    close_pipes();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;

  // Its side of the connection, then ours; true once its QP is in RTS.
  bool connect(Lid my_lid, Qpn my_qpn) {
    unsigned l = 0, k = 0;
    unsigned long long a = 0;
    if (from_ == nullptr || std::fscanf(from_, "%u %u %u %llu", &l, &qpn, &k, &a) != 4) return false;
    lid = Lid(static_cast<uint16_t>(l));
    rkey = RKey(k);
    addr = a;
    const std::string line = std::to_string(my_lid.value()) + " " + std::to_string(my_qpn.value()) + "\n";
    if (::write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return false;
    char word[16] = {};
    return std::fscanf(from_, "%15s", word) == 1 && std::string(word) == "ready";
  }
  bool started() const { return pid_ > 0 && from_ != nullptr; }
  // Sends SIGKILL and reaps it; its pipes close.
  void kill() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
    close_pipes();
  }
  // SIGSTOP; true once the kernel reports it stopped (it is our child: waitpid WUNTRACED).
  bool stop() {
    int status = 0;
    return ::kill(pid_, SIGSTOP) == 0 && ::waitpid(pid_, &status, WUNTRACED) == pid_ && WIFSTOPPED(status);
  }
  bool resume() { return ::kill(pid_, SIGCONT) == 0; }
  // Closes its stdin (it exits 0) and reaps it.
  int finish() {
    close_pipes();
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = 0;
    return status;
  }

  Lid lid{};
  unsigned qpn = 0;
  RKey rkey{};
  uint64_t addr = 0;

 private:
  void close_pipes() {
    if (to_ >= 0) ::close(to_);
    to_ = -1;
    if (from_ != nullptr) std::fclose(from_);
    from_ = nullptr;
  }
  pid_t pid_ = 0;
  int to_ = -1;
  FILE* from_ = nullptr;
};

class KillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon.ready()) << "softibd did not start";
    provider::Options options;
    options.socket = daemon.socket();
    options.host = "host-a";
    auto devs = provider::list_devices(options);
    ASSERT_TRUE(devs.ok() && devs->size() == 1u);
    auto c = provider::Context::open(devs->front(), options);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    ctx = std::move(*c);
    pd = ctx->alloc_pd();
    mr = *ctx->reg_mr(pd, buffer.data(), buffer.size(), addr(0),
                      access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead);
    lid = Lid(ctx->query_port(1)->port.lid);
  }

  uint64_t addr(size_t offset) const { return reinterpret_cast<uint64_t>(buffer.data()) + offset; }

  // An RC QP on its own CQ, connected to `peer` (timeout and retry count as given).
  rc::Qp* connect(Peer& peer, Cq*& cq, uint8_t timeout, uint8_t retry_cnt) {
    cq = *ctx->create_cq(1024, nullptr, nullptr);
    QpInitAttr init;
    init.qp_type = QpType::kRc;
    init.cap = {256, 16, 1, 1, 0};
    auto q = ctx->create_qp(pd, cq, cq, nullptr, init, nullptr);
    EXPECT_TRUE(q.ok());
    if (!q.ok()) return nullptr;
    rc::Qp* qp = *q;
    EXPECT_TRUE(peer.connect(lid, qp->qpn())) << "the peer did not connect";
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qp_access_flags = access::kRemoteWrite | access::kRemoteRead;
    EXPECT_TRUE(ctx->modify_qp(qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
    at = {};
    at.qp_state = QpState::kRtr;
    at.path_mtu = Mtu::k2048;
    at.dest_qp_num = Qpn(peer.qpn);
    at.rq_psn = Psn(0);
    at.ah_attr.dlid = peer.lid;
    at.ah_attr.port_num = 1;
    at.max_dest_rd_atomic = 16;
    at.min_rnr_timer = 1;
    EXPECT_TRUE(ctx->modify_qp(qp, at, attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                                           attr::kMaxDestRdAtomic | attr::kMinRnrTimer)
                    .ok());
    at = {};
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0);
    at.timeout = timeout;
    at.retry_cnt = retry_cnt;
    at.rnr_retry = 7;
    at.max_rd_atomic = 16;
    EXPECT_TRUE(ctx->modify_qp(qp, at, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt |
                                           attr::kRnrRetry | attr::kMaxQpRdAtomic)
                    .ok());
    return qp;
  }

  Status post(rc::Qp* qp, WrOpcode op, size_t offset, uint32_t len, uint64_t remote, RKey rkey, uint64_t wr_id) {
    const Sge s{addr(offset), len, mr->lkey};
    const SendWr wr = one_sided(op, s, remote, rkey, wr_id);
    size_t bad = 0;
    return ctx->post_send(qp, std::span<const SendWr>(&wr, 1), &bad);
  }

  // Polls until a completion arrives (an empty poll runs the transport); safety limit 20 s.
  std::optional<WorkCompletion> next(Cq* cq) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    WorkCompletion wc[1];
    while (std::chrono::steady_clock::now() < limit) {
      if (ctx->poll_cq(cq, wc) == 1) return wc[0];
    }
    return std::nullopt;
  }

  // 1 MiB of a fresh pattern written to the bystander and read back into another place.
  void round_trip(rc::Qp* qp, Cq* cq, const Peer& peer, uint32_t seed) {
    constexpr uint32_t kLen = 1 << 20;
    fill_pattern(buffer, 0, kLen, seed);
    std::fill(buffer.begin() + kLen, buffer.begin() + 2 * kLen, 0);
    ASSERT_TRUE(post(qp, WrOpcode::kRdmaWrite, 0, kLen, peer.addr, peer.rkey, 1).ok());
    ASSERT_TRUE(post(qp, WrOpcode::kRdmaRead, kLen, kLen, peer.addr, peer.rkey, 2).ok());
    for (uint64_t id : {1u, 2u}) {
      auto wc = next(cq);
      ASSERT_TRUE(wc.has_value());
      EXPECT_EQ(wc->status, WcStatus::kSuccess);
      EXPECT_EQ(wc->wr_id, id);
    }
    EXPECT_TRUE(std::equal(buffer.begin(), buffer.begin() + kLen, buffer.begin() + kLen)) << "seed " << seed;
  }

  SoftibdProcess daemon;
  std::unique_ptr<provider::Context> ctx;
  Pd* pd = nullptr;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(16 << 20);
  const Mr* mr = nullptr;
  Lid lid{};
};

TEST_F(KillTest, TheSurvivorRetriesOutWithinItsTimeoutOtherQpsGoOnAndNothingLeaks) {
  Peer bystander(daemon.socket(), "host-b");
  ASSERT_TRUE(bystander.started());
  Cq* cq_b = nullptr;
  rc::Qp* qp_b = connect(bystander, cq_b, 14, 7);
  ASSERT_NE(qp_b, nullptr);
  round_trip(qp_b, cq_b, bystander, 1);
  if (HasFatalFailure()) return;

  // What there is before the victim comes.
  const size_t daemon_fds = count_fds(daemon.pid());
  const size_t my_fds = count_fds(::getpid());
  const size_t my_maps = count_memfd_mappings();

  constexpr uint8_t kTimeout = 12;  // 4.096 us * 2^12 = 16.8 ms
  constexpr uint8_t kRetryCnt = 3;
  const auto period = std::chrono::nanoseconds(4096ull << kTimeout);
  const auto bound = period * (kRetryCnt + 1) + std::chrono::seconds(1);  // + scheduling slack

  std::chrono::steady_clock::time_point killed_at;
  {
    Peer victim(daemon.socket(), "host-b");
    ASSERT_TRUE(victim.started());
    Cq* cq_v = nullptr;
    rc::Qp* qp_v = connect(victim, cq_v, kTimeout, kRetryCnt);
    ASSERT_NE(qp_v, nullptr);
    EXPECT_GT(count_fds(daemon.pid()), daemon_fds) << "the victim's endpoint is softibd's";

    // Stream 256 KiB writes, 16 in flight; the victim dies after 40 of them completed.
    constexpr uint32_t kChunk = 256 << 10;
    constexpr uint64_t kWindow = 16, kKillAfter = 40, kTotal = 200;
    uint64_t posted = 0, completed = 0, ok = 0, retry_exc = 0, flushed = 0;
    std::chrono::steady_clock::time_point error_at;
    while (completed < posted || posted == 0) {
      while (posted < kTotal && posted - completed < kWindow) {
        const Status st = post(qp_v, WrOpcode::kRdmaWrite, (posted % 16) * kChunk, kChunk,
                               victim.addr + (posted % 16) * kChunk, victim.rkey, posted);
        ASSERT_TRUE(st.ok()) << st.to_string();
        ++posted;
      }
      auto wc = next(cq_v);
      ASSERT_TRUE(wc.has_value()) << "no completion: " << completed << " of " << posted;
      EXPECT_EQ(wc->wr_id, completed) << "completions in order, each once";
      ++completed;
      if (wc->status == WcStatus::kSuccess) {
        ++ok;
        EXPECT_EQ(retry_exc + flushed, 0u) << "no success after the error";
      } else if (wc->status == WcStatus::kRetryExcErr) {
        ++retry_exc;
        error_at = std::chrono::steady_clock::now();
      } else {
        EXPECT_EQ(wc->status, WcStatus::kWrFlushErr);
        ++flushed;
      }
      if (ok == kKillAfter && killed_at == std::chrono::steady_clock::time_point{}) {
        victim.kill();
        killed_at = std::chrono::steady_clock::now();
      }
    }
    ASSERT_NE(killed_at, std::chrono::steady_clock::time_point{});
    EXPECT_EQ(retry_exc, 1u) << "one work request retries out; the rest are flushed";
    EXPECT_EQ(ok + retry_exc + flushed, posted);
    EXPECT_EQ(posted, kTotal) << "a QP in Error takes work requests and flushes them (as rxe and mlx5)";
    EXPECT_GT(flushed, 0u);
    RecordProperty("error_after_kill_ms",
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(error_at - killed_at).count()));
    EXPECT_LE(error_at - killed_at, bound)
        << "the error came " << std::chrono::duration<double>(error_at - killed_at).count() << " s after the kill";
    QpAttr attr;
    QpInitAttr init;
    ASSERT_TRUE(ctx->query_qp(qp_v, &attr, &init).ok());
    EXPECT_EQ(attr.qp_state, QpState::kError);
    EXPECT_TRUE(ctx->destroy_qp(qp_v).ok());
    EXPECT_TRUE(ctx->destroy_cq(cq_v).ok());
  }

  // The bystander's QP is untouched.
  QpAttr attr;
  QpInitAttr init;
  ASSERT_TRUE(ctx->query_qp(qp_b, &attr, &init).ok());
  EXPECT_EQ(attr.qp_state, QpState::kRts);
  round_trip(qp_b, cq_b, bystander, 2);

  // Nothing left behind: softibd closes the dead endpoint's inbox and doorbell when its
  // session ends; this process unmaps the victim's inbox once the directory says it is dead
  // (the engine's steps and this thread's polls see the directory change).
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  WorkCompletion wc[1];
  while ((count_fds(daemon.pid()) != daemon_fds || count_fds(::getpid()) != my_fds ||
          count_memfd_mappings() != my_maps) &&
         std::chrono::steady_clock::now() < limit) {
    ctx->poll_cq(cq_b, wc);
  }
  EXPECT_EQ(count_fds(daemon.pid()), daemon_fds) << "softibd's descriptors";
  EXPECT_EQ(count_fds(::getpid()), my_fds) << "the survivor's descriptors";
  EXPECT_EQ(count_memfd_mappings(), my_maps) << "the survivor's shared-memory mappings";
  EXPECT_EQ(bystander.finish(), 0);
}

// A sender stopped (SIGSTOP, a debugger) while it writes its part of a shared copy
// (link/README.md, "Shared copies") holds only the transfer it was sending. This process
// receives 1 MiB RDMA READ responses by reference and offers half of each copy to their
// sender; a sender that took an offer and stopped is waited for kHelpWaitBound, and then its
// burst stays in its channel for later while the device goes on with everything else. Each
// cycle stops the sender at a random moment of a stream of READs. While it is stopped, a
// 1 MiB WRITE-and-READ round trip with a bystander must complete, and then we look whether
// the stop caught the sender holding an offer (a channel waits for its copy: it cannot end
// while the sender is stopped). Once it resumes, every READ completes with the sender's
// bytes. The cycles go on until a few stops caught it. (Waiting without a bound, as before,
// hangs the round trip of the first cycle that catches it.)
TEST_F(KillTest, ASenderStoppedInTheMiddleOfASharedCopyHoldsOnlyItsOwnTransfer) {
  const char* cma = std::getenv("SOFTIB_SHM_CMA");
  if (cma == nullptr || std::string(cma) != "1") {
    GTEST_SKIP() << "READ responses go by reference only with SOFTIB_SHM_CMA=1 (VerbsCma.kill_test runs this)";
  }
  Peer bystander(daemon.socket(), "host-b");
  Peer sender(daemon.socket(), "host-b");
  ASSERT_TRUE(bystander.started() && sender.started());
  Cq* cq_b = nullptr;
  Cq* cq_s = nullptr;
  rc::Qp* qp_b = connect(bystander, cq_b, 14, 7);
  rc::Qp* qp_s = connect(sender, cq_s, 14, 7);  // 67 ms, 7 retries: far longer than a stop
  ASSERT_TRUE(qp_b != nullptr && qp_s != nullptr);

  // The sender's 4 MiB: a pattern, written once; READs bring it back into [8, 16) MiB.
  constexpr uint32_t kMiB = 1 << 20;
  constexpr size_t kInto = 8 * kMiB;
  fill_pattern(buffer, kInto, 4 * kMiB, 7);
  for (uint64_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(post(qp_s, WrOpcode::kRdmaWrite, kInto + i * kMiB, kMiB, sender.addr + i * kMiB, sender.rkey, i).ok());
  }
  for (int i = 0; i < 4; ++i) {
    auto wc = next(cq_s);
    ASSERT_TRUE(wc.has_value() && wc->status == WcStatus::kSuccess);
  }
  const std::vector<uint8_t> pattern(buffer.begin() + kInto, buffer.begin() + kInto + 4 * kMiB);

  TestRng rng;  // after which READ to stop the sender (the seed is printed on a failure)
  constexpr uint64_t kCaught = 3, kMaxCycles = 500;
  constexpr uint32_t kReads = 64;  // 64 MiB: a few milliseconds of copying
  uint64_t cycles = 0, caught = 0;
  for (; cycles < kMaxCycles && caught < kCaught; ++cycles) {
    for (uint32_t i = 0; i < kReads; ++i) {
      const size_t into = kInto + (i % 8) * kMiB;
      ASSERT_TRUE(post(qp_s, WrOpcode::kRdmaRead, into, kMiB, sender.addr + (i % 4) * kMiB, sender.rkey, i).ok());
    }
    // The sender is stopped once a random number of the READs completed, while more are on
    // their way. The application polls meanwhile (its polls run the transport; one that
    // sleeps leaves the engine to its lease first, engine/README.md), so its own thread may
    // be the one waiting for the sender's copy: the stop comes from another thread.
    const uint64_t stop_after = rng.between(0, kReads - 8);
    std::atomic<bool> go{false};
    std::atomic<int> stopped{0};
    std::thread stopper([&] {
      while (!go.load()) std::this_thread::yield();
      stopped = sender.stop() ? 1 : -1;
    });
    uint64_t done = 0;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (WorkCompletion wc[1]; stopped.load() == 0 && std::chrono::steady_clock::now() < limit;) {
      if (done < kReads && ctx->poll_cq(cq_s, wc) == 1) {
        EXPECT_EQ(wc[0].status, WcStatus::kSuccess) << "cycle " << cycles;
        EXPECT_EQ(wc[0].wr_id, done++);
      } else if (done >= kReads) {
        ctx->poll_cq(cq_b, wc);
      }
      if (done >= stop_after) go = true;
    }
    go = true;  // the stopper ends either way
    stopper.join();
    ASSERT_EQ(stopped.load(), 1) << "READ " << done << " of cycle " << cycles;
    round_trip(qp_b, cq_b, bystander, static_cast<uint32_t>(cycles) + 100);
    if (HasFatalFailure()) return;
    {
      std::lock_guard lock(ctx->device().lock());
      caught += ctx->shm_link()->copies_later() > 0;
    }
    ASSERT_TRUE(sender.resume());
    for (uint64_t i = done; i < kReads; ++i) {
      auto wc = next(cq_s);
      ASSERT_TRUE(wc.has_value()) << "READ " << i << " of cycle " << cycles << " did not complete";
      ASSERT_EQ(wc->status, WcStatus::kSuccess) << "cycle " << cycles;
      EXPECT_EQ(wc->wr_id, i);
    }
    for (uint32_t i = 0; i < 8; ++i) {
      ASSERT_TRUE(std::equal(pattern.begin() + (i % 4) * kMiB, pattern.begin() + (i % 4 + 1) * kMiB,
                             buffer.begin() + kInto + i * kMiB))
          << "READ " << i << " of cycle " << cycles;
    }
    std::fill(buffer.begin() + kInto, buffer.end(), 0);
  }
  RecordProperty("cycles", std::to_string(cycles));
  const link::ShmLinkCounters c = ctx->shm_counters();
  EXPECT_GE(caught, kCaught) << "in " << cycles << " cycles only " << caught
                             << " stops caught the sender holding an offer; parts offered " << c.helps_offered
                             << ", taken " << c.helps_taken << ", withdrawn " << c.helps_withdrawn << ", later "
                             << c.helps_later;
  EXPECT_GE(c.helps_later, caught);
  EXPECT_EQ(c.helps_failed, 0u);
  EXPECT_EQ(bystander.finish(), 0);
  EXPECT_EQ(sender.finish(), 0);
}

// A test or a benchmark killed before its destructors run (SIGKILL here; SIGPIPE when a
// benchmark's reader goes away) takes its private softibd with it (PR_SET_PDEATHSIG). Before,
// the daemon stayed, with its fabric's directories, until someone killed it by hand.
TEST(SoftibdProcessTest, ADaemonDiesWithTheProcessThatStartedIt) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t starter = ::fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    ::close(report[0]);
    SoftibdProcess daemon;
    const pid_t pid = daemon.ready() ? daemon.pid() : 0;
    char dir[256] = {};
    std::snprintf(dir, sizeof dir, "%s", daemon.dir().c_str());
    if (::write(report[1], &pid, sizeof pid) != sizeof pid || ::write(report[1], dir, sizeof dir) != sizeof dir) ::_exit(3);
    ::raise(SIGKILL);  // no destructor runs
    ::_exit(4);
  }
  ::close(report[1]);
  pid_t daemon_pid = 0;
  char dir[256] = {};
  const bool got = ::read(report[0], &daemon_pid, sizeof daemon_pid) == sizeof daemon_pid &&
                   ::read(report[0], dir, sizeof dir) == sizeof dir;
  ::close(report[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(starter, &status, 0), starter);
  ASSERT_TRUE(got) << "the starter reported no daemon";
  ASSERT_GT(daemon_pid, 0) << "softibd did not come up";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  const bool gone = wait_for_exit(daemon_pid, std::chrono::seconds(10));
  if (!gone) ::kill(daemon_pid, SIGKILL);  // leave nothing behind either way
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  EXPECT_TRUE(gone) << "softibd " << daemon_pid << " outlived the process that started it";
}

}  // namespace
}  // namespace softib::testing
