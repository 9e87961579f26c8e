// ACK Extended Transport Header, IBA 9.3.5 (4 bytes): acknowledgements and NAKs.
//
//  +-+---+---------+-----------------------------------------------+
//  |0|Typ| Value   |                     MSN                       |
//  +-+---+---------+-----------------------------------------------+
// Syndrome (IBA table 44): bit 7 reserved (0); bits 6:5 = 00 ACK, 01 RNR NAK, 10 reserved,
// 11 NAK; bits 4:0 = credit count (ACK), RNR timer code (RNR NAK) or NAK code.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "wire/bytes.hpp"
#include "wire/field.hpp"
#include "wire/parse_error.hpp"

namespace softib::wire {

enum class AethKind : uint8_t { kAck = 0, kRnrNak = 1, kNak = 3 };

// IBA table 45.
enum class NakCode : uint8_t {
  kPsnSequenceError = 0,
  kInvalidRequest = 1,
  kRemoteAccessError = 2,
  kRemoteOperationalError = 3,
  kInvalidRdRequest = 4,
};

std::string_view to_string(AethKind kind);
std::string_view to_string(NakCode code);

struct Aeth {
  static constexpr std::string_view kName = "AETH";
  static constexpr Field kSyndrome{"Syndrome", 0, 8};
  static constexpr Field kMsn{"MSN", 8, 24};
  static constexpr std::array kFields{kSyndrome, kMsn};
  static constexpr size_t kLen = layout_length(kFields);
  static_assert(kLen == 4 && layout_is_valid(kFields) && layout_is_ordered(kFields));

  // Credit count 31 means "invalid": the responder does not report credits (IBA 9.7.7.2).
  static constexpr uint8_t kNoCredits = 0x1F;

  uint8_t syndrome = 0;
  uint32_t msn = 0;  // 24 bits

  static constexpr Aeth ack(uint32_t msn, uint8_t credits = kNoCredits) {
    return Aeth{static_cast<uint8_t>(credits & 0x1F), msn & 0xFFFFFF};
  }
  static constexpr Aeth rnr_nak(uint32_t msn, uint8_t timer_code) {
    return Aeth{static_cast<uint8_t>(0x20 | (timer_code & 0x1F)), msn & 0xFFFFFF};
  }
  static constexpr Aeth nak(uint32_t msn, NakCode code) {
    return Aeth{static_cast<uint8_t>(0x60 | static_cast<uint8_t>(code)), msn & 0xFFFFFF};
  }

  constexpr AethKind kind() const { return static_cast<AethKind>((syndrome >> 5) & 3); }
  constexpr uint8_t value() const { return syndrome & 0x1F; }
  // REQUIRES: kind() == kAck
  constexpr uint8_t credit_count() const { return value(); }
  // REQUIRES: kind() == kRnrNak
  constexpr uint8_t rnr_timer() const { return value(); }
  // REQUIRES: kind() == kNak
  constexpr NakCode nak_code() const { return static_cast<NakCode>(value()); }

  // Rejects the reserved syndrome (bit 7 set, type 10, or a NAK code above 4).
  static Parsed<Aeth> decode(ByteSpan in) {
    if (auto e = check_length(in, kName, kFields, kLen)) return *e;
    Aeth h{get_aligned<kSyndrome>(in), get_aligned<kMsn>(in)};
    const bool reserved_type = (h.syndrome & 0x80) != 0 || ((h.syndrome >> 5) & 3) == 2;
    const bool reserved_nak = h.kind() == AethKind::kNak && h.value() > 4;
    if (reserved_type || reserved_nak) return illegal(kName, kSyndrome, h.syndrome);
    return h;
  }
  // One big-endian word (the layout of kFields; AlignedHeaderTest checks the two agree).
  void encode(MutByteSpan out) const {
    SOFTIB_ASSERT(out.size() >= kLen && msn <= 0xFFFFFF);
    store_be32(out.data(), uint32_t{syndrome} << 24 | msn);
  }
  friend bool operator==(const Aeth&, const Aeth&) = default;
};

}  // namespace softib::wire
