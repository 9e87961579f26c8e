// Two devices in one process, each with its engine thread, joined by a LoopbackHub: real
// threads and real time. One-sided operations complete with no help from the target's
// application, two-sided ones ping-pong between two application threads, and engines go to
// sleep when there is nothing to do. Waits are for conditions (with a generous safety limit),
// never sleeps.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "base/clock.hpp"
#include "base/process.hpp"
#include "engine/engine.hpp"
#include "link/loopback.hpp"
#include "support/rc_connect.hpp"
#include "verbs/caps.hpp"

namespace softib::engine {
namespace {

using namespace softib::verbs;

struct Host {
  Host(link::LoopbackHub& hub, uint16_t lid, EngineOptions options = {})
      : device(default_caps(), test::port_with_lid(Lid(lid)), hub.new_sink(), SteadyClock::instance()), buffer(1 << 20) {
    engine = Engine::create(device, options).value();
    hub.attach(Lid(lid), 0, [this](const rc::FrameAddr& f, wire::ByteSpan b) { engine->deliver(f, b); });
    std::lock_guard lock(device.lock());
    pd = device.alloc_pd();
    cq = *device.create_cq(1024, nullptr);
    mr = *device.mrs().reg(pd, buffer.data(), buffer.size(), reinterpret_cast<uint64_t>(buffer.data()),
                           access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead);
    QpInitAttr init;
    init.cap = {256, 256, 1, 1, 64};
    qp = *device.create_qp(pd, cq, cq, nullptr, init, nullptr);
  }
  void connect(const Host& peer, uint16_t dlid) {
    std::lock_guard lock(device.lock());
    test::RcPath path{peer.qp->qpn(), Lid(dlid)};
    path.access = access::kRemoteWrite | access::kRemoteRead;
    const Status st = test::connect_rc(device, qp, path);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  void post(const SendWr& wr) {
    size_t bad;
    ASSERT_TRUE(device.post_send(qp, {&wr, 1}, &bad).ok());
    engine->kick();
  }
  void post_recv(uint64_t offset, uint32_t len) {
    Sge s{reinterpret_cast<uint64_t>(buffer.data()) + offset, len, mr->lkey};
    RecvWr wr{offset, {&s, 1}};
    size_t bad;
    ASSERT_TRUE(device.post_recv(qp, {&wr, 1}, &bad).ok());
  }
  // Polls until a completion arrives (the engine thread produces it). Safety limit 20 s.
  WorkCompletion wait_one() {
    WorkCompletion wc{};
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (cq->poll({&wc, 1}) == 0) {
      if (std::chrono::steady_clock::now() > limit) {
        ADD_FAILURE() << "no completion";
        return wc;
      }
      std::this_thread::yield();
    }
    return wc;
  }

  rc::Device device;
  std::vector<uint8_t> buffer;
  std::unique_ptr<Engine> engine;
  Pd* pd;
  Cq* cq;
  const Mr* mr;
  rc::Qp* qp;
};

class EngineTest : public ::testing::Test {
 protected:
  EngineTest() : a(hub, 1), b(hub, 2) {
    a.connect(b, 2);
    b.connect(a, 1);
    a.engine->start();
    b.engine->start();
  }
  link::LoopbackHub hub;
  Host a;
  Host b;
};

TEST(EngineTicks, AStampFromACpuWhoseCounterRunsAheadCountsAsNoTimeElapsed) {
  // Two vCPUs' time-stamp counters disagree by up to ~2,000 ticks here: a stamp written on
  // one and compared on the other may lie in the future, which is no time at all, not 2^64.
  EXPECT_EQ(ticks_since(10'000, 9'000), 0u);
  EXPECT_EQ(ticks_since(10'000, 10'000), 0u);
  EXPECT_EQ(ticks_since(9'000, 10'000), 1'000u);
  EXPECT_EQ(ticks_since(0, UINT64_MAX), UINT64_MAX);
  EXPECT_EQ(ticks_since(UINT64_MAX, 5), 0u);
}

// The engine's spin (engine/spin.hpp): rung soon after each sleep, it polls longer, up to
// the cap; one long idle stretch, rung or timed out, puts it back at the base; a timer's
// wake soon after a sleep says nothing about the peers and changes nothing.
TEST(AdaptiveSpin, GrowsWhileRungSoonAfterEachSleepAndFallsBackAfterOneLongIdle) {
  using std::chrono::microseconds;
  AdaptiveSpin spin(microseconds(50), microseconds(200));
  EXPECT_EQ(spin.now(), microseconds(50));
  spin.after_sleep(microseconds(120), true);
  EXPECT_EQ(spin.now(), microseconds(100));
  spin.after_sleep(microseconds(120), false);  // a timer
  EXPECT_EQ(spin.now(), microseconds(100));
  spin.after_sleep(microseconds(150), true);
  EXPECT_EQ(spin.now(), microseconds(200));
  spin.after_sleep(microseconds(199), true);
  EXPECT_EQ(spin.now(), microseconds(200));  // capped
  spin.after_sleep(microseconds(200), true);  // rung, but after a long idle
  EXPECT_EQ(spin.now(), microseconds(50));
  EXPECT_EQ(spin.peak(), microseconds(200));
  spin.after_sleep(microseconds(60), true);
  spin.after_sleep(std::chrono::milliseconds(500), false);  // housekeeping's timeout
  EXPECT_EQ(spin.now(), microseconds(50));
  // A cap under the base is the base: the spin never changes.
  AdaptiveSpin fixed(microseconds(50), microseconds(10));
  fixed.after_sleep(microseconds(5), true);
  EXPECT_EQ(fixed.now(), microseconds(50));
}

// The idle poller's yield (engine/spin.hpp): due once the thread has idled the threshold and
// as long since its last yield; a yield that came back late (another thread ran: the CPU is
// shared) halves the threshold down to the minimum, one that came back at once doubles it up
// to the maximum, where it starts.
TEST(IdleYield, YieldsSoonerWhileItsYieldsLetOthersRunAndBacksOffWhileTheyDoNot) {
  IdleYield y(1'000, 16'000, 500);
  EXPECT_EQ(y.threshold(), 16'000u);
  EXPECT_FALSE(y.due(100'000, 115'999));  // idle 15,999 ticks
  EXPECT_TRUE(y.due(100'000, 116'000));
  EXPECT_TRUE(y.yielded(116'000, 117'000));  // 1,000 ticks away: another thread ran
  EXPECT_EQ(y.threshold(), 8'000u);
  EXPECT_FALSE(y.due(100'000, 124'999));  // idle long enough, but 7,999 since the last yield
  EXPECT_TRUE(y.due(100'000, 125'000));
  for (uint64_t t = 200'000; t < 300'000; t += 10'000) y.yielded(t, t + 600);
  EXPECT_EQ(y.threshold(), 1'000u);  // the floor
  EXPECT_FALSE(y.due(400'000, 400'999));
  EXPECT_TRUE(y.due(400'000, 401'000));
  EXPECT_FALSE(y.yielded(401'000, 401'499));  // back at once: nobody else wanted the CPU
  EXPECT_EQ(y.threshold(), 2'000u);
  for (uint64_t t = 500'000; t < 600'000; t += 10'000) y.yielded(t, t + 10);
  EXPECT_EQ(y.threshold(), 16'000u);  // the cap
  // A time-stamp counter read on another CPU may run behind the stamps (ticks_since): that
  // is no time idle.
  EXPECT_FALSE(y.due(900'000, 800'000));
  // A cap under the floor is the floor.
  IdleYield fixed(4'000, 1'000, 500);
  EXPECT_EQ(fixed.threshold(), 4'000u);
  fixed.yielded(0, 10);
  EXPECT_EQ(fixed.threshold(), 4'000u);
}

TEST_F(EngineTest, OneSidedWriteAndReadNeedNothingFromTheTarget) {
  for (size_t i = 0; i < 100000; ++i) a.buffer[i] = static_cast<uint8_t>(i * 7);
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.send_flags = send_flag::kSignaled;
  Sge s{reinterpret_cast<uint64_t>(a.buffer.data()), 100000, a.mr->lkey};
  wr.sg_list = {&s, 1};
  wr.rdma = {reinterpret_cast<uint64_t>(b.buffer.data()) + 200000, b.mr->rkey};
  a.post(wr);
  EXPECT_EQ(a.wait_one().status, WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(a.buffer.data(), b.buffer.data() + 200000, 100000));

  wr.opcode = WrOpcode::kRdmaRead;
  Sge d{reinterpret_cast<uint64_t>(a.buffer.data()) + 500000, 100000, a.mr->lkey};
  wr.sg_list = {&d, 1};
  a.post(wr);
  EXPECT_EQ(a.wait_one().status, WcStatus::kSuccess);
  EXPECT_EQ(0, std::memcmp(a.buffer.data() + 500000, b.buffer.data() + 200000, 100000));
}

// `rounds` round trips between an application thread on each host: a posts, b answers
// with the value plus one.
void ping_pong(Host& a, Host& b, int rounds) {
  std::thread responder([&] {
    SendWr wr;
    wr.send_flags = send_flag::kSignaled | send_flag::kInline;
    uint32_t v = 0;
    Sge s{reinterpret_cast<uint64_t>(&v), 4, LKey(0)};
    wr.sg_list = {&s, 1};
    for (int i = 0; i < rounds; ++i) {
      b.post_recv(0, 64);
      WorkCompletion wc = b.wait_one();
      if (wc.status != WcStatus::kSuccess || wc.opcode != WcOpcode::kRecv) return;
      std::memcpy(&v, b.buffer.data(), 4);
      ++v;
      b.post(wr);
      if (b.wait_one().status != WcStatus::kSuccess) return;
    }
  });
  SendWr wr;
  wr.send_flags = send_flag::kSignaled | send_flag::kInline;
  uint32_t v = 0;
  Sge s{reinterpret_cast<uint64_t>(&v), 4, LKey(0)};
  wr.sg_list = {&s, 1};
  for (int i = 0; i < rounds; ++i) {
    a.post_recv(0, 64);
    v = static_cast<uint32_t>(i * 2);
    a.post(wr);
    WorkCompletion c1 = a.wait_one();
    WorkCompletion c2 = a.wait_one();
    EXPECT_EQ(c1.status, WcStatus::kSuccess);
    EXPECT_EQ(c2.status, WcStatus::kSuccess);
    uint32_t back;
    std::memcpy(&back, a.buffer.data(), 4);
    EXPECT_EQ(back, static_cast<uint32_t>(i * 2 + 1));
    if (::testing::Test::HasFailure()) break;
  }
  responder.join();
}

TEST_F(EngineTest, PingPongBetweenTwoApplicationThreads) { ping_pong(a, b, 2000); }

// An armed CQ's event raised by a step is owed, not signalled, while the step runs: the
// signal goes out once the step has sent what follows the completion (here the ACK of the
// SEND) and let go of the device lock, so the woken application thread neither pre-empts
// the step before its ACK nor finds the lock held for its reply (provider::Context::notify
// queues the event and owes the signal, as this CQ's callback does).
TEST(EngineSignals, ACompletionsEventIsSignalledAfterItsStepHasSentItsAckAndLetGoOfTheLock) {
  link::LoopbackHub hub;
  Host a(hub, 1), b(hub, 2);
  a.connect(b, 2);
  b.connect(a, 1);
  std::atomic<int> notified{0}, signalled{0};
  std::atomic<bool> deferred_in_step{false}, lock_free_at_signal{false};
  std::atomic<uint64_t> sent_at_signal{0};
  b.cq->on_notify([&](Cq&) {
    deferred_in_step = b.engine->signals_deferred();
    if (b.engine->signals_deferred()) b.engine->owe_signal();
    ++notified;
  });
  b.engine->set_signal_hook([&] {
    if (b.device.lock().try_lock()) {
      lock_free_at_signal = true;
      b.device.lock().unlock();
    }
    sent_at_signal = b.device.counters().tx_packets;  // this thread ran the step
    ++signalled;
  });
  a.engine->start();
  b.engine->start();
  b.post_recv(0, 64);
  b.cq->arm(false);
  uint32_t v = 7;
  Sge s{reinterpret_cast<uint64_t>(&v), 4, LKey(0)};
  SendWr wr;
  wr.send_flags = send_flag::kSignaled | send_flag::kInline;
  wr.sg_list = {&s, 1};
  a.post(wr);
  EXPECT_EQ(a.wait_one().status, WcStatus::kSuccess);  // b's ACK came back
  EXPECT_EQ(b.wait_one().status, WcStatus::kSuccess);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (signalled.load() == 0 && std::chrono::steady_clock::now() < limit) std::this_thread::yield();
  EXPECT_EQ(notified.load(), 1);
  EXPECT_EQ(signalled.load(), 1);
  EXPECT_TRUE(deferred_in_step.load());
  EXPECT_TRUE(lock_free_at_signal.load());
  EXPECT_GE(sent_at_signal.load(), 1u);  // the ACK went out before the signal
}

// The application threads post without the device lock while the engines step (Device::
// post_send queues the QP for the next progress(): its QP goes idle after every round trip,
// and progress() visits only active QPs), beside 300 idle connections on each side.
TEST_F(EngineTest, PingPongBesideIdleQps) {
  for (Host* h : {&a, &b}) {
    std::lock_guard lock(h->device.lock());
    for (int i = 0; i < 300; ++i) {
      QpInitAttr init;
      init.cap = {4, 4, 1, 1, 0};
      rc::Qp* q = *h->device.create_qp(h->pd, h->cq, h->cq, nullptr, init, nullptr);
      test::RcPath path{q->qpn(), h->device.port().lid};  // connected to itself, and idle
      ASSERT_TRUE(test::connect_rc(h->device, q, path).ok());
    }
  }
  ping_pong(a, b, 2000);
  std::lock_guard lock(a.device.lock());
  EXPECT_LE(a.device.active_qps(), 1u);
}

TEST_F(EngineTest, IdleEnginesSleep) {
  SendWr wr;
  wr.opcode = WrOpcode::kRdmaWrite;
  wr.send_flags = send_flag::kSignaled;
  Sge s{reinterpret_cast<uint64_t>(a.buffer.data()), 8, a.mr->lkey};
  wr.sg_list = {&s, 1};
  wr.rdma = {reinterpret_cast<uint64_t>(b.buffer.data()), b.mr->rkey};
  a.post(wr);
  ASSERT_EQ(a.wait_one().status, WcStatus::kSuccess);
  // Once the conversation ends both engines go to sleep (and stay asleep: no timer runs).
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((a.engine->counters().sleeps == 0 || b.engine->counters().sleeps == 0) &&
         std::chrono::steady_clock::now() < limit)
    std::this_thread::yield();
  EXPECT_GT(a.engine->counters().sleeps.load(), 0u);
  EXPECT_GT(b.engine->counters().sleeps.load(), 0u);
  const uint64_t steps = a.engine->counters().steps + b.engine->counters().steps;
  // A kick wakes a sleeping engine (and the post completes).
  a.post(wr);
  EXPECT_EQ(a.wait_one().status, WcStatus::kSuccess);
  EXPECT_GT(a.engine->counters().steps + b.engine->counters().steps, steps);
}

// The engine thread asks for a short scheduler slice, where the kernel takes one.
TEST(EngineSpin, TheEngineThreadRunsWithTheSliceItAskedFor) {
  std::optional<uint64_t> probe;
  std::thread([&probe] {
    if (request_slice(100'000)) probe = thread_slice_ns(0);
  }).join();
  if (probe != 100'000u) GTEST_SKIP() << "this kernel takes no slice requests";
  link::LoopbackHub hub;
  EngineOptions options;
  options.slice = std::chrono::microseconds(150);
  Host a(hub, 1, options);
  a.engine->start();
  const EngineCounters& c = a.engine->counters();
  for (uint64_t s = c.sleeps.load(); s == 0; s = c.sleeps.load()) c.sleeps.wait(s);
  EXPECT_EQ(thread_slice_ns(a.engine->thread_id()), 150'000u);
  a.engine->stop();
}

// SOFTIB_ENGINE_SPIN's value: microseconds of max_spin, or a refusal that changes nothing.
TEST(EngineSpin, TheSpinSettingIsMicrosecondsUpToATenthOfASecond) {
  EngineOptions o;
  EXPECT_TRUE(apply_spin_setting(o, nullptr));
  EXPECT_EQ(o.max_spin, EngineOptions{}.max_spin) << "not set: the default";
  EXPECT_TRUE(apply_spin_setting(o, "300"));
  EXPECT_EQ(o.max_spin, std::chrono::microseconds(300));
  EXPECT_TRUE(apply_spin_setting(o, "0"));
  EXPECT_EQ(o.max_spin, Duration::zero());
  for (const char* bad : {"", "abc", "12x", "-5", "+5", " 5", "100001", "99999999999999999999999"}) {
    EngineOptions b;
    EXPECT_FALSE(apply_spin_setting(b, bad)) << bad;
    EXPECT_EQ(b.max_spin, EngineOptions{}.max_spin) << bad;
  }
  EXPECT_TRUE(apply_spin_setting(o, "100000"));
  EXPECT_EQ(o.max_spin, std::chrono::milliseconds(100));
}

// The engine's own sleeps drive its spin: kicked each time soon after it fell asleep, it
// polls longer before the next sleep (the peak counter shows it); left alone past max_spin,
// it is back at its base, so a kick after that wakes it from a sleep that began `spin` after
// its last step. The cap is generous (100 ms) so that a slow wake-up on a busy machine still
// counts as soon.
TEST(EngineSpin, AnEngineKickedSoonAfterEachSleepPollsLongerBeforeTheNext) {
  link::LoopbackHub hub;
  EngineOptions options;
  options.spin = std::chrono::microseconds(50);
  options.max_spin = std::chrono::milliseconds(100);
  Host a(hub, 1, options);
  a.engine->start();
  const EngineCounters& c = a.engine->counters();
  const auto wait_for_sleep = [&c](uint64_t after) {
    for (uint64_t s = c.sleeps.load(); s <= after; s = c.sleeps.load()) c.sleeps.wait(s);
  };
  wait_for_sleep(0);
  EXPECT_EQ(c.spin_peak_ns.load(), 50'000u) << "the base until a sleep teaches it otherwise";
  for (int i = 0; i < 3; ++i) {
    const uint64_t s = c.sleeps.load();
    a.engine->kick();  // at once: the engine has just gone to sleep
    wait_for_sleep(s);
  }
  EXPECT_EQ(c.spin_peak_ns.load(), 400'000u) << "doubled at each of the three kicks: 100, 200, 400 us";
  a.engine->stop();
}

// An application thread that only polls (its engine stopped, its CQ empty) still runs the
// idle steps that send what a step held back: here the ACK of a SEND it took, without which
// the sender's WR never completes. Empty polls read the clock one time in kIdlePollsPerTick.
TEST_F(EngineTest, AThreadThatOnlyPollsStillSendsWhatAStepHeldBack) {
  a.engine->stop();
  a.post_recv(0, 64);
  SendWr wr;
  wr.send_flags = send_flag::kSignaled | send_flag::kInline;
  uint32_t v = 7;
  Sge s{reinterpret_cast<uint64_t>(&v), 4, LKey(0)};
  wr.sg_list = {&s, 1};
  b.post(wr);
  // a's first polls take the SEND (its ACK held: an application step) ...
  WorkCompletion wc{};
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (a.cq->poll({&wc, 1}) == 0 && std::chrono::steady_clock::now() < limit) a.engine->poll_inline(a.cq, 1);
  ASSERT_EQ(wc.status, WcStatus::kSuccess);
  ASSERT_EQ(wc.opcode, WcOpcode::kRecv);
  // ... and its later empty polls send the ACK: b's SEND completes.
  while (b.cq->poll({&wc, 1}) == 0 && std::chrono::steady_clock::now() < limit) a.engine->poll_inline(a.cq, 1);
  EXPECT_EQ(wc.status, WcStatus::kSuccess);
  EXPECT_EQ(wc.opcode, WcOpcode::kSend);
  // Sent by an idle step, not drawn out by a retransmission (b's timeout: 67 ms).
  std::lock_guard lock(b.device.lock());
  EXPECT_EQ(b.device.counters().timeouts, 0u);
  EXPECT_EQ(b.device.counters().retransmits, 0u);
}

}  // namespace
}  // namespace softib::engine
