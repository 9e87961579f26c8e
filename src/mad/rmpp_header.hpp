// The RMPP header, IBA 13.6.2.1 (12 bytes at MAD offset 24 in SA, vendor range 2 and other
// RMPP-capable classes). It lets a transfer span several MADs: DATA segments numbered from
// 1, ACKs opening a window, STOP and ABORT.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+---------------+---------+-+-+-+---------------+
//  |  RMPPVersion  |   RMPPType    |RRespTime|L|F|A|  RMPPStatus   |  24
//  +---------------+---------------+---------+-+-+-+---------------+
//  |            Data1: SegmentNumber (DATA, ACK)                   |  28
//  +---------------------------------------------------------------+
//  |      Data2: PayloadLength (DATA) / NewWindowLast (ACK)        |  32
//  +---------------------------------------------------------------+
// RMPPFlags: A = Active, F = First, L = Last.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

enum class RmppType : uint8_t { kNone = 0, kData = 1, kAck = 2, kStop = 3, kAbort = 4 };
std::string_view to_string(RmppType t);  // "DATA", "ACK", "STOP", "ABORT", "None"

// RMPPStatus, IBA 13.6.2.1.
enum class RmppStatus : uint8_t {
  kNormal = 0,
  kResourcesExhausted = 1,
  kTotalTimeTooLong = 118,
  kInconsistentLastAndPayloadLength = 119,
  kInconsistentFirstAndSegmentNumber = 120,
  kBadRmppType = 121,
  kNewWindowLastTooSmall = 122,
  kSegmentNumberTooBig = 123,
  kIllegalStatus = 124,
  kUnsupportedVersion = 125,
  kTooManyRetries = 126,
  kUnspecified = 127,
};
std::string_view to_string(RmppStatus s);

inline constexpr uint8_t kRmppVersion = 1;
inline constexpr uint8_t kRmppActive = 0x1;
inline constexpr uint8_t kRmppFirst = 0x2;
inline constexpr uint8_t kRmppLast = 0x4;
inline constexpr uint8_t kNoRespTime = 0x1F;  // RRespTime: no time value given

struct RmppHeader {
  uint8_t version = 0;
  RmppType type = RmppType::kNone;
  uint8_t resp_time = 0;  // RRespTime, 5 bits
  uint8_t flags = 0;      // kRmppActive | kRmppFirst | kRmppLast
  RmppStatus status = RmppStatus::kNormal;
  uint32_t data1 = 0;     // SegmentNumber
  uint32_t data2 = 0;     // PayloadLength or NewWindowLast

  constexpr bool active() const { return (flags & kRmppActive) != 0; }
  constexpr bool first() const { return (flags & kRmppFirst) != 0; }
  constexpr bool last() const { return (flags & kRmppLast) != 0; }
  constexpr uint32_t segment_number() const { return data1; }
  constexpr uint32_t payload_length() const { return data2; }
  constexpr uint32_t new_window_last() const { return data2; }

  friend bool operator==(const RmppHeader&, const RmppHeader&) = default;
};

// A rule of IBA 13.6.2 the header breaks: the field to blame and its value.
struct RmppViolation {
  std::string_view field;
  uint64_t value = 0;
};

// nullopt for a consistent header. An inactive header may carry no First/Last flag; an
// active one needs RMPPVersion 1 and a type; only DATA carries First/Last; a DATA segment
// number starts at 1 and First goes with segment 1.
std::optional<RmppViolation> find_rmpp_violation(const RmppHeader& h);

template <>
struct Layout<RmppHeader> {
  using T = RmppHeader;
  static constexpr std::string_view kName = "RMPP";
  static constexpr std::array kRows{
      row("RMPPVersion", 0, 8, "RmppVers", Printer::kUint, member<&T::version>()),
      row("RMPPType", 8, 8, "RmppType", Printer::kUint, member<&T::type>(), Legal::at_most(4)),
      row("RRespTime", 16, 5, "RmppResp", Printer::kUint, member<&T::resp_time>()),
      row("RMPPFlags", 21, 3, "RmppFlags", Printer::kHex, member<&T::flags>()),
      row("RMPPStatus", 24, 8, "RmppStatus", Printer::kHex, member<&T::status>()),
      row("Data1", 32, 32, "RmppData1", Printer::kHex, member<&T::data1>()),
      row("Data2", 64, 32, "RmppData2", Printer::kHex, member<&T::data2>()),
  };
  static std::optional<wire::ParseError> check(const RmppHeader& h) {
    if (auto v = find_rmpp_violation(h)) return illegal_field<RmppHeader>(v->field, v->value);
    return std::nullopt;
  }
};
static_assert(wire_size<RmppHeader> == 12);

// For layouts embedding the header as member M: the same rule check, blamed on their rows.
template <class T, auto M>
std::optional<wire::ParseError> check_embedded_rmpp(const T& t) {
  if (auto v = find_rmpp_violation(t.*M)) return illegal_field<T>(v->field, v->value);
  return std::nullopt;
}

}  // namespace softib::mad
