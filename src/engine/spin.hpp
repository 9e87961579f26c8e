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

}  // namespace softib::engine
