// PacketView: a validated, typed view of one IBA packet in either encoding.
//
//   native IB (IBA 7.7, 8.3, 9, 7.8):
//     LRH | [GRH] | BTH | ext headers | payload | pad | ICRC | VCRC
//   RoCE v2 (IBA A17), the transport part as wire::RoceV2Frame::transport holds it:
//     BTH | ext headers | payload | pad                (IP, UDP and ICRC are wire's business)
//
// Parsing validates everything first and only then exposes the packet: any byte string
// yields either a view or a wire::ParseError naming the header and field at fault. It
// allocates nothing: the view holds the decoded header values and spans into the input.
//
// What is checked, in this order:
//   native IB  LRH (LVer 0), LNH is IBA local or global (raw and IP non-IBA packets are not
//              for this view: illegal LRH.LNH), GRH (IPVer 6, NxtHdr 0x1B), then as RoCE
//              below up to the extension headers; then LRH.PktLen against the bytes present
//              (fewer bytes: truncated, naming Packet.Payload, Packet.ICRC or Packet.VCRC;
//              more: inconsistent LRH.PktLen), GRH.PayLen against PktLen, the VCRC, the ICRC,
//              and the payload rules.
//   transport  BTH (TVer 0), the opcode is assigned (else illegal BTH.OpCode), every
//              extension header of its row (truncation names the field), then the payload
//              rules: payload plus pad is a whole number of 4-byte words (Packet.Payload),
//              PadCnt is no larger than the bytes after the headers (inconsistent
//              BTH.PadCnt), an opcode without payload carries none (inconsistent
//              Packet.Payload), and a first or middle packet is neither empty nor padded.
// Reserved fields are ignored on receive, as the IBA asks; is_canonical() tells whether they
// (and the pad bytes) are zero.
//
// Error offsets count from the start of the input that was parsed.
#pragma once

#include <cstdint>
#include <optional>

#include "packet/opcode.hpp"
#include "packet/transport_headers.hpp"
#include "wire/bytes.hpp"
#include "wire/grh.hpp"
#include "wire/lrh.hpp"
#include "wire/parse_error.hpp"
#include "wire/roce.hpp"

namespace softib::packet {

enum class Encoding : uint8_t {
  kIb,      // native InfiniBand: LRH ... VCRC
  kRoceV2,  // RoCE v2: BTH ... pad inside UDP
};

// The pseudo-header under which packet-level errors are reported ("Packet.ICRC").
inline constexpr std::string_view kPacketErrorHeader = "Packet";

class PacketView {
 public:
  // A native IB packet from the first byte of the LRH through the VCRC.
  static wire::Parsed<PacketView> parse_ib(wire::ByteSpan packet);
  // The transport part of a RoCE v2 packet, BTH through the last pad byte, as in
  // wire::RoceV2Frame::transport (whose ICRC decode_roce_v2 has checked).
  static wire::Parsed<PacketView> parse_roce_v2_transport(wire::ByteSpan transport);
  // A whole RoCE v2 datagram from its IP header: wire::decode_roce_v2, then the transport
  // part. Errors in the transport part are offset from the start of the datagram.
  static wire::Parsed<PacketView> parse_roce_v2(wire::ByteSpan datagram);

  Encoding encoding() const { return encoding_; }
  const OpcodeInfo& info() const { return *info_; }
  Opcode opcode() const { return info_->opcode; }

  // Native IB only.
  const std::optional<wire::Lrh>& lrh() const { return lrh_; }
  // Native IB global packets only (for RoCE v2 over IPv6 see roce()->ipv6).
  const std::optional<wire::Grh>& grh() const { return grh_; }
  // parse_roce_v2 only: the IP and UDP headers and the ICRC.
  const std::optional<wire::RoceV2Frame>& roce() const { return roce_; }

  const TransportHeaders& headers() const { return headers_; }
  const wire::Bth& bth() const { return headers_.bth; }

  // The payload without its pad bytes.
  wire::ByteSpan payload() const { return payload_; }
  uint8_t pad_count() const { return headers_.bth.pad_count; }
  // Native IB only: the CRCs as found (and checked).
  std::optional<uint32_t> icrc() const { return icrc_; }
  std::optional<uint16_t> vcrc() const { return vcrc_; }

  // Every byte that was parsed (the packet, the transport part or the datagram).
  wire::ByteSpan bytes() const { return bytes_; }

  // True when every reserved field and every pad byte is zero, i.e. when building a packet
  // from this view's values reproduces the parsed transport (and, for native IB, the
  // whole packet) byte for byte.
  bool is_canonical() const { return canonical_; }

 private:
  PacketView() = default;
  // Decodes the BTH and the extension headers of its opcode from the start of `t` (which may
  // run on past them); sets headers_end to where the payload starts.
  static std::optional<wire::ParseError> parse_transport(wire::ByteSpan t, PacketView& view,
                                                         size_t& headers_end);
  std::optional<wire::ParseError> check_payload(wire::ByteSpan after_headers, uint32_t at, uint32_t bth_at);

  Encoding encoding_ = Encoding::kIb;
  const OpcodeInfo* info_ = nullptr;
  std::optional<wire::Lrh> lrh_;
  std::optional<wire::Grh> grh_;
  std::optional<wire::RoceV2Frame> roce_;
  TransportHeaders headers_;
  wire::ByteSpan payload_;
  wire::ByteSpan bytes_;
  std::optional<uint32_t> icrc_;
  std::optional<uint16_t> vcrc_;
  bool canonical_ = true;
};

}  // namespace softib::packet
