#include "packet/builder.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "wire/crc.hpp"

namespace softib::packet {

using wire::ByteSpan;
using wire::MutByteSpan;

namespace {

size_t pad_for(size_t payload_len) { return (4 - payload_len % 4) % 4; }

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

// Field values that do not fit their field: the codecs would assert on them.
Status check_field_widths(const TransportHeaders& h) {
  if (h.rdeth && h.rdeth->ee_context > 0xFFFFFF) return invalid("RDETH.EECnxt does not fit in 24 bits");
  if (h.feth && (h.feth->selectivity_level > 3 || h.feth->placement_type > 15))
    return invalid("FETH.SEL or FETH.PLT does not fit its field");
  if (h.aeth) {
    if (h.aeth->msn > 0xFFFFFF) return invalid("AETH.MSN does not fit in 24 bits");
    // What the AETH decoder rejects as reserved (IBA 9.3.5 table 44), the builder refuses.
    std::array<uint8_t, wire::Aeth::kLen> probe{};
    h.aeth->encode(probe);
    if (!wire::Aeth::decode(probe).ok()) return invalid(fmt::format("AETH.Syndrome {:#04x} is reserved", h.aeth->syndrome));
  }
  return Status();
}

// Checks everything the opcode table and the field widths require; returns the opcode's row.
Result<const OpcodeInfo*> check(const TransportHeaders& h, size_t payload_len) {
  const OpcodeInfo* info = h.info();
  if (info == nullptr) return invalid(fmt::format("BTH.OpCode {:#04x} is reserved", h.bth.opcode));
  const HeaderSet present = h.present();
  for (size_t i = 0; i < kExtHeaderCount; ++i) {
    const auto e = static_cast<ExtHeader>(i);
    if (present.has(e) && !info->headers.has(e))
      return invalid(fmt::format("{} is not part of {}", to_string(e), info->name));
    if (!present.has(e) && info->headers.has(e))
      return invalid(fmt::format("{} needs a {}", info->name, to_string(e)));
  }
  if (!info->payload && payload_len != 0) return invalid(fmt::format("{} carries no payload", info->name));
  if (info->payload_is_full_pmtu() && (payload_len == 0 || payload_len % 4 != 0))
    return invalid(fmt::format("{} carries a whole PMTU: {} bytes cannot be one", info->name, payload_len));
  if (Status s = check_field_widths(h); !s.ok()) return s;
  return info;
}

// Writes BTH and the extension headers, and zeroes the pad after a payload of payload_len
// bytes (which it does not write). REQUIRES: check() accepted h, out.size() >=
// transport_length().
size_t encode_headers(const OpcodeInfo& info, const TransportHeaders& h, size_t payload_len, MutByteSpan out) {
  const size_t pad = pad_for(payload_len);
  h.bth.encode(out, static_cast<uint8_t>(pad));  // (not a copy of h.bth with the pad set: see Bth::encode)
  // Most packets have no extension header (SEND ONLY, FIRST, MIDDLE, LAST; WRITE MIDDLE,
  // LAST): they skip the nine tests of the walk.
  if (!info.headers.empty()) {
    for_each_ext_header([&](auto c) {
      constexpr ExtHeader e = decltype(c)::value;
      if (info.headers.has(e)) h.get<e>()->encode(out.subspan(info.offset(e)));
    });
  }
  const size_t at = info.header_length();
  std::fill_n(out.begin() + static_cast<ptrdiff_t>(at + payload_len), pad, uint8_t{0});
  return at + payload_len + pad;
}

// Writes BTH ... pad. REQUIRES: check() accepted h, out.size() >= transport_length().
size_t encode_transport(const OpcodeInfo& info, const TransportHeaders& h, ByteSpan payload, MutByteSpan out) {
  const size_t len = encode_headers(info, h, payload.size(), out);
  std::copy(payload.begin(), payload.end(), out.begin() + static_cast<ptrdiff_t>(info.header_length()));
  return len;
}

Status too_small(size_t need, size_t have) {
  return Status(Code::kOutOfRange, fmt::format("output buffer too small: {} bytes needed, {} given", need, have));
}

}  // namespace

size_t ib_packet_length(bool global, const OpcodeInfo& info, size_t payload_len) {
  return wire::Lrh::kLen + (global ? wire::Grh::kLen : 0) + transport_length(info, payload_len) + wire::kIcrcLen +
         wire::kVcrcLen;
}

size_t roce_v2_packet_length(bool ipv6, const OpcodeInfo& info, size_t payload_len) {
  return wire::roce_v2_length(ipv6, transport_length(info, payload_len));
}

Result<size_t> build_transport(const TransportHeaders& headers, ByteSpan payload, MutByteSpan out) {
  auto info = check(headers, payload.size());
  if (!info) return Err{info.error()};
  const size_t len = transport_length(**info, payload.size());
  if (out.size() < len) return too_small(len, out.size());
  return encode_transport(**info, headers, payload, out);
}

size_t write_transport_headers(const OpcodeInfo& info, const TransportHeaders& headers, size_t payload_len,
                               MutByteSpan out) {
#ifndef NDEBUG
  SOFTIB_ASSERT_MSG(check(headers, payload_len).ok() && headers.info() == &info,
                    "write_transport_headers: headers the builder would refuse");
#endif
  SOFTIB_ASSERT(out.size() >= transport_length(info, payload_len));
  return encode_headers(info, headers, payload_len, out);
}

Result<size_t> build_transport_headers(const TransportHeaders& headers, size_t payload_len, MutByteSpan out) {
  auto info = check(headers, payload_len);
  if (!info) return Err{info.error()};
  const size_t len = transport_length(**info, payload_len);
  if (out.size() < len) return too_small(len, out.size());
  return encode_headers(**info, headers, payload_len, out);
}

Result<size_t> build_roce_v2(const wire::RoceV2Addressing& addressing, const TransportHeaders& headers,
                             ByteSpan payload, MutByteSpan out) {
  auto info = check(headers, payload.size());
  if (!info) return Err{info.error()};
  const bool ipv6 = addressing.ipv6();
  const size_t len = transport_length(**info, payload.size());
  const size_t total = wire::roce_v2_length(ipv6, len);
  if (out.size() < total) return too_small(total, out.size());
  // Built in place, where encode_roce_v2 wants the transport part.
  const MutByteSpan transport = out.subspan(wire::roce_v2_transport_offset(ipv6), len);
  encode_transport(**info, headers, payload, transport);
  return wire::encode_roce_v2(addressing, transport, out);
}

Result<size_t> build_ib(const IbRoute& route, const TransportHeaders& headers, ByteSpan payload, MutByteSpan out) {
  auto info = check(headers, payload.size());
  if (!info) return Err{info.error()};
  if (route.lrh.vl > 15 || route.lrh.sl > 15) return invalid("LRH.VL or LRH.SL does not fit in 4 bits");
  if (route.grh && route.grh->flow_label > 0xFFFFF) return invalid("GRH.FlowLabel does not fit in 20 bits");
  const bool global = route.grh.has_value();
  const size_t bth_at = wire::Lrh::kLen + (global ? wire::Grh::kLen : 0);
  const size_t icrc_at = bth_at + transport_length(**info, payload.size());
  const size_t icrc_end = icrc_at + wire::kIcrcLen;
  const size_t total = icrc_end + wire::kVcrcLen;
  if (icrc_end / 4 > kMaxIbPacketWords)
    return invalid(fmt::format("{} bytes do not fit in LRH.PktLen ({} words at most)", icrc_end, kMaxIbPacketWords));
  if (out.size() < total) return too_small(total, out.size());

  wire::Lrh lrh = route.lrh;
  lrh.lnh = global ? wire::Lnh::kIbaGlobal : wire::Lnh::kIbaLocal;
  lrh.pkt_len = static_cast<uint16_t>(icrc_end / 4);
  lrh.encode(out);
  if (global) {
    wire::Grh grh = *route.grh;
    grh.pay_len = static_cast<uint16_t>(icrc_end - bth_at);
    grh.nxt_hdr = wire::Grh::kNxtHdrIba;
    grh.encode(out.subspan(wire::Lrh::kLen));
  }
  encode_transport(**info, headers, payload, out.subspan(bth_at));
  wire::store_le32(&out[icrc_at], wire::icrc_ib(out.first(icrc_at)));
  wire::store_le16(&out[icrc_end], wire::vcrc(out.first(icrc_end)));
  return total;
}

}  // namespace softib::packet
