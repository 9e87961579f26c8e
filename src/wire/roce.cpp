#include "wire/roce.hpp"

#include <algorithm>

#include "wire/bth.hpp"
#include "wire/crc.hpp"

namespace softib::wire {

namespace {

constexpr std::string_view kRoce = "RoCEv2";
constexpr Field kIcrcField{"ICRC", 0, 32};
constexpr Field kTransportField{"Transport", 0, 96};

uint32_t fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

uint32_t sum16(ByteSpan data, uint32_t sum = 0) {
  size_t i = 0;
  for (; i + 1 < data.size(); i += 2) sum = fold(sum + load_be16(&data[i]));
  if (i < data.size()) sum = fold(sum + (uint32_t{data[i]} << 8));
  return sum;
}

size_t ip_header_length(bool ipv6) { return ipv6 ? Grh::kLen : Ipv4::kLen; }

}  // namespace

size_t roce_v2_transport_offset(bool ipv6) { return ip_header_length(ipv6) + Udp::kLen; }

size_t roce_v2_length(bool ipv6, size_t transport_len) {
  return ip_header_length(ipv6) + Udp::kLen + transport_len + kIcrcLen;
}

uint16_t udp_checksum(const Gid& source, const Gid& destination, ByteSpan udp_segment) {
  uint32_t sum = 0;
  const uint32_t length = static_cast<uint32_t>(udp_segment.size());
  if (source.is_ipv4_mapped()) {
    sum = sum16(ByteSpan(source.raw()).subspan(12), sum);
    sum = sum16(ByteSpan(destination.raw()).subspan(12), sum);
    sum = fold(sum + Ipv4::kProtocolUdp + length);
  } else {
    sum = sum16(source.raw(), sum);
    sum = sum16(destination.raw(), sum);
    sum = fold(sum + (length >> 16) + (length & 0xFFFF) + Ipv4::kProtocolUdp);
  }
  // The segment with its checksum field read as zero.
  sum = sum16(udp_segment.first(std::min<size_t>(udp_segment.size(), Udp::kChecksumByte)), sum);
  if (udp_segment.size() > Udp::kLen) sum = sum16(udp_segment.subspan(Udp::kLen), sum);
  const auto checksum = static_cast<uint16_t>(~sum);
  return checksum == 0 ? 0xFFFF : checksum;
}

Result<size_t> encode_roce_v2(const RoceV2Addressing& a, ByteSpan transport, MutByteSpan out) {
  const bool ipv6 = a.ipv6();
  if (a.destination.is_ipv4_mapped() == ipv6)
    return Status(Code::kInvalidArgument, "source and destination GIDs are of different IP versions");
  if (transport.size() < Bth::kLen)
    return Status(Code::kInvalidArgument, "transport part is shorter than a BTH");
  const size_t ip_len = ip_header_length(ipv6);
  const size_t total = roce_v2_length(ipv6, transport.size());
  const size_t udp_len = Udp::kLen + transport.size() + kIcrcLen;
  if (udp_len > 0xFFFF || (!ipv6 && total > 0xFFFF))
    return Status(Code::kInvalidArgument, "transport part too long for one IP datagram");
  if (out.size() < total) return Status(Code::kOutOfRange, "output buffer too small");

  if (ipv6) {
    Grh ip;
    ip.tclass = a.traffic_class;
    ip.flow_label = a.flow_label & 0xFFFFF;
    ip.pay_len = static_cast<uint16_t>(udp_len);
    ip.nxt_hdr = Ipv4::kProtocolUdp;
    ip.hop_lmt = a.hop_limit;
    ip.sgid = a.source;
    ip.dgid = a.destination;
    ip.encode(out);
  } else {
    Ipv4 ip;
    ip.dscp = static_cast<uint8_t>(a.traffic_class >> 2);
    ip.ecn = a.traffic_class & 3;
    ip.total_length = static_cast<uint16_t>(total);
    ip.identification = a.identification;
    ip.ttl = a.hop_limit;
    ip.source = a.source.ipv4();
    ip.destination = a.destination.ipv4();
    ip.encode(out);
  }
  Udp udp;
  udp.source_port = a.source_port;
  udp.length = static_cast<uint16_t>(udp_len);
  MutByteSpan udp_bytes = out.subspan(ip_len, udp_len);
  udp.encode(udp_bytes);
  // A transport part already built in place (at roce_v2_transport_offset) is not copied.
  if (transport.data() != udp_bytes.data() + Udp::kLen)
    std::copy(transport.begin(), transport.end(), udp_bytes.begin() + Udp::kLen);

  // The ICRC masks the UDP checksum, so it can be computed before the checksum is known;
  // the UDP checksum covers the ICRC, so it comes last.
  const size_t icrc_at = total - kIcrcLen;
  store_le32(&out[icrc_at], icrc_roce(out.first(icrc_at)));
  if (ipv6) {
    const uint16_t checksum = udp_checksum(a.source, a.destination, udp_bytes);
    store_be16(&udp_bytes[Udp::kChecksumByte], checksum);
  }
  return total;
}

Parsed<RoceV2Frame> decode_roce_v2(ByteSpan datagram) {
  RoceV2Frame f;
  size_t ip_len = 0;
  size_t ip_total = 0;  // bytes the IP header says the datagram has
  if (datagram.empty()) return truncated(Ipv4::kName, Ipv4::kFields, 0);
  if ((datagram[0] >> 4) == 6) {
    auto ip = Grh::decode(datagram);
    if (!ip) {
      ParseError e = ip.error();
      e.header = "IPv6";  // the GRH layout, reported under the name the user sees
      return e;
    }
    const Grh& h = *ip;
    if (h.nxt_hdr != Ipv4::kProtocolUdp) return illegal("IPv6", Grh::kNxtHdr, h.nxt_hdr);
    ip_len = Grh::kLen;
    ip_total = Grh::kLen + size_t{h.pay_len};
    if (ip_total != datagram.size()) return inconsistent("IPv6", Grh::kPayLen, h.pay_len);
    f.source = h.sgid;
    f.destination = h.dgid;
    f.ipv6 = h;
  } else {
    auto ip = Ipv4::decode(datagram);
    if (!ip) return Err{ip.error()};
    const Ipv4& h = *ip;
    ip_len = h.header_length();
    if (Ipv4::checksum(datagram.first(ip_len)) != 0xFFFF)
      return illegal(Ipv4::kName, Ipv4::kHeaderChecksum, h.header_checksum);
    if (h.more_fragments || h.fragment_offset != 0)
      return illegal(Ipv4::kName, Ipv4::kFragmentOffset, h.fragment_offset);
    if (h.protocol != Ipv4::kProtocolUdp) return illegal(Ipv4::kName, Ipv4::kProtocol, h.protocol);
    ip_total = h.total_length;
    if (ip_total != datagram.size() || ip_total < ip_len)
      return inconsistent(Ipv4::kName, Ipv4::kTotalLength, h.total_length);
    f.source = Gid::from_ipv4(h.source);
    f.destination = Gid::from_ipv4(h.destination);
    f.ipv4 = h;
  }

  const ByteSpan udp_bytes = datagram.subspan(ip_len);
  auto udp = Udp::decode(udp_bytes);
  if (!udp) return Err{udp.error().shifted(static_cast<uint32_t>(ip_len))};
  f.udp = *udp;
  const auto at_udp = [&](ParseError e) { return e.shifted(static_cast<uint32_t>(ip_len)); };
  if (f.udp.length != udp_bytes.size())
    return at_udp(inconsistent(Udp::kName, Udp::kLength, f.udp.length));
  if (f.udp.destination_port != Udp::kRoceV2Port)
    return at_udp(illegal(Udp::kName, Udp::kDestinationPort, f.udp.destination_port));
  if (udp_bytes.size() < Udp::kLen + Bth::kLen + kIcrcLen) {
    const size_t have = udp_bytes.size() - Udp::kLen;
    const Field& missing = have < Bth::kLen ? kTransportField : kIcrcField;
    return ParseError{ParseErrorKind::kTruncated, kRoce, missing.name,
                      static_cast<uint32_t>(ip_len + Udp::kLen), 0, datagram.size()};
  }
  if (f.udp.checksum != 0 && udp_checksum(f.source, f.destination, udp_bytes) != f.udp.checksum)
    return at_udp(illegal(Udp::kName, Udp::kChecksum, f.udp.checksum));

  const size_t icrc_at = datagram.size() - kIcrcLen;
  f.transport = datagram.subspan(ip_len + Udp::kLen, icrc_at - ip_len - Udp::kLen);
  f.icrc = load_le32(&datagram[icrc_at]);
  if (icrc_roce(datagram.first(icrc_at)) != f.icrc)
    return ParseError{ParseErrorKind::kIllegalValue, kRoce, kIcrcField.name,
                      static_cast<uint32_t>(icrc_at), f.icrc, 0};
  return f;
}

}  // namespace softib::wire
