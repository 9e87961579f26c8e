// Which stores a channel's large payload copies use, chosen by the throughput each way gets.
//
// A large payload goes into a peer's ring with ordinary stores (the lines stay in this core's
// cache, where the consumer's core fetches them) or with non-temporal ones (straight to
// memory; base/copy.hpp). Which is faster depends on the two vCPUs' placement, and that
// changes within minutes. The consumer's distance (ChannelWriter::consumer_near) tells two
// states apart: far, streaming wins; near, ordinary stores won by a third (1 MiB WRITEs, 36
// against 24 GB/s). But there are two near states. In the second, with the same 40-ns line
// transfer, the sender's ordinary copy into the ring ran at 200-230 cycles a KiB instead of
// ~95 (rdtsc around each copy) while the consumer's copy out stayed at ~63: 64 KiB WRITEs at
// 10.5-12 GB/s, and 14-14.8 streamed (bench_verbs bw, alternating, 3 pairs). So the distance
// only gives the first guess; this measures.
//
// Each large copy is timed from the start of the one before it (one rdtsc a copy): the
// channel's period, whatever bounds it — this copy, the consumer's (a full ring), the
// messages' other costs. Bytes over busy time, in windows of kWindowBytes, give the current
// way's throughput (at home, averaged over its recent windows). A window starts only after a
// ring's worth of bytes in its way: after a change, the ring first fills (or drains) at the
// new way's pace whoever bounds it after, and counting that made every try of streaming win.
//
// After the first window the other way is tried for one window; the better one (by
// kSwitchMargin) is kept, and the other is tried again after kExploreFirst windows, then four
// times as long each time it loses, up to kExploreMax windows (1 GiB: a losing way then costs
// a settle and a window in ~257; at a maximum of 64 tries cost 5-10 % on far vCPUs, where
// ordinary stores are slow). A try that loses by far ends early (kQuickLossBytes).
//
// A gap over kBusyGapTicks is the application doing something else and is not counted, unless
// the ring was found full in it: then it is the consumer's pace, which is what the way chosen
// may have slowed. A change in the consumer's distance starts over from its guess.
//
// The same choice serves a second pair of ways (ShmLink::choose_way): a large burst (WRITE
// requests, READ responses) through the ring (false, where it starts: call with near = false)
// or by reference, one process_vm_readv by the receiver (true). It is made where the bytes
// land: each burst is the call as the receiver takes it (the way is sent back to the sender in
// the channel), gaps are the receiver's (times_full 0), and the settle is the sender's backlog
// and a QP's window of unacknowledged packets. Timed at the sender, a READ responder by
// reference sends each READ's responses at once when its request comes: its backlog of
// queued READs measured as taking no time, and 4 MiB READs chose references at 7.6-8.2 GB/s
// against the ring's 10.5-11.1. Which way wins depends on the vCPUs: far, the ring (14.3
// against 8.1 GB/s at 64 KiB WRITEs in an earlier session); middle, by reference up to
// 256 KiB (26 against 14-15) and about even from 1 MiB.
//
// Thread: the link's (under the device lock), like the writer it belongs to.
#pragma once

#include <cstddef>
#include <cstdint>

namespace softib::link {

class CopyChooser {
 public:
  // `quick_loss`: whether a try that loses by far ends early (below). Not where the settle
  // disfavours the way tried: at the receiver (ShmLink::choose_way) the first bursts by
  // reference wait for the QP's window of ring bursts to be acknowledged, and the rule ended
  // 4 tries of 5 at their first bursts (1 MiB WRITEs by reference 19-21 GB/s, kept through
  // the ring at 15-17 in half the runs).
  explicit CopyChooser(bool quick_loss = true) : quick_loss_(quick_loss) {}

  static constexpr uint64_t kWindowBytes = uint64_t{4} << 20;
  // ~0.4 ms at these VMs' 2.6 GHz TSC (1 ms at 1 GHz). Gaps shorter than that are the
  // pipeline's own: a full ring's wait for its consumer's quarter-ring publish (256 KiB at 10
  // GB/s: 26 us), an engine sending READ responses that slept until the requester's next
  // request woke it (~48 us each, ~6,000 of them in a 0.55 s run of 64 KiB READs: left out at
  // 100,000 ticks, they made streaming measure 33 GB/s in a run that made 9).
  static constexpr uint64_t kBusyGapTicks = 1'000'000;
  static constexpr uint32_t kExploreFirst = 8;
  static constexpr uint32_t kExploreMax = 256;
  static constexpr double kSwitchMargin = 1.05;
  static constexpr double kHomeWeight = 0.75;  // of the home way's average, at each new window
  // A try slower than the home way by kQuickLossFactor over its first kQuickLossBytes, while
  // the ring's fill still favours it, ends there: ordinary stores on far vCPUs answering 64
  // KiB READs were that much slower, and whole tries (a settle and a window) cost 10-20 % of
  // the run against streaming throughout (bench_verbs bw --op read, 3 runs each).
  static constexpr uint64_t kQuickLossBytes = 256 * 1024;
  static constexpr double kQuickLossFactor = 2;

  // Before a large copy of `bytes` at `now` (ticks: base/clock.hpp cycle_ticks), with the
  // consumer's distance as last judged (`near`), into a ring of `ring_bytes` that has been
  // found full `times_full` times so far (ChannelWriter): whether this copy uses ordinary
  // stores.
  bool cached(uint64_t now, size_t bytes, bool near, uint64_t ring_bytes, uint64_t times_full);
  // The way the next copy (or burst) takes, as the last call left it.
  bool way() const { return cached_; }
  // The last copy ended at `now`: its gap is counted up to here, and the next call counts
  // none. For a caller that sees copies of another way go by between its own (ShmLink::
  // choose_way: a SEND's bursts come through the ring between WRITEs by reference, and the
  // old way's backlog after a change), whose time the next copy's gap would otherwise span.
  void done(uint64_t now, uint64_t ring_bytes) {
    if (started_) close(now, false, ring_bytes);
  }

  // Diagnostics (the link's debug log): windows measured, and how often the way changed
  // because the other one measured faster.
  uint32_t windows() const { return windows_; }
  uint32_t switches() const { return switches_; }

 private:
  void close(uint64_t now, bool waited, uint64_t ring_bytes);  // counts the last copy's gap
  void start_over(bool near, uint64_t ring_bytes);
  void begin_settle(uint64_t ring_bytes);
  void settle(uint64_t ticks);  // the previous copy took `ticks`, while settling
  void count(uint64_t ticks);   // ... in a window
  void end_try(bool won);

  uint64_t last_ = 0;  // when the previous copy started (0: none yet)
  uint64_t last_bytes_ = 0;
  uint64_t last_full_ = 0;  // times_full at the previous copy
  uint64_t window_ticks_ = 0;
  uint64_t window_bytes_ = 0;
  uint64_t settle_ = 0;      // bytes still to copy before the window counts
  uint64_t settled_ticks_ = 0;
  uint64_t settled_bytes_ = 0;
  double rate_[2] = {0, 0};  // bytes per tick, by way (index: cached)
  bool measured_[2] = {false, false};
  bool cached_ = false;      // the way copies go now
  bool home_ = false;        // the way that measured best
  bool trying_ = false;      // cached_ is the other way, for one window
  uint32_t since_try_ = 0;   // windows at home since the last try
  uint32_t try_every_ = kExploreFirst;
  bool started_ = false;
  bool near_ = false;        // the distance judgment this started from
  uint32_t windows_ = 0;
  uint32_t switches_ = 0;
  bool quick_loss_ = true;
};

}  // namespace softib::link
