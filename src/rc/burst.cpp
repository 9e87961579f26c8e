// Bursts (rc/frame.hpp: segmentation offload): one frame from a link that carries frames whole
// stands for several packets of one message. The common case — the packets are exactly the
// ones the receiver expects next — is executed in one step, with one copy of the payload: a
// SEND or RDMA WRITE at the responder, read responses at the completer. Anything else (a PSN
// that is not the expected one, a missing receive WQE, an R_Key or length that would fail, a
// burst that does not add up) is taken apart into its packets, each through the ordinary
// receive path, so that every IBA rule (NAKs, duplicates, RNR, drops and their counters)
// applies packet by packet exactly as on a wire.
#include <arpa/inet.h>
#include <sys/uio.h>

#include <array>
#include <cstring>

#include "packet/builder.hpp"
#include "rc/device.hpp"

namespace softib::rc {

using packet::OpcodeInfo;
using packet::Operation;
using packet::Position;
using verbs::QpType;

namespace {

// The MIDDLE opcode of the operation a FIRST or MIDDLE opcode belongs to.
const OpcodeInfo* middle_of(const OpcodeInfo& info) {
  if (info.position == Position::kMiddle) return &info;
  const OpcodeInfo* m = packet::find_opcode(static_cast<uint8_t>(info.value() + 1));
  if (m == nullptr || m->operation != info.operation || m->position != Position::kMiddle ||
      m->transport() != info.transport())
    return nullptr;
  return m;
}

// A burst is well formed when its first packet starts or continues an operation that has
// MIDDLE packets, its last one continues or ends the same operation, and its payload splits
// into packets-1 full packets and a last one (full when it is a MIDDLE).
bool shape_ok(const OpcodeInfo& first, const OpcodeInfo& last, const Burst& b, size_t bytes, uint32_t mtu) {
  // Reliable and unreliable connections only: their FIRST/MIDDLE/LAST carry no DETH/RDETH.
  if (first.transport() != packet::Transport::kRc && first.transport() != packet::Transport::kUc) return false;
  if (first.position != Position::kFirst && first.position != Position::kMiddle) return false;
  if (last.position != Position::kMiddle && last.position != Position::kLast) return false;
  if (first.operation != last.operation || first.transport() != last.transport() || middle_of(first) == nullptr)
    return false;
  const uint64_t full = uint64_t{b.packets - 1u} * mtu;
  if (last.position == Position::kMiddle) return bytes == full + mtu;
  return bytes > full && bytes <= full + mtu;
}

}  // namespace

// Is `psn` where the next READ responses start? Inside a READ, the PSN it waits for; between
// READs, the first PSN of the oldest READ, once the WRs before it are ones its responses
// acknowledge (SEND, WRITE: ack_up_to completes them). Without the second case the first
// burst of every READ was taken apart packet by packet (64 KiB READs ran at a third of WRITE).
bool Device::expected_read_burst(Qp& qp, Psn psn) {
  const RequesterState& req = qp.req_;
  if (req.read_psn_valid) return req.read_psn == psn;
  auto& ring = qp.sq_.ring();
  for (uint32_t i = 0; i < ring.size(); ++i) {
    const verbs::SendWqe& w = ring.peek(i);
    if (w.state == verbs::WqeState::kPosted) return false;
    if (w.opcode == verbs::WrOpcode::kRdmaRead) return w.first_psn == psn;
    if (w.opcode == verbs::WrOpcode::kAtomicCmpAndSwp || w.opcode == verbs::WrOpcode::kAtomicFetchAndAdd) return false;
    if (!before(w.last_psn, psn)) return false;
  }
  return false;
}

Device::RefPayload::Copy Device::RefPayload::copy_to(uint8_t* dst) const {
  const iovec local{dst, bytes};
  return copy_to(std::span<const iovec>(&local, 1));
}

namespace {

// Up to kMaxRefSegments pieces of memory, taken from a longer list.
struct IovecList {
  std::array<iovec, kMaxRefSegments> v;
  size_t count = 0;
  std::span<const iovec> span() const { return {v.data(), count}; }
};

// Splits `in` at byte `at` into `head` ([0, at)) and `tail` (the rest). False when either
// side would need more than kMaxRefSegments pieces (in has at most that many: never).
bool split_iovecs(std::span<const iovec> in, uint64_t at, IovecList& head, IovecList& tail) {
  head.count = tail.count = 0;
  for (const iovec& piece : in) {
    const uint64_t len = piece.iov_len;
    if (at >= len) {
      if (head.count == head.v.size()) return false;
      head.v[head.count++] = piece;
      at -= len;
      continue;
    }
    if (at > 0) {
      if (head.count == head.v.size()) return false;
      head.v[head.count++] = iovec{piece.iov_base, at};
    }
    if (tail.count == tail.v.size()) return false;
    tail.v[tail.count++] = iovec{static_cast<uint8_t*>(piece.iov_base) + at, len - at};
    at = 0;
  }
  return true;
}

bool pull(int32_t pid, std::span<const iovec> local, std::span<const iovec> remote, uint64_t bytes) {
  const ssize_t n = ::process_vm_readv(pid, local.data(), local.size(), remote.data(), remote.size(), 0);
  return n >= 0 && static_cast<uint64_t>(n) == bytes;
}

}  // namespace

// With a helper (CopyHelp), the second half is offered to the sending process and the first
// pulled meanwhile; the half nobody took is pulled after it. The split depends on nothing
// but the payload and its target, so a burst delivered again (kLater) offers the same half.
Device::RefPayload::Copy Device::RefPayload::copy_to(std::span<const iovec> local) const {
  const auto pulled = [](bool ok) { return ok ? Copy::kDone : Copy::kFailed; };
  if (help == nullptr) return pulled(pull(pid, local, segments, bytes));
  const uint64_t half = bytes / 2;
  IovecList local_head, local_tail, remote_head, remote_tail;
  if (!split_iovecs(local, half, local_head, local_tail) || !split_iovecs(segments, half, remote_head, remote_tail) ||
      !help->offer(local_tail.span(), remote_tail.span()))
    return pulled(pull(pid, local, segments, bytes));
  const bool head = pull(pid, local_head.span(), remote_head.span(), half);
  switch (help->finish()) {
    case CopyHelp::End::kWritten:
      return pulled(head);
    case CopyHelp::End::kLater:
      return Copy::kLater;
    case CopyHelp::End::kNotWritten:
      break;
  }
  return pulled(pull(pid, local_tail.span(), remote_tail.span(), bytes - half) && head);
}

void Device::write_ref_headers(const packet::OpcodeInfo& info, const packet::TransportHeaders& h, uint32_t mtu,
                               wire::MutByteSpan out) {
  ref_headers_.resize(packet::transport_length(info, mtu));
  packet::write_transport_headers(info, h, mtu, ref_headers_);
  std::memcpy(out.data(), ref_headers_.data(), info.header_length());
}

// A burst whose payload stays in the sender's memory (single copy): RDMA WRITE requests, and
// RDMA READ responses (the responder names its region). One that is exactly what comes next
// is copied straight from there into its target (the WRITE's region, the READ's SGEs);
// anything else (a duplicate, a gap, an error to report) has its bytes fetched and goes the
// inline way, whole or packet by packet. Bytes that cannot be read lose the burst, as a wire
// would.
void Device::receive_ref_burst(const FrameAddr& from, wire::ByteSpan t, const Burst& b) {
  const OpcodeInfo* first = t.empty() ? nullptr : packet::find_opcode(t[0]);
  const OpcodeInfo* last = packet::find_opcode(b.last_opcode);
  const auto lost = [&] {
    counters_.rx_packets += b.packets;
    drop(Drop::kMalformed);
  };
  const bool read_response = first != nullptr && first->operation == Operation::kRdmaReadResponse;
  const bool write = first != nullptr && first->is_rdma_write() && !first->is_response();
  if (first == nullptr || last == nullptr || b.ref_pid <= 0 || !verbs::mtu_valid(b.mtu) || !(write || read_response) ||
      t.size() <= first->header_length())
    return lost();
  const size_t hl = first->header_length();
  const wire::ByteSpan named = t.subspan(hl);
  if (named.size() % sizeof(RefSegment) != 0 || named.size() / sizeof(RefSegment) > kMaxRefSegments) return lost();
  std::array<iovec, kMaxRefSegments> segments;
  const size_t count = named.size() / sizeof(RefSegment);
  uint64_t bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    RefSegment s;
    std::memcpy(&s, named.data() + i * sizeof s, sizeof s);
    if (s.len == 0 || s.len > (1u << 30) || bytes + s.len > (1u << 30)) return lost();
    segments[i] = iovec{reinterpret_cast<void*>(s.addr), s.len};
    bytes += s.len;
  }
  const RefPayload ref{b.ref_pid, std::span<const iovec>(segments.data(), count), bytes, b.help};
  ref_later_ = false;
  const uint32_t mtu = verbs::mtu_bytes(static_cast<verbs::Mtu>(b.mtu));
  // The first packet as a packet, for its headers: the headers and an MTU of stand-in payload.
  ref_probe_.assign(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(hl));
  ref_probe_.resize(hl + mtu);
  if (shape_ok(*first, *last, b, bytes, mtu) && packet::parse_transport_frame(ref_probe_, rx_)) {
    Qp* qp = find_qp(rx_.bth().dest_qp);
    const auto transport = qp != nullptr ? packet::transport_of(qp->type()) : std::nullopt;
    if (qp != nullptr && transport && first->transport() == *transport && pkey_match(rx_.bth().pkey, qp_pkey(*qp)) &&
        qp->attr_.path_mtu == static_cast<verbs::Mtu>(b.mtu)) {
      if (read_response) {
        if (expected_read_burst(*qp, rx_.bth().psn) && taking_responses(*qp)) {
          on_response(*qp, from, rx_, b.packets, last, &ref);  // counts the pull
          if (!ref_later_) counters_.rx_packets += b.packets;
          return;
        }
      } else if (request_burst(*qp, from, *last, b, {}, &ref)) {
        counters_.rx_packets += b.packets;
        ++counters_.ref_pulls;
        return;
      } else if (ref_later_) {
        return;
      }
    }
  }
  // Fetched into scratch memory that the next burst may move: no helper writes there (one
  // that wrote later would write into freed memory).
  const RefPayload alone{ref.pid, ref.segments, ref.bytes, nullptr};
  ref_scratch_.resize(hl + bytes);
  std::memcpy(ref_scratch_.data(), t.data(), hl);
  if (alone.copy_to(ref_scratch_.data() + hl) != RefPayload::Copy::kDone) {
    ++counters_.ref_pull_failures;
    return lost();
  }
  Burst inline_burst = b;
  inline_burst.by_reference = false;
  inline_burst.ref_pid = 0;
  receive_burst(from, ref_scratch_, inline_burst);
}

void Device::receive_burst(const FrameAddr& from, wire::ByteSpan t, const Burst& b) {
  if (b.by_reference) {
    receive_ref_burst(from, t, b);
    return;
  }
  const OpcodeInfo* first = t.empty() ? nullptr : packet::find_opcode(t[0]);
  const OpcodeInfo* last = packet::find_opcode(b.last_opcode);
  if (first == nullptr || last == nullptr || !verbs::mtu_valid(b.mtu) || t.size() <= first->header_length()) {
    counters_.rx_packets += b.packets;
    drop(Drop::kMalformed);
    return;
  }
  const uint32_t mtu = verbs::mtu_bytes(static_cast<verbs::Mtu>(b.mtu));
  const wire::ByteSpan data = t.subspan(first->header_length());
  // The first packet, as a packet: its headers and its one MTU of payload.
  if (!shape_ok(*first, *last, b, data.size(), mtu) ||
      !packet::parse_transport_frame(t.first(first->header_length() + mtu), rx_)) {
    counters_.rx_packets += b.packets;
    drop(Drop::kMalformed);
    return;
  }
  Qp* qp = find_qp(rx_.bth().dest_qp);
  const auto transport = qp != nullptr ? packet::transport_of(qp->type()) : std::nullopt;
  const bool fits = qp != nullptr && transport && first->transport() == *transport &&
                    pkey_match(rx_.bth().pkey, qp_pkey(*qp)) && qp->attr_.path_mtu == static_cast<verbs::Mtu>(b.mtu);
  if (fits) {
    if (first->is_response()) {
      // The completer takes read responses whole when they are the ones it expects next.
      if (first->operation == Operation::kRdmaReadResponse && expected_read_burst(*qp, rx_.bth().psn) &&
          taking_responses(*qp)) {
        counters_.rx_packets += b.packets;
        rx_.payload_ = data;
        on_response(*qp, from, rx_, b.packets, last);
        return;
      }
    } else if (request_burst(*qp, from, *last, b, data)) {
      counters_.rx_packets += b.packets;
      return;
    }
  }
  const packet::TransportHeaders headers = rx_.headers();
  explode(from, headers, *first, b, data);
}

// Does every byte of [offset, offset + len) of the WQE's SGEs resolve for local write? (A
// burst is executed only when it cannot fail part way: the packet-by-packet path names the
// packet that fails.)
bool Device::scatter_ok(const Qp& qp, const verbs::RecvWqe& w, uint64_t offset, uint64_t len) const {
  if (offset + len > w.length) return false;
  uint64_t at = 0;
  for (uint32_t i = 0; i < w.num_sge && len > 0; ++i) {
    const verbs::Sge& s = w.sge[i];
    const uint64_t end = at + s.length;
    if (end > offset) {
      const uint64_t skip = offset - at;
      const uint64_t n = std::min<uint64_t>(s.length - skip, len);
      uint8_t* dst = nullptr;
      if (mrs_.resolve_local(s.lkey, qp.pd_, s.addr + skip, n, verbs::access::kLocalWrite, &dst) != verbs::MemFault::kNone)
        return false;
      offset += n;
      len -= n;
    }
    at = end;
  }
  return len == 0;
}

// A SEND or RDMA WRITE burst at the responder, executed whole when it is exactly what comes
// next and cannot fail; false leaves everything as it was (the caller takes it apart).
bool Device::request_burst(Qp& qp, const FrameAddr& from, const OpcodeInfo& last, const Burst& b, wire::ByteSpan data,
                           const RefPayload* ref) {
  ResponderState& r = qp.resp_;
  const OpcodeInfo& first = rx_.info();
  const wire::Bth& bth = rx_.bth();
  const bool rc = qp.type() == QpType::kRc;
  if (qp.type() != QpType::kRc && qp.type() != QpType::kUc) return false;
  if (!qp.receives()) return false;
  if (bth.psn != r.epsn || (!rc && r.uc_dropping)) return false;
  using InMsg = ResponderState::InMsg;
  const bool starts = first.starts_message();
  if (starts ? r.in_msg != InMsg::kNone
             : !((r.in_msg == InMsg::kSend && first.is_send()) || (r.in_msg == InMsg::kWrite && first.is_rdma_write())))
    return false;
  const bool ends = last.ends_message();

  if (first.is_rdma_write()) {
    if (last.immediate()) return false;  // its receive WQE (or RNR) is the per-packet path's
    uint8_t* at = r.write_at;
    uint64_t left = r.write_left;
    if (starts) {
      const wire::Reth& reth = *rx_.headers().reth;
      if ((qp.attr_.qp_access_flags & verbs::access::kRemoteWrite) == 0 || reth.dma_len == 0) return false;
      if (mrs_.resolve_remote(reth.rkey, qp.pd_, reth.va, reth.dma_len, verbs::access::kRemoteWrite, &at) !=
          verbs::MemFault::kNone)
        return false;
      left = reth.dma_len;
    }
    const uint64_t size = ref != nullptr ? ref->bytes : data.size();
    if (size > left || (ends && size != left)) return false;
    if (ref != nullptr) {
      // Unchanged either way: the caller fetches the bytes or gives up; or, later, the link
      // delivers the burst again.
      const RefPayload::Copy copied = ref->copy_to(at);
      ref_later_ = copied == RefPayload::Copy::kLater;
      if (copied != RefPayload::Copy::kDone) return false;
    } else {
      std::memcpy(at, data.data(), data.size());
    }
    if (starts) r.write_length = left;
    r.write_at = at + size;
    r.write_left = left - size;
    r.in_msg = ends ? InMsg::kNone : InMsg::kWrite;
    if (ends) r.msn = (r.msn + 1) & 0xFFFFFF;
  } else {
    if (ref != nullptr) return false;  // only WRITEs travel by reference
    verbs::RecvWqe* w = r.wqe;
    if (starts) {
      verbs::RecvQueue& rq = qp.rq();
      if (rq.empty()) return false;  // RNR (or, UC, a drop): the per-packet path's
      if (!scatter_ok(qp, rq.front(), 0, data.size())) return false;
      take_receive_wqe(qp);
      w = r.wqe;
    } else if (w == nullptr || !scatter_ok(qp, *w, r.recv_offset, data.size())) {
      return false;
    }
    verbs::WcStatus fault = verbs::WcStatus::kSuccess;
    const bool scattered = scatter(qp, *w, r.recv_offset, data, &fault);
    SOFTIB_ASSERT(scattered);  // scatter_ok said so
    r.recv_offset += data.size();
    r.in_msg = ends ? InMsg::kNone : InMsg::kSend;
    if (ends) {
      verbs::WorkCompletion wc = received(qp, from, w->wr_id, verbs::WcOpcode::kRecv);
      wc.byte_len = static_cast<uint32_t>(r.recv_offset);
      if (last.immediate()) {
        wc.wc_flags |= verbs::wc_flag::kWithImm;
        wc.imm_data = htonl(b.last_ext);
      }
      if (last.invalidate()) {
        wc.wc_flags |= verbs::wc_flag::kWithInv;
        wc.imm_data = b.last_ext;
      }
      r.wqe = nullptr;
      r.msn = (r.msn + 1) & 0xFFFFFF;
      complete_recv(qp, wc, b.last_solicited);
    }
  }
  r.epsn = bth.psn + b.packets;
  r.nak_sent = false;
  if (rc) r.ack_executed(bth.psn + (b.packets - 1u), b.last_ack_req || bth.ack_req);
  return true;
}

// Takes a burst apart into its packets and receives each as if it had come alone.
void Device::explode(const FrameAddr& from, const packet::TransportHeaders& first, const OpcodeInfo& first_info,
                     const Burst& b, wire::ByteSpan data) {
  ++counters_.bursts_taken_apart;
  const uint32_t mtu = verbs::mtu_bytes(static_cast<verbs::Mtu>(b.mtu));
  const OpcodeInfo* middle = middle_of(first_info);
  const OpcodeInfo* last = packet::find_opcode(b.last_opcode);
  SOFTIB_ASSERT(middle != nullptr && last != nullptr);  // shape_ok
  // The last packet's AETH (read responses) must be one the packet path could carry.
  const wire::Aeth last_aeth{static_cast<uint8_t>(b.last_ext >> 24), b.last_ext & 0xFFFFFF};
  if (last->is_ack()) {
    std::array<uint8_t, wire::Aeth::kLen> probe{};
    last_aeth.encode(probe);
    if (!wire::Aeth::decode(probe).ok()) {
      counters_.rx_packets += b.packets;
      drop(Drop::kMalformed);
      return;
    }
  }
  for (uint32_t i = 0; i < b.packets; ++i) {
    const OpcodeInfo& info = i == 0 ? first_info : i + 1 == b.packets ? *last : *middle;
    packet::TransportHeaders h;
    h.bth = first.bth;
    h.bth.opcode = info.value();
    h.bth.psn = first.bth.psn + i;
    if (i != 0) h.bth.ack_req = false;
    if (i + 1 == b.packets) {
      h.bth.ack_req = b.last_ack_req;
      h.bth.solicited = b.last_solicited;
    } else {
      h.bth.solicited = false;
    }
    if (info.headers.has(packet::ExtHeader::kReth)) h.reth = first.reth;
    if (info.headers.has(packet::ExtHeader::kAeth)) h.aeth = i == 0 ? first.aeth : std::optional<wire::Aeth>(last_aeth);
    if (info.immediate()) h.immdt = wire::ImmDt{b.last_ext};
    if (info.invalidate()) h.ieth = wire::Ieth{RKey(b.last_ext)};
    const size_t off = size_t{i} * mtu;
    const size_t len = std::min<size_t>(mtu, data.size() - off);
    explode_.resize(packet::transport_length(info, len));
    const size_t n = packet::write_transport_headers(info, h, len, explode_);
    std::memcpy(explode_.data() + info.header_length(), data.data() + off, len);
    receive(from, wire::ByteSpan(explode_.data(), n));
  }
}

}  // namespace softib::rc
