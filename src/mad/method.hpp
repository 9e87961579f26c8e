// MAD methods, IBA 13.4.5 (common methods) plus the SA methods of IBA 15.2.2. The
// value is the whole R|Method byte of the common MAD header: the response forms carry the
// R bit (0x80), which the header table splits into the IBA fields R and Method.
#pragma once

#include <cstdint>
#include <string_view>

namespace softib::mad {

enum class Method : uint8_t {
  kGet = 0x01,
  kSet = 0x02,
  kSend = 0x03,
  kTrap = 0x05,
  kReport = 0x06,
  kTrapRepress = 0x07,
  kGetTable = 0x12,
  kGetTraceTable = 0x13,
  kGetMulti = 0x14,
  kDelete = 0x15,
  kGetResp = 0x81,
  kReportResp = 0x86,
  kGetTableResp = 0x92,
  kGetTraceTableResp = 0x93,
  kGetMultiResp = 0x94,
  kDeleteResp = 0x95,
};

inline constexpr uint8_t kResponseBit = 0x80;

// A response: the R bit is set, or the method is TrapRepress, the answer to a Trap that
// the IBA sends without the R bit (IBA 13.4.5; OpenSM's ib_mad_is_response agrees).
constexpr bool is_response(Method m) {
  return (static_cast<uint8_t>(m) & kResponseBit) != 0 || m == Method::kTrapRepress;
}

// The method of the response to a request (IBA 13.4.5): Get and Set are both answered by
// GetResp, Trap by TrapRepress (which has no R bit), the others by their R form.
// REQUIRES: m is a request that has a response (not Send, not a response).
constexpr Method response_to(Method m) {
  switch (m) {
    case Method::kGet:
    case Method::kSet:
      return Method::kGetResp;
    case Method::kTrap:
      return Method::kTrapRepress;
    default:
      return static_cast<Method>(static_cast<uint8_t>(m) | kResponseBit);
  }
}

// "Get", "GetResp", "TrapRepress", ...; "0x42" for values the IBA does not name.
std::string_view to_string(Method m);

}  // namespace softib::mad
