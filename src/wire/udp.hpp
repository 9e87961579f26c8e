// UDP header, RFC 768 (8 bytes). RoCE v2 packets go to port 4791 (IBA A17.2.1); the source
// port is flow entropy and receivers accept any.
//
//  +-------------------------------+-------------------------------+
//  |          Source Port          |       Destination Port        |
//  +-------------------------------+-------------------------------+
//  |            Length             |           Checksum            |
//  +-------------------------------+-------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Udp {
  static constexpr std::string_view kName = "UDP";
  static constexpr uint16_t kRoceV2Port = 4791;

  static constexpr Field kSourcePort{"SourcePort", 0, 16};
  static constexpr Field kDestinationPort{"DestinationPort", 16, 16};
  static constexpr Field kLength{"Length", 32, 16};
  static constexpr Field kChecksum{"Checksum", 48, 16};
  static constexpr std::array kFields{kSourcePort, kDestinationPort, kLength, kChecksum};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 8 && layout_is_valid(kFields) && layout_is_ordered(kFields));
  static constexpr size_t kChecksumByte = 6;

  uint16_t source_port = kRoceV2Port;
  uint16_t destination_port = kRoceV2Port;
  uint16_t length = 0;  // header + data
  uint16_t checksum = 0;

  static Parsed<Udp> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    return Udp{get_u16(in, kSourcePort), get_u16(in, kDestinationPort), get_u16(in, kLength),
               get_u16(in, kChecksum)};
  }
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set(out, kSourcePort, source_port);
    set(out, kDestinationPort, destination_port);
    set(out, kLength, length);
    set(out, kChecksum, checksum);
  }
  friend bool operator==(const Udp&, const Udp&) = default;
};

}  // namespace softib::wire
