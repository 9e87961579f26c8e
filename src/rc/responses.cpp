// What the responder sends (IBA 9.7.5.1.x, 9.7.5.2): ACKs and NAKs, atomic acknowledgements
// and READ responses, as output jobs queued per QP (ResponderState::out) that the link may
// take part of at a time; responses leave in the order they were made.
#include <algorithm>
#include <bit>
#include <cstring>

#include "packet/builder.hpp"
#include "rc/device.hpp"

namespace softib::rc {

using wire::NakCode;

void Device::send_atomic_ack(Qp& qp, const Resource& res) {
  flush_acks(qp);
  OutJob job;
  job.kind = OutJob::Kind::kAtomicAck;
  job.psn = res.first_psn;
  job.msn = res.msn;
  job.original = res.original;
  emit(qp, job);
}

void Device::send_read_responses(Qp& qp, const Resource& res, Psn from_psn, uint64_t va, uint32_t length) {
  // Responses for [va, va + length) from from_psn on: the READ itself, or a re-issued one that
  // asks for the rest of the original (IBA 9.7.5.1.3; duplicate_request checked that it lies
  // inside the resource).
  flush_acks(qp);
  OutJob job;
  job.kind = OutJob::Kind::kReadResponses;
  job.psn = from_psn;
  job.msn = res.msn;
  job.rkey = res.rkey;
  job.va = va;
  job.length = length;
  emit(qp, job);
}

// Sends as much of a job as the link takes; true when it is done.
bool Device::run_job(Qp& qp, OutJob& job) {
  const FrameAddr& to = path_of(qp);
  wire::Bth bth;
  bth.pkey = qp_pkey(qp);
  bth.dest_qp = qp.attr_.dest_qp_num;
  bth.psn = job.psn;
  if (job.kind == OutJob::Kind::kAeth) {
    // An ACK (or NAK) follows nearly every message: its two headers are encoded straight into
    // the frame, the bytes send_frame() would write, without a TransportHeaders (a ping-pong's
    // ACK cost ~430 instructions through the generic header table; so, ~100: callgrind).
    constexpr size_t kLen = wire::Bth::kLen + wire::Aeth::kLen;
    static_assert(packet::transport_length(*packet::find_opcode(static_cast<uint8_t>(packet::Opcode::kRcAcknowledge)),
                                           0) == kLen);
    bth.opcode = static_cast<uint8_t>(packet::Opcode::kRcAcknowledge);
    return send_written(to, bth.dest_qp, kLen, [&](wire::MutByteSpan out) {
      bth.encode(out, 0);
      job.aeth.encode(out.subspan(wire::Bth::kLen));
      return true;
    });
  }
  packet::TransportHeaders h;
  h.bth = bth;
  if (job.kind == OutJob::Kind::kAtomicAck) {
    h.bth.opcode = static_cast<uint8_t>(packet::Opcode::kRcAtomicAcknowledge);
    h.aeth = wire::Aeth::ack(job.msn);
    h.atomic_ack_eth = wire::AtomicAckEth{job.original};
    return send_frame(to, h, {});
  }
  // Read responses.
  const uint32_t mtu = verbs::mtu_bytes(qp.attr_.path_mtu);
  uint8_t* base = nullptr;
  if (job.length != 0 &&
      mrs_.resolve_remote(job.rkey, qp.pd_, job.va, job.length, verbs::access::kRemoteRead, &base) !=
          verbs::MemFault::kNone) {
    // The region went away since the READ was executed: the rest is a NAK (IBA 9.7.5.1.3).
    job.kind = OutJob::Kind::kAeth;
    job.psn = job.psn + job.next;
    job.aeth = wire::Aeth::nak(qp.resp_.msn, NakCode::kRemoteAccessError);
    to_error(qp);
    return run_job(qp, job);
  }
  const uint32_t n = verbs::packets_for(job.length, mtu);
  const size_t burst_cap = sink_.max_burst_bytes();
  while (job.next < n) {
    const uint32_t i = job.next;
    // To another process by reference where the link can (the requester copies the bytes
    // from this process's memory straight into its SGEs: one copy), else bursts through the
    // link's ring (segmentation offload, rc/frame.hpp).
    const size_t ref_cap = burst_cap != 0 && n - i >= 2 ? sink_.max_reference_bytes(to, h.bth.dest_qp) : 0;
    const bool by_reference = ref_cap >= 2 * mtu;
    const size_t cap = by_reference ? ref_cap : burst_cap;
    const uint32_t k = cap >= 2 * mtu ? std::min<uint32_t>({n - i, static_cast<uint32_t>(cap >> std::countr_zero(mtu)), 0xFFFF}) : 1;
    if (k >= 2) {
      // Segmentation offload (rc/frame.hpp): k responses in one frame.
      const bool first = i == 0, last = i + k == n;
      const auto op = first ? packet::Opcode::kRcRdmaReadResponseFirst : packet::Opcode::kRcRdmaReadResponseMiddle;
      const auto last_op = last ? packet::Opcode::kRcRdmaReadResponseLast : packet::Opcode::kRcRdmaReadResponseMiddle;
      const packet::OpcodeInfo& info = *packet::find_opcode(static_cast<uint8_t>(op));
      const uint64_t off = uint64_t{i} * mtu;
      const size_t bytes = static_cast<size_t>(std::min<uint64_t>(uint64_t{k} * mtu, job.length - off));
      const size_t body = by_reference ? sizeof(RefSegment) : bytes;
      wire::MutByteSpan out = sink_.reserve_burst(to, h.bth.dest_qp, info.header_length() + body);
      if (out.empty()) {
        refused_ = true;
        return false;
      }
      h.bth.opcode = static_cast<uint8_t>(op);
      h.bth.psn = job.psn + i;
      if (first)
        h.aeth = wire::Aeth::ack(job.msn);
      else
        h.aeth.reset();
      if (by_reference) {
        write_ref_headers(info, h, mtu, out);
        const RefSegment named{reinterpret_cast<uintptr_t>(base + off), bytes};
        std::memcpy(out.data() + info.header_length(), &named, sizeof named);
      } else {
        packet::write_transport_headers(info, h, mtu, out);
        sink_.copy_payload(out.data() + info.header_length(), base + off, bytes);
      }
      Burst b;
      b.packets = static_cast<uint16_t>(k);
      b.mtu = static_cast<uint8_t>(qp.attr_.path_mtu);
      b.last_opcode = static_cast<uint8_t>(last_op);
      const wire::Aeth ack = wire::Aeth::ack(job.msn);
      if (last) b.last_ext = uint32_t{ack.syndrome} << 24 | ack.msn;
      b.by_reference = by_reference;
      counters_.tx_packets += k;
      if (by_reference) ++counters_.ref_bursts_sent;
      sink_.commit_burst(info.header_length() + body, b);
      job.next += k;
      continue;
    }
    const bool first = i == 0, last = i + 1 == n;
    packet::Opcode op = first && last ? packet::Opcode::kRcRdmaReadResponseOnly
                        : first       ? packet::Opcode::kRcRdmaReadResponseFirst
                        : last        ? packet::Opcode::kRcRdmaReadResponseLast
                                      : packet::Opcode::kRcRdmaReadResponseMiddle;
    h.bth.opcode = static_cast<uint8_t>(op);
    h.bth.psn = job.psn + i;
    if (first || last)
      h.aeth = wire::Aeth::ack(job.msn);
    else
      h.aeth.reset();
    const uint64_t off = uint64_t{i} * mtu;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(mtu, job.length - off));
    if (!send_frame(to, h, wire::ByteSpan(base == nullptr ? nullptr : base + off, chunk))) return false;
    ++job.next;
  }
  return true;
}

void Device::emit(Qp& qp, OutJob& job) {
  // The caller's job is used in place, never copied on the way: the copy (a 16-byte load
  // over the caller's narrower stores of its fields) could not take its bytes from those
  // stores and waited for every older store to leave this core, e.g. the reply this step
  // had just written into a peer's ring, when this is the ACK held behind it (~240 ns on
  // far vCPUs; 9-11% of a ping-pong's samples in perf).
  std::deque<OutJob>& out = qp.resp_.out;
  if (out.empty() && run_job(qp, job)) return;
  out.push_back(job);
}

bool Device::pump_output(Qp& qp) {
  std::deque<OutJob>& out = qp.resp_.out;
  bool did = false;
  while (!out.empty()) {
    if (!run_job(qp, out.front())) return did;
    out.pop_front();
    did = true;
  }
  return did;
}

void Device::send_ack(Qp& qp, Psn psn, wire::Aeth aeth) {
  // Keep acknowledgements in PSN order: a coalesced ACK for an earlier PSN goes first. A lazy
  // one is dropped: the NAK acknowledges every PSN before its own (the completer's
  // ack_up_to(psn - 1)), and nobody asked for it.
  if (aeth.kind() != wire::AethKind::kAck) {
    if (qp.resp_.ack_lazy)
      qp.resp_.ack_done();
    else
      flush_acks(qp);
  }
  OutJob job;
  job.kind = OutJob::Kind::kAeth;
  job.psn = psn;
  job.aeth = aeth;
  emit(qp, job);
}

void Device::flush_acks(Qp& qp) {
  ResponderState& r = qp.resp_;
  if (!r.ack_pending) return;
  r.ack_done();
  send_ack(qp, r.ack_psn, wire::Aeth::ack(r.msn));
}

}  // namespace softib::rc
