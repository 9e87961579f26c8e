// ShmLink: joins one endpoint (a process's view of one HCA) to every endpoint of its host
// through shared memory. It is the device's FrameSink on the way out and its source of frames
// on the way in:
//
//   out  the directory maps (DLID, BTH.DestQP) to the endpoint that owns the QPN; the frame
//        is built straight into this endpoint's channel in that endpoint's inbox (claimed
//        once per peer), and the peer's doorbell rings only if nobody there is polling
//   in   poll() walks the channels of its own inbox and hands each frame, in place, to the
//        device: the payload is copied once, from the ring into the target memory
//
// A frame is lost, as on a wire, when the sending or the receiving port is not Active, or no
// endpoint owns the destination QPN; a frame for an endpoint that died is lost too. A full
// ring refuses the frame (flow control, rc/frame.hpp). Lost and refused frames are counted.
//
// Each record in a channel is an ShmFrameHeader (the LRH/GRH-level addressing) followed by
// the frame's transport bytes, or, for a batch of small frames to one peer (begin_batch), a
// packed record: one ShmSubFrame header and the transport bytes of each, 8-byte aligned.
//
// Thread: the FrameSink side and poll()/housekeeping() run under the owning device's lock;
// ready() and the inbox's sleep protocol may be used by the engine around it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/copy.hpp"
#include "base/result.hpp"
#include "link/copy_chooser.hpp"
#include "link/doorbell.hpp"
#include "link/shm_directory.hpp"
#include "link/shm_inbox.hpp"
#include "rc/device.hpp"
#include "rc/frame.hpp"

namespace softib::link {

inline constexpr uint16_t kRecordFrame = 1;        // ShmFrameHeader (local) + transport
inline constexpr uint16_t kRecordFrameGlobal = 2;  // ShmFrameHeader + ShmGrhFields + transport
inline constexpr uint16_t kRecordPacked = 3;       // (ShmSubFrame + transport, padded to 8) ...

struct ShmFrameHeader {
  uint16_t slid;
  uint16_t dlid;
  uint8_t sl;
  uint8_t burst_mtu;     // rc::Burst (packets 1: an ordinary frame)
  uint16_t packets;
  uint8_t last_opcode;
  uint8_t last_flags;    // bit 0 AckReq, bit 1 SE
  uint16_t reserved;
  uint32_t last_ext;
};
struct ShmGrhFields {
  uint8_t sgid[16];
  uint8_t dgid[16];
  uint32_t flow_label;
  uint8_t traffic_class;
  uint8_t hop_limit;
  uint8_t reserved[2];
};
// One frame of a packed record: a single packet (no burst, no GRH) of `length` transport
// bytes, which follow.
struct ShmSubFrame {
  uint16_t length;
  uint16_t slid;
  uint16_t dlid;
  uint8_t sl;
  uint8_t reserved;
};

// Stores a header's field as its own type (named explicitly: a value of another width does
// not compile silently) at its offset in the ring.
template <class Field>
inline void put_field(uint8_t* base, size_t offset, Field value) {
  std::memcpy(base + offset, &value, sizeof value);
}

// A frame header goes into the ring field by field, each from a value in a register: reserve()
// writes an ordinary frame's, commit_burst() overwrites the burst's fields in place. Never a
// header built in memory and copied in: such a copy reads it back as wide words over the
// narrower stores that built it, and that load cannot take its bytes from stores still in
// flight, so it waits until every older store has left this core, including the previous
// frame's stores into a ring whose lines are still on their way from the peer's core
// (back-to-back frames then went one cross-core transfer at a time). Nor two words composed
// from such a header's fields: GCC merges those loads into the same 16-byte copy (seen in
// the release build's code).
//
// An ordinary frame's header (reserve()).
inline void store_frame_header(uint8_t* at, uint16_t slid, uint16_t dlid, uint8_t sl) {
  put_field<decltype(ShmFrameHeader::slid)>(at, offsetof(ShmFrameHeader, slid), slid);
  put_field<decltype(ShmFrameHeader::dlid)>(at, offsetof(ShmFrameHeader, dlid), dlid);
  put_field<decltype(ShmFrameHeader::sl)>(at, offsetof(ShmFrameHeader, sl), sl);
  put_field<decltype(ShmFrameHeader::burst_mtu)>(at, offsetof(ShmFrameHeader, burst_mtu), 0);
  put_field<decltype(ShmFrameHeader::packets)>(at, offsetof(ShmFrameHeader, packets), 1);
  put_field<decltype(ShmFrameHeader::last_opcode)>(at, offsetof(ShmFrameHeader, last_opcode), 0);
  put_field<decltype(ShmFrameHeader::last_flags)>(at, offsetof(ShmFrameHeader, last_flags), 0);
  put_field<decltype(ShmFrameHeader::reserved)>(at, offsetof(ShmFrameHeader, reserved), 0);
  put_field<decltype(ShmFrameHeader::last_ext)>(at, offsetof(ShmFrameHeader, last_ext), 0);
}
inline constexpr size_t kSubFrameAlign = 8;
static_assert(sizeof(ShmFrameHeader) == 16 && sizeof(ShmGrhFields) == 40 && sizeof(ShmSubFrame) == kSubFrameAlign);
// The bytes a sub-frame of `len` transport bytes takes in its packed record (padded to 8).
constexpr size_t sub_frame_span(size_t len) {
  return (sizeof(ShmSubFrame) + len + kSubFrameAlign - 1) & ~(kSubFrameAlign - 1);
}

struct ShmLinkCounters {
  uint64_t frames_sent = 0;
  uint64_t frames_received = 0;
  uint64_t express_frames = 0;   // of frames_received: those take_express() took
  uint64_t frames_packed = 0;    // of frames_sent: those that shared a packed record
  uint64_t packs_sent = 0;       // packed records published
  uint64_t refused = 0;          // a full ring (flow control)
  uint64_t lost_port_down = 0;   // this port or the destination's is not Active
  uint64_t lost_no_endpoint = 0; // no attached endpoint has the DLID or owns the QPN
  uint64_t lost_dead_peer = 0;   // the destination's process is gone, or it has no free channel
  uint64_t doorbells = 0;        // wake-ups sent to sleeping peers
  uint64_t stall_rings = 0;      // wake-ups sent to peers that left records unread (wake_stalled)
  uint64_t away_rings = 0;       // of them, to peers whose application was away (InboxHeader::away)
  uint64_t malformed = 0;        // records this endpoint could not decode (dropped)
  uint64_t reclaimed = 0;        // channels freed after their sender died
  uint64_t ref_frames_sent = 0;  // bursts whose payload went by reference
  uint64_t ref_refused = 0;      // by-reference frames from a sender whose memory this process cannot read (lost)
  uint64_t copies_cached = 0;    // large payload copies made with ordinary stores (PeerCopy)
  uint64_t copies_streamed = 0;  // ... and with non-temporal stores
  uint64_t copies_near = 0;      // PeerCopy::kAuto copies made while the consumer was judged near
  // Copies by reference shared with the sending process (rc::CopyHelp, ShmLink's help):
  uint64_t helps_offered = 0;    // parts offered to the sender
  uint64_t helps_taken = 0;      // ... that the sender wrote in
  uint64_t helps_withdrawn = 0;  // ... that nobody took in time (copied here)
  uint64_t helps_failed = 0;     // ... that the sender could not write (copied here; no more offers to it)
  uint64_t helps_later = 0;      // ... that the sender took and was still writing after kHelpWaitBound
                                 // (its burst was delivered again once it had written it)
  uint64_t helps_given = 0;      // parts this link wrote into a peer that offered them
  uint64_t sender_checks = 0;    // kill(pid, 0)s asking whether a later copy's sender lives (live_copy_later)
};

inline constexpr uint8_t kFrameByReference = 4;  // ShmFrameHeader.last_flags: the payload is named, not carried

class ShmLink final : public rc::FrameSink {
 public:
  // What softibd hands out for a peer endpoint: its inbox and its doorbell (fds the callee
  // owns from then on).
  struct PeerFds {
    int inbox_fd = -1;
    int doorbell_fd = -1;
  };
  using Resolver = std::function<Result<PeerFds>(uint32_t endpoint)>;

  // `directory` must outlive the link.
  ShmLink(const ShmDirectory& directory, uint32_t endpoint, uint32_t port_slot, ShmInbox inbox, Resolver resolver);
  ~ShmLink() override;

  // Calls f(cpu) with the CPU on which each peer this link sends to polls steadily: its
  // application holds a lease that runs kSteadyPollingNs or more past `now_ns` and said where
  // (ShmInbox::lease_cpu). The caller holds the device lock (the peer list changes under it).
  template <class F>
  void for_each_polling_peer_cpu(uint64_t now_ns, F&& f) const;

  // ---- out (rc::FrameSink) ----
  wire::MutByteSpan reserve(const rc::FrameAddr& to, Qpn dest_qp, size_t len) override {
    // Most frames (a request, an ACK) go outside a batch, as a record of their own, to the
    // peer the route already knows: reserved without the lookups, the packing decisions and
    // the rare cases reserve_frame() weighs (callgrind, 8-byte ping-pong: ~25 instructions a
    // frame fewer).
    if (!batching_ && pack_.peer == nullptr && !to.global && routed(to, dest_qp)) {
      ChannelWriter& w = *route_.peer->writer;
      if (sizeof(ShmFrameHeader) + len <= w.max_body()) {
        // No call but the tail calls: this path keeps its values in registers that need no
        // saving (through ChannelWriter::reserve(), whose rare calls made this function save
        // six registers, and an out-of-line start_record(): callgrind, 8-byte ping-pong,
        // ~20 instructions a frame more).
        if (uint8_t* room = w.reserve_in_place(sizeof(ShmFrameHeader) + len))
          return start_record_at(route_.peer, room, sizeof(ShmFrameHeader), kRecordFrame, to, len);
      }
    }
    return reserve_frame(to, dest_qp, len, batching_);
  }
  void commit(size_t len) override;
  // Attaches the peer `to` names (its inbox, doorbell and a claimed channel, prefaulted) now;
  // nothing when the directory does not know it yet or it is gone (the first frame tries again).
  void prepare(const rc::FrameAddr& to, Qpn dest_qp) override;
  size_t max_burst_bytes() const override { return max_burst_; }
  // A record of its own, behind any open pack.
  wire::MutByteSpan reserve_burst(const rc::FrameAddr& to, Qpn dest_qp, size_t len) override {
    return reserve_frame(to, dest_qp, len, false);
  }
  void commit_burst(size_t len, const rc::Burst& burst) override;
  // Packing: inside a batch, frames of up to kPackFrameMax transport bytes to one peer share
  // a record of up to kPackBody bytes, published at the batch's end or when the next frame
  // does not fit or goes elsewhere. Per frame after the first this saves the record's reserve
  // and publish on the sender and its read on the receiver, and the record header and the
  // padding to 64 bytes in the ring (a 64-byte SEND: 88 bytes instead of 128). Off: every
  // frame is a record of its own (SOFTIB_SHM_PACK=0).
  void begin_batch() override { batching_ = packing_; }
  void end_batch() override {
    batching_ = false;
    flush_pack();
  }
  void set_packing(bool on) { packing_ = on; }
  static constexpr size_t kPackFrameMax = 256;
  static constexpr size_t kPackBody = 1024 - sizeof(RecordHeader);
  // Bursts of at most this much payload (0: none; rounded down by the transport to whole
  // packets). Larger bursts cost fewer steps per byte; each must fit half a ring.
  void set_max_burst_bytes(size_t bytes) { max_burst_ = bytes; }
  // Single copy (rc/frame.hpp Burst::by_reference): the payloads of large bursts to another
  // process (RDMA WRITE requests, RDMA READ responses) are named in this process's memory
  // and the receiver copies them with process_vm_readv, where it may (same user, no ptrace
  // restriction). The receiver answers whether it may when it meets this sender, in the
  // channel's `reference` word (ChannelControl), and nothing goes by reference before that
  // answer says yes. Which way is faster depends on the vCPUs: on far ones one
  // process_vm_readv per 64 KiB ran at 6-9 GB/s, below the two copies of the ring that the
  // two cores make in parallel (14 GB/s); on middle ones it ran at 20-27 GB/s up to 256 KiB.
  // So by default (SOFTIB_SHM_CMA=auto) the receiver measures both and says which it wants in
  // the same word (choose_way); SOFTIB_SHM_CMA=1 always, =0 never.
  size_t max_reference_bytes(const rc::FrameAddr& to, Qpn dest_qp) override;
  // A burst to `qp` ended later (Reader::later) and its sender, alive, still writes its copy.
  // REQUIRES: the device's lock.
  bool copy_later_into(Qpn qp) override;
  enum class References {
    kNever,     // SOFTIB_SHM_CMA=0 (and the class's default)
    kMeasured,  // when the receiver's measure prefers it (kReferencePreferred): =auto, the default
    kAlways,    // whenever the receiver may read this process: =1
  };
  void set_references(References mode) { references_ = mode; }
  // Payload per burst by reference. Larger than through the ring (it takes no ring space): one
  // process_vm_readv pins and copies a burst, and 256 KiB a call ran 13-27 % faster than
  // 64 KiB on 256 KiB and 1 MiB WRITEs (middle vCPUs, 2026-11-29: 256 KiB WRITEs 24.9 against
  // 19.8 GB/s); 1 MiB a call was slower again (the source and target then fill the L2).
  static constexpr size_t kRefBurstBytes = 256 * 1024;
  // ... and to a receiver that shares its copies (kReferenceHelped): with each side copying
  // half, 1 MiB a burst ran faster than 256 KiB (1 MiB READs 25-30 against 41-43 GB/s, 4 MiB
  // READs 11.9 against 15.4-15.9).
  static constexpr size_t kRefBurstHelpedBytes = 1024 * 1024;
  // Both sizes (to compare).
  void set_max_reference_burst_bytes(size_t bytes) { max_ref_burst_ = max_ref_burst_helped_ = bytes; }
  // Shared copies (rc::CopyHelp): a burst by reference of at least twice this many bytes has
  // its second half offered to the sending process, in the slot of this link's channel in
  // that process's inbox (ChannelControl::help), while this link pulls the first half; the
  // sender's polls (poll(), and ready() for its engine) take offers. 0: never.
  // SOFTIB_SHM_HELP sets it.
  static constexpr size_t kHelpMinBytes = 32 * 1024;
  void set_help_min_bytes(size_t bytes) { help_min_ = bytes; }
  // How long an offer stays open, once this link has pulled its own half, before it is
  // withdrawn (default 0: at once). For tests, where a sender's thread is sure to take it
  // but may not be running at that moment.
  void set_help_patience(std::chrono::nanoseconds wait) { help_patience_ = wait; }
  // How long the device waits for a sender that took an offer to write it. After that the
  // burst ends later (rc::CopyHelp::End::kLater): its channel is not read until the sender has
  // written its part (it rings this link's doorbell then), and the same frame is delivered
  // again. A sender stopped by a signal or a debugger holds that channel, not the device.
  static constexpr std::chrono::nanoseconds kHelpWaitBound = std::chrono::milliseconds(1);
  void set_help_wait_bound(std::chrono::nanoseconds wait) { help_wait_bound_ = wait; }
  // Waits while a sender still writes a copy whose burst ended later (see kHelpWaitBound):
  // for whatever frees or hands back memory this process registered (deregistering a region,
  // destroying a QP or the device), after which no peer may write there, as after an HCA's
  // deregistration no DMA does. Returns at once when no burst waits so; else it waits until
  // each such sender has written its part or is gone. A sender kept stopped keeps it waiting:
  // after kSettleWarnAfter the wait is logged (kWarn) with the sender's endpoint and pid.
  // REQUIRES: the device's lock.
  void settle_copies();
  static constexpr std::chrono::nanoseconds kSettleWarnAfter = std::chrono::seconds(1);
  void set_settle_warn_after(std::chrono::nanoseconds after) { settle_warn_after_ = after; }
  // How many channels wait so now (a burst whose copy ended later). REQUIRES: the device's lock.
  uint32_t copies_later() const { return copies_later_; }
  // After a change of way, what a QP's window of unacknowledged packets holds (512 x 4 KiB) is
  // not counted: the sender's backlog in the old way, then the window filling at the new pace.
  static constexpr uint64_t kRefSettleBytes = uint64_t{2} << 20;
  // How large payload copies go into a peer's ring (base/copy.hpp PeerCopy; default kAuto).
  void set_peer_copy(PeerCopy mode) { peer_copy_ = mode; }

  // ---- in ----
  // Feeds up to `budget` waiting frames to the device, and stops early once `until` (if
  // given) holds `want` completions: an application thread polling that CQ has its answer
  // and leaves the next frame, whose line is likely still on its way, to a later step. A
  // copy a channel's sender offers back (Help) is made before that channel's frames.
  // REQUIRES: the device's lock.
  static constexpr size_t kPollBudget = 512;
  // A poll also stops once it has taken this many packets, in bursts: the device's step then
  // acknowledges them (an ACK goes at the end of a step, coalesced). A step that drained a
  // ring as fast as a sender refilled it acknowledged nothing until the sender had
  // rc::kMaxUnackedPackets out and stopped; the ring then ran empty while that ACK went back
  // and the next burst was copied in, ~10 us a cycle of ~15 bursts (RDMA WRITE 4 MiB through
  // the ring: one ACK per 15.3 bursts, and the receiver idle ~10 % of its time).
  static constexpr size_t kPollPackets = rc::kMaxUnackedPackets / 4;
  size_t poll(rc::Device& device, size_t budget = kPollBudget, const verbs::Cq* until = nullptr, size_t want = 0);
  // A polling thread's shortcut (engine::Engine's express step): the one ordinary frame (a
  // request or an ACK, no burst, not by reference, not packed, no GRH) at the head of the channel
  // the last frame came from, handed to the device as poll() would hand it. Returns whether
  // it took one; false, having changed nothing, when that channel has anything else (or
  // nothing) next, or a copy offered back: poll() then does what it does. The channel's
  // Watch moves past the frame taken; publishing the head to the sender is left to the next
  // poll(), so the sender sees the space freed one step later. REQUIRES: the device's lock.
  bool take_express(rc::Device& device);
  // Whether the last poll() emptied every channel after taking at least kStreamFrames frames
  // from packed records: a sender is streaming small messages, and more will follow.
  bool drained_a_stream() const { return drained_stream_; }
  static constexpr size_t kStreamFrames = 8;
  // Whether a frame, or an offered copy (set_help_min_bytes), waits in some channel (the
  // engine's last look before it sleeps, and every empty poll: inline, it is most of one).
  // Thread: any, without the device's lock: it reads each channel's Watch and the shared
  // memory, never the lock holder's readers, which poll() may be creating or moving meanwhile (ThreadSanitizer found ready() on an idle poll reading
  // a reader that the engine's step was constructing: it could have read an unset address).
  bool ready() const {
    return any_active_channel([&](uint32_t i) {
      const Watch& w = watches_[i];
      if (w.mem.control().help.state.load(std::memory_order_relaxed) == kHelpOffered) return true;
      const uint64_t at = w.at.load(std::memory_order_relaxed);
      // The sender sets later_written (and rings) once it has ended its copy.
      if (at == Watch::kLater) return w.mem.control().later_written.load(std::memory_order_relaxed) != 0;
      if (at == Watch::kNone) return new_channel_ready(w.mem);
      return w.mem.header_at(at).tag.load(std::memory_order_acquire) == at + 1;
    });
  }
  // Frees the channels whose senders died. REQUIRES: the device's lock.
  void housekeeping();
  // For a program's diagnostics (bench_verbs reports it when a completion fails): each active
  // channel of the inbox, its owner, whether the sender lives, where this link reads it, and
  // whether a record waits there; then each peer, where this link writes and where it has
  // read. REQUIRES: the device's lock.
  std::string describe_channels() const;
  // Allocates and maps the ring of the channel the next new sender will claim (the lowest
  // one free), if that is not done yet; returns whether it did. A sender's first frame then
  // finds the pages there: it maps them (ShmRegion::prefault, ~0.1 ms) instead of allocating
  // and zeroing them (~0.7 ms), and this endpoint's first read of the channel maps nothing.
  // Both were on the way of a connection's first message. Keeps one channel ready ahead, so
  // an endpoint's inbox holds one ring more than it has senders. Thread: the engine thread
  // when idle, without the device's lock (it touches only the free channel's pages and the
  // warmed_ bits, which poll() reads).
  bool warm_spare_channel();
  // The same a piece at a time: maps the next kWarmChunk bytes of that ring and returns true,
  // or returns false when there is nothing to map (the spare is warmed, or no channel is
  // free). A spare claimed while it was being warmed is left as it is (its sender and its
  // owner map the rest) and the new spare is begun. For an engine that warms while it serves
  // frames (Engine::run, the spares after the first): a whole ring at once held a frame that
  // arrived meanwhile ~0.7 ms, a piece holds it ~40 us. Thread: as warm_spare_channel().
  bool warm_spare_chunk();
  static constexpr size_t kWarmChunk = 64 * 1024;
  // Rings the doorbell of each peer that has not read all this link sent it.
  // For a caller that has sent nothing for a while and still waits (an application polling
  // for the answer): the peer's application may hold its inbox's lease (it polled a moment
  // ago) and yet have stopped reading (it spins on memory for an RDMA WRITE, as perftest's
  // ib_write_lat does), and its engine then sleeps out the lease, up to kLeaseMaxNs, before
  // it looks. Reads each peer's published head: a line the peer's core writes, so not for
  // every step. Returns whether it rang any. REQUIRES: the device's lock.
  bool wake_stalled();
  // The same, sooner (~2 us), for the peers whose application last left the library with
  // completions in hand (ShmInbox::away) and left unread work its engine finishes without
  // that application (Peer::engine_work_end: an RDMA WRITE, READ or atomic request; perftest's
  // ib_write_lat spins on memory for the WRITE): once until the peer reads or this link
  // writes more. Not for SENDs or responses: their completions wait for the application's
  // next poll whatever its engine does, and a polling ping-pong's peer is away only when it
  // was pre-empted just after a poll, so a ring then only woke its engine onto this CPU
  // (~20-30 us of it a ring, hundreds of rings a second). wake_stalled covers them.
  bool wake_away();
  // With wake_stalled's look: an away peer that read everything sent since it was last rung
  // while `awaiting_acks()` (asked only then: the caller's device waits for
  // acknowledgements). Its last poll's step may have taken the request and held the ACK
  // back for the next step (rc::Device::AckPolicy), which an application spinning on memory
  // never runs; a rung engine steps and sends it. wake_stalled does not ring it: nothing is
  // left unread. Once until the peer reads or this link writes more.
  bool wake_away_for_acks(const std::function<bool()>& awaiting_acks);

  const ShmInbox& inbox() const { return inbox_; }
  uint32_t endpoint() const { return endpoint_; }
  const ShmLinkCounters& counters() const { return counters_; }
  // How many rings warm_spare_channel() has mapped, and whether channel i's is one.
  uint64_t channels_warmed() const;
  bool channel_warmed(uint32_t i) const {
    return (warmed_[i / 64].load(std::memory_order_acquire) >> (i % 64) & 1) != 0;
  }
  // Blocks until channel i's ring is warmed (a test's handshake with the engine thread).
  void wait_channel_warmed(uint32_t i) const;
  // The consumer-distance windows its channel writers have judged (ChannelWriter::windows_*),
  // summed over the peers it writes to: {near, far}.
  std::pair<uint64_t, uint64_t> distance_windows() const;
  // The copy choosers' throughput windows and their changes of way (CopyChooser), summed over
  // the peers: {windows, switches}.
  std::pair<uint64_t, uint64_t> copy_choices() const;
  // The same for the receiver's choice between the ring and by reference (choose_way), summed
  // over the channels it reads.
  std::pair<uint64_t, uint64_t> reference_choices() const;

 protected:
  void copy_large(void* dst, const void* src, size_t n) override;

 private:
  static bool new_channel_ready(const ChannelMemory& mem);  // ready() for a channel poll() has not read yet
  // Calls `f(channel)` for each channel a sender claimed (the inbox's active mask), in order,
  // until one returns true; returns whether one did.
  template <class F>
  bool any_active_channel(F&& f) const {
    const uint32_t words = (inbox_.channels() + 63) / 64;
    for (uint32_t w = 0; w < words; ++w) {
      uint64_t bits = inbox_.active_mask(w);
      while (bits != 0) {
        const uint32_t i = w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
        bits &= bits - 1;
        if (f(i)) return true;
      }
    }
    return false;
  }
  struct Peer {
    uint32_t endpoint;
    ShmInbox inbox;
    Doorbell doorbell;
    std::optional<ChannelWriter> writer;  // nullopt: no channel was free
    // Where the peer had read to and this link had written to when wake_away last rang it:
    // it is rung as away once until one of them moves (wake_stalled rings it meanwhile).
    uint64_t away_rung_head = UINT64_MAX;
    uint64_t away_rung_position = UINT64_MAX;
    // Where the last record this link wrote that holds work for the peer's engine ends (a
    // position of the writer; engine_work()): an RDMA WRITE, READ or atomic request, which
    // the engine finishes without its application. wake_away's early look rings an away
    // peer only for those.
    uint64_t engine_work_end = 0;
    // How large copies into the channel go when peer_copy_ is kAuto.
    CopyChooser copy{};
    bool help_failed = false;  // an offer of a shared copy failed there: none again
  };
  // Where ready() looks in channel i: the position of its reader's next record as the last
  // poll() left it (kNone: no reader yet, or the channel was reclaimed), stored by the lock's
  // holder, once per channel a poll. A position a running poll has moved past still holds its
  // record, which says "ready" (a step that finds nothing): the producer writes over it only a
  // lap later, once the consumer has published a head past it (every quarter ring; and the
  // watch moves before a poll's last publish), and a poll that far behind takes the records
  // anyway.
  struct Watch {
    static constexpr uint64_t kNone = UINT64_MAX;
    // Its reader's next record is a burst whose copy ended later (Reader::later): not ready
    // until the sender, done, sets the channel's later_written (and rings). (A value of `at`, not a word of its own: a Watch stays
    // 32 bytes, two to a line, and ready() loads one word a channel.)
    static constexpr uint64_t kLater = UINT64_MAX - 1;
    std::atomic<uint64_t> at{kNone};
    ChannelMemory mem;  // the channel's memory, fixed at construction
  };
  void watch(uint32_t i, uint64_t at) { watches_[i].at.store(at, std::memory_order_relaxed); }
  struct Reader {
    uint64_t token = 0;
    std::optional<ChannelReader> reader;
    uint32_t packed_at = 0;    // the next sub-frame of the packed record peeked (0: its first)
    // Whether the sender's large bursts should come by reference or through the ring
    // (ChannelControl::reference's kReferencePreferred), measured here, where the bytes land.
    CopyChooser way{false};
    int32_t pid = 0;  // the sender's process (directory), for the copies it offers back
    // The record at the reader's head is a burst by reference whose copy ended later
    // (kHelpWaitBound): it stays there, unreleased, and the channel is not read until the
    // slot of this link's channel to the sender leaves kHelpWaiting; it is then delivered
    // again. The sender is the channel's owner (token).
    bool later = false;
    uint32_t later_qpn = 0;  // while `later`: the QP that burst is for (its BTH's DestQP)
    // While `later`: whether the sender lived when last asked (live_copy_later), and when
    // (cycle_ticks; 0: not asked for this copy).
    bool alive = true;
    uint64_t alive_at = 0;
  };
  // How long live_copy_later() trusts its last answer: kill(pid, 0) is a system call, and a
  // held flush or READ asks at every progress() (a step every microsecond or two). ~55 us
  // here (3.6 GHz), at most 200 us on any counter.
  static constexpr uint64_t kAliveCheckTicks = 200'000;
  // The receiving side of a shared copy (rc::CopyHelp), lent to the device with each burst by
  // reference from a peer this link also sends to (arm()).
  class Help final : public rc::CopyHelp {
   public:
    explicit Help(ShmLink& link) : link_(link) {}
    // `from`: the control of the sender's channel here (its reference word, kReferenceHelped,
    // and later_written).
    void arm(Peer* sender, ChannelControl* from) {
      sender_ = sender;
      from_ = from;
      again_ = false;
      later_ = false;
    }
    // For a burst whose copy ended later, delivered again: the slot still holds its offer,
    // which the sender has written or failed (or `sender` is nullptr: it is gone). The device
    // makes the same offer (the split is the same); offer() checks it is that one, and
    // finish() answers from the slot.
    void arm_again(Peer* sender, ChannelControl* from) {
      arm(sender, from);
      again_ = true;
    }
    // After the delivery: whether its copy ended later; and, for one delivered again that
    // went another way (the QP changed meanwhile), the slot's answer is put away.
    bool later() const { return later_; }
    void disarm();
    bool offer(std::span<const iovec> local, std::span<const iovec> remote) override;
    End finish() override;

   private:
    ShmLink& link_;
    Peer* sender_ = nullptr;
    ChannelControl* from_ = nullptr;
    bool again_ = false;
    bool later_ = false;
  };
  // Whether the process behind a sender's endpoint may still write: softibd marks the
  // endpoint dead when its session closes, and a process that is gone while softibd is too is
  // asked of the kernel.
  bool sender_alive(uint32_t endpoint) const;
  // Whether channel reader r's burst that ended later still waits for its sender's copy.
  bool copy_pending(const Reader& r);
  // Whether reader r's burst ended later and a live sender may still write its copy: what
  // settle_copies() waits for, and copy_later_into() asks for one QP. A sender that died is
  // seen within kAliveCheckTicks.
  bool live_copy_later(Reader& r);
  // Takes an offered copy in channel i's slot, if any, and makes it. REQUIRES: the device's lock.
  // The look is inline (every poll's visit of a channel makes it; an offer is rare).
  void serve_help(uint32_t i) {
    if (watches_[i].mem.control().help.state.load(std::memory_order_relaxed) == kHelpOffered) serve_offered_help(i);
  }
  void serve_offered_help(uint32_t i);
  void serve_helps() {
    any_active_channel([&](uint32_t i) {
      serve_help(i);
      return false;
    });
  }
  void choose_way(Reader& r, const ShmFrameHeader& fh);
  // Returns the packets it took (a burst's count; 1 for any other frame), or 0 when the
  // frame's copy ended later (Reader::later): the record stays for its next delivery.
  uint32_t take_frame(rc::Device& device, Reader& r, const Record& rec);  // r: its channel's reader and sender
  // take_frame()'s and take_express()'s first case: an ordinary frame (a kRecordFrame of one
  // packet, not by reference: a request, an ACK) handed to the device without a burst's
  // fields. False, having done nothing, for any other record.
  bool take_ordinary(rc::Device& device, const Record& rec);
  bool take_packed(rc::Device& device, Reader& r, wire::ByteSpan body, size_t& n, size_t budget, const verbs::Cq* until,
                   size_t want);
  // reserve() and reserve_burst(): a frame may go into the open pack only when `may_pack`.
  wire::MutByteSpan reserve_frame(const rc::FrameAddr& to, Qpn dest_qp, size_t len, bool may_pack);
  wire::MutByteSpan reserve_packed(Peer* p, const rc::FrameAddr& to, size_t len);
  // wake_away()'s and wake_away_for_acks()' ring: once until the peer reads or this link
  // writes more (Peer::away_rung_*). Returns whether it rang.
  bool ring_away(Peer& p, uint64_t head);
  // wake_stalled()'s and wake_away()'s ring: counted, then the doorbell, whether or not the
  // peer's engine sleeps (a ring that finds it between sleeps is not the last word).
  void ring_stalled(Peer& p);
  // The route the last frame took still holds (same directory generation) and leads to `to`.
  bool routed(const rc::FrameAddr& to, Qpn dest_qp) const {
    return route_.peer != nullptr && route_.dlid == to.dlid.value() && route_.block == dest_qp.value() / kQpnBlock &&
           dir_generation_.load(std::memory_order_acquire) == generation_;
  }
  // A record of its own reserved at `room` (header and frame) in p's ring: its frame header
  // written, the frame's bytes returned.
  wire::MutByteSpan start_record(Peer* p, wire::MutByteSpan room, const rc::FrameAddr& to, size_t len);
  // start_record's common part: the frame header at `at` (the record's body), what commit()
  // needs, and the frame's bytes (after `header` bytes of headers) returned. GRH fields, when
  // the record kind has them, are the caller's.
  wire::MutByteSpan start_record_at(Peer* p, uint8_t* at, size_t header, uint16_t kind, const rc::FrameAddr& to,
                                    size_t len) {
    store_frame_header(at, to.slid.value(), to.dlid.value(), to.sl);
    building_at_ = at;
    building_packed_ = false;
    building_ = p;
    building_header_ = header;
    building_kind_ = kind;
    return {at + header, len};
  }
  // Publishes the open pack, if any (inline: most frames find none).
  void flush_pack() {
    if (pack_.peer != nullptr) publish_pack();
  }
  void publish_pack();
  void ring_if_asleep(Peer& p);
  void refresh();
  bool port_active(uint32_t slot);
  bool may_read(int32_t pid);
  Peer* peer(uint32_t endpoint);
  Peer* known_peer(uint32_t endpoint);  // peer() without attaching
  wire::MutByteSpan discard(size_t len);

  const ShmDirectory& dir_;
  // dir_.generation_word(), held: routed() reads it for every frame, one dependent load
  // fewer than through the directory's region.
  const std::atomic<uint64_t>& dir_generation_;
  uint32_t endpoint_;
  uint32_t port_slot_;
  ShmInbox inbox_;
  Resolver resolver_;
  uint64_t token_;
  uint64_t generation_ = UINT64_MAX;
  std::vector<uint8_t> port_state_;  // by port slot: 0 unknown, else IBA PortState
  std::vector<std::unique_ptr<Peer>> peers_;
  Peer* last_peer_ = nullptr;
  // The last destination resolved (valid for one directory generation): most traffic goes
  // to one peer QP at a time, so most frames skip the directory and the peer lookup.
  struct Route {
    uint16_t dlid = 0;
    uint32_t block = UINT32_MAX;
    Peer* peer = nullptr;
  } route_;
  // The address take_ordinary() and take_packed() hand the device with each ordinary frame:
  // they write slid, dlid and sl; the GRH fields stay as constructed (zero, global false).
  // The device's lock.
  rc::FrameAddr ordinary_from_;
  // The frame being built: where (nullptr: discarded) and how much header precedes it.
  Peer* building_ = nullptr;
  size_t building_header_ = 0;
  uint8_t* building_at_ = nullptr;  // its ShmFrameHeader in the ring
  uint16_t building_kind_ = 0;
  bool building_packed_ = false;  // in pack_: building_at_ is its ShmSubFrame
  // The packed record being filled (inside a batch): its peer (nullptr: none), its body in
  // the peer's ring, the bytes used and reserved.
  struct Pack {
    Peer* peer = nullptr;
    uint8_t* body = nullptr;
    size_t used = 0;
    size_t room = 0;
    size_t frames = 0;
    bool engine_work = false;  // a frame in it is (engine_work() in shm_link.cpp)
  } pack_;
  bool packing_ = true;
  bool batching_ = false;
  bool drained_stream_ = false;  // poll(): see drained_a_stream()
  std::vector<uint8_t> scratch_;
  size_t max_burst_ = 0;
  size_t max_ref_burst_ = kRefBurstBytes;
  size_t max_ref_burst_helped_ = kRefBurstHelpedBytes;
  size_t help_min_ = kHelpMinBytes;
  std::chrono::nanoseconds help_patience_{0};
  std::chrono::nanoseconds help_wait_bound_ = kHelpWaitBound;
  std::chrono::nanoseconds settle_warn_after_ = kSettleWarnAfter;
  uint32_t copies_later_ = 0;  // readers whose burst ended later (Reader::later)
  Help help_{*this};
  References references_ = References::kNever;
  PeerCopy peer_copy_ = PeerCopy::kAuto;
  std::array<Reader, kMaxInboxChannels> readers_{};
  uint32_t express_ = UINT32_MAX;  // the channel poll() last took a frame from (take_express)
  std::array<Watch, kMaxInboxChannels> watches_{};
  // The channels whose ring warm_spare_channel() has mapped in this process (bit i: channel i).
  mutable std::array<std::atomic<uint64_t>, kMaxInboxChannels / 64> warmed_{};  // mutable: waited on
  // warm_spare_chunk(): the channel it is mapping and how far it got (the warming thread's).
  uint32_t warming_ = UINT32_MAX;
  size_t warming_at_ = 0;
  ShmLinkCounters counters_;
};

template <class F>
void ShmLink::for_each_polling_peer_cpu(uint64_t now_ns, F&& f) const {
  for (const auto& p : peers_) {
    if (p->inbox.lease_until() < now_ns + kSteadyPollingNs) continue;
    if (const int cpu = p->inbox.lease_cpu(); cpu >= 0) f(cpu);
  }
}

}  // namespace softib::link
