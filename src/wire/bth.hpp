// Base Transport Header, IBA 9.2 (12 bytes): first transport header of every IBA packet.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+-+-+---+-------+-------------------------------+
//  |    OpCode     |S|M|Pad| TVer  |             P_Key             |
//  +-+-+-----------+-+-+---+-------+-------------------------------+
//  |F|B|   Resv6   |                    DestQP                     |
//  +-+-+-+---------+-----------------------------------------------+
//  |A|    Resv7    |                      PSN                      |
//  +-+-------------+-----------------------------------------------+
// S = SE (solicited event), M = MigReq, Pad = PadCnt, F/B = FECN/BECN (IBA A10.2: the former
// Resv8a byte), A = AckReq. Byte 4 is variant: the ICRC covers it as all ones.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "base/ids.hpp"
#include "wire/bytes.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

struct Bth {
  static constexpr std::string_view kName = "BTH";
  static constexpr Field kOpCode{"OpCode", 0, 8};
  static constexpr Field kSe{"SE", 8, 1};
  static constexpr Field kMigReq{"M", 9, 1};
  static constexpr Field kPadCnt{"PadCnt", 10, 2};
  static constexpr Field kTVer{"TVer", 12, 4};
  static constexpr Field kPKey{"P_Key", 16, 16};
  static constexpr Field kFecn{"FECN", 32, 1};
  static constexpr Field kBecn{"BECN", 33, 1};
  static constexpr Field kResv6{"Resv6", 34, 6};
  static constexpr Field kDestQp{"DestQP", 40, 24};
  static constexpr Field kAckReq{"A", 64, 1};
  static constexpr Field kResv7{"Resv7", 65, 7};
  static constexpr Field kPsn{"PSN", 72, 24};
  static constexpr std::array kFields{kOpCode, kSe,   kMigReq, kPadCnt, kTVer,  kPKey, kFecn,
                                      kBecn,   kResv6, kDestQp, kAckReq, kResv7, kPsn};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 12 && layout_is_valid(kFields) && layout_is_ordered(kFields));
  // Byte 4 (FECN, BECN, Resv6) is replaced by ones for the ICRC (IBA 7.8.1).
  static constexpr size_t kVariantByte = 4;

  uint8_t opcode = 0;
  bool solicited = false;
  bool mig_req = false;
  uint8_t pad_count = 0;  // 2 bits: pad bytes after the payload to a 4-byte boundary
  PKey pkey;
  bool fecn = false;
  bool becn = false;
  Qpn dest_qp;
  bool ack_req = false;
  Psn psn;

  // TVer must be 0 (IBA 9.2.5). Opcode validity is the packet layer's business.
  static Parsed<Bth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    if (auto tver = get(in, kTVer); tver != 0) return illegal(kName, kTVer, tver);
    Bth h;
    h.opcode = get_u8(in, kOpCode);
    h.solicited = get_flag(in, kSe);
    h.mig_req = get_flag(in, kMigReq);
    h.pad_count = get_u8(in, kPadCnt);
    h.pkey = PKey(get_u16(in, kPKey));
    h.fecn = get_flag(in, kFecn);
    h.becn = get_flag(in, kBecn);
    h.dest_qp = Qpn(get_u32(in, kDestQp));
    h.ack_req = get_flag(in, kAckReq);
    h.psn = Psn(get_u32(in, kPsn));
    return h;
  }

  // REQUIRES: out.size() >= kLen, pad_count < 4.
  void encode(MutByteSpan out) const { encode(out, pad_count); }
  // The same with another PadCnt (the builder's, from the payload length). Three big-endian
  // words composed in registers, in the layout kFields gives (HeaderTest checks the two
  // agree): every packet sent is encoded here, and a field-by-field read-modify-write of the
  // bytes cost several times more. TVer, Resv6 and Resv7 are 0.
  void encode(MutByteSpan out, uint8_t pad) const {
    SOFTIB_ASSERT(out.size() >= kLen && pad < 4);
    SOFTIB_ASSERT(dest_qp.value() <= 0xFFFFFF && psn.value() <= 0xFFFFFF);
    uint8_t* p = out.data();
    store_be32(p, uint32_t{opcode} << 24 | uint32_t{solicited} << 23 | uint32_t{mig_req} << 22 | uint32_t{pad} << 20 |
                      pkey.value());
    store_be32(p + 4, uint32_t{fecn} << 31 | uint32_t{becn} << 30 | dest_qp.value());
    store_be32(p + 8, uint32_t{ack_req} << 31 | psn.value());
  }

  friend bool operator==(const Bth&, const Bth&) = default;
};

}  // namespace softib::wire
