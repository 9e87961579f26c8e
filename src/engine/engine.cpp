#include "engine/engine.hpp"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "base/clock.hpp"
#include "base/membarrier.hpp"
#include "base/process.hpp"

namespace softib::engine {

namespace {

// 20,000 ticks: at most 20 us at 1 GHz or more, well inside the lease's refresh margin
// (link::kLeaseMinNs / 4).
constexpr uint64_t kLeaseRefreshTicks = 20'000;
// 2,000 ticks: at most 2 us at 1 GHz.
constexpr uint64_t kIdleStepTicks = 2'000;
// 5,000 ticks (~2 us here): how long a poll leaves the inbox alone after a step drained a
// stream of packed records (ShmLink::drained_a_stream), so the consumer does not chase the
// producer record by record. Chasing, the consumer reads each record as it is published,
// while the producer writes the next one beside it: the producer's stores then stall on
// lines the consumer's core took (the sender's reserve_frame went from 3 % to 10 % of its
// time), and the two settle there, at half the rate, or in the state where the consumer
// lags and takes records in bunches. bench_verbs rate 64 B, 10 interleaved runs each:
// median 13.4 -> 18.7 M msg/s. Of 5,000 and 15,000 ticks, 15,000 was no better (a run of
// 2,000 fell in a slow spell of the machine and decided nothing). A ping-pong sends no
// packed records and never waits here.
constexpr uint64_t kStreamQuietTicks = 5'000;
// 200,000 ticks (~100 us here): how long after its last step that did anything a step looks
// whether a peer left what this link sent unread (ShmLink::wake_stalled), and how often it
// looks again. A peer whose application polls reads a frame within microseconds, one that
// was pre-empted within its time slice: ringing it then only queues one more thread for the
// busy CPUs. At 10 us the 8-byte ping-pong's p999 went 20 -> 24-49 us and its mean up 7 %
// (far vCPUs, its preemptions of ~20 us set the rings off); at 100 us nothing moved. What it
// buys: perftest's ib_write_lat, whose target spins on memory after polling (so holds the
// lease and reads nothing), 0.7 ms typical -> ~106 us (avg 0.97 ms -> 0.11-0.13 ms).
constexpr uint64_t kStallTicks = 200'000;
// 4,000 ticks (~2 us here): the same look, sooner, at the peers whose application last left
// the library with completions in hand (ShmInbox::away, Engine::mark_away) and did not come
// back to poll (ShmLink::wake_away: once until the peer reads or is sent more). perftest's
// ib_write_lat spins on memory there, holding the lease, so its peer's WRITE waited out
// kStallTicks every iteration: ~90 us typical. Now ~9-10 us, mostly the woken engine's
// wake-up; 10,000 ticks gave ~10-11 us. Only for work the peer's engine finishes without its
// application (a WRITE, a READ or atomic request): a polling SEND ping-pong's peer is away
// only when pre-empted between a poll that found its completion and its next poll, and
// ringing it for the SEND it left unread, or for the ACK its poll held, then only woke its
// engine onto the ringer's CPU (1M-iteration bench_verbs lat, 0.4 s of it: each application
// thread pre-empted ~450 times and runnable-but-waiting 8-18 ms, against ~185 times and
// 6-15 ms with those rings gone, /proc's schedstat; the mean did not move). A held ACK's
// ring waits for kStallTicks' look (ShmLink::wake_away_for_acks).
constexpr uint64_t kAwayStallTicks = 4'000;
// 20,000 ticks (~10 us here): how long a polling application thread finds the device lock
// taken, poll after poll, before it gives its CPU up once (device_busy). A step takes a
// microsecond or two; a lock held longer is held by a thread that is not running. On two
// vCPUs that was this engine's thread, woken onto the vCPU where the application then
// spun on the lock it held: the application's polls failed for up to 8 ms, until the
// scheduler's slice ran out (bench_verbs lat 8 B: 1 run in ~16 with a tenth of its time in
// round trips of 10 us and more, three such streaks in it). A yield with no other thread
// to run costs ~1 us.
constexpr uint64_t kBusyYieldTicks = 20'000;
// Polls that found the device busy further apart than this (~1 us) are not one streak.
constexpr uint64_t kBusyStreakGapTicks = 2'000;
// A polling application thread that finds nothing gives its CPU up (IdleYield, spin.hpp) after
// idling between 2,000 ticks (~1 us here; idle steps come kIdleStepTicks apart, and the first
// after a busy one finds no time idle yet: ~2 us) and 100,000 (~50 us), as it learns whether
// it shares the CPU; a yield that returned 10,000 ticks (~5 us) or more after it began let
// another thread run (one with nobody to run takes ~1 us here). One CPU, 8-byte ping-pong:
// 4,000 gave 6.7 us a half round trip, 2,000 5.5. The engine's own spin, timed with the
// steady clock, does the same in nanoseconds.
constexpr uint64_t kIdleYieldMinTicks = 2'000;
constexpr uint64_t kIdleYieldMaxTicks = 100'000;
constexpr uint64_t kYieldRanOtherTicks = 10'000;
constexpr uint64_t kSpinYieldMinNs = 2'000;
constexpr uint64_t kSpinYieldMaxNs = 50'000;
constexpr uint64_t kSpinYieldRanOtherNs = 5'000;

// Gives the CPU up once, counts it, and tells `y` how long that took (`began`, then now()).
template <class Now>
void yield_once(IdleYield& y, uint64_t began, Now now, EngineCounters& counters) {
  std::this_thread::yield();
  counters.idle_yields.fetch_add(1, std::memory_order_relaxed);
  if (y.yielded(began, now())) counters.idle_yields_ran_other.fetch_add(1, std::memory_order_relaxed);
}

// A counter only the device lock's holder writes: a plain load and store, not a locked
// read-modify-write, which would stall until this core's earlier stores to a peer's ring
// had taken their lines from the peer's core.
void bump(std::atomic<uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

// Engines that run, for the exit hook: an application that returns from main without
// closing its device must not leave an ACK held back by its last step (AckPolicy) unsent,
// which its peer would see as a lost message (retries, then RETRY_EXC_ERR).
// Both are never destroyed: the exit hook may run after this library's static destructors
// (at exit, or at dlclose of the drop-in libibverbs).
std::mutex& running_mu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<Engine*>& running() {
  static auto* engines = [] {
    auto* v = new std::vector<Engine*>;
    std::atexit([] {
      std::lock_guard lock(running_mu());
      for (Engine* e : running()) e->flush_held_acks();
    });
    return v;
  }();
  return *engines;
}

}  // namespace

bool apply_spin_setting(EngineOptions& o, const char* value) {
  if (value == nullptr) return true;
  // Digits only: strtoul alone would take leading blanks and a sign.
  if (value[0] < '0' || value[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long us = std::strtoul(value, &end, 10);
  if (*end != '\0' || errno != 0 || us > 100'000) return false;
  o.max_spin = std::chrono::microseconds(us);
  return true;
}

Result<std::unique_ptr<Engine>> Engine::create(rc::Device& device, EngineOptions options, link::ShmLink* shm) {
  auto bell = link::Doorbell::create();
  if (!bell) return bell.error();
  return std::unique_ptr<Engine>(new Engine(device, options, std::move(*bell), shm));
}

std::unique_ptr<Engine> Engine::create(rc::Device& device, EngineOptions options, link::ShmLink* shm,
                                       link::Doorbell doorbell) {
  return std::unique_ptr<Engine>(new Engine(device, options, std::move(doorbell), shm));
}

Engine::Engine(rc::Device& device, EngineOptions options, link::Doorbell doorbell, link::ShmLink* shm)
    : device_(device), options_(options), doorbell_(std::move(doorbell)), shm_(shm) {}

Engine::~Engine() { stop(); }

void Engine::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  {
    std::lock_guard lock(running_mu());
    running().push_back(this);
  }
  // This process's membarrier registrations (base/membarrier.hpp), before the engine's
  // thread: a process with one thread the kernel registers with a fence (~3 us), one with
  // more only after an RCU grace period each (4-36 ms here). Those go to a thread of their
  // own, detached (it ends when they do, and exit() does not wait for it), not into the
  // application's setup or its first send.
  if (!membarrier_registration_started()) {
    if (thread_count() == 1)
      register_membarriers();
    else
      std::thread(register_membarriers).detach();
  }
  thread_ = std::thread([this] { run(); });
}

void Engine::flush_held_acks() {
  // try_lock: a thread that holds the device at exit is mid-step and flushes on its own.
  std::unique_lock lock(device_.lock(), std::try_to_lock);
  if (lock.owns_lock()) device_.progress();
}

void Engine::stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  doorbell_.ring();
  thread_.join();
  {
    std::lock_guard lock(running_mu());
    std::erase(running(), this);
  }
  flush_held_acks();
}

void Engine::pace_sleeper_barrier() {
  // The membarrier before each sleep costs every CPU running a peer ~20 us (an interrupt on
  // these VMs): worth it while sleeps are rare (senders then skip a fence per frame), not
  // when this engine sleeps hundreds of times a second. Decided per 100 ms window.
  constexpr auto kWindow = std::chrono::milliseconds(100);
  constexpr uint32_t kOffAbove = 20;  // sleeps per window: 200 a second
  constexpr uint32_t kOnBelow = 5;
  const auto now = std::chrono::steady_clock::now();
  ++sleeps_in_window_;
  if (now - window_start_ < kWindow) {
    if (sleeps_in_window_ > kOffAbove) shm_->inbox().set_sleeper_barrier(false);
    return;
  }
  if (sleeps_in_window_ < kOnBelow) shm_->inbox().set_sleeper_barrier(true);
  sleeps_in_window_ = 0;
  window_start_ = now;
}

void Engine::wake() {
  // Dekker with run(): we publish pending_ then read sleeping_; the engine publishes
  // sleeping_ then reads pending_ (both seq_cst), so one of us sees the other. One ring per
  // sleep is enough: a busy poster does not make a system call per post while the engine
  // is still waking up.
  if (sleeping_.load() && !rung_.exchange(true)) {
    counters_.wakeups.fetch_add(1, std::memory_order_relaxed);
    doorbell_.ring();
  }
}

void Engine::deliver(const rc::FrameAddr& from, wire::ByteSpan transport) {
  {
    std::lock_guard lock(inbox_mu_);
    std::vector<uint8_t> bytes;
    if (!spare_.empty()) {
      bytes = std::move(spare_.back());
      spare_.pop_back();
    }
    bytes.assign(transport.begin(), transport.end());
    inbox_.push_back(Frame{from, std::move(bytes)});
    has_inbox_.store(true, std::memory_order_relaxed);
  }
  pending_.store(true);
  wake();
}

void Engine::kick() {
  pending_.store(true);
  wake();
}

void Engine::expect_traffic() {
  if (shm_ != nullptr && !expect_traffic_.exchange(true)) kick();
}

bool Engine::step(StepKind kind, const verbs::Cq* cq, size_t want, bool sent, bool took) {
  const auto acks = kind == StepKind::kEngine ? rc::Device::AckPolicy::kSendNow : rc::Device::AckPolicy::kHoldOneStep;
  if (pending_.load(std::memory_order_relaxed)) pending_.store(false);
  // kPost: the new work goes out first; the second progress below is then needed only for
  // what the frames taken in between brought.
  const bool sent_first = kind == StepKind::kPost;
  // Timers wait for a step with nothing to hand back (rc::Device::Timers): not a post's
  // first progress, whose request its peer waits for, nor a poll's that has its answer.
  using Timers = rc::Device::Timers;
  bool did = sent_first && (sent || device_.progress(acks, Timers::kLater));
  bool received = took;  // express_step() took a frame before this step
  if (has_inbox_.load(std::memory_order_relaxed)) {
    {
      std::lock_guard lock(inbox_mu_);
      work_.swap(inbox_);
      has_inbox_.store(false, std::memory_order_relaxed);
    }
    received |= !work_.empty();  // (a frame express_step() took stays received)
    for (Frame& f : work_) device_.receive(f.from, f.bytes);
    if (!work_.empty()) {
      std::lock_guard lock(inbox_mu_);
      for (Frame& f : work_) spare_.push_back(std::move(f.bytes));
    }
    work_.clear();
  }
  if (shm_ != nullptr) {
    if (shm_->poll(device_, link::ShmLink::kPollBudget, cq, want) != 0) received = true;
    streaming_.store(shm_->drained_a_stream(), std::memory_order_relaxed);
  }
  did |= received;
  // A post's step holds no ACK of its own: the requests it answers arrived after its post,
  // which went out first (above). Only a poll's step holds, for the answer that follows it.
  if (!sent_first || received)
    did |= progress_after_frames(kind, received, kind == StepKind::kPoll && cq != nullptr && cq->queued() >= want);
  return end_step(kind, did);
}

[[gnu::always_inline]] inline bool Engine::progress_after_frames(StepKind kind, bool received, bool answered) {
  // A poll's step with its answer that took only fast-path SENDs to one QP: holding that
  // QP's ACK is all progress() would do (rc::Device::hold_acks_without_progress).
  if (answered && device_.hold_acks_without_progress()) return false;
  // A step that took no frame (the engine's, an idle poll's) also sends the ACKs that no
  // packet asked for (AckPolicy::kSendAll): the requester may wait on them after all. A
  // poll's step holds the ACKs its frames asked for, for the answer that follows it.
  using Policy = rc::Device::AckPolicy;
  return device_.progress(!received                  ? Policy::kSendAll
                          : kind == StepKind::kPoll ? Policy::kHoldOneStep
                                                    : Policy::kSendNow,
                          answered ? rc::Device::Timers::kLater : rc::Device::Timers::kRun);
}

// A poll's step in the usual case, shortened: the application waits for the frame at the
// head of the channel the last one came from, and that frame is an ordinary one
// (link::ShmLink::take_express). Taken straight, it spares the step its walk over the
// inbox's channels and the poll's bookkeeping, which are on the way from the frame to the
// poll's return (callgrind, 8-byte ping-pong: bench/instructions.py --mode critical). When
// the frame does not answer the poll (an ACK), the usual step goes on from there. Returns
// false, having done nothing, when the usual step must run instead.
bool Engine::express_step(const PollFor& poll) {
  if (shm_ == nullptr || pending_.load(std::memory_order_relaxed) || has_inbox_.load(std::memory_order_relaxed))
    return false;
  // A frame that does not answer the poll (an ACK; in perftest's loop, every SEND signaled,
  // the peer's next request ahead of the ACK a send-CQ poll waits for) is followed by the
  // channel's next, as the usual poll would take it, up to kExpressFrames in all.
  size_t taken = 0;
  while (taken < kExpressFrames && shm_->take_express(device_)) {
    ++taken;
    if (poll.cq->queued() >= poll.want) {
      progress_after_frames(StepKind::kPoll, true, true);
      end_step(StepKind::kPoll, true);
      return true;
    }
  }
  if (taken == 0) return false;
  step(StepKind::kPoll, poll.cq, poll.want, false, true);
  return true;
}

[[gnu::always_inline]] inline bool Engine::end_step(StepKind kind, bool did) {
  if (hook_) {
    if (hook_watch_ == nullptr) {
      hook_();
    } else if (const uint64_t g = hook_watch_->load(std::memory_order_acquire);
               g != hook_seen_ || device_.has_async_events()) {
      hook_seen_ = g;
      hook_();
    }
  }
  if (did) bump(counters_.steps);
  // Relaxed loads and stores: only the device lock's holder runs a step (poll_inline may
  // resolve an unstamped step's time without it: a heuristic's input, either value will do).
  if (did && kind != StepKind::kEngine) {
    // An application thread's busy step is not timed: reading the time-stamp counter costs
    // ~10 ns here, and this thread's caller waits for what the step did (a poll's
    // completion; a post's next poll). The next reading, on an idle poll or an idle step,
    // stands in for it.
    last_step_ticks_.store(kUnstamped, std::memory_order_relaxed);
    last_busy_ticks_.store(kUnstamped, std::memory_order_relaxed);
    return did;
  }
  const uint64_t now = cycle_ticks();
  last_step_ticks_.store(now, std::memory_order_relaxed);
  if (did) {
    last_busy_ticks_.store(now, std::memory_order_relaxed);
  } else if (shm_ != nullptr) {
    const uint64_t idle = ticks_since(stamped(last_busy_ticks_, now), now);
    if (idle >= kStallTicks && ticks_since(last_stall_check_.load(std::memory_order_relaxed), now) >= kStallTicks) {
      last_stall_check_.store(now, std::memory_order_relaxed);
      shm_->wake_stalled();
      if (shm_->wake_away_for_acks([this] { return device_.next_deadline().has_value(); }) &&
          kind != StepKind::kEngine)
        rang_away_.store(true, std::memory_order_relaxed);
    } else if (idle >= kAwayStallTicks &&
               ticks_since(last_away_check_.load(std::memory_order_relaxed), now) >= kAwayStallTicks) {
      last_away_check_.store(now, std::memory_order_relaxed);
      if (shm_->wake_away() && kind != StepKind::kEngine) rang_away_.store(true, std::memory_order_relaxed);
    }
  }
  return did;
}

void Engine::post_inline(rc::Qp& posted) {
  // The step first (a reply goes out now), the lease after it.
  const bool ran = try_progress(StepKind::kPost, nullptr, &posted);
  touch_after_step(ran);
  if (!ran) {
    // The device's holder, or this engine's next step, sends it.
    device_.queue_posted(posted);
    counters_.busy_posts.fetch_add(1, std::memory_order_relaxed);
    kick();
  }
}

std::optional<Status> Engine::post(rc::Qp& qp, std::span<const verbs::SendWr> wrs, size_t* bad) {
  std::unique_lock lock(device_.lock(), std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  std::optional<Status> s;
  if (wrs.size() == 1) s = device_.post_send_now(qp, wrs[0]);
  const bool sent = s.has_value();
  if (sent) {
    *bad = 1;
  } else {
    // As post_inline: the QP made active under the lock, then its step (if anything was posted).
    s = device_.post_send(&qp, wrs, bad, rc::Device::PostNotice::kCallerActivates);
    if (*bad == 0 && !s->ok()) return s;
    device_.activate(qp);
  }
  locked_step(lock, StepKind::kPost, nullptr, sent);
  touch_after_step(true);
  return s;
}

// try_progress() and locked_step() are inlined into their callers (poll_inline() and the
// posts): two calls fewer on the way from a poll to the frame it waits for (callgrind, 8-byte
// ping-pong: ~15 instructions of the critical path fewer).
[[gnu::always_inline]] inline bool Engine::try_progress(StepKind kind, PollFor* poll, rc::Qp* posted) {
  std::unique_lock lock(device_.lock(), std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (posted != nullptr) device_.activate(*posted);
  locked_step(lock, kind, poll, false);
  return true;
}

[[gnu::always_inline]] inline void Engine::locked_step(std::unique_lock<SpinLock>& lock, StepKind kind, PollFor* poll, bool sent) {
  bump(counters_.inline_steps);
  defer_signals_ = true;
  if (poll != nullptr && poll->direct != nullptr) poll->cq->offer_direct(poll->direct);
  if (poll == nullptr || poll->cq == nullptr || !express_step(*poll))
    step(kind, poll != nullptr ? poll->cq : nullptr, poll != nullptr ? poll->want : 0, sent);
  if (poll != nullptr && poll->direct != nullptr) poll->taken = poll->cq->withdraw_direct();
  defer_signals_ = false;
  if (sleeping_.load() && !leased_sleep_.load(std::memory_order_relaxed)) {
    const auto d = device_.next_deadline();
    if (d && d->time_since_epoch().count() < sleep_until_ns_.load()) wake();
  }
  lock.unlock();
  signal_owed();
}

[[gnu::always_inline]] inline void Engine::touch_after_step(bool ran) {
  // The step's end stamp when this thread ran it: one time-stamp reading fewer. A busy
  // step has none (step()): the lease is then refreshed as a poll that found completions
  // refreshes it.
  if (!ran) {
    touch();
    return;
  }
  const uint64_t t = last_step_ticks_.load(std::memory_order_relaxed);
  if (t == kUnstamped)
    touch_sometimes();
  else
    touch_at(t);
}

uint64_t Engine::stamped(std::atomic<uint64_t>& stamp, uint64_t now) {
  uint64_t t = stamp.load(std::memory_order_relaxed);
  if (t == kUnstamped) {
    stamp.store(now, std::memory_order_relaxed);
    t = now;
  }
  return t;
}

uint64_t Engine::touch() {
  const uint64_t t = cycle_ticks();
  touch_at(t);
  return t;
}

void Engine::touch_at(uint64_t t) {
  if (shm_ != nullptr && ticks_since(lease_tsc_.load(std::memory_order_relaxed), t) >= kLeaseRefreshTicks) {
    lease_tsc_.store(t, std::memory_order_relaxed);
    const int cpu = ::sched_getcpu();
    app_cpu_.store(cpu, std::memory_order_relaxed);
    shm_->inbox().set_lease_cpu(cpu);  // before the lease: a peer that sees the lease sees the CPU too
    shm_->inbox().hold_lease(link::monotonic_ns(), polling_since_ns_);
    // An engine already asleep without a timeout would never see the lease end: wake it so it
    // sleeps until then (Dekker with run(): lease, then sleeping_; sleeping_, then lease).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load() && !leased_sleep_.load(std::memory_order_relaxed)) wake();
  }
}

uint64_t Engine::idle_ticks_now() {
  // The time-stamp counter is read on one empty poll in kIdlePollsPerTick: a reading costs
  // ~10 ns here, as much as the rest of an empty poll, and a frame that lands while a polling
  // loop reads it waits that much longer to be seen.
  const uint64_t t = touch();
  return ticks_since(stamped(last_step_ticks_, t), t);
}

bool Engine::stream_quiet() {
  if (idle_ticks_since_step() < kStreamQuietTicks) return true;
  streaming_.store(false, std::memory_order_relaxed);
  return false;
}

void Engine::device_busy() {
  // Per thread: the application's polling threads each keep their own streak.
  thread_local uint64_t streak_start = 0;
  thread_local uint64_t last_seen = 0;
  const uint64_t now = cycle_ticks();
  if (ticks_since(last_seen, now) > kBusyStreakGapTicks) streak_start = now;  // a new streak
  last_seen = now;
  if (ticks_since(streak_start, now) < kBusyYieldTicks) return;
  streak_start = now;
  counters_.busy_yields.fetch_add(1, std::memory_order_relaxed);
  std::this_thread::yield();
}

size_t Engine::poll_inline(verbs::Cq* cq, size_t want, verbs::WorkCompletion* direct) {
  if (streaming_.load(std::memory_order_relaxed) && stream_quiet()) return 0;
  PollFor poll{cq, want, direct, 0};
  if (work_waiting()) {
    // A frame waits: the step first, the lease (and its time-stamp reading) after it.
    const bool ran = try_progress(StepKind::kPoll, &poll);
    if (!ran) device_busy();
    touch_after_step(ran);
    return poll.taken;
  }
  // Nothing arrived and a step ran moments ago: a polling loop skips the lock and the step.
  // Timers (retransmission, RNR) and held-back output are still looked at every
  // kIdleStepTicks, far finer than any IBA timer.
  if (idle_ticks_since_step() < kIdleStepTicks) return 0;
  const bool ran = try_progress(StepKind::kPoll, &poll);
  if (!ran) device_busy();
  if (rang_away_.load(std::memory_order_relaxed)) {
    // The step rang a peer whose application is away: its engine must run to read what
    // this thread waits for, and both vCPUs may be busy (this poller, and the peer's thread
    // spinning on memory). Give this CPU up once; the woken engine may be queued on it.
    rang_away_.store(false, std::memory_order_relaxed);
    std::this_thread::yield();
  } else if (ran && poll.taken == 0 && options_.idle_yield) {
    yield_if_idle();
  }
  return poll.taken;
}

void Engine::yield_if_idle() {
  // Per thread, as device_busy(): each polling thread learns whether its CPU is shared.
  thread_local IdleYield idle(kIdleYieldMinTicks, kIdleYieldMaxTicks, kYieldRanOtherTicks);
  // The idle step just run stamped its end (step(): a step that did something leaves it
  // unstamped, and then nothing is idle). Relaxed, as the stamps' other readers.
  const uint64_t now = last_step_ticks_.load(std::memory_order_relaxed);
  if (now != kUnstamped && idle.due(stamped(last_busy_ticks_, now), now)) yield_once(idle, now, cycle_ticks, counters_);
}

void Engine::publish_away(bool away) {
  // Relaxed: threads racing here leave either value, and it only decides how soon a waiting
  // peer rings.
  away_.store(away, std::memory_order_relaxed);
  if (shm_ != nullptr) shm_->inbox().set_away(away);
}

void Engine::release_lease() {
  if (shm_ == nullptr) return;
  lease_tsc_.store(0, std::memory_order_relaxed);
  // None in force (never taken, dropped, or run out: the engine woke at its end by itself):
  // nothing to hand over, and a kick would only wake an engine that sleeps as it should.
  if (shm_->inbox().lease_until() <= link::monotonic_ns()) return;
  shm_->inbox().drop_lease();
  // The engine may be asleep until the lease would have run out: wake it to take over.
  kick();
}

bool Engine::sleep_on_doorbell(const timespec* timeout) {
  pollfd p{doorbell_.fd(), POLLIN, 0};
  if (::ppoll(&p, 1, timeout, nullptr) <= 0) return false;
  doorbell_.drain();
  counters_.rung_wakes.fetch_add(1, std::memory_order_relaxed);
  // Rung: one step follows, even if a lease holds (a peer found its frames unread because
  // the application stopped reading, ShmLink::wake_stalled; or a kick). Else the loop's top
  // would sleep the lease out, and that ring would be lost.
  pending_.store(true);
  return true;
}

void Engine::keep_off_polling_cpus(bool own_application) {
  if (!allowed_cpus_ || CPU_COUNT(&*allowed_cpus_) < 2) return;
  cpu_set_t set = *allowed_cpus_;
  const auto keep_off = [&set](int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(static_cast<size_t>(cpu), &set) || CPU_COUNT(&set) < 2) return false;
    CPU_CLR(static_cast<size_t>(cpu), &set);
    return true;
  };
  const bool off_own = own_application && keep_off(app_cpu_.load(std::memory_order_relaxed));
  if (shm_ != nullptr) {
    std::lock_guard lock(device_.lock());  // the peer list changes under it
    shm_->for_each_polling_peer_cpu(link::monotonic_ns(), keep_off);
  }
  off_own_cpu_ = off_own;
  if (CPU_EQUAL(&set, &cpus_)) return;
  if (::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0) cpus_ = set;
}

std::optional<cpu_set_t> Engine::thread_cpus() {
  cpu_set_t set;
  if (!thread_.joinable() || ::pthread_getaffinity_np(thread_.native_handle(), sizeof set, &set) != 0) return std::nullopt;
  return set;
}

void Engine::run_anywhere() {
  if (off_own_cpu_) keep_off_polling_cpus(false);
}

void Engine::run() {
  tid_.store(::gettid());
  // A short slice: once woken, the engine pre-empts a thread spinning on its CPU (README).
  if (options_.slice != Duration::zero()) request_slice(static_cast<uint64_t>(options_.slice.count()));
  {
    cpu_set_t set;
    if (::pthread_getaffinity_np(::pthread_self(), sizeof set, &set) == 0) allowed_cpus_ = cpus_ = set;
  }
  auto idle_since = std::chrono::steady_clock::now();
  auto last_housekeeping = idle_since;
  AdaptiveSpin spin(options_.spin, options_.max_spin);
  IdleYield spin_yield(kSpinYieldMinNs, kSpinYieldMaxNs, kSpinYieldRanOtherNs);
  counters_.spin_peak_ns.store(static_cast<uint64_t>(spin.peak().count()), std::memory_order_relaxed);
  while (!stop_.load()) {
    // An application thread polling holds the lease: it drives the device itself (the inbox,
    // the timers, the requester), so the engine stays asleep instead of fighting it for the
    // device lock, and wakes when the lease runs out.
    // A kick (pending_) is served by a step first, lease or not.
    if (shm_ != nullptr && !pending_.load()) {
      const uint64_t lease = shm_->inbox().lease_until();
      const uint64_t now_ns = link::monotonic_ns();
      if (lease > now_ns) {
        const uint64_t wait_ns = lease - now_ns;
        timespec ts{};
        ts.tv_sec = static_cast<time_t>(wait_ns / 1'000'000'000);
        ts.tv_nsec = static_cast<long>(wait_ns % 1'000'000'000);
        keep_off_polling_cpus(true);
        leased_sleep_.store(true, std::memory_order_relaxed);
        rung_.store(false);
        sleeping_.store(true);
        // Dekker with wake(): a kick that found sleeping_ still false (release_lease's, as it
        // dropped the lease read above) set pending_ first, and is seen here.
        if (!pending_.load() && !stop_.load()) {
          counters_.sleeps.fetch_add(1, std::memory_order_relaxed);
          counters_.sleeps.notify_all();
          sleep_on_doorbell(&ts);
        }
        sleeping_.store(false);
        leased_sleep_.store(false, std::memory_order_relaxed);
        sleep_until_ns_.store(INT64_MAX);
        idle_since = std::chrono::steady_clock::now();
        continue;
      }
      // No application thread polls: this thread does the work now, on any CPU it may use.
      run_anywhere();
    }
    bool did;
    bool blocked;
    {
      std::lock_guard lock(device_.lock());
      defer_signals_ = true;
      did = step();
      defer_signals_ = false;
      if (did) bump(counters_.engine_steps);
      blocked = device_.output_blocked();
    }
    signal_owed();
    const auto now = std::chrono::steady_clock::now();
    if (did || pending_.load()) {
      idle_since = now;
      continue;
    }
    // An application thread polling holds the lease: it drains the inbox itself, so the
    // engine steps aside at once instead of spinning against it.
    const uint64_t lease = shm_ != nullptr ? shm_->inbox().lease_until() : 0;
    const uint64_t now_ns = link::monotonic_ns();
    const bool leased = lease > now_ns;
    if (!leased && now - idle_since < spin.now()) {
      // Spinning: a thread that shares this CPU (a peer's poller, pinned or one CPU) may be
      // the one this engine waits for.
      const auto ns = [](std::chrono::steady_clock::time_point t) {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
      };
      if (options_.idle_yield && spin_yield.due(ns(idle_since), ns(now)))
        yield_once(spin_yield, ns(now), [&] { return ns(std::chrono::steady_clock::now()); }, counters_);
      continue;
    }
    if (blocked) {
      // The link is full (flow control): the peer is draining it; look again soon.
      std::this_thread::yield();
      continue;
    }

    // Idle: the spare channel's pages, off the way of a first frame (expect_traffic). The
    // first spare at once, lease or not (a server waiting for its first client polls); the
    // next ones, once a sender has claimed the spare, below when no application thread polls,
    // else at housekeeping. Made whole at the next idle moment while the new peers' first
    // messages went back and forth, each took ~0.7 ms of a CPU from them (ibv_ud_pingpong
    // -n 5: 650-1250 usec/iter instead of 60-150).
    const bool warm = expect_traffic_.load(std::memory_order_relaxed);
    if (warm && shm_->channels_warmed() == 0) shm_->warm_spare_channel();
    if (shm_ != nullptr && now - last_housekeeping >= options_.housekeeping) {
      if (warm) shm_->warm_spare_channel();
      std::lock_guard lock(device_.lock());
      shm_->housekeeping();
      last_housekeeping = now;
    }
    // Leased (a kick was served above): the loop's top sleeps until the lease ends, without
    // the sleeper's barrier that a sleep with senders ringing needs.
    if (leased) continue;
    // No application thread polls (it waits for events, spins on memory, or is elsewhere):
    // the spare a sender took is replaced now, a piece a pass, each pass stepping first, so a
    // frame that arrives meanwhile waits for one piece (~40 us), not for the ring (~0.7 ms).
    // A polling application's lease keeps this off its CPU time: the spares after the first
    // wait for that (or for housekeeping, above).
    if (warm && shm_->warm_spare_chunk()) continue;

    // Sleep until rung, the next timer, the end of the lease, or housekeeping.
    if (shm_ != nullptr) {
      pace_sleeper_barrier();
      keep_off_polling_cpus(false);
    }
    rung_.store(false);
    sleeping_.store(true);
    const bool heard = shm_ == nullptr || shm_->inbox().sleep_begin();
    // A lease taken since the check above: sleep until it ends instead (the loop's top).
    const bool leased_now = shm_ != nullptr && shm_->inbox().lease_until() > link::monotonic_ns();
    // The next timer, read only now that sleeping_ is set: an application thread's step (a
    // post's inline step) that arms an earlier timer rings a sleeping engine only if it sees
    // sleeping_ set (try_progress). Read with the step above, as it was, a step that ran
    // between that read and the store went unseen: the window was a few microseconds, warming
    // a spare channel (~0.7 ms, above) widened it, and a suite test's 1 ms retransmission
    // timers waited for housekeeping, 500 ms on (RequestsLostOnManyQpsRetryOutWithTheEngines
    // Alone, under ctest -j2). A step running now sees sleeping_; this read waits for none
    // (the lock taken means a step is running, so the loop steps again instead).
    std::optional<TimePoint> deadline;
    bool read = false;
    if (!work_waiting() && !stop_.load() && !leased_now) {
      std::unique_lock lock(device_.lock(), std::try_to_lock);
      if (lock.owns_lock()) {
        deadline = device_.next_deadline();
        read = true;
      }
    }
    if (!read) {
      if (shm_ != nullptr) shm_->inbox().sleep_end();
      sleeping_.store(false);
      continue;
    }
    Duration wait = Duration::max();
    if (deadline) wait = *deadline - SteadyClock::instance().now();
    if (leased) wait = std::min<Duration>(wait, std::chrono::nanoseconds(lease - now_ns));
    if (shm_ != nullptr) wait = std::min<Duration>(wait, options_.housekeeping);
    if (!heard) wait = std::min<Duration>(wait, std::chrono::milliseconds(1));
    timespec ts{};
    const timespec* timeout = nullptr;
    if (wait != Duration::max()) {
      const auto ns = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count());
      ts.tv_sec = ns / 1'000'000'000;
      ts.tv_nsec = ns % 1'000'000'000;
      timeout = &ts;
    }
    counters_.sleeps.fetch_add(1, std::memory_order_relaxed);
    counters_.sleeps.notify_all();
    sleep_until_ns_.store(wait == Duration::max() ? INT64_MAX
                                                  : (SteadyClock::instance().now() + wait).time_since_epoch().count());
    const bool rung = sleep_on_doorbell(timeout);
    if (shm_ != nullptr) shm_->inbox().sleep_end();
    sleeping_.store(false);
    sleep_until_ns_.store(INT64_MAX);
    const auto woke = std::chrono::steady_clock::now();
    spin.after_sleep(woke - idle_since, rung);
    counters_.spin_peak_ns.store(static_cast<uint64_t>(spin.peak().count()), std::memory_order_relaxed);
    idle_since = woke;
  }
  timespec cpu{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
    counters_.cpu_ns.store(static_cast<uint64_t>(cpu.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(cpu.tv_nsec));
}

}  // namespace softib::engine
