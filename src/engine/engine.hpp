// Engine: the progress thread of one rc::Device in a process (brief §3: "each process runs a
// small engine ... so one-sided operations complete without the target application calling
// into the library").
//
// It takes frames from links — the shared-memory link's inbox (polled in place) and frames
// handed over by deliver() (the in-process loopback hub) — and runs the device's receive and
// progress steps under the device lock. Polling is adaptive, because waking a sleeping thread
// costs tens of microseconds on these machines: after the last useful step the thread spins
// for `spin` (catching the next packet of a conversation at once), then sleeps on its doorbell
// (an eventfd) until a frame, a post or the device's next timer. An idle engine makes no system
// calls and uses no CPU.
//
// Application threads do the work themselves when they can: a post or a poll runs a step
// inline (try_progress) when the device lock is free, and a polling thread takes the inbox's
// lease (link/shm_inbox.hpp), which keeps the engine asleep and the senders quiet while the
// application drains the inbox on its own. So a ping-pong between two polling processes makes
// no system call and wakes no thread, and the engine costs nothing while they poll. A poller
// that idles gives its CPU up now and then (IdleYield, spin.hpp), so that two pollers pinned
// to one CPU take turns instead of each keeping it for the scheduler's slice.
//
// Thread: deliver(), kick(), try_progress(), poll_inline() from any thread; the rest from the
// owner.
#pragma once

#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/options.hpp"
#include "engine/spin.hpp"
#include "link/doorbell.hpp"
#include "link/shm_link.hpp"
#include "rc/device.hpp"

namespace softib::engine {

struct EngineCounters {
  std::atomic<uint64_t> steps{0};     // device steps that did something
  std::atomic<uint64_t> sleeps{0};    // times the thread went to sleep (notified: a test may wait on it)
  std::atomic<uint64_t> wakeups{0};   // doorbell rings sent by kick()/deliver()
  std::atomic<uint64_t> inline_steps{0};  // steps run by application threads
  std::atomic<uint64_t> engine_steps{0};  // steps by the engine's thread that did something
  std::atomic<uint64_t> busy_posts{0};    // posts that found the device busy and kicked
  std::atomic<uint64_t> rung_wakes{0};    // sleeps ended by the doorbell (a ring or kick), not a timeout
  std::atomic<uint64_t> busy_yields{0};   // polls that found the device busy ~10 us and yielded
  std::atomic<uint64_t> idle_yields{0};   // idle polls and engine spins that gave the CPU up (IdleYield)
  std::atomic<uint64_t> idle_yields_ran_other{0};  // of those, the ones in which another thread ran
  std::atomic<uint64_t> cpu_ns{0};        // the engine thread's CPU time, stored when it ends
  std::atomic<uint64_t> spin_peak_ns{0};  // the longest it polled before a sleep (AdaptiveSpin)
};

class Engine {
 public:
  // `shm` (optional) is the device's shared-memory link: its inbox is polled, its doorbell is
  // the engine's (the link's peers ring it). It must outlive the engine.
  static Result<std::unique_ptr<Engine>> create(rc::Device& device, EngineOptions options = {},
                                                link::ShmLink* shm = nullptr);
  // The same with a doorbell made earlier (softibd needs it before the device exists).
  static std::unique_ptr<Engine> create(rc::Device& device, EngineOptions options, link::ShmLink* shm,
                                        link::Doorbell doorbell);
  ~Engine();  // stops the thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void start();
  void stop();

  // The eventfd peers ring to wake this engine (softibd hands it to them with the inbox).
  const link::Doorbell& doorbell() const { return doorbell_; }

  // A frame for this engine's device (copied; processed on the engine thread).
  void deliver(const rc::FrameAddr& from, wire::ByteSpan transport);
  // Work was posted: make sure a step runs soon.
  void kick();
  // The application made a QP: peers will soon send to this device. From now on the engine
  // thread, when idle, keeps the ring the next new sender claims mapped
  // (link::ShmLink::warm_spare_channel), so that a connection's first frame does not wait
  // ~0.7 ms for its pages. A process that only opens the device (ibv_devinfo) maps none.
  void expect_traffic();
  // What a step is for. An application thread's step does what its caller waits for first
  // and leaves the rest to the next step (the latency of a ping-pong between two polling
  // processes is mostly cache lines crossing between the cores, so the order matters):
  //   kEngine  the engine thread: every waiting frame, then progress, ACKs sent at once
  //   kPoll    a poll of an empty CQ: frames until that CQ holds what the caller asked for,
  //            then progress; ACKs held one step (rc::Device::AckPolicy), so an answer the
  //            application posts next goes out ahead of them
  //   kPost    a post: progress first (the new work, then the ACKs held from the last step),
  //            then the waiting frames, then progress again (their ACKs go at once)
  enum class StepKind : uint8_t { kEngine, kPoll, kPost };
  // What a kPoll step works for: frames until `cq` holds `want` completions; with `direct`
  // (a slot of the poller's array), the step's first completion to `cq` goes straight there
  // when the CQ holds nothing older (verbs::Cq::offer_direct, made and withdrawn under the
  // device lock), and `taken` says whether it did (0 or 1).
  struct PollFor {
    verbs::Cq* cq = nullptr;
    size_t want = 0;
    verbs::WorkCompletion* direct = nullptr;
    size_t taken = 0;
  };
  // One device step now, if nobody else is running one. Returns whether it ran.
  // `posted`: a QP this thread just posted to, made active under the lock before the step
  // (rc::Device::activate: another thread's step may have dropped it before the new WQE).
  bool try_progress(StepKind kind = StepKind::kEngine, PollFor* poll = nullptr, rc::Qp* posted = nullptr);
  // An application thread polls `cq` for up to `want` completions and found it empty: it
  // takes the inbox lease so the engine stays asleep, then runs a kPoll step if it can.
  // Returns how many completions the step wrote to `direct` (PollFor): 0 or 1.
  size_t poll_inline(verbs::Cq* cq = nullptr, size_t want = 0, verbs::WorkCompletion* direct = nullptr);
  // An application thread posted work to `posted`: the same lease (the thread is busy in the
  // library), and a kPost step now if the device is free (the lowest latency). If it is not,
  // the QP is queued for the holder's walk or the next step (rc::Device::queue_posted) and the
  // engine kicked (counted in busy_posts).
  void post_inline(rc::Qp& posted);
  // An application thread posts `wrs` to `qp` (ibv_post_send) under the device lock, if it
  // can take it, and runs the post's kPost step under the same lock, with post_inline's lease.
  // One WR that the device can send at once (rc::Device::post_send_now) goes out as a frame
  // first and its WQE is written after; any other post is rc::Device::post_send's. Returns the
  // post's status (*bad as rc::Device::post_send sets it); nullopt when the lock is taken:
  // the caller posts and calls post_inline.
  std::optional<Status> post(rc::Qp& qp, std::span<const verbs::SendWr> wrs, size_t* bad);
  // An application thread is active in the library (a poll that found completions): keeps
  // the lease. Cheap: the lease's shared line is written at most every few microseconds.
  // Returns the time-stamp ticks it read.
  uint64_t touch();
  // touch() at `t`, a reading of the time-stamp counter taken moments ago (a step's end
  // stamp: one reading is ~11 ns here, and a post or a poll would otherwise take two).
  void touch_at(uint64_t t);
  // The same, every kTouchEvery calls: for a poll that found completions, whose caller
  // takes them at once (the time-stamp counter costs ~11 ns a reading here). A thread that
  // keeps finding completions refreshes the lease every few microseconds at most; one that
  // polls rarely lets it lapse, and the engine takes over, as it should.
  // Inline: a poll that found completions and a busy step's end call it, each time.
  // Relaxed load and store, not an atomic increment: threads racing here only make a
  // refresh a little earlier or later.
  void touch_sometimes() {
    const uint32_t n = touches_.load(std::memory_order_relaxed) + 1;
    touches_.store(n, std::memory_order_relaxed);
    if (n % kTouchEvery == 0) touch();
  }
  static constexpr uint32_t kTouchEvery = 16;
  static constexpr uint32_t kIdlePollsPerTick = 8;
  // An application thread's poll found completions (`away`: it leaves the library with them,
  // and may now spin on memory and read nothing, as perftest's ib_write_lat does) or found
  // none (it polls on). Published in the inbox (ShmInbox::away): a peer waiting on a frame
  // this process left unread rings it after kAwayStallTicks instead of kStallTicks. Writes
  // the shared line only when the value changes.
  void mark_away(bool away) {
    if (away_.load(std::memory_order_relaxed) != away) publish_away(away);
  }
  // An application thread stops polling (it is about to block in get_cq_event, or armed a CQ
  // to wait for its event): the engine takes over at once. No-op when no lease is in force.
  void release_lease();
  // Sends the ACKs an application step held back (rc::Device::AckPolicy), if the device is
  // free. stop() and process exit (for every running engine) call it.
  void flush_held_acks();

  // Runs at the end of every device step, under the device lock, on whichever thread ran the
  // step (the owner's: port changes, async events). Set before start().
  // With `watch` (a generation word, e.g. the shared directory's), only the steps after which
  // the device holds async events or the word moved since the hook last ran call it: a call
  // through std::function costs ~30 instructions, and most steps have nothing for it.
  void set_step_hook(std::function<void()> hook, const std::atomic<uint64_t>* watch = nullptr) {
    hook_ = std::move(hook);
    hook_watch_ = watch;
  }

  // Completion events raised by a step (the engine thread's, or one run inline by
  // try_progress) are queued at once, but their channels' fds are signalled only once the
  // step has let go of the device lock: the caller of the notification sees
  // signals_deferred() (REQUIRES: the device lock), queues the event quietly and calls
  // owe_signal(); the hook then signals after the unlock. Signalled inside the step, the fd
  // woke the application thread there, which on a busy vCPU took the CPU from the step
  // before it had sent the ACK behind the completion, and then found the device lock held
  // for its reply (bench_verbs lat --event: see README).
  bool signals_deferred() const { return defer_signals_; }
  void owe_signal() { signals_owed_.store(true, std::memory_order_relaxed); }
  void set_signal_hook(std::function<void()> hook) { signal_hook_ = std::move(hook); }

  const EngineCounters& counters() const { return counters_; }
  // The CPUs the engine thread may run on now (nullopt: not running). For tests and
  // diagnostics: see keep_off_polling_cpus().
  std::optional<cpu_set_t> thread_cpus();
  // The engine thread's kernel id, once it runs (0 before).
  pid_t thread_id() const { return tid_.load(); }
  rc::Device& device() { return device_; }

 private:
  void publish_away(bool away);
  // Before a sleep: where the woken engine may run. Every CPU it could use at start, less the
  // CPU where its own application last polled (`own_application`: a leased sleep), and less
  // those where the applications of the peers this link sends to poll steadily
  // (ShmLink::for_each_polling_peer_cpu: a lease ending link::kSteadyPollingNs ahead or more,
  // ShmInbox::lease_cpu), as long as one CPU is left; the own application's CPU goes first.
  // Rung by a thread that spins on its CPU (a poller, or a program spinning on memory), the
  // woken engine would be put there: these VMs' kernels take an idle vCPU for a pre-empted
  // one and pass it over, so the engine queued behind the spinner for a scheduler slice or
  // more (ms; ib_write_lat p99.9 2-4 ms, ib_write_bw's first 30 ms) while the other vCPU
  // idled. The affinity is set only when it changes.
  void keep_off_polling_cpus(bool own_application);
  // When no lease of its own is in force at the loop's top: its application's CPU is no
  // longer kept off (it stopped polling: it waits elsewhere, or is done), peers' still are.
  void run_anywhere();
  struct Frame {
    rc::FrameAddr from;
    std::vector<uint8_t> bytes;
  };
  Engine(rc::Device& device, EngineOptions options, link::Doorbell doorbell, link::ShmLink* shm);
  void run();
  // REQUIRES: device lock held. `cq`/`want` (kPoll): stop taking frames once cq holds want.
  // `sent` (kPost): the post's request went out before the step (post()), so the step's
  // first progress is not needed.
  // `took` (kPoll): express_step() took a frame before it.
  bool step(StepKind kind = StepKind::kEngine, const verbs::Cq* cq = nullptr, size_t want = 0, bool sent = false,
            bool took = false);
  // A kPoll step (a poll with a CQ) that takes the frame its poller waits for straight from
  // the link (link::ShmLink::take_express), or false (nothing done): step() then runs.
  // REQUIRES: the device lock, PollFor's offer made.
  bool express_step(const PollFor& poll);
  // The frames an express step takes before it leaves the rest to step() (all channels).
  static constexpr size_t kExpressFrames = 8;
  // What a step does once it has taken frames (`received`), or a step that took none: the
  // ACKs they asked for, held or sent, and what else progress() finds. `answered`: a poll's
  // CQ holds what it wants. Returns whether progress() did something.
  bool progress_after_frames(StepKind kind, bool received, bool answered);
  // The end of every step: the step hook, the counters, the time stamps. Returns `did`.
  bool end_step(StepKind kind, bool did);
  // try_progress() and post() once they hold the lock: the step (and PollFor's offer
  // around it), then the unlock and the signals owed.
  void locked_step(std::unique_lock<SpinLock>& lock, StepKind kind, PollFor* poll, bool sent);
  // After a step's unlock: the channel signals it owes (signals_deferred).
  void signal_owed() {
    if (signals_owed_.load(std::memory_order_relaxed) && signals_owed_.exchange(false) && signal_hook_) signal_hook_();
  }
  void wake();
  // The engine thread sleeps until its doorbell rings (then a step follows) or `timeout`
  // (nullptr: none). Returns whether the doorbell ended it.
  bool sleep_on_doorbell(const timespec* timeout);
  void pace_sleeper_barrier();  // engine thread, before each sleep
  void touch_after_step(bool ran);  // the lease after a step this thread tried (touch_at)
  bool work_waiting() const {
    return pending_.load() || has_inbox_.load() || (shm_ != nullptr && shm_->ready());
  }
  // poll_inline() after a step drained a stream (streaming_): true while the poll should
  // leave the inbox alone (kStreamQuietTicks after that step); then clears streaming_.
  bool stream_quiet();
  // poll_inline() found the device lock taken: after ~10 us of that (kBusyYieldTicks), give
  // this CPU up once, to the holder if it waits for it.
  void device_busy();
  // poll_inline() after an idle step that took nothing: give the CPU up when this thread has
  // idled long enough (IdleYield), so a peer sharing the CPU runs.
  void yield_if_idle();
  // An empty poll: on one in kIdlePollsPerTick, the ticks since the last step ended (the
  // counter read, the lease refreshed); 0 on the others (as if a step had just ended: no
  // caller acts on it). Not an optional: its flag, stored as a byte and read back with the
  // value as a word, made every empty poll wait for the store (perf: 16 % of a ping-pong's
  // samples on that load).
  uint64_t idle_ticks_since_step() {
    // Relaxed, as in touch_sometimes(). Inline, with the rest of an empty poll.
    const uint32_t n = idle_polls_.load(std::memory_order_relaxed) + 1;
    idle_polls_.store(n, std::memory_order_relaxed);
    return n % kIdlePollsPerTick != 0 ? 0 : idle_ticks_now();
  }
  uint64_t idle_ticks_now();  // the counter read and the lease refreshed

  rc::Device& device_;
  EngineOptions options_;
  link::Doorbell doorbell_;
  link::ShmLink* shm_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<pid_t> tid_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> rung_{false};  // the doorbell was rung since the engine went to sleep
  std::atomic<bool> pending_{false};
  std::atomic<bool> expect_traffic_{false};  // expect_traffic(): warm the inbox's spare channel when idle
  std::atomic<bool> has_inbox_{false};
  // While asleep: when the engine will wake by itself (steady-clock ns; max: never). A step an
  // application thread runs may arm an earlier timer (a retransmission), which must wake it.
  std::atomic<int64_t> sleep_until_ns_{INT64_MAX};
  // The engine sleeps because an application thread holds the lease: that thread's steps run
  // the timers, and the engine wakes when the lease ends, so no timer needs to wake it.
  std::atomic<bool> leased_sleep_{false};
  // When poll_inline last refreshed the lease (time-stamp counter ticks; see poll_inline).
  std::atomic<uint64_t> lease_tsc_{0};
  // Since when (monotonic ns) application threads have held the lease without a break.
  std::atomic<uint64_t> polling_since_ns_{0};
  // When the last step ended (ticks), and the last step that did something; kUnstamped: a
  // busy step of an application thread, which reads no clock (step()), so just now as far as
  // the next reading knows (stamped() puts that reading in).
  static constexpr uint64_t kUnstamped = UINT64_MAX;
  static uint64_t stamped(std::atomic<uint64_t>& stamp, uint64_t now);
  std::atomic<uint64_t> last_step_ticks_{0};
  std::atomic<uint64_t> last_busy_ticks_{0};
  std::atomic<uint64_t> last_stall_check_{0};  // when a step last ran ShmLink::wake_stalled
  std::atomic<uint64_t> last_away_check_{0};   // when a step last ran ShmLink::wake_away
  // What mark_away last published: a poll reads this line, not the inbox's shared one.
  std::atomic<bool> away_{false};
  std::atomic<bool> rang_away_{false};  // an application step rang an away peer: poll_inline yields
  // The CPU an application thread last refreshed the lease on (-1: none yet), and, on the
  // engine thread only, the CPUs it may run on at start and those it last kept to.
  std::atomic<int> app_cpu_{-1};
  std::optional<cpu_set_t> allowed_cpus_;
  cpu_set_t cpus_{};            // the affinity keep_off_polling_cpus() last set
  bool off_own_cpu_ = false;    // it keeps off its own application's CPU (until run_anywhere)
  std::atomic<uint32_t> touches_{0};          // touch_sometimes() calls
  std::atomic<uint32_t> idle_polls_{0};       // poll_inline() calls that found nothing waiting
  // The last step emptied the inbox after a stream of packed records (its caller's thread
  // sets it; poll_inline clears it).
  std::atomic<bool> streaming_{false};
  // Engine thread: sleeps in the current window of pace_sleeper_barrier().
  uint32_t sleeps_in_window_ = 0;
  std::chrono::steady_clock::time_point window_start_{};
  std::mutex inbox_mu_;
  std::vector<Frame> inbox_;
  std::vector<Frame> work_;
  std::vector<std::vector<uint8_t>> spare_;
  EngineCounters counters_;
  std::function<void()> hook_;
  const std::atomic<uint64_t>* hook_watch_ = nullptr;
  bool defer_signals_ = false;  // under the device lock: a step runs (signals_deferred)
  std::atomic<bool> signals_owed_{false};
  std::function<void()> signal_hook_;
  uint64_t hook_seen_ = UINT64_MAX;  // hook_watch_'s value when the hook last ran (step())
};

}  // namespace softib::engine
