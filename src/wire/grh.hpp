// Global Route Header, IBA 8.3 (40 bytes): an IPv6 header, present when LRH.LNH is
// IBA-global. RoCE v2 carries a real IPv4/IPv6 header in its place (see ip.hpp).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-------+---------------+---------------------------------------+
//  | IPVer |    TClass     |              FlowLabel                |
//  +-------+-------+-------+-------+---------------+---------------+
//  |            PayLen             |    NxtHdr     |    HopLmt     |
//  +-------------------------------+---------------+---------------+
//  |                       SGID (128 bits)                         |
//  |                       DGID (128 bits)                         |
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/gid.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Grh {
  static constexpr std::string_view kName = "GRH";
  static constexpr uint8_t kIpVersion = 6;
  static constexpr uint8_t kNxtHdrIba = 0x1B;  // IBA transport follows (IBA 8.3.1)

  static constexpr Field kIpVer{"IPVer", 0, 4};
  static constexpr Field kTClass{"TClass", 4, 8};
  static constexpr Field kFlowLabel{"FlowLabel", 12, 20};
  static constexpr Field kPayLen{"PayLen", 32, 16};
  static constexpr Field kNxtHdr{"NxtHdr", 48, 8};
  static constexpr Field kHopLmt{"HopLmt", 56, 8};
  static constexpr Field kSgid{"SGID", 64, 128};
  static constexpr Field kDgid{"DGID", 192, 128};
  static constexpr std::array kFields{kIpVer, kTClass, kFlowLabel, kPayLen, kNxtHdr, kHopLmt, kSgid, kDgid};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 40 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint8_t tclass = 0;
  uint32_t flow_label = 0;  // 20 bits
  uint16_t pay_len = 0;     // bytes after the GRH through the ICRC
  uint8_t nxt_hdr = kNxtHdrIba;
  uint8_t hop_lmt = 0;
  Gid sgid;
  Gid dgid;

  static Parsed<Grh> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    if (auto v = get(in, kIpVer); v != kIpVersion) return illegal(kName, kIpVer, v);
    Grh h;
    h.tclass = get_u8(in, kTClass);
    h.flow_label = get_u32(in, kFlowLabel);
    h.pay_len = get_u16(in, kPayLen);
    h.nxt_hdr = get_u8(in, kNxtHdr);
    h.hop_lmt = get_u8(in, kHopLmt);
    std::array<uint8_t, 16> raw{};
    get_bytes(in, kSgid, raw);
    h.sgid = Gid(raw);
    get_bytes(in, kDgid, raw);
    h.dgid = Gid(raw);
    return h;
  }

  // REQUIRES: out.size() >= kLen, flow_label < 2^20.
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    set(out, kIpVer, kIpVersion);
    set(out, kTClass, tclass);
    set(out, kFlowLabel, flow_label);
    set(out, kPayLen, pay_len);
    set(out, kNxtHdr, nxt_hdr);
    set(out, kHopLmt, hop_lmt);
    set_bytes(out, kSgid, sgid.raw());
    set_bytes(out, kDgid, dgid.raw());
  }

  friend bool operator==(const Grh&, const Grh&) = default;
};

}  // namespace softib::wire
