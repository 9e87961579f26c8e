// Device: one HCA as a process sees it. It holds the verbs objects (PDs, MRs, CQs, SRQs,
// QPs, AHs), applies the verbs calls with libibverbs' error semantics, and runs the
// transport: frames come in through receive(), work goes out through progress(), both into
// the FrameSink. It does no I/O and reads time only from its Clock, so a test drives several
// devices through a simulated link in virtual time (rc::SimNet, tests/sim) and the engine
// drives the same code for real.
//
// Thread: verbs object calls, receive() and progress() need the caller to hold lock()
// (the engine or the native API takes it). post_send/post_recv and Cq::poll may run
// concurrently with them from any thread.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/clock.hpp"
#include "base/copy.hpp"
#include "base/counters.hpp"
#include "base/spinlock.hpp"
#include "packet/transport_frame.hpp"
#include "packet/transport_headers.hpp"
#include "rc/frame.hpp"
#include "rc/port.hpp"
#include "rc/qp.hpp"
#include "verbs/ah.hpp"
#include "verbs/async_event.hpp"
#include "verbs/caps.hpp"
#include "verbs/cq.hpp"
#include "verbs/mr.hpp"
#include "verbs/queues.hpp"

namespace softib::rc {

// Why the device dropped a frame (style rule 3: each check has a named reason and a counter).
enum class Drop : uint8_t {
  kMalformed,        // not a well-formed transport frame (PacketView would refuse it)
  kUnsupported,      // an opcode softib does not implement (RD, FLUSH, ...)
  kNoQp,             // no QP with BTH.DestQP
  kQpState,          // the QP cannot receive in its state
  kWrongTransport,   // an RC opcode to a UD QP, ...
  kBadPkey,          // BTH.P_Key does not match the QP's P_Key (IBA 10.9.3)
  kBadQkey,          // DETH.Q_Key does not match the UD QP's Q_Key (IBA 10.2.4)
  kPsnOutOfOrder,    // a request ahead of the expected PSN (NAKed once)
  kDuplicate,        // an old request (re-acknowledged)
  kNoReceiveWqe,     // UC/UD: no receive WQE, the message is lost
  kUcMessageLost,    // UC: the rest of a message whose packet was lost
  kStaleResponse,    // an acknowledgement or read response for nothing outstanding
  kCount,
};
std::string_view to_string(Drop d);

// An asynchronous event and the object it concerns.
struct AsyncEvent {
  verbs::AsyncEventType type;
  verbs::Cq* cq = nullptr;
  Qp* qp = nullptr;
  verbs::Srq* srq = nullptr;
  uint8_t port_num = 0;
};

struct DeviceCounters {
  uint64_t rx_packets = 0;
  uint64_t tx_packets = 0;
  uint64_t retransmits = 0;    // packets sent again after a timeout or NAK
  uint64_t timeouts = 0;
  uint64_t timeouts_copy_later = 0;  // ACK timeouts that spent no retry: a live process still
                                     // writes the answer in (FrameSink::copy_later_into)
  uint64_t rnr_naks_sent = 0;
  uint64_t rnr_naks_received = 0;
  uint64_t seq_naks_sent = 0;
  uint64_t seq_naks_received = 0;
  uint64_t duplicates_replayed = 0;
  uint64_t bursts_taken_apart = 0;  // bursts processed packet by packet (not what was expected next)
  uint64_t ref_bursts_sent = 0;      // bursts whose payload went by reference
  uint64_t ref_pulls = 0;            // by-reference payloads copied straight into their target
  uint64_t ref_pull_failures = 0;    // by-reference payloads that could not be read (burst lost)
  uint64_t fast_received = 0;        // one-packet RC SENDs, WRITEs and ACKs the receive fast paths
                                     // took (receive_send_only, receive_write_only, receive_ack)
  uint64_t fast_sent = 0;            // one-packet WQEs the requester's fast path sent (send_one_packet)
  uint64_t qp_visits = 0;            // QPs progress() looked at (it visits only those with work)
  uint64_t qp_parks = 0;             // QPs parked with only a timer running (Device::park)
  uint64_t walks_skipped = 0;        // polls' steps that held an ACK without progress()'s walk
                                     // (hold_acks_without_progress)
  std::array<uint64_t, static_cast<size_t>(Drop::kCount)> drops{};
  uint64_t dropped(Drop d) const { return drops[static_cast<size_t>(d)]; }
};

class Device {
 public:
  Device(const verbs::DeviceCaps& caps, PortAttr port, FrameSink& sink, const Clock& clock);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // A spin lock (base/spinlock.hpp: spins, then yields), not a std::mutex: every step takes
  // it, and glibc's pthread_mutex_trylock and unlock cost ~84 instructions a step between
  // them, the unlock a locked instruction; the spin lock's unlock is a plain store. Its
  // holders keep it for one step at most (microseconds; the one longer hold is a step's first
  // frame to a new peer, which asks softibd for the peer's inbox, once per peer), and a
  // waiter yields to a holder that lost its CPU.
  SpinLock& lock() { return mu_; }
  const verbs::DeviceCaps& caps() const { return caps_; }
  PortAttr& port() { return port_; }
  const DeviceCounters& counters() const { return counters_; }

  // ---- verbs objects (libibverbs' errno in the Status) ----
  verbs::Pd* alloc_pd();
  Status dealloc_pd(verbs::Pd* pd);  // EBUSY while a QP, MR or AH uses it
  verbs::MrTable& mrs() { return mrs_; }
  Result<verbs::Cq*> create_cq(uint32_t cqe, void* context);
  Status destroy_cq(verbs::Cq* cq);  // EBUSY while a QP uses it
  Result<verbs::Srq*> create_srq(const verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge, uint32_t limit, void* context);
  Status destroy_srq(verbs::Srq* srq);
  Result<verbs::Ah*> create_ah(const verbs::Pd* pd, const verbs::AhAttr& attr);
  Status destroy_ah(verbs::Ah* ah);
  Result<Qp*> create_qp(const verbs::Pd* pd, verbs::Cq* send_cq, verbs::Cq* recv_cq, verbs::Srq* srq,
                        const verbs::QpInitAttr& init, void* context);
  Status modify_qp(Qp* qp, const verbs::QpAttr& attr, uint32_t mask);
  Status destroy_qp(Qp* qp);
  Qp* find_qp(Qpn qpn) const;
  // The QPNs this device hands out: [first, last]. An HCA shared by several processes gives
  // each a block (link/shm_directory.hpp); alone, a device numbers from 0x11 as rxe does.
  void set_qpn_range(uint32_t first, uint32_t last);

  // ibv_post_send / ibv_post_recv: on failure *bad is the index of the WR that failed (the
  // ones before it are posted).
  //
  // A post makes its QP one that progress() visits (active). post_send queues it for the next
  // progress() (queue_posted: a spin lock) unless `notice` says the caller will see to it: it
  // then calls activate() under the device lock, or queue_posted() if it cannot take it
  // (Engine::post_inline, for provider::Context::post_send). Without the lock post_send cannot
  // make it active itself: a progress() on another thread may be dropping the QP, not having
  // seen the new WQE yet.
  enum class PostNotice : uint8_t { kQueue, kCallerActivates };
  Status post_send(Qp* qp, std::span<const verbs::SendWr> wrs, size_t* bad,
                   PostNotice notice = PostNotice::kQueue);
  // One WR posted by a thread that holds the device lock, for the step of its post
  // (engine::Engine::post: ACKs held one step, timers later). When all that post and that step
  // would do is send this WR as one packet through the requester's fast path
  // (send_one_packet: a SEND or RDMA WRITE, with or without immediate, inline or of one SGE
  // whose L_Key resolves, within the path MTU) on an RC QP in RTS with nothing else to do (no
  // request waiting, none started, no flush, no responder output, no ACK that must go ahead of
  // the request), and `qp` is the only active QP, and no modify, frame or other thread's post
  // has given a QP work since the last progress(), and the timers need no look yet
  // (kMaxTimerDeferrals): the frame goes to the link first, and the WQE is written after it,
  // as post_send would have written it, while the request is on its way to the peer. Then
  // `qp` is made active, its ACK held or sent and the QP kept or parked as progress() would.
  // Returns the post's status (always ok); nullopt, having changed nothing, when any of that
  // does not hold: the caller posts with post_send and steps as ever. A link that refuses the
  // frame leaves the WQE as send_one_packet leaves one (started, nothing sent).
  //
  // The WQE's copy and post_send's checks are then off the path from a ping-pong's request to
  // its answer, and so are progress()'s walk and the requester's loop (bench/instructions.py
  // --mode critical). tests/protocol/rc_fast_path_test.cpp holds it to post_send + progress().
  std::optional<Status> post_send_now(Qp& qp, const verbs::SendWr& wr);
  // What post_send would refuse in `wrs`, without posting: *bad is the first it would refuse
  // (the QP's state, the opcode, a UD request's AH, SendQueue::check, or no room left for it
  // behind those before it). For ibv_wr_complete, which posts all or nothing (libibverbs:
  // "the entire posting will be aborted"): check, then post_send. Only the transport frees
  // send slots, so the room checked is there for the post, unless another thread posts to the
  // QP between the two (which libibverbs forbids inside the wr_start/wr_complete region).
  Status check_send(const Qp& qp, std::span<const verbs::SendWr> wrs, size_t* bad) const;
  Status post_recv(Qp* qp, std::span<const verbs::RecvWr> wrs, size_t* bad);
  Status post_srq_recv(verbs::Srq* srq, std::span<const verbs::RecvWr> wrs, size_t* bad);

  // The QPs progress() visits are those that may have work for it (has_untimed_work): WQEs to
  // send, an ACK to send or held, responses queued, a flush or a drain to finish. A frame for
  // a QP, a post, a modify or an error makes it active; progress() drops it once it has none
  // of these. A step then costs the same with 1 QP or 10,000 idle ones
  // (a walk over every QP cost ~65 instructions each: with 1,000 idle QPs beside it, an
  // 8-byte ping-pong took 31 us a half round trip instead of 0.24; bench_verbs --idle-qps).
  // REQUIRES (activate): the lock. queue_posted: any thread; the next progress() adopts it.
  //
  // A QP whose only work is a timer (awaiting its ACK, or an RNR wait, and nothing else) is
  // not visited either, unless few QPs are active (kFewActive): progress() parks it (timed_)
  // and looks at the parked QPs only when the earliest of their deadlines has passed. The ACK
  // that stops the timer is a frame, which makes the QP active again; so a server with many
  // requests in flight visits only the QPs that frames reached since its last step.
  void activate(Qp& qp) {
    if (!qp.active_) {
      if (qp.timed_at_ != Qp::kNotTimed) unpark(qp);
      qp.active_ = true;
      active_.push_back(&qp);
    }
  }
  void queue_posted(Qp& qp);
  size_t active_qps() const { return active_.size(); }
  size_t parked_qps() const { return timed_.size(); }
  // A QP whose only work is a timer stays active while at most this many are (itself
  // included): a ping-pong's QP awaits an ACK after each request, and parking and unparking it
  // each time (a push, a swap-remove: ~25 instructions, twice a round trip) cost its 8-byte
  // half round trip ~10 ns (bench_verbs selflat), more than the visits it saves.
  static constexpr size_t kFewActive = 4;
  // For tests: another threshold (0: every timer-only QP is parked).
  void set_few_active(size_t n) { few_active_ = n; }

  // Async events (ibv_get_async_event). The engine drains these into the async fd.
  std::vector<AsyncEvent> take_async_events();
  bool has_async_events() const { return !async_.empty(); }

  // ---- transport ----
  // One frame from a link (a burst when burst.packets > 1: rc/frame.hpp).
  void receive(const FrameAddr& from, wire::ByteSpan transport, const Burst& burst = Burst{});
  // The fast paths (receive_send_only, receive_write_only, receive_ack, send_one_packet) on or
  // off: off, every packet takes the general path.
  // For the test that holds the two to the same results, and for bisecting.
  void set_fast_paths(bool on) { fast_paths_ = on; }
  // Sends what the requesters may send, fires due timers, flushes coalesced ACKs and
  // completes flushed work. Returns true when it did anything. An ACK that is not held goes
  // out ahead of the requests (a device acknowledges a request as it takes it, before its
  // application can answer; programs that wait on one channel for both CQs count on that).
  //
  // AckPolicy::kHoldOneStep (the step of an application's poll): a QP's coalesced ACK waits
  // for the next progress() call, on QPs whose local ACK timeout is at least
  // kHoldAckMinTimeout (or 0, none). A program that takes a completion and answers at once
  // then sends its reply ahead of the ACK: the peer finds the reply in the first line it
  // reads, and this process does not wait for the ACK's cache line to reach it before its
  // next locked instruction (the 8-byte ping-pong's mean half round trip, with the engine's
  // StepKind: 0.87 -> 0.65 us on far vCPUs). The next step flushes it: the application's
  // next poll or post, or its engine once the application stops (at the end of its lease,
  // at most link::kLeaseMaxNs), far inside any such timeout.
  //
  // Lazy ACKs (ResponderState::ack_lazy: packets that asked for none) go only under kSendAll,
  // a step that took no frame (the engine's, or an idle poll's) and every caller outside the
  // engine: a ping-pong's steps all take frames, and its ACKs ride on the requested ones.
  enum class AckPolicy : uint8_t { kSendNow, kHoldOneStep, kSendAll };
  //
  // Timers::kLater: the retransmission and RNR timers are not looked at in this call. For a
  // caller with something to hand its application at once (a post's new request, a poll's
  // answer): a look reads the clock (a virtual call and CLOCK_MONOTONIC_COARSE, ~10 ns here),
  // and IBA timers are lower bounds, so one more step is late by nothing that matters. The
  // caller's next progress() looks (the engine's always do), and every kMaxTimerDeferrals-th
  // kLater call in a row looks anyway: a thread whose every poll has its answer (a stream
  // coming in) still sees another QP's retransmission timer run out.
  enum class Timers : uint8_t { kRun, kLater };
  static constexpr uint32_t kMaxTimerDeferrals = 16;
  bool progress(AckPolicy acks = AckPolicy::kSendAll, Timers timers = Timers::kRun);
  // For the step of an application's poll that has its answer (kHoldOneStep): when every frame
  // received since the last progress() was a one-packet SEND of the fast path, to one QP, no
  // ACK is held yet, no output waits for the link, and no modify, error or other thread's post
  // has given a QP work since, all that progress() would do is hold that QP's ACK. This holds
  // it without progress()'s walk over the active QPs and returns true; otherwise it changes
  // nothing and returns false, and the caller runs progress(). The walk is on the path from a
  // ping-pong's request to its answer (8-byte half round trip, interleaved runs: see
  // src/rc/README.md). Inline, below: a call on that path (~10 instructions).
  bool hold_acks_without_progress();
  // The earliest timer deadline, for the engine's sleep (nullopt: no timer runs).
  std::optional<TimePoint> next_deadline() const;
  // The link refused a frame during the last receive or progress step (flow control): work is
  // waiting for room, so the engine should step again soon rather than sleep.
  bool output_blocked() const { return refused_; }

 private:
  // device.cpp
  void to_error(Qp& qp);
  void reset_transport(Qp& qp);
  void flush(Qp& qp);
  // flush(qp), unless another process may still write into its WRs' buffers
  // (FrameSink::copy_later_into: a shared copy that ended later): a flush completes those WRs
  // and hands the buffers back. The flush is then held (Qp::flush_held_, off the active QPs:
  // no step spins on it), and each progress() looks again (release_held_flushes) until that
  // copy has ended or its writer is gone. Returns whether it flushed.
  bool flush_unless_copy_later(Qp& qp);
  void release_held_flushes();
  void drop_held_flush(Qp& qp);
  void async(AsyncEvent e) { async_.push_back(e); }
  PKey qp_pkey(const Qp& qp) const;
  FrameAddr address_of(const verbs::AhAttr& ah) const;
  // address_of(the QP's AV), for RC and UC, kept in the QP (Qp::path_) while the port's LID
  // holds: every frame a connected QP sends goes there. Built afresh for each frame, it was
  // written field by field and read back at once as wider words (the copy, the link's frame
  // header), loads the store buffer cannot serve: each waited for every older store to reach
  // the cache, an ACK's for the request's ring lines still on their way to the peer's core
  // (perf, 8-byte ping-pong: ~6 % of both processes' samples in address_of and the two loads).
  const FrameAddr& path_of(Qp& qp) {
    if (qp.path_cached_ && qp.path_lid_ == port_.lid) return qp.path_;
    return refresh_path(qp);
  }
  const FrameAddr& refresh_path(Qp& qp);
  // False when the link refused the frame (flow control): the caller keeps the work.
  bool send_frame(const FrameAddr& to, const packet::TransportHeaders& h, wire::ByteSpan payload);
  // A frame of `len` transport bytes that `write(out)` fills: reserved, counted and committed.
  // `write` returns false to drop the frame uncommitted (the requester's gather found a bad
  // L_Key). False when the link refused the frame or `write` dropped it.
  template <typename Write>
  bool send_written(const FrameAddr& to, Qpn dest_qp, size_t len, Write&& write) {
    wire::MutByteSpan out = sink_.reserve(to, dest_qp, len);
    if (out.size() < len) {
      refused_ = true;
      return false;
    }
    if (!write(out.first(len))) return false;
    ++counters_.tx_packets;
    sink_.commit(len);
    return true;
  }
  void complete_send(Qp& qp, verbs::SendWqe& w, verbs::WcStatus status);
  verbs::WorkCompletion send_completion(const Qp& qp, const verbs::SendWqe& w, verbs::WcStatus status) const;
  void complete_recv(Qp& qp, const verbs::WorkCompletion& wc, bool solicited);
  verbs::WorkCompletion recv_error(const Qp& qp, uint64_t wr_id, verbs::WcStatus status) const;
  verbs::WorkCompletion received(const Qp& qp, const FrameAddr& from, uint64_t wr_id, verbs::WcOpcode op) const;
  // The fields every successful receive completion carries (IBA 11.4.2.1: for RC/UC the
  // source QP is the connected peer; for UD the caller overwrites it from the DETH), into a
  // value-initialised completion.
  void fill_received(verbs::WorkCompletion& wc, const Qp& qp, const FrameAddr& from, uint64_t wr_id,
                     verbs::WcOpcode op) const {
    wc.wr_id = wr_id;
    wc.opcode = op;
    wc.qp_num = qp.qpn_;
    wc.src_qp = qp.attr_.dest_qp_num;
    wc.slid = port_.roce ? Lid() : from.slid;
    wc.sl = from.sl;
    wc.pkey_index = qp.attr_.pkey_index;
  }
  void drop(Drop d) { ++counters_.drops[static_cast<size_t>(d)]; }

  // requester.cpp
  bool run_requester(Qp& qp);
  enum class SendResult : uint8_t { kSent, kBlocked, kFailed };
  // `path`: address_of(the QP's AV), for RC and UC (UD takes each WQE's AH).
  SendResult send_wqe_packets(Qp& qp, verbs::SendWqe& w, uint32_t pos, const FrameAddr& path);
  std::optional<SendResult> send_one_packet(Qp& qp, verbs::SendWqe& w, uint32_t pos, const FrameAddr& path);
  // send_one_packet's pieces, which post_send_now shares: always inlined, as send_one_packet
  // was whole (run_requester's loop sends a batch through them: out of line, or through a
  // struct of the request's fields, a batch's sender took ~25-45 instructions a message more,
  // bench/instructions.py --mode rate).
  //
  // The opcode of a WR the fast path sends as one packet; nullopt for every other.
  [[gnu::always_inline]] static inline std::optional<packet::Opcode> one_packet_opcode(verbs::WrOpcode op);
  // The payload's source for a WQE or WR of `num_sge` SGEs (`sge`) that is not inline:
  // nullptr when it is more than one SGE or its L_Key does not resolve; `any` when it is empty.
  [[gnu::always_inline]] inline const uint8_t* one_packet_source(Qp& qp, uint32_t num_sge, const verbs::Sge* sge,
                                                                 uint64_t length, const uint8_t* any);
  // Reserves, writes and commits the frame of `r` (a verbs::SendWqe, or post_send_now's view
  // of the WR: send_flags, imm_data, remote_addr, rkey, length, is_inline), its payload at
  // `src`; false when the link refused it (nothing written).
  template <class Request>
  [[gnu::always_inline]] inline bool write_one_packet(Qp& qp, packet::Opcode op, const Request& r, const uint8_t* src,
                                                      const FrameAddr& path, bool ack_req);
  [[gnu::always_inline]] inline void sent_one_packet(Qp& qp, verbs::SendWqe& w, uint32_t pos, bool ack_req);
  // Whether the last packet of a message asks for an ACK (BTH AckReq; see kAckReqInterval):
  // its WQE is signaled (its completion needs the ACK), kAckReqInterval packets or half the
  // send queue's depth have gone since the last request (its slots come back with ACKs: a
  // queue of unsignaled WQEs never waits on a lazy one), the QP's timeout is too short for a
  // lazy ACK (Qp::acks_may_wait), or it is a retransmission.
  [[gnu::always_inline]] inline bool asks_ack(const Qp& qp, bool signaled) const;
  [[gnu::always_inline]] inline void refused_one_packet(Qp& qp, verbs::SendWqe& w);
  template <class Piece>
  bool for_each_piece(Qp& qp, const verbs::SendWqe& w, uint64_t offset, uint64_t len, Piece piece);
  size_t gather_refs(Qp& qp, const verbs::SendWqe& w, uint64_t offset, uint64_t len, RefSegment* out, size_t max);
  SendResult send_burst(Qp& qp, verbs::SendWqe& w, uint32_t pos, const FrameAddr& to, packet::TransportHeaders& h,
                        uint32_t n, bool by_reference = false);
  void restart_from(Qp& qp, Psn psn);
  void fail_wqe(Qp& qp, uint32_t pos, verbs::WcStatus status);
  bool gather(Qp& qp, const verbs::SendWqe& w, uint64_t offset, uint64_t len, uint8_t* out);

  // completer.cpp
  struct RefPayload;
  // `packets`: the response stands for that many read responses (a burst: p.payload() holds
  // them all, or `ref` names them in the responder's memory; `last` is the last one's row),
  // else 1.
  void on_response(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p, uint32_t packets = 1,
                   const packet::OpcodeInfo* last = nullptr, const RefPayload* ref = nullptr);
  void ack_up_to(Qp& qp, Psn psn);   // completes SEND/WRITE WQEs whose last PSN <= psn
  bool implied_nak(Qp& qp, Psn psn);
  void fail_oldest(Qp& qp, verbs::WcStatus status);
  bool run_timers(Qp& qp);
  void arm_ack_timer(Qp& qp);

  // burst.cpp
  void receive_burst(const FrameAddr& from, wire::ByteSpan transport, const Burst& burst);
  bool expected_read_burst(Qp& qp, Psn psn);  // REQUIRES: device lock
  // Whether the QP's state lets its completer take responses (RTS, SQD, SQE).
  static bool taking_responses(const Qp& qp) {
    return qp.state_ == verbs::QpState::kRts || qp.state_ == verbs::QpState::kSqd || qp.state_ == verbs::QpState::kSqe;
  }
  // A by-reference payload: where it is in the sending process.
  struct RefPayload {
    int32_t pid = 0;
    std::span<const iovec> segments;
    uint64_t bytes = 0;
    CopyHelp* help = nullptr;  // the sending process may write a part in (Burst::help)
    enum class Copy { kDone, kFailed, kLater };
    // process_vm_readv; kFailed unless every byte came; kLater: the sending process is still
    // writing its part (CopyHelp::End::kLater), and the caller leaves everything as it was.
    Copy copy_to(uint8_t* dst) const;
    Copy copy_to(std::span<const iovec> local) const;  // the same, scattered (`bytes` in all)
  };
  // A by-reference burst's first packet's headers into `out` (write_transport_headers wants
  // room for a packet's payload, which the frame does not have).
  void write_ref_headers(const packet::OpcodeInfo& info, const packet::TransportHeaders& h, uint32_t mtu,
                         wire::MutByteSpan out);
  void receive_ref_burst(const FrameAddr& from, wire::ByteSpan transport, const Burst& burst);
  bool request_burst(Qp& qp, const FrameAddr& from, const packet::OpcodeInfo& last, const Burst& b,
                     wire::ByteSpan data, const RefPayload* ref = nullptr);
  void explode(const FrameAddr& from, const packet::TransportHeaders& first, const packet::OpcodeInfo& first_info,
               const Burst& b, wire::ByteSpan data);
  bool scatter_ok(const Qp& qp, const verbs::RecvWqe& w, uint64_t offset, uint64_t len) const;

  // responder.cpp
  void on_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p);
  void on_rc_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p);
  void on_uc_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p);
  void on_ud_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p);
  enum class Exec : uint8_t { kOk, kRnr, kNakInvalid, kNakAccess, kNakOperational, kDropped };
  Exec execute(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p);
  Exec execute_read(Qp& qp, const packet::TransportFrame& p, bool duplicate);
  Exec execute_atomic(Qp& qp, const packet::TransportFrame& p);
  void send_read_responses(Qp& qp, const Resource& r, Psn from_psn, uint64_t va, uint32_t length);
  void send_ack(Qp& qp, Psn psn, wire::Aeth aeth);
  void send_atomic_ack(Qp& qp, const Resource& res);
  void duplicate_request(Qp& qp, const packet::TransportFrame& p);
  // Writes `data` at `offset` of the WQE's SGEs; false with `fault` (LocLenErr, LocProtErr)
  // when it does not fit or an SGE does not resolve. Inline for one SGE (nearly every receive
  // WQE: callgrind, 64-byte SEND, ~45 instructions against ~110 through the loop).
  [[gnu::always_inline]] bool scatter(Qp& qp, verbs::RecvWqe& w, uint64_t offset, wire::ByteSpan data,
                                      verbs::WcStatus* fault) {
    if (w.num_sge != 1 || data.empty() || offset + data.size() > w.length)
      return scatter_sges(qp, w, offset, data, fault);
    const verbs::Sge& s = w.sge[0];
    uint8_t* dst = nullptr;
    if (mrs_.resolve_local(s.lkey, qp.pd_, s.addr + offset, data.size(), verbs::access::kLocalWrite, &dst) !=
        verbs::MemFault::kNone) {
      *fault = verbs::WcStatus::kLocProtErr;
      return false;
    }
    copy_small(dst, data.data(), data.size());  // a small SEND's bytes: no library call
    return true;
  }
  bool scatter_sges(Qp& qp, verbs::RecvWqe& w, uint64_t offset, wire::ByteSpan data, verbs::WcStatus* fault);
  // `qp`: the QP the frame's BTH names (receive() looked it up), or null.
  bool receive_send_only(const FrameAddr& from, wire::ByteSpan t, Qp* qp);
  bool receive_write_only(wire::ByteSpan t, Qp* qp);
  Qp* fast_path_request(wire::ByteSpan t, size_t header_len, Qp* frame_qp, wire::ByteSpan* data) const;
  bool receive_ack(wire::ByteSpan t, Qp* qp);
  // `qp` (the QP the frame names) if a fast path may take the frame: an RC QP whose P_Key
  // matches the frame's (the checks of receive() before it dispatches); else nullptr.
  // REQUIRES: at least a BTH at `bth`.
  Qp* fast_path_qp(Qp* qp, const uint8_t* bth) const {
    if (qp == nullptr || qp->type() != verbs::QpType::kRc) return nullptr;
    return pkey_match(PKey(wire::load_be16(bth + 2)), qp_pkey(*qp)) ? qp : nullptr;
  }
  // Takes the RQ's (or SRQ's) first WQE into qp.resp_.held for the message that starts.
  // REQUIRES: the queue is not empty.
  void take_receive_wqe(Qp& qp);
  void flush_acks(Qp& qp);
  void emit(Qp& qp, OutJob& job);  // runs `job` now (it may advance job.next) or queues a copy
  bool run_job(Qp& qp, OutJob& job);
  bool pump_output(Qp& qp);

  verbs::DeviceCaps caps_;
  PortAttr port_;
  FrameSink& sink_;
  const Clock& clock_;
  SpinLock mu_;
  DeviceCounters counters_;
  verbs::MrTable mrs_;
  std::list<verbs::Pd> pds_;
  std::list<verbs::Cq> cqs_;
  std::list<verbs::Srq> srqs_;
  std::list<verbs::Ah> ahs_;
  std::unordered_map<uint32_t, std::unique_ptr<Qp>> qps_;
  // The QPs progress() visits (activate), in no particular order; and those posted to by a
  // thread without the lock since the last progress() (queue_posted), with a flag read first.
  std::vector<Qp*> active_;
  SpinLock posted_mu_;
  std::vector<Qp*> posted_;
  std::atomic<bool> has_posted_{false};
  // Moves posted_ into active_; true if it moved any.
  bool adopt_posted() { return has_posted_.load(std::memory_order_acquire) && adopt_posted_slow(); }
  bool adopt_posted_slow();
  bool visit(Qp& qp, AckPolicy acks, Timers timers);  // progress() for one QP
  // Work for progress() besides a timer: an ACK to send or held, WQEs to send, responses
  // queued, a drain or a flush to finish. Without it a QP leaves active_: parked (timed_) if a
  // timer runs, else idle.
  bool has_untimed_work(const Qp& qp) const;
  // A visited QP's ACK (pending, under AckPolicy::kHoldOneStep): held, or sent if the last
  // step held it already.
  void hold_or_flush_ack(Qp& qp);
  // Whether qp's pending ACK goes out in a visit under `acks`: a lazy one only under
  // kSendAll, a requested one unless a poll's step holds it (kHoldOneStep, acks_may_wait()).
  static bool ack_goes_now(const Qp& qp, AckPolicy acks) {
    if (!qp.resp_.ack_pending) return false;
    if (qp.resp_.ack_lazy) return acks == AckPolicy::kSendAll;
    return !(acks == AckPolicy::kHoldOneStep && qp.acks_may_wait());
  }
  // After active_[i]'s visit: true when it stays active; else it leaves active_ (the last one
  // takes its place) and is parked if a timer runs.
  bool settle_visited(size_t i);
  void deactivate(Qp* qp);  // drops it from active_, timed_ and posted_ (destroy_qp)
  // The QPs whose only work is a timer (ack_timer, rnr_wait), out of active_; timed_due_ is at
  // or before the earliest of their deadlines (a QP unparked since may have held it: early is
  // only a look too many). Qp::timed_at_ is a QP's index here.
  std::vector<Qp*> timed_;
  TimePoint timed_due_{};
  size_t few_active_ = kFewActive;
  void park(Qp& qp);
  void unpark(Qp& qp);
  // Makes the parked QPs whose deadline has passed active again; recomputes timed_due_.
  void wake_parked();
  uint32_t timer_deferrals_ = 0;  // progress() calls in a row that did not look at the timers
  // The QP find_qp() found last: most frames in a row go to one QP (a hash lookup costs a
  // division by the bucket count). Reset when that QP is destroyed.
  mutable Qp* last_qp_ = nullptr;
  uint32_t next_pd_ = 1;
  uint32_t qpn_first_ = 0x11;  // rxe's first QPN (QP0/QP1 are the special QPs)
  uint32_t qpn_last_ = Qpn::kMask - 1;
  uint32_t next_qpn_ = 0x11;
  std::vector<AsyncEvent> async_;
  bool refused_ = false;
  bool fast_paths_ = true;
  // Since the last progress() (hold_acks_without_progress): a frame came in that progress()
  // may have work for (anything but a fast-path SEND, or SENDs to a second QP); the QP whose
  // fast-path SEND asked for an ACK; whether some QP's ACK is held (set by progress() when it
  // holds one, so a destroyed QP's only leaves one more walk).
  bool owed_ = false;
  Qp* ack_qp_ = nullptr;
  bool holds_acks_ = false;
  packet::TransportFrame rx_;  // the frame receive() is working on (reused: no copy per frame)
  std::vector<uint8_t> explode_;  // one packet of a burst taken apart
  // A by-reference burst's copy ended later (RefPayload::Copy::kLater): the burst changed
  // nothing and is not counted; its link delivers it again.
  bool ref_later_ = false;
  std::vector<Qp*> held_flushes_;  // QPs whose flush waits for a copy that ended later
  std::vector<uint8_t> ref_probe_, ref_scratch_, ref_headers_;  // a by-reference burst's first packet; its bytes fetched
};

inline bool Device::hold_acks_without_progress() {
  // Work progress() would find: a QP another thread posted to (adopt_posted), or one that a
  // modify made active (owed_). A QP sent to Error needs no mark of its own: to_error() runs
  // inside a modify, a walk (which flushes it before it ends) or a frame that is not a
  // fast-path SEND (owed_ already).
  if (owed_ || holds_acks_ || refused_ || has_posted_.load(std::memory_order_relaxed)) return false;
  if (ack_qp_ != nullptr) {
    Qp& qp = *ack_qp_;
    // As progress() decides: only a QP whose ACK timeout allows it holds (else it goes now).
    if (!qp.resp_.ack_requested() || qp.flush_pending_ || !qp.acks_may_wait()) return false;
    qp.resp_.ack_held = true;
    holds_acks_ = true;
    ack_qp_ = nullptr;
  }
  ++counters_.walks_skipped;
  return true;
}

}  // namespace softib::rc
