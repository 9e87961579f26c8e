// The completer (IBA 9.7.5.2-9.7.6, rxe_comp.c): acknowledgements, NAKs, read responses and
// atomic acknowledgements complete send WQEs, in order; timeouts and NAKs make the requester
// send again.
#include <sys/uio.h>

#include <array>
#include <cstring>

#include "rc/device.hpp"
#include "rc/timers.hpp"

namespace softib::rc {

using verbs::WcStatus;
using verbs::WrOpcode;
using wire::AethKind;
using wire::NakCode;

namespace {

bool is_read_or_atomic(WrOpcode op) {
  return op == WrOpcode::kRdmaRead || op == WrOpcode::kAtomicCmpAndSwp || op == WrOpcode::kAtomicFetchAndAdd;
}

bool outstanding(const RequesterState& req, uint32_t head) {
  return head != req.send_pos || req.send_started;
}

}  // namespace

void Device::arm_ack_timer(Qp& qp) {
  RequesterState& req = qp.req_;
  if (qp.attr_.timeout == 0 || !outstanding(req, qp.sq_.ring().head())) {
    req.ack_timer = false;
    return;
  }
  req.ack_timer = true;
  req.ack_deadline = clock_.deadline_after(local_ack_timeout(qp.attr_.timeout));
}

void Device::fail_oldest(Qp& qp, WcStatus status) {
  auto& ring = qp.sq_.ring();
  if (!ring.empty()) complete_send(qp, ring.peek(), status);
  to_error(qp);
}

// A response for `psn` says the responder executed every request before `psn`. If the oldest
// WQE is a READ or atomic whose last PSN is before `psn`, its responses were lost (they would
// have arrived first): the requester asks for them again (IBA 9.7.5.2.1, "implied NAK"; rxe
// check_psn returns COMPST_ERROR_RETRY for any response beyond such a WQE). Returns true when
// the oldest WQE is such a READ or atomic (the go-back to it may already be under way).
bool Device::implied_nak(Qp& qp, Psn psn) {
  RequesterState& req = qp.req_;
  auto& ring = qp.sq_.ring();
  if (!outstanding(req, ring.head())) return false;
  verbs::SendWqe& w = ring.peek();
  if (w.state == verbs::WqeState::kPosted || !is_read_or_atomic(w.opcode)) return false;
  // Only a response beyond the READ's last response PSN says they were lost; a read response
  // (or an ACK) inside its range is the READ still arriving.
  if (!before(w.last_psn, psn)) return false;
  if (!req.retry_started) {
    req.retry_started = true;
    restart_from(qp, req.read_psn_valid ? req.read_psn : w.first_psn);
  }
  return true;
}

// Completes the SEND/WRITE WQEs whose last PSN is at or before `psn` (an ACK is cumulative,
// IBA 9.7.5.1.1). A READ or atomic in the way stops it: it completes only with its responses,
// or is asked for again when `psn` lies beyond it (implied_nak).
void Device::ack_up_to(Qp& qp, Psn psn) {
  RequesterState& req = qp.req_;
  auto& ring = qp.sq_.ring();
  const Psn una_before = req.una;
  bool read_in_the_way = false;
  // The WQEs an ACK retires are walked by position and freed together: one release of the
  // ring for a run of unsignaled ones (a stream's ACK retires ~30 of them), not one each.
  // A signaled one frees the run up to itself before its completion is pushed, and its
  // completion is built before that (see complete_send).
  const uint32_t head = ring.head();
  uint32_t pos = head, freed = head;
  while (pos != req.send_pos || req.send_started) {
    verbs::SendWqe& w = ring.at(pos);
    if (w.state == verbs::WqeState::kPosted) break;
    if (before(psn, w.first_psn)) break;
    if (is_read_or_atomic(w.opcode)) {
      read_in_the_way = true;
      break;
    }
    if (before(psn, w.last_psn) || w.state != verbs::WqeState::kSent) {
      if (before(req.una, psn + 1)) req.una = psn + 1;
      break;
    }
    req.una = w.last_psn + 1;
    w.state = verbs::WqeState::kDone;
    ++pos;
    if (w.signaled) {
      const verbs::WorkCompletion wc = send_completion(qp, w, WcStatus::kSuccess);
      ring.release(pos - freed);
      freed = pos;
      qp.send_cq_->push(wc);
    }
  }
  if (pos != freed) ring.release(pos - freed);
  if (req.una != una_before) {
    req.retry_started = false;
    // Forward progress: the retry budget starts again (rxe resets it on every ACK that
    // completes something) and the timer restarts for what is still outstanding.
    req.retry_left = qp.attr_.retry_cnt;
    if (req.seq_nak_seen && !before(req.una, req.seq_nak_psn + 1)) req.seq_nak_seen = false;
    arm_ack_timer(qp);
  }
  // Only after the progress above ends an earlier go-back: an ACK that completes a SEND and
  // passes a lost READ starts one go-back, which its duplicates must not start again (found by
  // protocol test AckThatCompletesASendAndPassesALostReadReRequestsItOnce: the reset above
  // used to undo the go-back's retry_started, so every copy of the ACK went back again).
  if (read_in_the_way) implied_nak(qp, psn);
}

// The completer's fast path: an RC ACK (an AETH of the ACK kind, no payload) for a PSN that
// is outstanding, on a QP that takes responses, goes straight to ack_up_to from the bytes
// as they lie in the frame: what the general parse, dispatch and on_response would do for
// it. Anything else returns false having changed nothing: NAKs, RNR NAKs, stale and
// malformed ACKs, other opcodes stay the general path's. tests/protocol/rc_fast_path_test.cpp
// holds the two to the same results.
bool Device::receive_ack(wire::ByteSpan t, Qp* frame_qp) {
  if (t.size() != wire::Bth::kLen + wire::Aeth::kLen) return false;
  const uint8_t* p = t.data();
  if (p[0] != static_cast<uint8_t>(packet::Opcode::kRcAcknowledge)) return false;
  if ((p[1] & 0x3F) != 0) return false;              // TVer 0, PadCnt 0 (no payload)
  if ((p[wire::Bth::kLen] & 0xE0) != 0) return false;  // the ACK kind (IBA 9.3.5 table 42)
  Qp* qp = fast_path_qp(frame_qp, p);
  if (qp == nullptr) return false;
  using verbs::QpState;
  const QpState state = qp->state_.load(std::memory_order_relaxed);  // one load, not three
  if (state != QpState::kRts && state != QpState::kSqd && state != QpState::kSqe) return false;
  const RequesterState& req = qp->req_;
  const Psn psn(wire::load_be32(p + 8) & 0xFFFFFF);
  if (!outstanding(req, qp->sq_.ring().head()) || before(psn, req.una) || !before(psn, req.next_psn)) return false;
  ++counters_.rx_packets;
  ++counters_.fast_received;
  ack_up_to(*qp, psn);
  // What progress() would find for this QP after the ACK: requests it lets out (WQEs not yet
  // sent, held back by the window of unacknowledged packets; a go-back to a lost READ that
  // ack_up_to started), a drain it may end (SQD), a flush, responder output. Without any, a
  // poll's step that has its answer may still skip the walk (hold_acks_without_progress):
  // perftest's ib_send_lat awaits each send's ACK, which comes in the step that takes the
  // peer's next request, and that step's walk was on the path to the answer.
  const RequesterState& after = qp->req_;
  if (after.send_pos != qp->sq_.ring().tail() || after.send_started || after.draining ||
      qp->flush_pending_.load(std::memory_order_relaxed) || !qp->resp_.out.empty())
    owed_ = true;
  return true;
}

void Device::on_response(Qp& qp, const FrameAddr& /*from*/, const packet::TransportFrame& p, uint32_t packets,
                         const packet::OpcodeInfo* last, const RefPayload* ref) {
  using verbs::QpState;
  if (!taking_responses(qp)) {
    drop(Drop::kQpState);
    return;
  }
  RequesterState& req = qp.req_;
  auto& ring = qp.sq_.ring();
  const packet::OpcodeInfo& info = p.info();
  const Psn psn = p.headers().bth.psn;
  // Only PSNs in [una, next_psn) can be answered; anything else is old or a ghost.
  if (!outstanding(req, ring.head()) || before(psn, req.una) || !before(psn, req.next_psn)) {
    drop(Drop::kStaleResponse);
    return;
  }

  if (info.operation == packet::Operation::kAcknowledge) {
    const wire::Aeth& aeth = *p.headers().aeth;
    switch (aeth.kind()) {
      case AethKind::kAck:
        ack_up_to(qp, psn);
        return;
      case AethKind::kRnrNak:
        ++counters_.rnr_naks_received;
        ack_up_to(qp, psn - 1);
        if (qp.state_ == QpState::kError) return;
        // An RNR or sequence NAK beyond a READ whose responses were lost: the retry starts at
        // the READ, not at `psn` (ack_up_to(psn - 1) sees only the PSNs before the NAK's; found
        // by protocol tests RnrNakBeyondALostReadResponse... and SequenceNakRightAfterALost...).
        if (implied_nak(qp, psn)) return;
        if (req.rnr_left == 0) {
          fail_oldest(qp, WcStatus::kRnrRetryExcErr);
          return;
        }
        if (req.rnr_left != 7) --req.rnr_left;  // 7 = retry forever (IBA 9.7.5.2.8)
        req.rnr_wait = true;
        req.rnr_deadline = clock_.deadline_after(rnr_delay(aeth.rnr_timer()));
        req.rnr_psn = psn;
        req.ack_timer = false;
        return;
      case AethKind::kNak:
        ack_up_to(qp, psn - 1);
        if (qp.state_ == QpState::kError) return;
        switch (aeth.nak_code()) {
          case NakCode::kPsnSequenceError:
            ++counters_.seq_naks_received;
            if (implied_nak(qp, psn)) return;
            // One retransmission per lost PSN: repeats of the NAK are ignored (IBA o9-9.1).
            if (req.seq_nak_seen && req.seq_nak_psn == psn) return;
            req.seq_nak_seen = true;
            req.seq_nak_psn = psn;
            restart_from(qp, psn);
            return;
          case NakCode::kInvalidRequest: fail_oldest(qp, WcStatus::kRemInvReqErr); return;
          case NakCode::kRemoteAccessError: fail_oldest(qp, WcStatus::kRemAccessErr); return;
          case NakCode::kRemoteOperationalError: fail_oldest(qp, WcStatus::kRemOpErr); return;
          case NakCode::kInvalidRdRequest: fail_oldest(qp, WcStatus::kRemInvRdReqErr); return;
        }
        return;
    }
    return;
  }

  // A read response or an atomic acknowledgement implicitly acknowledges the PSNs before it,
  // and says that a READ or atomic ending before it lost its responses (found by protocol test
  // AtomicAckBeyondALostReadResponseGoesBackToTheRead: it was dropped as stale and the READ
  // waited for the ACK timer, forever with timeout 0).
  ack_up_to(qp, psn - 1);
  if (qp.state_ == QpState::kError || ring.empty()) return;
  if (implied_nak(qp, psn)) return;
  verbs::SendWqe& w = ring.peek();
  if (w.state == verbs::WqeState::kPosted || before(psn, w.first_psn) || before(w.last_psn, psn)) {
    drop(Drop::kStaleResponse);
    return;
  }

  if (info.operation == packet::Operation::kAtomicAcknowledge) {
    if (!(w.opcode == WrOpcode::kAtomicCmpAndSwp || w.opcode == WrOpcode::kAtomicFetchAndAdd)) {
      drop(Drop::kStaleResponse);
      return;
    }
    // The original remote value lands in the WR's 8-byte local buffer (IBA 9.4.5).
    const uint64_t orig = p.headers().atomic_ack_eth->orig_remote_data;
    uint8_t* dst = nullptr;
    const verbs::Sge& s = w.sge[0];
    if (w.num_sge == 0 || mrs_.resolve_local(s.lkey, qp.pd_, s.addr, 8, verbs::access::kLocalWrite, &dst) !=
                              verbs::MemFault::kNone) {
      fail_oldest(qp, WcStatus::kLocProtErr);
      return;
    }
    std::memcpy(dst, &orig, 8);
    req.una = psn + 1;
    req.retry_started = false;
    --req.rd_outstanding;
    complete_send(qp, w, WcStatus::kSuccess);
    req.retry_left = qp.attr_.retry_cnt;
    arm_ack_timer(qp);
    return;
  }

  // RDMA READ response: packets must arrive in PSN order; a gap means some were lost and the
  // rest is asked for again (IBA 9.7.5.2.2, o9-28).
  if (w.opcode != WrOpcode::kRdmaRead) {
    drop(Drop::kStaleResponse);
    return;
  }
  if (!req.read_psn_valid) {
    req.read_psn = w.first_psn;
    req.read_psn_valid = true;
  }
  if (psn != req.read_psn) {
    if (before(psn, req.read_psn)) {
      drop(Drop::kDuplicate);
    } else {
      drop(Drop::kPsnOutOfOrder);
      if (!req.retry_started) {
        req.retry_started = true;
        restart_from(qp, req.read_psn);
      }
    }
    return;
  }
  // A burst (rc/burst.cpp) stands for `packets` responses from `psn` on, ending with `last`.
  const packet::OpcodeInfo& last_info = last != nullptr ? *last : info;
  const uint32_t mtu = verbs::mtu_bytes(qp.attr_.path_mtu);
  const uint64_t offset = uint64_t{static_cast<uint32_t>(Psn::distance(w.first_psn, psn))} * mtu;
  const wire::ByteSpan data = p.payload();
  const uint64_t size = ref != nullptr ? ref->bytes : data.size();
  const bool ends = offset + size == w.length;
  if (offset + size > w.length || (!ends && size != uint64_t{packets} * mtu) || (last_info.ends_message() != ends)) {
    fail_oldest(qp, WcStatus::kBadRespErr);
    return;
  }
  // Scatter into the WR's SGEs, which need local write access; by reference, one read from
  // the responder's memory straight into them.
  std::array<iovec, kMaxRefSegments> pieces;
  size_t count = 0;
  uint64_t at = 0, left = size, from = offset;
  const uint8_t* src = data.data();
  for (uint32_t i = 0; i < w.num_sge && left > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    const uint64_t end = at + s.length;
    if (end > from) {
      const uint64_t skip = from - at;
      const uint64_t n = std::min<uint64_t>(s.length - skip, left);
      uint8_t* dst = nullptr;
      if (mrs_.resolve_local(s.lkey, qp.pd_, s.addr + skip, n, verbs::access::kLocalWrite, &dst) !=
          verbs::MemFault::kNone) {
        fail_oldest(qp, WcStatus::kLocProtErr);
        return;
      }
      if (ref != nullptr) {
        SOFTIB_ASSERT_MSG(count < pieces.size(), "a READ has at most max_sge_rd (32) SGEs");
        pieces[count++] = iovec{dst, n};
      } else {
        std::memcpy(dst, src, n);
        src += n;
      }
      from += n;
      left -= n;
    }
    at = end;
  }
  if (ref != nullptr) {
    const RefPayload::Copy copied = ref->copy_to(std::span<const iovec>(pieces.data(), count));
    if (copied == RefPayload::Copy::kLater) {
      ref_later_ = true;  // nothing changed: its link delivers the burst again
      return;
    }
    if (copied != RefPayload::Copy::kDone) {
      // Lost, as on a wire: the READ is asked for again at the retransmit timeout.
      ++counters_.ref_pull_failures;
      drop(Drop::kMalformed);
      return;
    }
    ++counters_.ref_pulls;
  }
  req.read_psn = psn + packets;
  req.retry_started = false;
  if (before(req.una, psn + packets)) req.una = psn + packets;
  req.retry_left = qp.attr_.retry_cnt;
  if (ends) {
    req.read_psn_valid = false;
    --req.rd_outstanding;
    complete_send(qp, w, WcStatus::kSuccess);
  }
  arm_ack_timer(qp);
}

bool Device::run_timers(Qp& qp) {
  RequesterState& req = qp.req_;
  if (req.rnr_wait && clock_.reached(req.rnr_deadline)) {
    req.rnr_wait = false;
    restart_from(qp, req.rnr_psn);
    return true;
  }
  if (req.ack_timer && clock_.reached(req.ack_deadline)) {
    req.ack_timer = false;
    // Its answer came, and a live process still writes its bytes in (a READ's response whose
    // shared copy ended later: a stopped sender). Failing the WR now would hand the buffer
    // back while those bytes may still land (hardware writes nothing after the completion):
    // the timer runs again, no retry spent, until the copy ends or its writer is gone.
    if (sink_.copy_later_into(qp.qpn())) {
      ++counters_.timeouts_copy_later;
      arm_ack_timer(qp);
      return false;
    }
    ++counters_.timeouts;
    if (!outstanding(req, qp.sq_.ring().head())) return false;
    // IBA 9.7.6.1.3: retry_cnt retries, then the WR fails with "retry exceeded".
    if (req.retry_left == 0) {
      fail_oldest(qp, WcStatus::kRetryExcErr);
      return true;
    }
    --req.retry_left;
    restart_from(qp, req.una);
    return true;
  }
  return false;
}

}  // namespace softib::rc
