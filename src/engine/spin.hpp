// AdaptiveSpin: how long an idle engine polls before it sleeps, learned from its sleeps (as
// KVM's halt polling learns how long a halted vCPU polls).
//
// Waking a sleeping thread costs ~25 us on these machines, so an engine rung soon after it
// fell asleep would have done better to poll on. That is the pattern of a peer that asks
// for work at short, regular intervals the engine alone serves: an RDMA READ responder
// whose bursts go by reference answers each request at once, then idles while the
// requester pulls the 1 MiB (~70-120 us) and asks for the next one. With a fixed 50 us spin
// it slept and was rung for every READ, and the requester paid a doorbell each time
// (eventfd_write 11 % of its samples): 8.1-8.2 GB/s; with 200 us, 12.9-15.0.
//
// The rule, after each sleep the engine's own timers did not cut short: idle (from the last
// step that did something to the wake) less than `max` and ended by a ring -> double the
// spin, up to `max`; idle `max` or more -> back to `base`. So an engine that is rung at short
// intervals polls through them, and one left alone falls back to `base` at its first long
// sleep: an idle engine still sleeps after `base` and costs no CPU. What it costs: a peer
// that rings at intervals just under `max` keeps the engine polling, a core's worth, while
// that lasts (a benchmark's stream; on hardware the HCA does that work).
//
// Thread: the engine's own.
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/clock.hpp"

namespace softib::engine {

class AdaptiveSpin {
 public:
  AdaptiveSpin(Duration base, Duration max) : base_(base), max_(std::max(base, max)), spin_(base), peak_(base) {}

  Duration now() const { return spin_; }
  Duration peak() const { return peak_; }  // the longest spin so far

  // After a sleep: `idle`, from the last useful step to the wake; `rung`, whether the
  // doorbell ended it (a timeout did not).
  void after_sleep(Duration idle, bool rung) {
    if (idle >= max_) {
      spin_ = base_;
    } else if (rung) {
      spin_ = std::min(max_, spin_ * 2);
      peak_ = std::max(peak_, spin_);
    }
  }

 private:
  Duration base_;
  Duration max_;
  Duration spin_;
  Duration peak_;
};

// IdleYield: when a thread that polls and finds nothing gives its CPU up (sched_yield), so
// that a peer sharing that CPU can run. Both sides of a ping-pong poll: pinned to one CPU (a
// one-CPU CI runner, two processes on a busy machine, valgrind's one thread at a time), each
// kept the CPU for the scheduler's whole slice, and a half round trip took the slice, ~4 ms
// here (UCX's tag_lat over posix the same). A yield with nobody else to run costs ~1 us and
// gives nothing up, so the threshold learns: a yield that came back late (another thread ran
// meanwhile: the CPU is shared) halves the idle time before the next one, down to `min`; one
// that came back at once doubles it, up to `max`. A thread alone on its CPU so yields at most
// once every `max` of idling, and never while messages keep coming sooner than that.
//
// In ticks (base/clock.hpp cycle_ticks). Thread: one per polling thread (thread_local).
class IdleYield {
 public:
  IdleYield(uint64_t min_ticks, uint64_t max_ticks, uint64_t ran_other_ticks)
      : min_(min_ticks), max_(std::max(min_ticks, max_ticks)), ran_other_(ran_other_ticks), threshold_(max_) {}

  // Whether to yield now: idle since `idle_since` (the last useful step) for the threshold at
  // least, and the threshold since the last yield.
  bool due(uint64_t idle_since, uint64_t now) const {
    return ticks_since(idle_since, now) >= threshold_ && ticks_since(last_, now) >= threshold_;
  }
  // After a yield that began at `before` and returned at `after`. True when another thread
  // ran meanwhile (it came back `ran_other` or more later).
  bool yielded(uint64_t before, uint64_t after) {
    last_ = after;
    const bool ran_other = ticks_since(before, after) >= ran_other_;
    threshold_ = ran_other ? std::max(min_, threshold_ / 2) : std::min(max_, threshold_ * 2);
    return ran_other;
  }
  uint64_t threshold() const { return threshold_; }

 private:
  uint64_t min_;
  uint64_t max_;
  uint64_t ran_other_;
  uint64_t threshold_;
  uint64_t last_ = 0;
};

}  // namespace softib::engine
