// A queue pair: the verbs object (attributes, state, work queues, CQs) and the state of its
// three transport engines (IBA 9.7, 9.8, 9.9; the split is rxe's):
//
//   requester  turns send WQEs into request packets: PSNs, segmentation to the path MTU,
//              the window of unacknowledged packets, max_rd_atomic, fences
//   completer  takes acknowledgements, NAKs, read responses and atomic acknowledgements;
//              completes send WQEs in order; retransmits (timeout, sequence NAK, RNR)
//   responder  takes request packets: PSN checks, duplicates, receive WQEs, memory
//              access through R_Keys, READ/atomic resources, ACK/NAK generation
//
// Thread: everything here runs under the owning Device's progress lock, except the posts
// into sq/rq (their own locks; see verbs/queues.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "base/clock.hpp"
#include "rc/frame.hpp"
#include "verbs/cq.hpp"
#include "verbs/mr.hpp"
#include "verbs/qp_attr.hpp"
#include "verbs/queues.hpp"
#include "wire/aeth.hpp"

namespace softib::rc {

// The requester stops sending new packets when this many are unacknowledged (rxe's
// RXE_MAX_UNACKED_PSNS is 128). 512 packets of a 4 KiB MTU are 2 MiB, twice the shared-memory
// ring: a large WRITE then never waits for an ACK's round trip with the ring empty (RDMA WRITE
// 1 MiB, bench_verbs bw: 20.9 GB/s at 128, 24.6 at 256, 28.3 at 512). It asks for an
// acknowledgement every kAckReqInterval packets within a long message so the window keeps
// moving.
//
// The last packet of a message asks for one only when something waits on it (Device::
// asks_ack: a signaled WQE, a retransmission, a QP whose timeout allows no lazy ACK, a send
// queue half full), as a ConnectX requester with log_ack_req_freq does (UCX sets it to 8 on
// RC: an AckReq every 256 packets besides the signaled WQEs); else every kAckReqInterval
// packets. A responder acknowledges the packets that asked for nothing lazily: with the next
// requested ACK, or at its next step that takes no frame (ResponderState::ack_lazy).
inline constexpr uint32_t kMaxUnackedPackets = 512;
inline constexpr uint32_t kAckReqInterval = 32;
// The smallest QP timeout attribute (4.096 us * 2^13 = 33.5 ms) for which an application
// thread's step may hold a coalesced ACK back (Device::AckPolicy).
inline constexpr uint8_t kHoldAckMinTimeout = 13;

struct RequesterState {
  uint32_t send_pos = 0;        // SQ position of the WQE being sent or next to start
  uint64_t send_offset = 0;     // bytes of it already sent (READ: already requested)
  bool send_started = false;    // its first packet went out (first_psn is set)
  Psn next_psn{};               // PSN of the next packet
  Psn una{};                    // oldest unacknowledged PSN
  uint32_t packets_since_ackreq = 0;
  Psn sent_high{};              // one past the highest PSN ever sent (for counting retransmits)
  uint32_t rd_outstanding = 0;  // READ/atomic WQEs sent and not completed
  // Read responses of the oldest outstanding READ arrive from this PSN on.
  Psn read_psn{};
  bool read_psn_valid = false;
  // Retransmission (IBA 9.7.6.1): the local ACK timer and the retry budgets.
  uint8_t retry_left = 0;
  uint8_t rnr_left = 0;
  bool ack_timer = false;
  TimePoint ack_deadline{};
  bool rnr_wait = false;
  TimePoint rnr_deadline{};
  Psn rnr_psn{};
  // Whether either timer runs, and the earlier deadline of those that do (REQUIRES: one runs).
  bool timer_runs() const { return ack_timer || rnr_wait; }
  TimePoint timer_deadline() const {
    if (ack_timer && rnr_wait) return std::min(ack_deadline, rnr_deadline);
    return ack_timer ? ack_deadline : rnr_deadline;
  }
  // A go-back triggered by a response (an implied NAK, a gap in read responses) is under way:
  // further triggers wait until something new is acknowledged (rxe's started_retry), so one
  // loss does not set off a retransmission for every late or duplicate response.
  bool retry_started = false;
  // A PSN sequence NAK for this PSN was acted on; repeats of it are ignored until the
  // requester makes progress past it.
  bool seq_nak_seen = false;
  Psn seq_nak_psn{};
  // A WQE the requester could not send (a local protection or length error) fails the QP;
  // WQEs before it may still be outstanding, so its status waits for flush() to reach it and
  // completions stay in order (IBA 10.8.3.1, 11.4.2; rxe marks it wqe_state_error likewise).
  bool failed_wqe = false;
  // SQD (IBA 10.3.1): the send queue drains — what was started finishes and is acknowledged;
  // then IBV_EVENT_SQ_DRAINED if the modify asked for it (en_sqd_async_notify).
  bool draining = false;
  bool drain_notify = false;
  uint32_t failed_pos = 0;
  verbs::WcStatus failed_status = verbs::WcStatus::kSuccess;
};

// A READ or atomic the responder executed, kept for replay to a duplicate request
// (IBA 9.7.5.1.3 "responder resources"; max_dest_rd_atomic of them).
struct Resource {
  enum class Kind : uint8_t { kNone, kRead, kAtomic } kind = Kind::kNone;
  Psn first_psn{};
  Psn last_psn{};
  uint64_t va = 0;
  RKey rkey{};
  uint32_t length = 0;
  uint64_t original = 0;  // atomic: the value before the operation
  uint32_t msn = 0;       // the MSN its response carried
};

// A response the link could not take yet (flow control, rc/frame.hpp): responses leave in the
// order the responder made them, so once one waits, the ones after it queue behind it.
struct OutJob {
  enum class Kind : uint8_t { kAeth, kAtomicAck, kReadResponses } kind = Kind::kAeth;
  Psn psn{};              // kAeth: the PSN it acknowledges; kAtomicAck: the request's PSN;
                          // kReadResponses: the PSN of the response's first packet
  wire::Aeth aeth;        // kAeth
  uint64_t original = 0;  // kAtomicAck
  uint32_t msn = 0;       // kAtomicAck, kReadResponses
  RKey rkey{};            // kReadResponses: the READ's memory, [va, va + length)
  uint64_t va = 0;
  uint32_t length = 0;
  uint32_t next = 0;      // kReadResponses: packets already sent
};

struct ResponderState {
  Psn epsn{};               // expected PSN
  uint32_t msn = 0;         // messages completed (24 bits on the wire)
  enum class InMsg : uint8_t { kNone, kSend, kWrite } in_msg = InMsg::kNone;
  bool in_msg_imm_wqe = false;  // the WQE of a WRITE_WITH_IMM is taken at its last packet
  // The receive WQE a SEND (or WRITE_WITH_IMM) is filling: taken off the RQ/SRQ into `held`
  // at the message's first packet, so QPs sharing an SRQ never fill the same one.
  verbs::RecvWqe* wqe = nullptr;
  verbs::RecvWqe held;
  uint64_t recv_offset = 0;
  // RDMA WRITE in progress.
  uint8_t* write_at = nullptr;
  uint64_t write_left = 0;
  uint64_t write_length = 0;
  // UC: a message was dropped; everything until the next FIRST/ONLY is dropped too.
  bool uc_dropping = false;
  // A PSN sequence error NAK was sent for epsn; no more until epsn arrives (IBA 9.7.5.1.2).
  bool nak_sent = false;
  // ACK coalescing: one ACK per progress step for the newest PSN executed.
  bool ack_pending = false;
  bool ack_held = false;  // a kHoldOneStep progress() kept it back; the next one sends it
  // Pending for packets that asked for no ACK (AckReq clear) only: it goes with the next ACK
  // a packet asks for, or at a step that takes no frame (AckPolicy::kSendAll), not before:
  // the requester waits on nothing it would answer.
  bool ack_lazy = false;
  Psn ack_psn{};
  // A request executed in sequence at `psn`: its ACK is pending, lazily if it asked for none
  // (and no requested one is pending already).
  void ack_executed(Psn psn, bool ack_req) {
    ack_lazy = !ack_req && (!ack_pending || ack_lazy);
    ack_pending = true;
    ack_psn = psn;
  }
  // The pending ACK went out, or a NAK stands for it.
  void ack_done() { ack_pending = ack_held = ack_lazy = false; }
  // An ACK is pending that a packet asked for (not only a lazy one): a visit holds or sends it.
  bool ack_requested() const { return ack_pending && !ack_lazy; }
  std::vector<Resource> resources;
  uint32_t resource_next = 0;
  std::deque<OutJob> out;  // responses waiting for the link, oldest first
};

class Qp {
 public:
  Qp(Qpn qpn, const verbs::QpInitAttr& init, const verbs::Pd* pd, verbs::Cq* send_cq, verbs::Cq* recv_cq,
     verbs::Srq* srq, void* context);
  Qp(const Qp&) = delete;
  Qp& operator=(const Qp&) = delete;

  Qpn qpn() const { return qpn_; }
  verbs::QpType type() const { return init_.qp_type; }
  verbs::QpState state() const { return state_; }
  // IBA 10.3.1: a QP receives requests from RTR on, not in Reset, Init or Error. One load of
  // the state (three comparisons of the atomic loaded it three times).
  bool receives() const {
    const verbs::QpState s = state_.load(std::memory_order_relaxed);
    return s != verbs::QpState::kReset && s != verbs::QpState::kInit && s != verbs::QpState::kError;
  }
  const verbs::QpAttr& attr() const { return attr_; }
  // Whether its ACKs may wait a step or more (held by a poll's step, AckPolicy::kHoldOneStep;
  // lazy ones, ResponderState::ack_lazy): its timeout attribute is kHoldAckMinTimeout or more,
  // or 0 (none). Its peer is taken to use the same.
  bool acks_may_wait() const { return attr_.timeout == 0 || attr_.timeout >= kHoldAckMinTimeout; }
  const verbs::QpInitAttr& init_attr() const { return init_; }
  const verbs::Pd* pd() const { return pd_; }
  verbs::Cq* send_cq() const { return send_cq_; }
  verbs::Cq* recv_cq() const { return recv_cq_; }
  verbs::Srq* srq() const { return srq_; }
  void* context() const { return context_; }

  verbs::SendQueue& sq() { return sq_; }
  // In SQD with WRs still to finish or be acknowledged (ibv_query_qp sq_draining).
  bool req_draining() const { return req_.draining; }
  // The receive queue WQEs come from: the QP's own, or its SRQ's.
  verbs::RecvQueue& rq() { return srq_ != nullptr ? srq_->rq() : *rq_; }
  bool has_own_rq() const { return rq_ != nullptr; }

 private:
  friend class Device;
  friend class Transport;

  Qpn qpn_;
  verbs::QpInitAttr init_;
  const verbs::Pd* pd_;
  verbs::Cq* send_cq_;
  verbs::Cq* recv_cq_;
  verbs::Srq* srq_;
  void* context_;
  // Atomic: posts read them from application threads while the engine changes them.
  std::atomic<verbs::QpState> state_{verbs::QpState::kReset};
  verbs::QpAttr attr_{};
  verbs::SendQueue sq_;
  std::unique_ptr<verbs::RecvQueue> rq_;
  RequesterState req_;
  ResponderState resp_;
  std::atomic<bool> flush_pending_{false};  // in Error with WQEs left to flush
  bool active_ = false;  // in Device::active_, the QPs progress() visits (the device lock)
  bool last_wqe_event_sent_ = false;
  // Device::path_of(): the address of attr_.ah_attr while the port's LID is path_lid_ (and
  // modify_qp has not run since).
  FrameAddr path_{};
  Lid path_lid_{};
  bool path_cached_ = false;
  // Index in Device::timed_ while parked there (its only work a timer); else kNotTimed. Last:
  // the fields above keep the offsets the data path was measured with.
  static constexpr uint32_t kNotTimed = UINT32_MAX;
  uint32_t timed_at_ = kNotTimed;
  bool flush_held_ = false;  // in Device::held_flushes_ (flush_unless_copy_later)
};

}  // namespace softib::rc
