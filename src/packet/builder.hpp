// Building packets from typed headers: the inverse of PacketView.
//
//   build_transport  BTH | ext headers | payload | pad                 (RoCE v2 transport part)
//   build_roce_v2    IP | UDP | BTH ... pad | ICRC                     (via wire::encode_roce_v2)
//   build_ib         LRH | [GRH] | BTH ... pad | ICRC | VCRC           (native IB)
//
// The builder derives what the table and the lengths determine: BTH.PadCnt (the pad that
// brings the payload to a 4-byte boundary, IBA 9.2), LRH.LNH (IBA local, or global when a GRH
// is given), LRH.PktLen, GRH.PayLen and GRH.NxtHdr, and the CRCs (IBA 7.8). Reserved fields
// and pad bytes are written as zero.
//
// It refuses, with a Status and without writing a byte, what the opcode table forbids:
//   InvalidArgument  a reserved opcode; an extension header the opcode does not carry (a RETH
//                    on SEND_MIDDLE) or a missing one (no RETH on RDMA_WRITE_FIRST); a
//                    payload on an opcode without one (an ACK); a first or middle packet whose
//                    payload is empty or not a whole number of 4-byte words (they carry one
//                    PMTU); a field value wider than its field (VL, SL, FlowLabel, EECnxt,
//                    MSN, SEL, PLT) or an AETH syndrome the IBA reserves; a native IB packet
//                    longer than LRH.PktLen can say (2047 words); anything
//                    wire::encode_roce_v2 refuses.
//   OutOfRange       `out` is too small.
// The *_length functions say how big `out` must be.
#pragma once

#include <cstddef>
#include <optional>

#include "base/result.hpp"
#include "packet/opcode.hpp"
#include "packet/transport_headers.hpp"
#include "wire/bytes.hpp"
#include "wire/grh.hpp"
#include "wire/lrh.hpp"
#include "wire/roce.hpp"

namespace softib::packet {

// What a native IB sender chooses for the link and network headers.
struct IbRoute {
  wire::Lrh lrh;                 // lnh and pkt_len are computed
  std::optional<wire::Grh> grh;  // set: a global packet; pay_len and nxt_hdr are computed
};

// LRH.PktLen is 11 bits of 4-byte words (IBA 7.7).
inline constexpr size_t kMaxIbPacketWords = 2047;

// Bytes of BTH ... pad for `info` carrying `payload_len` payload bytes.
constexpr size_t transport_length(const OpcodeInfo& info, size_t payload_len) {
  return info.header_length() + payload_len + (4 - payload_len % 4) % 4;
}
// Bytes of a native IB packet, LRH through VCRC.
size_t ib_packet_length(bool global, const OpcodeInfo& info, size_t payload_len);
// Bytes of a RoCE v2 datagram, IP header through ICRC.
size_t roce_v2_packet_length(bool ipv6, const OpcodeInfo& info, size_t payload_len);

// Each returns the number of bytes written at the start of `out`.
Result<size_t> build_transport(const TransportHeaders& headers, wire::ByteSpan payload, wire::MutByteSpan out);
// The headers and pad of a transport packet whose payload_len payload bytes the caller writes
// itself at info.header_length() (a requester gathers them straight from its SGEs): the
// same checks and bytes as build_transport, without the copy.
Result<size_t> build_transport_headers(const TransportHeaders& headers, size_t payload_len, wire::MutByteSpan out);
// The transport's own hot path: writes BTH, the extension headers of `info` and the pad for a
// payload of payload_len bytes the caller writes at info.header_length(), without validating
// `headers` (build_transport_headers does; builds with assertions enabled in debug check that
// it would accept them). Returns transport_length(info, payload_len).
// REQUIRES: headers.bth.opcode is info's, headers carry exactly info's extension headers with
// values that fit, out.size() >= transport_length(info, payload_len).
size_t write_transport_headers(const OpcodeInfo& info, const TransportHeaders& headers, size_t payload_len,
                               wire::MutByteSpan out);
Result<size_t> build_roce_v2(const wire::RoceV2Addressing& addressing, const TransportHeaders& headers,
                             wire::ByteSpan payload, wire::MutByteSpan out);
Result<size_t> build_ib(const IbRoute& route, const TransportHeaders& headers, wire::ByteSpan payload,
                        wire::MutByteSpan out);

}  // namespace softib::packet
