#include "packet/packet_view.hpp"

#include <algorithm>

#include "wire/crc.hpp"

namespace softib::packet {

using wire::ByteSpan;
using wire::Field;
using wire::ParseError;
using wire::ParseErrorKind;

namespace {

// Packet-level pseudo-fields, reported under kPacketErrorHeader.
constexpr std::string_view kPayload = "Payload";
constexpr std::string_view kIcrc = "ICRC";
constexpr std::string_view kVcrc = "VCRC";

uint32_t u32(size_t v) { return static_cast<uint32_t>(v); }

ParseError packet_error(ParseErrorKind kind, std::string_view field, size_t offset, uint64_t value,
                        uint64_t available = 0) {
  return ParseError{kind, kPacketErrorHeader, field, u32(offset), value, available};
}

// The error of a decoder that was given the input from byte `base` on, seen from the start
// of the whole input: offsets and, for a truncation, the bytes available count from there.
ParseError from(uint32_t base, ParseError e) {
  e = e.shifted(base);
  if (e.kind == ParseErrorKind::kTruncated) e.available += base;
  return e;
}

bool is_zero(ByteSpan header, const Field& f) { return wire::get(header, f) == 0; }

// Decodes extension header H at `at` into `out`. REQUIRES: in.size() >= at.
template <class H>
std::optional<ParseError> decode_at(ByteSpan in, size_t at, std::optional<H>& out) {
  auto h = H::decode(in.subspan(at));
  if (!h) return from(u32(at), h.error());
  out = *h;
  return std::nullopt;
}

}  // namespace

std::optional<ParseError> PacketView::parse_transport(ByteSpan t, PacketView& v, size_t& headers_end) {
  auto bth = wire::Bth::decode(t);
  if (!bth) return bth.error();
  const OpcodeInfo* info = find_opcode(bth->opcode);
  if (info == nullptr) return wire::illegal(wire::Bth::kName, wire::Bth::kOpCode, bth->opcode);
  v.info_ = info;
  v.headers_.bth = *bth;
  v.canonical_ = v.canonical_ && is_zero(t, wire::Bth::kResv6) && is_zero(t, wire::Bth::kResv7);

  // Each header is decoded only once every header before it has been, so `t` always holds
  // at least the bytes up to the header's offset.
  std::optional<ParseError> error;
  for_each_ext_header([&](auto c) {
    constexpr ExtHeader h = decltype(c)::value;
    if (error || !info->headers.has(h)) return;
    error = decode_at(t, info->offset(h), v.headers_.get<h>());
  });
  if (error) return error;

  const auto reserved_zero = [&](ExtHeader h, const Field& f) {
    return !info->headers.has(h) || is_zero(t.subspan(info->offset(h)), f);
  };
  v.canonical_ = v.canonical_ && reserved_zero(ExtHeader::kRdeth, wire::Rdeth::kResv8) &&
                 reserved_zero(ExtHeader::kDeth, wire::Deth::kResv8) &&
                 reserved_zero(ExtHeader::kFeth, wire::Feth::kReserved);
  headers_end = info->header_length();
  return std::nullopt;
}

// `after` is everything between the end of the headers (at byte `at` of the input) and the
// ICRC, or the end of a RoCE v2 transport part; the BTH starts at byte `bth_at`.
std::optional<ParseError> PacketView::check_payload(ByteSpan after, uint32_t at, uint32_t bth_at) {
  const OpcodeInfo& info = *info_;
  const uint8_t pad = headers_.bth.pad_count;
  // The pad brings payload + pad to a whole number of 4-byte words (IBA 9.2: PadCnt).
  if (after.size() % 4 != 0) return packet_error(ParseErrorKind::kInconsistent, kPayload, at, after.size());
  if (pad > after.size()) return wire::inconsistent(wire::Bth::kName, wire::Bth::kPadCnt, pad).shifted(bth_at);
  if (!info.payload && !after.empty())
    return packet_error(ParseErrorKind::kInconsistent, kPayload, at, after.size());
  if (info.payload_is_full_pmtu()) {
    if (pad != 0) return wire::illegal(wire::Bth::kName, wire::Bth::kPadCnt, pad).shifted(bth_at);
    if (after.empty()) return packet_error(ParseErrorKind::kInconsistent, kPayload, at, 0);
  }
  payload_ = after.first(after.size() - pad);
  const ByteSpan pad_bytes = after.last(pad);
  canonical_ = canonical_ && std::all_of(pad_bytes.begin(), pad_bytes.end(), [](uint8_t b) { return b == 0; });
  return std::nullopt;
}

wire::Parsed<PacketView> PacketView::parse_ib(ByteSpan in) {
  PacketView v;
  v.encoding_ = Encoding::kIb;
  v.bytes_ = in;

  auto lrh = wire::Lrh::decode(in);
  if (!lrh) return Err{lrh.error()};
  // Raw packets (LNH 0) and raw IPv6 (LNH 1) carry no IBA transport (IBA 7.7.3).
  if (lrh->lnh != wire::Lnh::kIbaLocal && lrh->lnh != wire::Lnh::kIbaGlobal)
    return wire::illegal(wire::Lrh::kName, wire::Lrh::kLnh, static_cast<uint8_t>(lrh->lnh));
  v.lrh_ = *lrh;
  v.canonical_ = is_zero(in, wire::Lrh::kRsv2) && is_zero(in, wire::Lrh::kRsv5);

  size_t bth_at = wire::Lrh::kLen;
  if (lrh->lnh == wire::Lnh::kIbaGlobal) {
    auto grh = wire::Grh::decode(in.subspan(bth_at));
    if (!grh) return from(u32(bth_at), grh.error());
    if (grh->nxt_hdr != wire::Grh::kNxtHdrIba)
      return wire::illegal(wire::Grh::kName, wire::Grh::kNxtHdr, grh->nxt_hdr).shifted(u32(bth_at));
    v.grh_ = *grh;
    bth_at += wire::Grh::kLen;
  }

  size_t headers_end = 0;
  if (auto e = parse_transport(in.subspan(bth_at), v, headers_end)) return from(u32(bth_at), *e);
  headers_end += bth_at;

  // LRH.PktLen counts 4-byte words from the LRH through the ICRC (IBA 7.7); the VCRC
  // follows. Fewer bytes than it promises is a truncation, named by where the bytes ran out.
  const size_t icrc_end = size_t{lrh->pkt_len} * 4;
  const size_t total = icrc_end + wire::kVcrcLen;
  if (icrc_end < headers_end + wire::kIcrcLen)
    return wire::inconsistent(wire::Lrh::kName, wire::Lrh::kPktLen, lrh->pkt_len);
  const size_t icrc_at = icrc_end - wire::kIcrcLen;
  if (in.size() < total) {
    if (in.size() < icrc_at) return packet_error(ParseErrorKind::kTruncated, kPayload, headers_end, 0, in.size());
    if (in.size() < icrc_end) return packet_error(ParseErrorKind::kTruncated, kIcrc, icrc_at, 0, in.size());
    return packet_error(ParseErrorKind::kTruncated, kVcrc, icrc_end, 0, in.size());
  }
  if (in.size() > total) return wire::inconsistent(wire::Lrh::kName, wire::Lrh::kPktLen, lrh->pkt_len);
  // GRH.PayLen counts the bytes after the GRH through the ICRC (IBA 8.3).
  if (v.grh_ && v.grh_->pay_len != icrc_end - wire::Lrh::kLen - wire::Grh::kLen)
    return wire::inconsistent(wire::Grh::kName, wire::Grh::kPayLen, v.grh_->pay_len).shifted(wire::Lrh::kLen);

  // The VCRC is checked at every hop, the ICRC end to end (IBA 7.8): a packet damaged on the
  // last link fails its VCRC first.
  v.vcrc_ = wire::load_le16(&in[icrc_end]);
  if (wire::vcrc(in.first(icrc_end)) != *v.vcrc_)
    return packet_error(ParseErrorKind::kIllegalValue, kVcrc, icrc_end, *v.vcrc_);
  v.icrc_ = wire::load_le32(&in[icrc_at]);
  if (wire::icrc_ib(in.first(icrc_at)) != *v.icrc_)
    return packet_error(ParseErrorKind::kIllegalValue, kIcrc, icrc_at, *v.icrc_);

  if (auto e = v.check_payload(in.subspan(headers_end, icrc_at - headers_end), u32(headers_end), u32(bth_at)))
    return *e;
  return v;
}

wire::Parsed<PacketView> PacketView::parse_roce_v2_transport(ByteSpan transport) {
  PacketView v;
  v.encoding_ = Encoding::kRoceV2;
  v.bytes_ = transport;
  size_t headers_end = 0;
  if (auto e = parse_transport(transport, v, headers_end)) return *e;
  if (auto e = v.check_payload(transport.subspan(headers_end), u32(headers_end), 0)) return *e;
  return v;
}

wire::Parsed<PacketView> PacketView::parse_roce_v2(ByteSpan datagram) {
  auto frame = wire::decode_roce_v2(datagram);
  if (!frame) return Err{frame.error()};
  const auto at = u32(static_cast<size_t>(frame->transport.data() - datagram.data()));
  auto v = parse_roce_v2_transport(frame->transport);
  if (!v) return from(at, v.error());
  v->roce_ = *frame;
  v->bytes_ = datagram;
  return v;
}

}  // namespace softib::packet
