// Local Route Header, IBA 7.7 (8 bytes): present in every native IB packet.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-------+-------+-------+---+---+-------------------------------+
//  |  VL   | LVer  |  SL   |Rsv|LNH|             DLID              |
//  +-------+-------+-------+---+---+-------------------------------+
//  |  Rsv5   |       PktLen        |             SLID              |
//  +---------+---------------------+-------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

// Link Next Header, IBA 7.7.3.
enum class Lnh : uint8_t {
  kRaw = 0,        // raw packet, no transport headers
  kIpNonIba = 1,   // raw IPv6 (IP non-IBA transport)
  kIbaLocal = 2,   // BTH follows
  kIbaGlobal = 3,  // GRH follows
};

struct Lrh {
  static constexpr std::string_view kName = "LRH";
  static constexpr Field kVl{"VL", 0, 4};
  static constexpr Field kLVer{"LVer", 4, 4};
  static constexpr Field kSl{"SL", 8, 4};
  static constexpr Field kRsv2{"Rsv2", 12, 2};
  static constexpr Field kLnh{"LNH", 14, 2};
  static constexpr Field kDlid{"DLID", 16, 16};
  static constexpr Field kRsv5{"Rsv5", 32, 5};
  static constexpr Field kPktLen{"PktLen", 37, 11};
  static constexpr Field kSlid{"SLID", 48, 16};
  static constexpr std::array kFields{kVl, kLVer, kSl, kRsv2, kLnh, kDlid, kRsv5, kPktLen, kSlid};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 8 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  uint8_t vl = 0;       // 4 bits; VL15 carries SMPs
  uint8_t sl = 0;       // 4 bits
  Lnh lnh = Lnh::kIbaLocal;
  Lid dlid;
  uint16_t pkt_len = 0;  // 11 bits: 4-byte words from the LRH through the ICRC (VCRC excluded)
  Lid slid;

  // LVer must be 0 (IBA 7.7.2).
  static Parsed<Lrh> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    if (auto lver = get(in, kLVer); lver != 0) return illegal(kName, kLVer, lver);
    Lrh h;
    h.vl = get_u8(in, kVl);
    h.sl = get_u8(in, kSl);
    h.lnh = static_cast<Lnh>(get(in, kLnh));
    h.dlid = Lid(get_u16(in, kDlid));
    h.pkt_len = get_u16(in, kPktLen);
    h.slid = Lid(get_u16(in, kSlid));
    return h;
  }

  // REQUIRES: out.size() >= kLen, vl and sl < 16, pkt_len < 2048.
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen);
    std::fill_n(out.begin(), kLen, uint8_t{0});
    set(out, kVl, vl);
    set(out, kSl, sl);
    set(out, kLnh, static_cast<uint8_t>(lnh));
    set(out, kDlid, dlid.value());
    set(out, kPktLen, pkt_len);
    set(out, kSlid, slid.value());
  }

  friend bool operator==(const Lrh&, const Lrh&) = default;
};

}  // namespace softib::wire
