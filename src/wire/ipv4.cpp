#include "wire/ipv4.hpp"

namespace softib::wire {

Parsed<Ipv4> Ipv4::decode(ByteSpan in) {
  if (auto e = check_length(in, kName, kFields, kLen)) return *e;
  if (auto v = get(in, kVersion); v != 4) return illegal(kName, kVersion, v);
  Ipv4 h;
  h.ihl = get_u8(in, kIhl);
  if (h.ihl < 5) return illegal(kName, kIhl, h.ihl);
  if (in.size() < h.header_length())
    return ParseError{ParseErrorKind::kTruncated, kName, "Options", kLen, 0, in.size()};
  if (auto r = get(in, kFlagReserved); r != 0) return illegal(kName, kFlagReserved, r);
  h.dscp = get_u8(in, kDscp);
  h.ecn = get_u8(in, kEcn);
  h.total_length = get_u16(in, kTotalLength);
  h.identification = get_u16(in, kIdentification);
  h.dont_fragment = get_flag(in, kDf);
  h.more_fragments = get_flag(in, kMf);
  h.fragment_offset = get_u16(in, kFragmentOffset);
  h.ttl = get_u8(in, kTtl);
  h.protocol = get_u8(in, kProtocol);
  h.header_checksum = get_u16(in, kHeaderChecksum);
  h.source = get_u32(in, kSource);
  h.destination = get_u32(in, kDestination);
  return h;
}

void Ipv4::encode(MutByteSpan out) const {
  SOFTIB_ASSERT(out.size() >= kLen && ihl == 5);
  std::fill_n(out.begin(), kLen, uint8_t{0});
  set(out, kVersion, 4);
  set(out, kIhl, ihl);
  set(out, kDscp, dscp);
  set(out, kEcn, ecn);
  set(out, kTotalLength, total_length);
  set(out, kIdentification, identification);
  set(out, kDf, dont_fragment);
  set(out, kMf, more_fragments);
  set(out, kFragmentOffset, fragment_offset);
  set(out, kTtl, ttl);
  set(out, kProtocol, protocol);
  set(out, kSource, source);
  set(out, kDestination, destination);
  set(out, kHeaderChecksum, static_cast<uint16_t>(~checksum(out.first(kLen))));
}

uint16_t Ipv4::checksum(ByteSpan header) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < header.size(); i += 2) sum += load_be16(&header[i]);
  if (header.size() % 2) sum += uint32_t{header.back()} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

}  // namespace softib::wire
