// The responder (IBA 9.7.5.1, 9.8, 9.9; rxe_resp.c): request packets are checked in order
// (QP state, transport, P_Key, Q_Key, PSN, opcode sequence), then executed against receive
// WQEs and registered memory, then acknowledged.
#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "base/copy.hpp"
#include "packet/builder.hpp"
#include "rc/device.hpp"
#include "wire/crc.hpp"
#include "wire/ipv4.hpp"
#include "wire/udp.hpp"

namespace softib::rc {

using packet::Operation;
using packet::Position;
using verbs::QpState;
using verbs::QpType;
using verbs::WcStatus;
using wire::NakCode;

namespace {

bool takes_receive_wqe(const packet::OpcodeInfo& info) {
  // IBA 9.7.5.1.x: a SEND consumes a receive WQE at its first packet; an RDMA WRITE with
  // immediate data at its last.
  if (info.operation == Operation::kSend) return info.starts_message();
  return info.operation == Operation::kRdmaWrite && info.immediate();
}

// Atomics on host memory that is not 8-byte aligned (an iova registration can map an
// aligned va onto an unaligned address) fall back to one lock for the whole process.
std::mutex g_unaligned_atomics;

uint64_t do_atomic(uint8_t* at, bool cmp_swap, uint64_t swap_add, uint64_t compare) {
  if (reinterpret_cast<uintptr_t>(at) % alignof(uint64_t) == 0) {
    std::atomic_ref<uint64_t> ref(*reinterpret_cast<uint64_t*>(at));
    if (!cmp_swap) return ref.fetch_add(swap_add);
    uint64_t expected = compare;
    ref.compare_exchange_strong(expected, swap_add);
    return expected;  // the value before: compare on success, the current value otherwise
  }
  std::lock_guard lock(g_unaligned_atomics);
  uint64_t v;
  std::memcpy(&v, at, 8);
  const uint64_t next = cmp_swap ? (v == compare ? swap_add : v) : v + swap_add;
  std::memcpy(at, &next, 8);
  return v;
}

}  // namespace

bool Device::scatter_sges(Qp& qp, verbs::RecvWqe& w, uint64_t offset, wire::ByteSpan data, WcStatus* fault) {
  if (offset + data.size() > w.length) {
    *fault = WcStatus::kLocLenErr;
    return false;
  }
  uint64_t at = 0, left = data.size();
  const uint8_t* src = data.data();
  for (uint32_t i = 0; i < w.num_sge && left > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    const uint64_t end = at + s.length;
    if (end > offset) {
      const uint64_t skip = offset - at;
      const uint64_t n = std::min<uint64_t>(s.length - skip, left);
      uint8_t* dst = nullptr;
      if (mrs_.resolve_local(s.lkey, qp.pd_, s.addr + skip, n, verbs::access::kLocalWrite, &dst) !=
          verbs::MemFault::kNone) {
        *fault = WcStatus::kLocProtErr;
        return false;
      }
      copy_small(dst, src, n);
      src += n;
      offset += n;
      left -= n;
    }
    at = end;
  }
  return true;
}

void Device::take_receive_wqe(Qp& qp) {
  ResponderState& r = qp.resp_;
  verbs::RecvQueue& rq = qp.rq();
  const verbs::RecvWqe& f = rq.front();
  verbs::RecvWqe& h = r.held;
  h.wr_id = f.wr_id;
  h.num_sge = f.num_sge;
  h.length = f.length;
  // Sized once to the queue's max_sge (every WQE's vector has that size), then copied into
  // in place: a vector assign cost ~50 instructions a message.
  if (h.sge.size() < f.sge.size()) h.sge.resize(f.sge.size());
  std::copy_n(f.sge.begin(), f.num_sge, h.sge.begin());
  rq.pop();
  if (qp.srq_ != nullptr && qp.srq_->take_limit_event())
    async({verbs::AsyncEventType::kSrqLimitReached, nullptr, nullptr, qp.srq_});
  r.wqe = &r.held;
  r.recv_offset = 0;
}

verbs::WorkCompletion Device::received(const Qp& qp, const FrameAddr& from, uint64_t wr_id, verbs::WcOpcode op) const {
  verbs::WorkCompletion wc;
  fill_received(wc, qp, from, wr_id, op);
  return wc;
}

void Device::receive(const FrameAddr& from, wire::ByteSpan transport, const Burst& burst) {
  // The QP a frame is for may have work for progress() now (an ACK to send, a window that
  // opened, a NAK to act on): one lookup, nearly always the cached last_qp_, which the fast
  // paths take too. A frame that is then dropped leaves it active until the next progress()
  // finds nothing to do.
  Qp* frame_qp = nullptr;
  if (transport.size() >= wire::Bth::kLen) {
    frame_qp = find_qp(Qpn(wire::load_be32(transport.data() + 4) & 0xFFFFFF));
    if (frame_qp != nullptr) activate(*frame_qp);
  }
  if (fast_paths_ && burst.packets <= 1 &&
      (receive_send_only(from, transport, frame_qp) || receive_write_only(transport, frame_qp)))
    return;
  // A fast-path ACK owes progress() a walk only when it may have let work out (receive_ack).
  if (fast_paths_ && burst.packets <= 1 && receive_ack(transport, frame_qp)) return;
  owed_ = true;  // progress() may have work for this frame (hold_acks_without_progress)
  if (burst.packets > 1) {
    receive_burst(from, transport, burst);
    return;
  }
  ++counters_.rx_packets;
  packet::TransportFrame& p = rx_;
  if (!packet::parse_transport_frame(transport, p)) {
    drop(Drop::kMalformed);
    return;
  }
  if (!p.info().supported) {
    drop(Drop::kUnsupported);
    return;
  }
  Qp* qp = frame_qp;  // the QP the BTH names, looked up above
  if (qp == nullptr) {
    drop(Drop::kNoQp);
    return;
  }
  const auto t = packet::transport_of(qp->type());
  if (!t || p.info().transport() != *t) {
    drop(Drop::kWrongTransport);
    return;
  }
  // IBA 10.9.3: every packet's P_Key must match the QP's (C10-115 for UD too).
  if (!pkey_match(p.headers().bth.pkey, qp_pkey(*qp))) {
    drop(Drop::kBadPkey);
    return;
  }
  if (p.info().is_response())
    on_response(*qp, from, p);
  else
    on_request(*qp, from, p);
}

// A one-packet RC SEND (ONLY, or ONLY WITH IMMEDIATE) that is exactly what its QP expects
// next and lands: executed from the BTH as it lies in the frame, without the general parse
// and dispatch (callgrind, 64-byte SENDs: the receiver's Device::receive 511 -> 302
// instructions a message). It checks what the general path would (TVer, PadCnt and length,
// the QP, its type and state, the P_Key, the PSN, the opcode sequence, the PMTU, a receive
// WQE) and does what it would do for such a packet, in the same order. Anything else
// returns false having changed nothing, and the general path takes the packet: whatever
// would be dropped, NAKed, RNR-NAKed, counted or failed is its to report. One exception to
// "nothing": a scatter that faults part way has written the SGEs before the fault; the
// general path scatters the same bytes to the same places and fails the same way.
// tests/protocol/rc_fast_path_test.cpp holds the two paths to the same results.
// What both one-packet fast paths check first (receive_send_only, receive_write_only), as the
// general path would: TVer 0, the headers there, PadCnt against the length, an RC QP whose
// P_Key matches, in a state that receives, expecting this PSN outside any message, and a
// payload of at most one PMTU. The QP and the payload, or nullptr. Inlined: it is on the
// ping-pong's critical path.
[[gnu::always_inline]] inline Qp* Device::fast_path_request(wire::ByteSpan t, size_t header_len, Qp* frame_qp,
                                                            wire::ByteSpan* data) const {
  const uint8_t* p = t.data();
  if ((p[1] & 0x0F) != 0) return nullptr;  // TVer 0
  if (t.size() < header_len) return nullptr;
  const size_t after = t.size() - header_len;
  const size_t pad = (p[1] >> 4) & 3;
  if (after % 4 != 0 || pad > after) return nullptr;
  Qp* qp = fast_path_qp(frame_qp, p);
  if (qp == nullptr) return nullptr;
  if (!qp->receives()) return nullptr;
  const ResponderState& r = qp->resp_;
  const Psn psn(wire::load_be32(p + 8) & 0xFFFFFF);
  if (psn != r.epsn || r.in_msg != ResponderState::InMsg::kNone || r.wqe != nullptr) return nullptr;
  *data = t.subspan(header_len, after - pad);
  if (data->size() > verbs::mtu_bytes(qp->attr_.path_mtu)) return nullptr;
  return qp;
}

bool Device::receive_send_only(const FrameAddr& from, wire::ByteSpan t, Qp* frame_qp) {
  using packet::Opcode;
  if (t.size() < wire::Bth::kLen) return false;
  const uint8_t* p = t.data();
  const bool imm = p[0] == static_cast<uint8_t>(Opcode::kRcSendOnlyWithImmediate);
  if (p[0] != static_cast<uint8_t>(Opcode::kRcSendOnly) && !imm) return false;
  wire::ByteSpan data;
  Qp* qp = fast_path_request(t, wire::Bth::kLen + (imm ? wire::ImmDt::kLen : 0), frame_qp, &data);
  if (qp == nullptr) return false;
  ResponderState& r = qp->resp_;
  const Psn psn = r.epsn;  // fast_path_request: the packet's
  verbs::RecvQueue& rq = qp->rq();
  if (rq.empty()) return false;
  verbs::RecvWqe& w = rq.front();
  WcStatus fault = WcStatus::kSuccess;
  if (!scatter(*qp, w, 0, data, &fault)) return false;
  const uint64_t wr_id = w.wr_id;
  rq.pop();
  if (qp->srq_ != nullptr && qp->srq_->take_limit_event())
    async({verbs::AsyncEventType::kSrqLimitReached, nullptr, nullptr, qp->srq_});
  ++counters_.rx_packets;
  ++counters_.fast_received;
  r.nak_sent = false;
  r.epsn = psn + 1;
  r.msn = (r.msn + 1) & 0xFFFFFF;
  qp->recv_cq_->emplace((p[1] & 0x80) != 0, [&](verbs::WorkCompletion& wc) {
    fill_received(wc, *qp, from, wr_id, verbs::WcOpcode::kRecv);
    wc.byte_len = static_cast<uint32_t>(data.size());
    if (imm) {
      wc.wc_flags = verbs::wc_flag::kWithImm;
      wc.imm_data = htonl(wire::load_be32(p + wire::Bth::kLen));
    }
  });
  const bool ack_req = (p[8] & 0x80) != 0;
  r.ack_executed(psn, ack_req);
  if (ack_req) {  // a lazy ACK gives this step nothing to send or hold
    if (ack_qp_ != nullptr && ack_qp_ != qp) owed_ = true;  // a second QP: progress() walks
    ack_qp_ = qp;
  }
  return true;
}

// A one-packet RC RDMA WRITE (ONLY, without immediate: it takes no receive WQE) that is
// exactly what its QP expects next and lands, under the same contract as
// receive_send_only(): the checks of the general path (TVer, PadCnt and length, the QP, its
// type and state, the P_Key, the PSN, the opcode sequence, the PMTU, the QP's remote write
// access, the R_Key's MR, its bounds and access, the DMA length against the payload), its
// effects in its order, and false having changed nothing for anything else. Callgrind,
// 64-byte WRITEs signaled one by one (`bench_verbs bw --size 64`): the general parse and
// dispatch cost the responder ~1,000 instructions a packet.
bool Device::receive_write_only(wire::ByteSpan t, Qp* frame_qp) {
  if (t.size() < wire::Bth::kLen) return false;
  const uint8_t* p = t.data();
  if (p[0] != static_cast<uint8_t>(packet::Opcode::kRcRdmaWriteOnly)) return false;
  wire::ByteSpan data;
  Qp* qp = fast_path_request(t, wire::Bth::kLen + wire::Reth::kLen, frame_qp, &data);
  if (qp == nullptr) return false;
  ResponderState& r = qp->resp_;
  const Psn psn = r.epsn;  // fast_path_request: the packet's
  if ((qp->attr_.qp_access_flags & verbs::access::kRemoteWrite) == 0) return false;
  // The RETH where it lies (fast_path_request checked that its bytes are there): no Parsed.
  using wire::Reth;
  const wire::ByteSpan reth = t.subspan(wire::Bth::kLen);
  const uint32_t dma_len = wire::get_aligned<Reth::kDmaLen>(reth);
  if (dma_len != data.size()) return false;
  uint8_t* at = nullptr;
  if (dma_len != 0 && mrs_.resolve_remote(RKey(wire::get_aligned<Reth::kRKey>(reth)), qp->pd_,
                                          wire::get_aligned<Reth::kVa>(reth), dma_len, verbs::access::kRemoteWrite,
                                          &at) != verbs::MemFault::kNone)
    return false;
  if (!data.empty()) std::memcpy(at, data.data(), data.size());
  ++counters_.rx_packets;
  ++counters_.fast_received;
  // As the general path leaves them (execute()).
  r.nak_sent = false;
  r.write_at = at == nullptr ? nullptr : at + data.size();  // (no offset on a null pointer)
  r.write_left = 0;
  r.write_length = dma_len;
  r.epsn = psn + 1;
  r.msn = (r.msn + 1) & 0xFFFFFF;
  const bool ack_req = (p[8] & 0x80) != 0;
  r.ack_executed(psn, ack_req);
  if (ack_req) {  // as receive_send_only()
    if (ack_qp_ != nullptr && ack_qp_ != qp) owed_ = true;
    ack_qp_ = qp;
  }
  return true;
}

void Device::on_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p) {
  if (!qp.receives()) {  // IBA 10.3.1
    drop(Drop::kQpState);
    return;
  }
  switch (qp.type()) {
    case QpType::kRc: on_rc_request(qp, from, p); return;
    case QpType::kUc: on_uc_request(qp, from, p); return;
    case QpType::kUd: on_ud_request(qp, from, p); return;
    default: drop(Drop::kWrongTransport); return;
  }
}

// Opcode sequence (IBA 9.7.5.1.x, C9-... "invalid request"): within a message only
// MIDDLE/LAST of the same operation may follow; outside, only FIRST/ONLY.
static bool sequence_ok(const ResponderState& r, const packet::OpcodeInfo& info) {
  using InMsg = ResponderState::InMsg;
  if (r.in_msg == InMsg::kNone) return info.starts_message();
  if (info.starts_message()) return false;
  return (r.in_msg == InMsg::kSend && info.operation == Operation::kSend) ||
         (r.in_msg == InMsg::kWrite && info.operation == Operation::kRdmaWrite);
}

// Payload length against the path MTU: a message is cut into PMTU-sized packets (IBA 9.7;
// OpcodeInfo::payload_is_full_pmtu), so FIRST and MIDDLE packets carry exactly one PMTU, a
// LAST packet 1 to PMTU bytes, an ONLY packet at most one PMTU (rxe check_length, whose
// RESPST_ERR_LENGTH is a NAK "invalid request" on RC and a silent drop on UC).
// Found by protocol test ShortFirstPacketIsAnInvalidRequest: a short FIRST was placed and the
// rest of the message landed at the wrong offsets.
static bool length_ok(const packet::OpcodeInfo& info, size_t payload, uint32_t mtu) {
  if (!info.payload) return true;
  switch (info.position) {
    case Position::kFirst:
    case Position::kMiddle: return payload == mtu;
    case Position::kLast: return payload != 0 && payload <= mtu;
    case Position::kOnly: return payload <= mtu;
  }
  return false;
}

void Device::on_rc_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p) {
  ResponderState& r = qp.resp_;
  const wire::Bth& bth = p.headers().bth;
  const int32_t d = Psn::distance(r.epsn, bth.psn);
  if (d < 0) {
    duplicate_request(qp, p);
    return;
  }
  if (d > 0) {
    // IBA 9.7.5.1.2: a PSN sequence error is NAKed once; later packets are dropped silently
    // until the expected PSN arrives.
    drop(Drop::kPsnOutOfOrder);
    if (!r.nak_sent) {
      r.nak_sent = true;
      ++counters_.seq_naks_sent;
      send_ack(qp, r.epsn, wire::Aeth::nak(r.msn, NakCode::kPsnSequenceError));
    }
    return;
  }
  r.nak_sent = false;
  if (!sequence_ok(r, p.info()) || !length_ok(p.info(), p.payload().size(), verbs::mtu_bytes(qp.attr_.path_mtu))) {
    send_ack(qp, bth.psn, wire::Aeth::nak(r.msn, NakCode::kInvalidRequest));
    to_error(qp);
    return;
  }
  switch (execute(qp, from, p)) {
    case Exec::kOk:
      // A READ or an atomic is answered by its response.
      if (!p.info().is_rdma_read() && !p.info().is_atomic()) r.ack_executed(bth.psn, bth.ack_req);
      return;
    case Exec::kRnr:
      ++counters_.rnr_naks_sent;
      send_ack(qp, bth.psn, wire::Aeth::rnr_nak(r.msn, qp.attr_.min_rnr_timer));
      return;
    case Exec::kNakInvalid:
      send_ack(qp, bth.psn, wire::Aeth::nak(r.msn, NakCode::kInvalidRequest));
      to_error(qp);
      return;
    case Exec::kNakAccess:
      send_ack(qp, bth.psn, wire::Aeth::nak(r.msn, NakCode::kRemoteAccessError));
      to_error(qp);
      return;
    case Exec::kNakOperational:
      send_ack(qp, bth.psn, wire::Aeth::nak(r.msn, NakCode::kRemoteOperationalError));
      to_error(qp);
      return;
    case Exec::kDropped: return;
  }
}

void Device::on_uc_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p) {
  ResponderState& r = qp.resp_;
  const packet::OpcodeInfo& info = p.info();
  const Psn psn = p.headers().bth.psn;
  auto abandon = [&]() {
    // IBA 9.8.3: the rest of a message with a lost packet is dropped; its receive WQE stays
    // for the next message.
    r.in_msg = ResponderState::InMsg::kNone;
    r.recv_offset = 0;
    r.uc_dropping = true;
  };
  if (psn != r.epsn) {
    if (r.in_msg != ResponderState::InMsg::kNone || !info.starts_message()) abandon();
    r.epsn = psn;  // UC resynchronises on any PSN (no retransmission to wait for)
  }
  if (r.uc_dropping) {
    if (!info.starts_message()) {
      drop(Drop::kUcMessageLost);
      r.epsn = psn + 1;
      return;
    }
    r.uc_dropping = false;
  }
  if (!sequence_ok(r, info) || !length_ok(info, p.payload().size(), verbs::mtu_bytes(qp.attr_.path_mtu))) {
    // UC has no NAK: the message is dropped (rxe: class D error, RESPST_CLEANUP).
    abandon();
    drop(Drop::kUcMessageLost);
    r.epsn = psn + 1;
    return;
  }
  if (execute(qp, from, p) != Exec::kOk) {
    abandon();
    r.epsn = psn + 1;
  }
}

void Device::on_ud_request(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p) {
  const wire::Deth& deth = *p.headers().deth;
  // IBA 10.2.4 (C10-15): the Q_Key must match the QP's, else the packet is silently dropped.
  if (deth.qkey != qp.attr_.qkey) {
    drop(Drop::kBadQkey);
    return;
  }
  verbs::RecvQueue& rq = qp.rq();
  if (rq.empty()) {
    drop(Drop::kNoReceiveWqe);
    return;
  }
  verbs::RecvWqe& w = rq.front();
  const wire::ByteSpan data = p.payload();
  verbs::WorkCompletion wc = received(qp, from, w.wr_id, verbs::WcOpcode::kRecv);
  wc.src_qp = deth.src_qp;
  wc.byte_len = static_cast<uint32_t>(data.size() + wire::Grh::kLen);
  // IBA 11.4.1.2: the first 40 bytes of a UD receive buffer hold the GRH, if there is one.
  WcStatus fault = WcStatus::kSuccess;
  bool ok = w.length >= wire::Grh::kLen + data.size();
  if (!ok) fault = WcStatus::kLocLenErr;
  if (ok && from.global) {
    std::array<uint8_t, wire::Grh::kLen> grh_bytes{};
    const uint16_t transport = static_cast<uint16_t>(packet::transport_length(p.info(), data.size()) + wire::kIcrcLen);
    if (port_.roce && from.sgid.is_ipv4_mapped() && from.dgid.is_ipv4_mapped()) {
      // RoCE v2 over IPv4: the area's last 20 bytes hold the IPv4 header (as rxe and
      // ConnectX put it; the first 20 are undefined, here zero).
      wire::Ipv4 ip;
      ip.dscp = static_cast<uint8_t>(from.traffic_class >> 2);
      ip.ecn = static_cast<uint8_t>(from.traffic_class & 3);
      ip.total_length = static_cast<uint16_t>(wire::Ipv4::kLen + wire::Udp::kLen + transport);
      ip.ttl = from.hop_limit;
      ip.source = from.sgid.ipv4();
      ip.destination = from.dgid.ipv4();
      ip.encode(wire::MutByteSpan(grh_bytes).subspan(wire::Grh::kLen - wire::Ipv4::kLen));
    } else {
      wire::Grh g;
      g.tclass = from.traffic_class;
      g.flow_label = from.flow_label;
      g.pay_len = transport;
      g.hop_lmt = from.hop_limit;
      g.sgid = from.sgid;
      g.dgid = from.dgid;
      g.encode(grh_bytes);
    }
    ok = scatter(qp, w, 0, grh_bytes, &fault);
    wc.wc_flags |= verbs::wc_flag::kGrh;
  }
  if (ok) ok = scatter(qp, w, wire::Grh::kLen, data, &fault);
  if (p.headers().immdt) {
    wc.wc_flags |= verbs::wc_flag::kWithImm;
    wc.imm_data = htonl(p.headers().immdt->imm);
  }
  if (!ok) {
    wc.status = fault;
    wc.byte_len = 0;
  }
  rq.pop();
  if (qp.srq_ != nullptr && qp.srq_->take_limit_event()) async({verbs::AsyncEventType::kSrqLimitReached, nullptr, nullptr, qp.srq_});
  complete_recv(qp, wc, p.headers().bth.solicited);
}

// Flattened: a SEND's receive WQE, scatter and completion are inlined into the one call per
// packet (callgrind, 64-byte SEND: 633 -> 586 instructions a message on the receiver). The
// READ and atomic paths stay out of line (noinline below): flattened, they added ~90 KiB of
// code; as it is, ~3 KiB.
[[gnu::flatten]] Device::Exec Device::execute(Qp& qp, const FrameAddr& from, const packet::TransportFrame& p) {
  ResponderState& r = qp.resp_;
  const packet::OpcodeInfo& info = p.info();
  const auto& h = p.headers();
  const bool rc = qp.type() == QpType::kRc;
  if (info.is_rdma_read()) return execute_read(qp, p, false);
  if (info.is_atomic()) return execute_atomic(qp, p);

  const wire::ByteSpan data = p.payload();
  // A SEND's receive WQE fails with `fault` (IBA 9.9.3: class B/D errors at the responder;
  // the requester learns of it through the NAK).
  auto send_failed = [&](uint64_t wr_id, WcStatus fault) {
    const verbs::WorkCompletion wc = recv_error(qp, wr_id, fault);
    complete_recv(qp, wc, false);
    if (!rc) return Exec::kDropped;
    return fault == WcStatus::kLocLenErr ? Exec::kNakInvalid : Exec::kNakOperational;
  };
  // A SEND's last packet: its receive WQE completes.
  // Built in the CQ's slot (Cq::emplace).
  auto send_received = [&](uint64_t wr_id, uint64_t byte_len) {
    r.msn = (r.msn + 1) & 0xFFFFFF;
    qp.recv_cq_->emplace(h.bth.solicited, [&](verbs::WorkCompletion& wc) {
      fill_received(wc, qp, from, wr_id, verbs::WcOpcode::kRecv);
      wc.byte_len = static_cast<uint32_t>(byte_len);
      if (h.immdt) {
        wc.wc_flags |= verbs::wc_flag::kWithImm;
        wc.imm_data = htonl(h.immdt->imm);
      }
      if (h.ieth) {
        wc.wc_flags |= verbs::wc_flag::kWithInv;
        wc.imm_data = h.ieth->rkey.value();
      }
    });
  };

  // The receive WQE is checked before anything is written, so an RNR NAK leaves no trace.
  if (takes_receive_wqe(info) && r.wqe == nullptr) {
    verbs::RecvQueue& rq = qp.rq();
    if (rq.empty()) {
      if (!rc) drop(Drop::kNoReceiveWqe);
      return rc ? Exec::kRnr : Exec::kDropped;
    }
    if (info.operation == Operation::kSend && info.starts_message() && info.ends_message()) {
      // A SEND in one packet (nearly every small message) is scattered straight from the WQE
      // at the queue's front, popped once used; a longer message takes a copy
      // (take_receive_wqe), as it is filled over several calls. Callgrind, 64-byte SEND: the
      // copy cost ~35 instructions a message.
      verbs::RecvWqe& w = rq.front();
      const uint64_t wr_id = w.wr_id;
      WcStatus fault = WcStatus::kSuccess;
      const bool scattered = scatter(qp, w, 0, data, &fault);
      rq.pop();
      if (qp.srq_ != nullptr && qp.srq_->take_limit_event())
        async({verbs::AsyncEventType::kSrqLimitReached, nullptr, nullptr, qp.srq_});
      if (!scattered) return send_failed(wr_id, fault);
      r.epsn = h.bth.psn + 1;
      send_received(wr_id, data.size());
      return Exec::kOk;
    }
    take_receive_wqe(qp);
  }

  if (info.operation == Operation::kRdmaWrite) {
    if (info.starts_message()) {
      const wire::Reth& reth = *h.reth;
      if ((qp.attr_.qp_access_flags & verbs::access::kRemoteWrite) == 0) return Exec::kNakAccess;
      r.write_at = nullptr;
      if (reth.dma_len != 0 &&
          mrs_.resolve_remote(reth.rkey, qp.pd_, reth.va, reth.dma_len, verbs::access::kRemoteWrite, &r.write_at) !=
              verbs::MemFault::kNone) {
        return rc ? Exec::kNakAccess : Exec::kDropped;
      }
      r.write_left = r.write_length = reth.dma_len;
      r.in_msg = ResponderState::InMsg::kWrite;
    }
    if (data.size() > r.write_left) return rc ? Exec::kNakInvalid : Exec::kDropped;
    if (!data.empty()) std::memcpy(r.write_at, data.data(), data.size());
    r.write_at += data.size();
    r.write_left -= data.size();
    r.epsn = h.bth.psn + 1;
    if (!info.ends_message()) return Exec::kOk;
    r.in_msg = ResponderState::InMsg::kNone;
    if (r.write_left != 0) return rc ? Exec::kNakInvalid : Exec::kDropped;
    r.msn = (r.msn + 1) & 0xFFFFFF;
    if (info.immediate()) {
      verbs::WorkCompletion wc = received(qp, from, r.wqe->wr_id, verbs::WcOpcode::kRecvRdmaWithImm);
      wc.byte_len = static_cast<uint32_t>(r.write_length);
      wc.wc_flags = verbs::wc_flag::kWithImm;
      wc.imm_data = htonl(h.immdt->imm);
      r.wqe = nullptr;
      complete_recv(qp, wc, h.bth.solicited);
    }
    return Exec::kOk;
  }

  // SEND
  if (info.starts_message()) r.in_msg = ResponderState::InMsg::kSend;
  WcStatus fault = WcStatus::kSuccess;
  if (!scatter(qp, *r.wqe, r.recv_offset, data, &fault)) {
    const uint64_t wr_id = r.wqe->wr_id;
    r.wqe = nullptr;
    r.in_msg = ResponderState::InMsg::kNone;
    return send_failed(wr_id, fault);
  }
  r.recv_offset += data.size();
  r.epsn = h.bth.psn + 1;
  if (!info.ends_message()) return Exec::kOk;
  const uint64_t wr_id = r.wqe->wr_id;
  r.wqe = nullptr;
  r.in_msg = ResponderState::InMsg::kNone;
  send_received(wr_id, r.recv_offset);
  return Exec::kOk;
}

// Out of line: see execute().
[[gnu::noinline]] Device::Exec Device::execute_read(Qp& qp, const packet::TransportFrame& p, bool /*duplicate*/) {
  ResponderState& r = qp.resp_;
  const wire::Reth& reth = *p.headers().reth;
  const Psn psn = p.headers().bth.psn;
  if ((qp.attr_.qp_access_flags & verbs::access::kRemoteRead) == 0) return Exec::kNakAccess;
  uint8_t* at = nullptr;
  if (reth.dma_len != 0 &&
      mrs_.resolve_remote(reth.rkey, qp.pd_, reth.va, reth.dma_len, verbs::access::kRemoteRead, &at) !=
          verbs::MemFault::kNone)
    return Exec::kNakAccess;
  const uint32_t n = verbs::packets_for(reth.dma_len, verbs::mtu_bytes(qp.attr_.path_mtu));
  r.msn = (r.msn + 1) & 0xFFFFFF;
  Resource& res = r.resources[r.resource_next];
  if (++r.resource_next == r.resources.size()) r.resource_next = 0;
  res = Resource{Resource::Kind::kRead, psn, psn + (n - 1), reth.va, reth.rkey, reth.dma_len, 0, r.msn};
  r.epsn = psn + n;
  send_read_responses(qp, res, psn, reth.va, reth.dma_len);
  return Exec::kOk;
}

// Out of line: see execute().
[[gnu::noinline]] Device::Exec Device::execute_atomic(Qp& qp, const packet::TransportFrame& p) {
  ResponderState& r = qp.resp_;
  const wire::AtomicEth& a = *p.headers().atomic_eth;
  const Psn psn = p.headers().bth.psn;
  if ((qp.attr_.qp_access_flags & verbs::access::kRemoteAtomic) == 0) return Exec::kNakAccess;
  // IBA 9.4.5 (C9-...): the address must be naturally aligned, else "invalid request".
  if ((a.va & 7) != 0) return Exec::kNakInvalid;
  uint8_t* at = nullptr;
  if (mrs_.resolve_remote(a.rkey, qp.pd_, a.va, 8, verbs::access::kRemoteAtomic, &at) != verbs::MemFault::kNone)
    return Exec::kNakAccess;
  const bool cmp_swap = p.info().operation == Operation::kCompareSwap;
  const uint64_t original = do_atomic(at, cmp_swap, a.swap_add, a.compare);
  r.msn = (r.msn + 1) & 0xFFFFFF;
  Resource& res = r.resources[r.resource_next];
  if (++r.resource_next == r.resources.size()) r.resource_next = 0;
  res = Resource{Resource::Kind::kAtomic, psn, psn, a.va, a.rkey, 8, original, r.msn};
  r.epsn = psn + 1;
  send_atomic_ack(qp, res);
  return Exec::kOk;
}

void Device::duplicate_request(Qp& qp, const packet::TransportFrame& p) {
  ResponderState& r = qp.resp_;
  const packet::OpcodeInfo& info = p.info();
  const Psn psn = p.headers().bth.psn;
  ++counters_.duplicates_replayed;
  if (info.is_rdma_read()) {
    // IBA 9.7.5.1.3: replay from the resource that holds this PSN. The repeated request may
    // ask for the original READ or a part of it only, under the same R_Key (rxe
    // duplicate_request), with responses that fit the original's PSNs; anything else is
    // dropped rather than answered with memory or PSNs the original did not name (found by
    // protocol test DuplicateReadOutsideTheOriginalIsDropped: the replay ignored the RETH).
    const wire::Reth& reth = *p.headers().reth;
    const uint32_t mtu = verbs::mtu_bytes(qp.attr_.path_mtu);
    for (const Resource& res : r.resources) {
      if (res.kind != Resource::Kind::kRead || before(psn, res.first_psn) || before(res.last_psn, psn)) continue;
      const bool inside = reth.rkey == res.rkey && reth.va >= res.va && reth.dma_len <= res.length &&
                          reth.va - res.va <= res.length - reth.dma_len &&
                          verbs::packets_for(reth.dma_len, mtu) <= static_cast<uint32_t>(Psn::distance(psn, res.last_psn)) + 1;
      if (!inside) break;
      send_read_responses(qp, res, psn, reth.va, reth.dma_len);
      return;
    }
    drop(Drop::kDuplicate);
    return;
  }
  if (info.is_atomic()) {
    // An atomic is never executed twice: its saved result is sent again (IBA 9.7.5.1.3.2).
    for (const Resource& res : r.resources) {
      if (res.kind != Resource::Kind::kAtomic || res.first_psn != psn) continue;
      send_atomic_ack(qp, res);
      return;
    }
    drop(Drop::kDuplicate);
    return;
  }
  // A duplicate SEND or WRITE is acknowledged again, up to the newest PSN executed.
  drop(Drop::kDuplicate);
  r.ack_executed(r.epsn - 1, true);  // the requester is retrying: never lazily
}

}  // namespace softib::rc
