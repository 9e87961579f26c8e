// IPv4 header, RFC 791 (20 bytes without options): RoCE v2 over IPv4. (RoCE v2 over IPv6
// uses an IPv6 header, which has exactly the GRH's layout: see grh.hpp.)
//
//   0               1               2               3
//  +-------+-------+-----------+---+-------------------------------+
//  |Version|  IHL  |   DSCP    |ECN|          Total Length         |
//  +-------+-------+-----------+---+-----+-------------------------+
//  |         Identification        |Flags|     Fragment Offset     |
//  +---------------+---------------+-----+-------------------------+
//  |      TTL      |   Protocol    |        Header Checksum        |
//  +---------------+---------------+-------------------------------+
//  |                        Source Address                         |
//  |                      Destination Address                      |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Ipv4 {
  static constexpr std::string_view kName = "IPv4";
  static constexpr uint8_t kProtocolUdp = 17;

  static constexpr Field kVersion{"Version", 0, 4};
  static constexpr Field kIhl{"IHL", 4, 4};
  static constexpr Field kDscp{"DSCP", 8, 6};
  static constexpr Field kEcn{"ECN", 14, 2};
  static constexpr Field kTotalLength{"TotalLength", 16, 16};
  static constexpr Field kIdentification{"Identification", 32, 16};
  static constexpr Field kFlagReserved{"FlagReserved", 48, 1};
  static constexpr Field kDf{"DF", 49, 1};
  static constexpr Field kMf{"MF", 50, 1};
  static constexpr Field kFragmentOffset{"FragmentOffset", 51, 13};
  static constexpr Field kTtl{"TTL", 64, 8};
  static constexpr Field kProtocol{"Protocol", 72, 8};
  static constexpr Field kHeaderChecksum{"HeaderChecksum", 80, 16};
  static constexpr Field kSource{"SourceAddress", 96, 32};
  static constexpr Field kDestination{"DestinationAddress", 128, 32};
  static constexpr std::array kFields{kVersion, kIhl,   kDscp,     kEcn,         kTotalLength,
                                      kIdentification, kFlagReserved, kDf, kMf, kFragmentOffset,
                                      kTtl,     kProtocol, kHeaderChecksum, kSource, kDestination};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 20 && layout_is_valid(kFields) && layout_is_ordered(kFields));
  // The ICRC sees TOS, TTL and the header checksum as all ones (IBA A17.4.5.1).
  static constexpr size_t kTosByte = 1, kTtlByte = 8, kChecksumByte = 10;

  uint8_t ihl = 5;  // header length in 4-byte words; options are carried, not interpreted
  uint8_t dscp = 0;
  uint8_t ecn = 0;
  uint16_t total_length = 0;
  uint16_t identification = 0;
  bool dont_fragment = true;
  bool more_fragments = false;
  uint16_t fragment_offset = 0;
  uint8_t ttl = 64;
  uint8_t protocol = kProtocolUdp;
  uint16_t header_checksum = 0;
  uint32_t source = 0;       // host order
  uint32_t destination = 0;  // host order

  size_t header_length() const { return size_t{ihl} * 4; }

  // Version must be 4, IHL at least 5 and the options present; the reserved flag must be 0.
  static Parsed<Ipv4> decode(ByteSpan in);
  // Writes a 20-byte header (ihl must be 5) with a correct header checksum.
  void encode(MutByteSpan out) const;

  // RFC 1071 ones'-complement sum over the header as it stands in `header` (checksum
  // included): a valid header sums to 0xffff.
  static uint16_t checksum(ByteSpan header);

  friend bool operator==(const Ipv4&, const Ipv4&) = default;
};

}  // namespace softib::wire
