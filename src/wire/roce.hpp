// RoCE v2 framing, IBA annex A17: the IBA transport packet (BTH onwards) carried in UDP to
// port 4791 over IPv4 or IPv6, with the ICRC computed as in crc.hpp.
//
//   IPv4 (20) or IPv6 (40) | UDP (8) | BTH ... payload pad | ICRC (4)
//
// The IP header plays the GRH's role: the GIDs are the IP addresses (IPv4-mapped GIDs,
// ::ffff:a.b.c.d, select IPv4).
#pragma once

#include <cstdint>
#include <optional>

#include "base/gid.hpp"
#include "base/result.hpp"
#include "wire/bytes.hpp"
#include "wire/grh.hpp"
#include "wire/ipv4.hpp"
#include "wire/parse_error.hpp"
#include "wire/udp.hpp"

namespace softib::wire {

// What the sender chooses for the IP and UDP headers of a RoCE v2 packet.
struct RoceV2Addressing {
  Gid source;
  Gid destination;
  uint16_t source_port = Udp::kRoceV2Port;  // flow entropy; any value is valid
  uint8_t traffic_class = 0;                // IPv4 TOS (DSCP << 2 | ECN) or IPv6 TClass
  uint8_t hop_limit = 64;                   // IPv4 TTL or IPv6 HopLimit
  uint32_t flow_label = 0;                  // IPv6 only, 20 bits
  // IPv4 only. Linux sends ID 0 with DF on unconnected UDP sockets; the ID is inside the
  // ICRC, so a sender that lets the kernel write the IP header must use the same value.
  uint16_t identification = 0;

  bool ipv6() const { return !source.is_ipv4_mapped(); }
};

// Bytes of a RoCE v2 datagram (IP header through ICRC) carrying `transport_len` bytes of
// BTH ... pad.
size_t roce_v2_length(bool ipv6, size_t transport_len);

// Where the transport part (the BTH) starts in a RoCE v2 datagram that encode_roce_v2 writes.
size_t roce_v2_transport_offset(bool ipv6);

// Writes IP header, UDP header, the transport bytes and the ICRC into `out`; returns the
// datagram length. UDP checksum: 0 over IPv4 (as RoCE NICs send), computed over IPv6
// (RFC 8200 forbids 0). `transport` may already sit at its place in `out`
// (out.subspan(roce_v2_transport_offset(ipv6))), so a sender can build it in place; it must
// not overlap `out` in any other way.
// Errors: InvalidArgument when source and destination are of different IP versions or the
// transport part is shorter than a BTH or longer than an IP datagram allows; OutOfRange when
// `out` is too small.
Result<size_t> encode_roce_v2(const RoceV2Addressing& addressing, ByteSpan transport,
                              MutByteSpan out);

struct RoceV2Frame {
  std::optional<Ipv4> ipv4;  // exactly one of ipv4 / ipv6 is set
  std::optional<Grh> ipv6;
  Udp udp;
  Gid source;
  Gid destination;
  ByteSpan transport;  // BTH through the last pad byte (views the decoded input)
  uint32_t icrc = 0;
};

// Decodes and validates a datagram from its IP header: IP version, IPv4 header checksum,
// no fragments, protocol/next header UDP, lengths that agree with the bytes present, UDP
// destination port 4791, a non-zero UDP checksum (checked), and the ICRC.
// The ParseError names the failing field ("IPv4.TotalLength", "UDP.DestinationPort",
// "RoCEv2.ICRC", ...). REQUIRES nothing: any byte string is accepted.
Parsed<RoceV2Frame> decode_roce_v2(ByteSpan datagram);

// The UDP checksum of a datagram (RFC 768 / RFC 8200 pseudo-header), computed with the
// checksum field taken as zero. Never returns 0 (0 is sent as 0xffff).
uint16_t udp_checksum(const Gid& source, const Gid& destination, ByteSpan udp_segment);

}  // namespace softib::wire
