// ShmInbox: where an endpoint (one process's view of one HCA) receives frames from the other
// endpoints of its host: a shared-memory file with one ShmChannel per sending endpoint.
//
//   page 0: InboxHeader                   then channels, each ChannelControl + data
//   +--------------------------------+    +-----------+-----------+-----+
//   | magic version channels capacity|    | channel 0 | channel 1 | ... |
//   | endpoint pid                   |    +-----------+-----------+-----+
//   | sleeping   (own cache line)    |
//   | lease_ns lease_cpu (own line)  |
//   | away       (own cache line)    |
//   | active[]   (claimed channels)  |
//   +--------------------------------+
//
// A sender claims a free channel once (CAS of its owner word from 0 to its token) and then
// owns its producer side; the receiver polls the channels whose bit is set in `active`.
//
// Waking the receiver. Its engine sleeps on a Doorbell (an eventfd the sender got with the
// inbox). A sender rings it only when the engine sleeps *and* no application thread is
// polling: an application thread that polls (ibv_poll_cq with an empty CQ) takes a lease,
// `lease_ns`, and drains the inbox itself, so a busy ping-pong makes no system call and wakes
// no thread. The engine, asleep, wakes on its own when the lease runs out, so a frame that
// arrives as the application stops polling waits at most one lease (lease_length()); less
// when its sender, still waiting, finds it unread and rings anyway (ShmLink::wake_stalled:
// after ~2 us if the owner's application last left the library with completions in hand,
// `away`, else ~100 us), or the application arms a CQ (Engine::release_lease). The sender's
// publish and its read of `sleeping`, and the engine's store of `sleeping` and its last look at
// the channels, are seq_cst on both sides (a Dekker pair): no frame is left with everybody
// asleep.
//
// Where the kernel has membarrier(2) (Linux 4.16+), the pair is asymmetric: the engine about to
// sleep runs MEMBARRIER_CMD_GLOBAL_EXPEDITED between its store of `sleeping` and its last look,
// which puts a full barrier on every CPU running a registered sender, so the senders need only
// a compiler barrier between their publish and their read of `sleeping`. Their full fence
// used to stall each publish until the record's cache line had left the consumer's core
// (~240 ns on far vCPUs; 28% of a sender's time at 64-byte message rates). A sender skips its
// fence only if it registered (REGISTER_GLOBAL_EXPEDITED, at attach) and the inbox's owner
// says it sleeps that way (kInboxSleeperBarrier, read at every publish); any other pairing
// keeps both fences. The barrier interrupts every CPU that runs a registered process (~20 us
// of that CPU's time on these VMs), so an owner that sleeps often turns it off
// (set_sleeper_barrier): its senders then fence again.
//
// Thread: the receiver's side (readers, sleeping, lease, reclaim) belongs to the owner; a
// sender's producer side to that sender.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "base/membarrier.hpp"
#include "base/result.hpp"
#include "link/shm_channel.hpp"
#include "link/shm_region.hpp"

namespace softib::link {

inline constexpr uint32_t kInboxMagic = 0x58424953;  // "SIBX"
inline constexpr uint16_t kInboxVersion = 5;  // 3: ChannelControl::help; 4: kHelpWaiting; 5: later_written
inline constexpr uint32_t kMaxInboxChannels = 256;
// How long an application poll keeps the engine asleep. The lease grows with the time the
// application has been polling without a break, from kLeaseMinNs to kLeaseMaxNs: an engine
// asleep under a lease wakes at its end to look again, and on two busy vCPUs that wake-up
// pre-empts a polling thread for 20-120 us (a context switch on these VMs), so a steady
// poller is interrupted at most every kLeaseMaxNs, while one that polled only briefly hands
// over to the engine as soon as ever. kLeaseMaxNs stays well under the 33.5 ms of the
// shortest QP timeout whose ACKs a poll may hold back (rc::kHoldAckMinTimeout): the engine's
// wake at the lease's end is the last resort that sends them. 5 ms before: in 0.4 s of
// bench_verbs lat each polling application was pre-empted ~185 times, ~65 at 20 ms, with
// 3.2-4.4 % of the run in round trips over 10 us instead of 3.7-6.8 % (8 interleaved pairs).
inline constexpr uint64_t kLeaseMinNs = 200'000;
inline constexpr uint64_t kLeaseMaxNs = 20'000'000;
static_assert(kLeaseMaxNs < 33'000'000, "under the shortest timeout whose ACKs a poll holds");
constexpr uint64_t lease_length(uint64_t polling_for_ns) { return std::clamp(polling_for_ns, kLeaseMinNs, kLeaseMaxNs); }
// A lease that ends this far ahead or more: its holder has polled without a break for at
// least as long (lease_length), a steady poller such as a bandwidth client. Peers' engines
// keep off only such a poller's CPU (ShmLink::for_each_polling_peer_cpu): an event-driven
// program's polls between its waits hold leases of ~200 us, and keeping off those would
// change the engine's affinity at nearly every sleep (a migration each time it must move).
inline constexpr uint64_t kSteadyPollingNs = 2'000'000;

inline constexpr uint16_t kInboxSleeperBarrier = 1;  // InboxHeader.flags: the owner sleeps after membarrier()

struct InboxHeader {
  uint32_t magic;
  uint16_t version;
  std::atomic<uint16_t> flags;  // kInboxSleeperBarrier; the owner may change it (set_sleeper_barrier)
  uint32_t channels;
  uint32_t capacity;  // data bytes per channel
  uint64_t endpoint;
  uint32_t pid;
  uint32_t reserved2;
  alignas(64) std::atomic<uint32_t> sleeping;
  std::atomic<uint32_t> rung;  // a sender rang the doorbell since the engine went to sleep
  alignas(64) std::atomic<uint64_t> lease_ns;
  // The CPU the lease's holder last polled on, plus one (0: not known); on the lease's line,
  // which a sender reads anyway. Peers' engines keep off it before they sleep
  // (engine::Engine::keep_off_polling_cpus).
  std::atomic<uint32_t> lease_cpu;
  // 1 while the owner's application last left the library with completions in hand (it may
  // now spin on memory and read nothing: perftest's ib_write_lat); 0 while it polls an empty
  // CQ. Own line: the owner writes it as it changes, a waiting sender reads it now and then.
  alignas(64) std::atomic<uint32_t> away;
  alignas(64) std::array<std::atomic<uint64_t>, kMaxInboxChannels / 64> active;
};
inline constexpr size_t kInboxHeaderBytes = 4096;
static_assert(sizeof(InboxHeader) <= kInboxHeaderBytes);

// Monotonic nanoseconds (CLOCK_MONOTONIC, the same in every process of the host).
uint64_t monotonic_ns();

class ShmInbox {
 public:
  // The owner's side: a new inbox.
  static Result<ShmInbox> create(uint64_t endpoint, uint32_t pid, uint32_t channels, uint32_t capacity);
  // A sender's side: an inbox received from a peer. Checks the header against the region's
  // size (a peer's memory is not trusted to be well formed).
  static Result<ShmInbox> attach(ShmRegion region);

  ShmInbox(ShmInbox&&) noexcept = default;
  ShmInbox& operator=(ShmInbox&&) noexcept = default;

  const ShmRegion& region() const { return region_; }
  InboxHeader& header() const { return *reinterpret_cast<InboxHeader*>(region_.data()); }
  uint32_t channels() const { return header().channels; }
  uint64_t endpoint() const { return header().endpoint; }
  uint32_t pid() const { return header().pid; }
  ChannelMemory channel(uint32_t i) const;

  // ---- sender ----
  // Claims a free channel for `token` (non-zero); returns its index, or nullopt when every
  // channel is taken. The caller then writes with ChannelWriter(channel(i), start_position(i)).
  std::optional<uint32_t> claim(uint64_t token) const;
  // The channel the next claim() takes if no one claims before it: the lowest free one (by
  // the active mask), or nullopt when all are taken. For the owner, which prepares it.
  std::optional<uint32_t> next_claim() const;
  uint64_t start_position(uint32_t i) const { return channel(i).control().head.load(std::memory_order_acquire); }
  // After publishing a record: whether the receiver must be woken (Dekker with sleep_begin).
  // True for one sender once per sleep: the others see that it was rung.
  bool needs_doorbell() const;
  // Whether this sender may publish without a full fence: this process's registration for
  // the owner's membarrier has finished (base/membarrier.hpp; the engine makes it in the
  // background when it starts), and the owner's membarrier stands in while sleeper_barrier()
  // says so. Until then its publishes fence.
  static bool sender_registered() { return global_membarrier_registered(); }

  // ---- receiver ----
  uint64_t active_mask(uint32_t word) const { return header().active[word].load(std::memory_order_acquire); }
  // The engine is about to sleep: from now on senders ring the doorbell. The caller must look
  // at every channel once more after this and not sleep if one has a record. Returns false
  // if the membarrier failed (not expected): a sender may then go unheard, and the caller
  // must not sleep for long.
  bool sleep_begin() const;
  // Whether the owner sleeps after a membarrier (senders then publish without a fence). Off:
  // one last barrier, so that a sender that saw it on before the change is heard by the next
  // look; on: from the next sleep. No-op where membarrier is unavailable.
  void set_sleeper_barrier(bool on) const;
  bool sleeper_barrier() const {
    return (header().flags.load(std::memory_order_relaxed) & kInboxSleeperBarrier) != 0;
  }
  void sleep_end() const { header().sleeping.store(0, std::memory_order_relaxed); }
  // An application thread is polling: keep the engine asleep (and senders quiet) until now +
  // `length_ns`. Cheap when called often: it writes the shared line at most every length / 4.
  void take_lease(uint64_t now_ns, uint64_t length_ns) const;
  // The same, for a lease_length() that grows with the time the caller's process has held the
  // lease without a break: `polling_since` is the caller's own record of when that began (0 at
  // first); a lease that ran out or was dropped begins a new stretch.
  void hold_lease(uint64_t now_ns, std::atomic<uint64_t>& polling_since) const;
  void drop_lease() const { header().lease_ns.store(0, std::memory_order_seq_cst); }
  uint64_t lease_until() const { return header().lease_ns.load(std::memory_order_relaxed); }
  // InboxHeader::lease_cpu: the owner's polling thread records its CPU (sched_getcpu()) as it
  // refreshes the lease; -1 when not known.
  void set_lease_cpu(int cpu) const {
    const uint32_t v = cpu < 0 ? 0 : static_cast<uint32_t>(cpu) + 1;
    if (header().lease_cpu.load(std::memory_order_relaxed) != v) header().lease_cpu.store(v, std::memory_order_relaxed);
  }
  int lease_cpu() const { return static_cast<int>(header().lease_cpu.load(std::memory_order_relaxed)) - 1; }
  // InboxHeader::away: the owner's application threads set it; senders read it.
  void set_away(bool away) const { header().away.store(away ? 1 : 0, std::memory_order_relaxed); }
  bool away() const { return header().away.load(std::memory_order_relaxed) != 0; }
  // Frees channel i for a new sender (its owner is gone): the caller has consumed what it
  // wanted and passes its read position, which the next producer starts from.
  void reclaim(uint32_t i, uint64_t read_position) const;

 private:
  explicit ShmInbox(ShmRegion region) : region_(std::move(region)) {}
  ShmRegion region_;
};

constexpr size_t inbox_bytes(uint32_t channels, uint32_t capacity) {
  return kInboxHeaderBytes + size_t{channels} * channel_footprint(capacity);
}

}  // namespace softib::link
