// The requester (IBA 9.7.1-9.7.4, rxe_req.c): send WQEs become request packets.
#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/copy.hpp"
#include "packet/builder.hpp"
#include "rc/device.hpp"
#include "rc/timers.hpp"

namespace softib::rc {

using packet::Position;
using verbs::QpType;
using verbs::WcStatus;
using verbs::WrOpcode;

namespace {

const FrameAddr kNoPath{};  // run_requester's path for a UD QP

bool is_read_or_atomic(WrOpcode op) {
  return op == WrOpcode::kRdmaRead || op == WrOpcode::kAtomicCmpAndSwp || op == WrOpcode::kAtomicFetchAndAdd;
}

Position position_of(bool first, bool last) {
  if (first && last) return Position::kOnly;
  if (first) return Position::kFirst;
  return last ? Position::kLast : Position::kMiddle;
}

// The headers of one SEND or RDMA WRITE packet (IBA 9.2-9.3), written straight from the WQE:
// the bytes packet::write_transport_headers writes for the same headers (the protocol
// fixture's CaptureSink rebuilds every frame the device sends with the builder and compares),
// without filling a TransportHeaders first. Nearly every packet sent is written here; through
// the generic table a 64-byte SEND cost ~75 instructions more (callgrind). `bth.pad_count` is
// ignored: the pad follows from `payload_len`, and its bytes are zeroed here. REQUIRES:
// out.size() == packet::transport_length(info, payload_len).
void write_request_headers(const packet::OpcodeInfo& info, const wire::Bth& bth, const verbs::SendWqe& w,
                             const wire::Deth* deth, size_t payload_len, wire::MutByteSpan out) {
  const size_t pad = (4 - payload_len % 4) % 4;
  SOFTIB_ASSERT(out.size() == info.header_length() + payload_len + pad);
  bth.encode(out, static_cast<uint8_t>(pad));
  if (!info.headers.empty()) {
    if (info.headers.has(packet::ExtHeader::kDeth)) {
      SOFTIB_ASSERT(deth != nullptr);
      deth->encode(out.subspan(info.offset(packet::ExtHeader::kDeth)));
    }
    if (info.headers.has(packet::ExtHeader::kReth))
      wire::Reth{w.remote_addr, w.rkey, static_cast<uint32_t>(w.length)}.encode(
          out.subspan(info.offset(packet::ExtHeader::kReth)));
    if (info.immediate()) wire::ImmDt{ntohl(w.imm_data)}.encode(out.subspan(info.offset(packet::ExtHeader::kImmDt)));
    if (info.invalidate()) wire::Ieth{RKey(w.imm_data)}.encode(out.subspan(info.offset(packet::ExtHeader::kIeth)));
  }
  std::fill_n(out.data() + info.header_length() + payload_len, pad, uint8_t{0});
}

}  // namespace

// Walks the SGE pieces of [offset, offset + len) of a WQE, each resolved for local read:
// piece(address, length) returns false to stop. False when a key does not resolve, the SGEs
// end first, or piece() stopped.
template <class Piece>
bool Device::for_each_piece(Qp& qp, const verbs::SendWqe& w, uint64_t offset, uint64_t len, Piece piece) {
  uint64_t at = 0;  // message offset of the current SGE
  for (uint32_t i = 0; i < w.num_sge && len > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    const uint64_t end = at + s.length;
    if (end > offset) {
      const uint64_t from = offset - at;
      const uint64_t n = std::min<uint64_t>(s.length - from, len);
      uint8_t* src = nullptr;
      if (mrs_.resolve_local(s.lkey, qp.pd_, s.addr + from, n, 0, &src) != verbs::MemFault::kNone) return false;
      if (!piece(src, n)) return false;
      offset += n;
      len -= n;
    }
    at = end;
  }
  return len == 0;
}

bool Device::gather(Qp& qp, const verbs::SendWqe& w, uint64_t offset, uint64_t len, uint8_t* out) {
  if (len == 0) return true;
  if (w.is_inline) {
    std::memcpy(out, w.inline_data.data() + offset, len);
    return true;
  }
  return for_each_piece(qp, w, offset, len, [&](const uint8_t* src, uint64_t n) {
    sink_.copy_payload(out, src, n);  // `out` is a frame the peer's core reads next
    out += n;
    return true;
  });
}

// The same bytes as gather(), named instead of copied: the SGE pieces as addresses in this
// process. 0 when a key does not resolve or the pieces are more than `max`.
size_t Device::gather_refs(Qp& qp, const verbs::SendWqe& w, uint64_t offset, uint64_t len, RefSegment* out,
                           size_t max) {
  size_t count = 0;
  const bool ok = for_each_piece(qp, w, offset, len, [&](const uint8_t* src, uint64_t n) {
    if (count == max) return false;
    out[count++] = RefSegment{reinterpret_cast<uint64_t>(src), n};
    return true;
  });
  return ok ? count : 0;
}

bool Device::run_requester(Qp& qp) {
  RequesterState& req = qp.req_;
  auto& ring = qp.sq_.ring();
  if (req.rnr_wait || req.send_pos == ring.tail()) return false;  // nothing to send
  bool did = false;
  // An RC or UC QP's path (kept in the QP: path_of); a UD QP's WQEs each name their AH.
  const FrameAddr& path = qp.type() != QpType::kUd ? path_of(qp) : kNoPath;
  // Several WQEs waiting: their frames go to the link as one batch (FrameSink::begin_batch;
  // the shared-memory link packs small ones into one ring record). One alone goes as it is.
  struct Batch {
    FrameSink* sink = nullptr;
    ~Batch() {
      if (sink != nullptr) sink->end_batch();
    }
  } batch;
  if (ring.tail() - req.send_pos > 1) {
    batch.sink = &sink_;
    sink_.begin_batch();
  }
  while (req.send_pos != ring.tail() &&
         (qp.state_ == verbs::QpState::kRts || (qp.state_ == verbs::QpState::kSqd && req.send_started))) {
    verbs::SendWqe& w = ring.at(req.send_pos);
    if (qp.type() == QpType::kRc) {
      if (Psn::distance(req.una, req.next_psn) >= static_cast<int32_t>(kMaxUnackedPackets)) break;
      if (!req.send_started) {
        // IBA 9.7.1 / 10.8.3.3: at most max_rd_atomic READ/atomic requests outstanding; a
        // fenced WR waits until every earlier READ/atomic has completed.
        if (is_read_or_atomic(w.opcode) && req.rd_outstanding >= qp.attr_.max_rd_atomic) break;
        if ((w.send_flags & verbs::send_flag::kFence) != 0 && req.rd_outstanding > 0) break;
      }
    }
    if (fast_paths_ && qp.type() == QpType::kRc && !req.send_started) {
      if (const std::optional<SendResult> r = send_one_packet(qp, w, req.send_pos, path)) {
        if (*r != SendResult::kSent) break;  // the link is full: nothing was sent
        did = true;
        continue;
      }
    }
    const uint64_t sent_before = counters_.tx_packets;
    const SendResult r = send_wqe_packets(qp, w, req.send_pos, path);
    // A step that the link refused at once did nothing (the engine must not spin on it).
    if (r != SendResult::kBlocked || counters_.tx_packets != sent_before) did = true;
    if (r != SendResult::kSent) break;
  }
  if (did && qp.type() == QpType::kRc && !req.ack_timer) arm_ack_timer(qp);
  return did;
}

// The requester's fast path: a SEND or RDMA WRITE (with or without immediate) that fits one
// packet, on an RC QP, from its start: the frame is reserved, written and committed with
// nothing else to decide (callgrind, 64-byte SENDs: the sender's Device::progress 424 -> 307
// instructions a message). The caller has checked what comes before any WQE is sent (QP
// state, the unacknowledged-packet window, fences). It does what send_wqe_packets does for
// such a WQE, in the same order: kSent, or kBlocked when the link is full. Anything else
// returns nullopt having changed nothing (the L_Key is resolved before the frame is
// reserved), and send_wqe_packets takes the WQE: a bad L_Key (it fails the WQE), several
// SGEs, longer messages and every other operation.
// tests/protocol/rc_fast_path_test.cpp holds the two paths to the same results.
std::optional<Device::SendResult> Device::send_one_packet(Qp& qp, verbs::SendWqe& w, uint32_t pos,
                                                          const FrameAddr& path) {
  const std::optional<packet::Opcode> op = one_packet_opcode(w.opcode);
  if (!op || w.length > verbs::mtu_bytes(qp.attr_.path_mtu)) return std::nullopt;
  // The payload's source, resolved before the frame is reserved: nothing fails after it.
  const uint8_t* src = w.inline_data.data();
  if (!w.is_inline) {
    src = one_packet_source(qp, w.num_sge, w.sge.data(), w.length, src);
    if (src == nullptr) return std::nullopt;
  }
  const bool ack_req = asks_ack(qp, w.signaled);
  if (!write_one_packet(qp, *op, w, src, path, ack_req)) {
    refused_one_packet(qp, w);
    return SendResult::kBlocked;
  }
  sent_one_packet(qp, w, pos, ack_req);
  return SendResult::kSent;
}

std::optional<packet::Opcode> Device::one_packet_opcode(WrOpcode op) {
  using packet::Opcode;
  switch (op) {
    case WrOpcode::kSend: return Opcode::kRcSendOnly;
    case WrOpcode::kSendWithImm: return Opcode::kRcSendOnlyWithImmediate;
    case WrOpcode::kRdmaWrite: return Opcode::kRcRdmaWriteOnly;
    case WrOpcode::kRdmaWriteWithImm: return Opcode::kRcRdmaWriteOnlyWithImmediate;
    default: return std::nullopt;
  }
}

const uint8_t* Device::one_packet_source(Qp& qp, uint32_t num_sge, const verbs::Sge* sge, uint64_t length,
                                         const uint8_t* any) {
  if (length == 0) return any;
  if (num_sge != 1) return nullptr;
  uint8_t* at = nullptr;
  if (mrs_.resolve_local(sge->lkey, qp.pd_, sge->addr, length, 0, &at) != verbs::MemFault::kNone) return nullptr;
  return at;
}

template <class Request>
bool Device::write_one_packet(Qp& qp, packet::Opcode op, const Request& r, const uint8_t* src, const FrameAddr& path,
                              bool ack_req) {
  const packet::OpcodeInfo& info = *packet::find_opcode(static_cast<uint8_t>(op));
  const size_t len = packet::transport_length(info, r.length);
  const wire::MutByteSpan out = sink_.reserve(path, qp.attr_.dest_qp_num, len);
  if (out.size() < len) return false;
  uint8_t* f = out.data();
  const size_t pad = (4 - r.length % 4) % 4;
  wire::Bth bth;
  bth.opcode = static_cast<uint8_t>(op);
  bth.solicited = (r.send_flags & verbs::send_flag::kSolicited) != 0;
  bth.pkey = qp_pkey(qp);
  bth.dest_qp = qp.attr_.dest_qp_num;
  bth.ack_req = ack_req;  // the last packet of a message: asks_ack()
  bth.psn = qp.req_.next_psn;
  bth.encode(out, static_cast<uint8_t>(pad));
  if (info.headers.has(packet::ExtHeader::kReth))
    wire::Reth{r.remote_addr, r.rkey, static_cast<uint32_t>(r.length)}.encode(
        out.subspan(info.offset(packet::ExtHeader::kReth)));
  if (info.immediate()) std::memcpy(f + info.offset(packet::ExtHeader::kImmDt), &r.imm_data, 4);  // as posted: network order
  uint8_t* payload = f + info.header_length();
  if (r.is_inline) {
    copy_small(payload, src, r.length);
  } else if (r.length != 0) {
    sink_.copy_payload(payload, src, r.length);  // `payload` is a frame the peer's core reads next
  }
  for (size_t i = 0; i < pad; ++i) payload[r.length + i] = 0;  // 0-3 bytes: no library call
  ++counters_.tx_packets;
  ++counters_.fast_sent;
  sink_.commit(len);
  return true;
}

bool Device::asks_ack(const Qp& qp, bool signaled) const {
  const RequesterState& req = qp.req_;
  return signaled || req.packets_since_ackreq + 1 >= std::min(kAckReqInterval, qp.sq_.ring().capacity() / 2) ||
         !qp.acks_may_wait() || before(req.next_psn, req.sent_high);
}

void Device::sent_one_packet(Qp& qp, verbs::SendWqe& w, uint32_t pos, bool ack_req) {
  RequesterState& req = qp.req_;
  req.packets_since_ackreq = ack_req ? 0 : req.packets_since_ackreq + 1;
  w.first_psn = w.last_psn = req.next_psn;
  if (!before(req.next_psn, req.sent_high)) {
    req.sent_high = req.next_psn + 1;
  } else {
    ++counters_.retransmits;
  }
  req.next_psn += 1;
  w.state = verbs::WqeState::kSent;
  req.send_pos = pos + 1;
}

void Device::refused_one_packet(Qp& qp, verbs::SendWqe& w) {
  // The link is full: the WQE is left as send_wqe_packets leaves one it could not send
  // (started, nothing sent), and send_wqe_packets sends it on a later step.
  RequesterState& req = qp.req_;
  req.send_started = true;
  req.send_offset = 0;
  w.first_psn = w.last_psn = req.next_psn;
  w.state = verbs::WqeState::kSending;
  refused_ = true;
}

std::optional<Status> Device::post_send_now(Qp& qp, const verbs::SendWr& wr) {
  // What only progress() does: the walk (another active QP; a QP that a modify, a frame or
  // another thread's post gave work), and every kMaxTimerDeferrals-th call's look at the timers.
  if (owed_ || has_posted_.load(std::memory_order_relaxed) || timer_deferrals_ + 1 >= kMaxTimerDeferrals ||
      !(active_.empty() || (active_.size() == 1 && active_[0] == &qp)))
    return std::nullopt;
  const std::optional<packet::Opcode> op = one_packet_opcode(wr.opcode);
  if (!fast_paths_ || !op || qp.type() != QpType::kRc || wr.sg_list.size() > 1) return std::nullopt;
  const auto held = qp.sq_.lock_posts();  // another thread may be posting to this QP
  RequesterState& req = qp.req_;
  auto& ring = qp.sq_.ring();
  // What visit() would do for this QP before or besides the new request.
  if (qp.state_ != verbs::QpState::kRts || qp.flush_pending_.load(std::memory_order_relaxed) ||
      !qp.resp_.out.empty() || req.rnr_wait || req.send_started || req.draining || ring.tail() != req.send_pos)
    return std::nullopt;
  if (ack_goes_now(qp, AckPolicy::kHoldOneStep)) return std::nullopt;  // it goes ahead of the request (visit())
  // run_requester()'s (a READ or atomic is not the fast path's), and SendQueue::post must take
  // the WR below (a refusal is post_send's to report).
  const bool is_inline = (wr.send_flags & verbs::send_flag::kInline) != 0;
  const uint64_t length = wr.sg_list.empty() ? 0 : wr.sg_list[0].length;
  if (Psn::distance(req.una, req.next_psn) >= static_cast<int32_t>(kMaxUnackedPackets) ||
      ((wr.send_flags & verbs::send_flag::kFence) != 0 && req.rd_outstanding > 0) ||
      length > verbs::mtu_bytes(qp.attr_.path_mtu) ||
      qp.sq_.refusal(wr, length) != verbs::SendQueue::Refusal::kNone)
    return std::nullopt;
  const uint8_t* src = nullptr;  // read only when there are bytes
  if (length != 0) {
    src = is_inline ? reinterpret_cast<const uint8_t*>(wr.sg_list[0].addr)
                    : one_packet_source(qp, 1, wr.sg_list.data(), length, nullptr);
    if (src == nullptr) return std::nullopt;
  }
  // As progress() begins (owed_ is false).
  refused_ = false;
  ack_qp_ = nullptr;
  holds_acks_ = false;
  // The WR's fields under a WQE's names, for write_one_packet.
  const struct {
    uint32_t send_flags;
    uint32_t imm_data;
    uint64_t remote_addr;
    RKey rkey;
    uint64_t length;
    bool is_inline;
  } request{wr.send_flags, wr.imm_data, wr.rdma.remote_addr, wr.rdma.rkey, length, is_inline};
  const bool ack_req = asks_ack(qp, (wr.send_flags & verbs::send_flag::kSignaled) != 0 || qp.init_.sq_sig_all);
  const bool sent = write_one_packet(qp, *op, request, src, path_of(qp), ack_req);
  // The WQE, behind the frame. Nothing reads it before this thread lets the device lock go.
  const uint32_t pos = req.send_pos;
  const Status posted = qp.sq_.post(wr, qp.init_.sq_sig_all, held);
  SOFTIB_ASSERT(posted.ok());
  verbs::SendWqe& w = ring.at(pos);
  if (sent) {
    sent_one_packet(qp, w, pos, ack_req);
    if (!req.ack_timer) arm_ack_timer(qp);
  } else {
    refused_one_packet(qp, w);
  }
  ++timer_deferrals_;
  activate(qp);  // the only active QP: active_[0]
  ++counters_.qp_visits;
  if (qp.resp_.ack_requested()) hold_or_flush_ack(qp);  // as visit()
  settle_visited(0);                                // as progress()'s walk
  return Status();
}

Device::SendResult Device::send_wqe_packets(Qp& qp, verbs::SendWqe& w, uint32_t pos, const FrameAddr& path) {
  RequesterState& req = qp.req_;
  const verbs::QpAttr& a = qp.attr_;
  const bool rc = qp.type() == QpType::kRc;
  const bool ud = qp.type() == QpType::kUd;
  // A UD QP has no path MTU attribute: its messages may be as long as the port's MTU (rxe's
  // get_mtu(): the port's for UD, the QP's path MTU for RC and UC).
  const uint32_t mtu = verbs::mtu_bytes(ud ? port_.active_mtu : a.path_mtu);

  if (!req.send_started) {
    req.send_started = true;
    req.send_offset = 0;
    w.first_psn = req.next_psn;
    const bool atomic = w.opcode == WrOpcode::kAtomicCmpAndSwp || w.opcode == WrOpcode::kAtomicFetchAndAdd;
    w.last_psn = w.first_psn + (atomic ? 0 : verbs::packets_for(w.length, mtu) - 1);
    w.state = verbs::WqeState::kSending;
  }
  if (ud && w.length > mtu) {
    // A UD message is one packet (IBA 9.8.4); rxe fails the WR with a local length error.
    fail_wqe(qp, pos, WcStatus::kLocLenErr);
    return SendResult::kFailed;
  }

  FrameAddr ud_to;
  if (ud) ud_to = address_of(w.ah);
  const FrameAddr& to = ud ? ud_to : path;
  const Qpn dest_qp = ud ? w.remote_qpn : a.dest_qp_num;
  auto headers = [&]() {
    packet::TransportHeaders h;
    h.bth.pkey = qp_pkey(qp);
    h.bth.dest_qp = dest_qp;
    return h;
  };

  auto finish = [&]() {
    w.state = verbs::WqeState::kSent;
    req.send_pos = pos + 1;
    req.send_started = false;
    req.send_offset = 0;
    if (is_read_or_atomic(w.opcode)) ++req.rd_outstanding;
    // UC and UD complete a WR once it is sent (IBA 9.8.3: no acknowledgements).
    if (!rc) complete_send(qp, w, WcStatus::kSuccess);
    return SendResult::kSent;
  };
  auto count_sent = [&](Psn psn) {
    if (!before(psn, req.sent_high)) {
      req.sent_high = psn + 1;
    } else {
      ++counters_.retransmits;
    }
  };

  if (w.opcode == WrOpcode::kRdmaRead) {
    // One request for what is left; the responses use the PSNs up to last_psn. A retried READ
    // asks only for the rest (IBA 9.7.4.1.3 / o9-21: a new request from the missing PSN).
    const uint64_t rest = w.length - req.send_offset;
    packet::TransportHeaders h = headers();
    h.bth.opcode = static_cast<uint8_t>(packet::Opcode::kRcRdmaReadRequest);
    h.bth.psn = req.next_psn;
    h.reth = wire::Reth{w.remote_addr + req.send_offset, w.rkey, static_cast<uint32_t>(rest)};
    if (!send_frame(to, h, {})) return SendResult::kBlocked;
    count_sent(req.next_psn);
    req.next_psn += verbs::packets_for(rest, mtu);
    return finish();
  }
  if (w.opcode == WrOpcode::kAtomicCmpAndSwp || w.opcode == WrOpcode::kAtomicFetchAndAdd) {
    packet::TransportHeaders h = headers();
    h.bth.opcode = static_cast<uint8_t>(w.opcode == WrOpcode::kAtomicCmpAndSwp ? packet::Opcode::kRcCompareSwap
                                                                                : packet::Opcode::kRcFetchAdd);
    h.bth.psn = req.next_psn;
    h.atomic_eth = wire::AtomicEth{w.remote_addr, w.rkey, w.opcode == WrOpcode::kAtomicCmpAndSwp ? w.swap : w.compare_add,
                                   w.compare_add};
    if (!send_frame(to, h, {})) return SendResult::kBlocked;
    count_sent(req.next_psn);
    req.next_psn += 1;
    return finish();
  }

  // SEND and RDMA WRITE: one packet per path MTU (IBA 9.7.2), FIRST/MIDDLE/LAST or ONLY.
  wire::Deth deth;  // UD only
  // IBA 10.2.4: a Q_Key with the high bit set means "use the QP's own Q_Key".
  if (ud) deth = wire::Deth{w.remote_qkey.is_controlled() ? a.qkey : w.remote_qkey, qp.qpn_};
  for (;;) {
    if (rc && Psn::distance(req.una, req.next_psn) >= static_cast<int32_t>(kMaxUnackedPackets))
      return SendResult::kBlocked;
    const uint64_t offset = req.send_offset;
    if (w.length - offset > mtu && !ud) {
      // An RDMA WRITE to another process goes by reference where the link can (one copy, done
      // by the responder); otherwise segmentation offload (rc/frame.hpp): the next packets in
      // one frame, as many as the link takes and the window allows.
      const size_t burst_cap = sink_.max_burst_bytes();
      const bool write = w.opcode == WrOpcode::kRdmaWrite || w.opcode == WrOpcode::kRdmaWriteWithImm;
      const size_t ref_cap = burst_cap != 0 && write && !w.is_inline ? sink_.max_reference_bytes(to, dest_qp) : 0;
      const bool by_reference = ref_cap >= 2 * mtu;
      const size_t cap = by_reference ? ref_cap : burst_cap;
      uint64_t n = cap >= 2 * mtu ? std::min<uint64_t>(verbs::packets_for(w.length - offset, mtu),
                                                       cap >> std::countr_zero(mtu))
                                  : 0;
      if (rc) n = std::min<uint64_t>(n, kMaxUnackedPackets - static_cast<uint32_t>(Psn::distance(req.una, req.next_psn)));
      n = std::min<uint64_t>(n, 0xFFFF);
      if (n >= 2) {
        packet::TransportHeaders h = headers();
        const SendResult r = send_burst(qp, w, pos, to, h, static_cast<uint32_t>(n), by_reference);
        if (r != SendResult::kSent) return r;
        if (req.send_offset == w.length) return finish();
        continue;
      }
    }
    const uint32_t chunk = static_cast<uint32_t>(std::min<uint64_t>(mtu, w.length - offset));
    const bool first = offset == 0;
    const bool last = offset + chunk == w.length;
    const auto opcode = packet::requester_opcode(qp.type(), w.opcode, position_of(first, last));
    SOFTIB_ASSERT(opcode.has_value());
    const packet::OpcodeInfo& info = *packet::find_opcode(static_cast<uint8_t>(*opcode));
    // Headers, then the payload gathered from the SGEs straight into the frame: one copy.
    bool gathered = true;
    const bool sent = send_written(to, dest_qp, packet::transport_length(info, chunk), [&](wire::MutByteSpan out) {
      wire::Bth bth;
      bth.opcode = static_cast<uint8_t>(*opcode);
      bth.pkey = qp_pkey(qp);
      bth.dest_qp = dest_qp;
      bth.psn = req.next_psn;
      bth.solicited = last && (w.send_flags & verbs::send_flag::kSolicited) != 0;
      // A READ or an atomic asks as it always did: its response is the answer either way.
      bth.ack_req = rc && ((last && (is_read_or_atomic(w.opcode) || asks_ack(qp, w.signaled))) ||
                           req.packets_since_ackreq + 1 >= kAckReqInterval);
      req.packets_since_ackreq = bth.ack_req ? 0 : req.packets_since_ackreq + 1;
      write_request_headers(info, bth, w, ud ? &deth : nullptr, chunk, out);
      gathered = gather(qp, w, offset, chunk, out.data() + info.header_length());
      return gathered;
    });
    if (!gathered) {
      // IBA 10.8.3.1: a bad L_Key, PD or bounds fail the WR with a local protection error,
      // and the QP goes to Error. The reserved frame is never committed.
      fail_wqe(qp, pos, WcStatus::kLocProtErr);
      return SendResult::kFailed;
    }
    if (!sent) return SendResult::kBlocked;  // the link is full: this packet goes out on a later step
    count_sent(req.next_psn);
    req.next_psn += 1;
    req.send_offset += chunk;
    if (last) return finish();
  }
}

// `n` packets of a SEND or RDMA WRITE from send_offset on, as one burst (rc/frame.hpp). kSent
// when they went out (send_offset and next_psn moved past them).
Device::SendResult Device::send_burst(Qp& qp, verbs::SendWqe& w, uint32_t pos, const FrameAddr& to,
                                      packet::TransportHeaders& h, uint32_t n, bool by_reference) {
  RequesterState& req = qp.req_;
  const bool rc = qp.type() == QpType::kRc;
  const uint32_t mtu = verbs::mtu_bytes(qp.attr_.path_mtu);
  const uint64_t offset = req.send_offset;
  const uint64_t bytes = std::min<uint64_t>(uint64_t{n} * mtu, w.length - offset);
  const bool ends = offset + bytes == w.length;
  const auto first_op = packet::requester_opcode(qp.type(), w.opcode, offset == 0 ? Position::kFirst : Position::kMiddle);
  const auto last_op = packet::requester_opcode(qp.type(), w.opcode, ends ? Position::kLast : Position::kMiddle);
  SOFTIB_ASSERT(first_op && last_op);
  const packet::OpcodeInfo& info = *packet::find_opcode(static_cast<uint8_t>(*first_op));
  const packet::OpcodeInfo& last = *packet::find_opcode(static_cast<uint8_t>(*last_op));
  std::array<RefSegment, kMaxRefSegments> refs;
  size_t segments = 0;
  if (by_reference) {
    segments = gather_refs(qp, w, offset, bytes, refs.data(), refs.size());
    if (segments == 0) return send_burst(qp, w, pos, to, h, n, false);  // inline says what is wrong
  }
  const size_t body = by_reference ? segments * sizeof(RefSegment) : bytes;
  wire::MutByteSpan out = sink_.reserve_burst(to, h.bth.dest_qp, info.header_length() + body);
  if (out.empty()) {
    refused_ = true;
    return SendResult::kBlocked;
  }
  h.bth.opcode = static_cast<uint8_t>(*first_op);
  h.bth.psn = req.next_psn;
  h.bth.solicited = false;
  h.bth.ack_req = false;
  h.reth.reset();
  h.immdt.reset();
  h.ieth.reset();
  if (info.headers.has(packet::ExtHeader::kReth)) h.reth = wire::Reth{w.remote_addr, w.rkey, static_cast<uint32_t>(w.length)};
  // Headers for one full packet (no pad), then every packet's payload straight from the SGEs.
  if (by_reference) {
    write_ref_headers(info, h, mtu, out);
    std::memcpy(out.data() + info.header_length(), refs.data(), body);
  } else {
    packet::write_transport_headers(info, h, mtu, out);
    if (!gather(qp, w, offset, bytes, out.data() + info.header_length())) {
      fail_wqe(qp, pos, WcStatus::kLocProtErr);
      return SendResult::kFailed;
    }
  }
  Burst b;
  b.packets = static_cast<uint16_t>(n);
  b.mtu = static_cast<uint8_t>(qp.attr_.path_mtu);
  b.last_opcode = last.value();
  b.last_ack_req = rc && ((ends && asks_ack(qp, w.signaled)) ||
                          req.packets_since_ackreq + n >= kAckReqInterval);
  req.packets_since_ackreq = b.last_ack_req ? 0 : req.packets_since_ackreq + n;
  b.last_solicited = ends && (w.send_flags & verbs::send_flag::kSolicited) != 0;
  if (last.immediate()) b.last_ext = ntohl(w.imm_data);
  if (last.invalidate()) b.last_ext = w.imm_data;
  b.by_reference = by_reference;
  counters_.tx_packets += n;
  if (by_reference) ++counters_.ref_bursts_sent;
  sink_.commit_burst(info.header_length() + body, b);
  if (!before(req.next_psn, req.sent_high)) {
    req.sent_high = req.next_psn + n;
  } else {
    counters_.retransmits += n;
  }
  req.next_psn += n;
  req.send_offset += bytes;
  return SendResult::kSent;
}

// The WQE at `pos` cannot be sent: it completes with `status` and the QP goes to Error. RC
// WQEs before it may still await their ACKs, so it cannot complete now (completions are in
// order and complete_send takes the oldest): flush() delivers the earlier ones as flushed and
// then this one with its status (found by protocol test BadLkeyBehindAnOutstandingSend...,
// which hit complete_send's "oldest WQE" assertion).
void Device::fail_wqe(Qp& qp, uint32_t pos, WcStatus status) {
  qp.req_.failed_wqe = true;
  qp.req_.failed_pos = pos;
  qp.req_.failed_status = status;
  to_error(qp);
}

// Go back to `psn` (IBA 9.7.6.1 / 9.7.5.2: the first PSN not acknowledged) and send again
// from there: the WQE holding it restarts mid-message, READs ask for what is left.
void Device::restart_from(Qp& qp, Psn psn) {
  RequesterState& req = qp.req_;
  auto& ring = qp.sq_.ring();
  const uint32_t mtu = verbs::mtu_bytes(qp.attr_.path_mtu);
  const uint32_t end = req.send_pos + (req.send_started ? 1 : 0);
  for (uint32_t pos = ring.head(); pos != end; ++pos) {
    verbs::SendWqe& w = ring.at(pos);
    if (before(psn, w.first_psn) || before(w.last_psn, psn)) continue;
    const uint32_t index = static_cast<uint32_t>(Psn::distance(w.first_psn, psn));
    req.send_pos = pos;
    req.send_started = true;
    req.send_offset = std::min<uint64_t>(uint64_t{index} * mtu, w.length);
    req.next_psn = psn;
    w.state = verbs::WqeState::kSending;
    req.rd_outstanding = 0;
    for (uint32_t p = ring.head(); p != pos; ++p)
      if (is_read_or_atomic(ring.at(p).opcode)) ++req.rd_outstanding;
    if (req.read_psn_valid && pos == ring.head()) req.read_psn = psn;
    return;
  }
}

}  // namespace softib::rc
