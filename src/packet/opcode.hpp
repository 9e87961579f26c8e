// The BTH opcode table, IBA 9.2.1 table 38: one constexpr row per assigned opcode, naming its
// transport, operation, position in a message, extension headers and whether it carries a
// payload. Everything else (header offsets, header length, request/response, immediate,
// invalidate, receive-WQE use) is derived from the row, and static_asserts in opcode.cpp pin
// the derived values against the spec.
//
// OpCode bits 7:5 select the transport service, bits 4:0 the operation (IBA 9.2.1):
//   000 RC   001 UC   010 RD   011 UD   (100 CNP, 101 XRC, 110 reserved, 111 vendor: not here)
// Values absent from the table are reserved; a packet carrying one has an illegal BTH.OpCode.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/assert.hpp"
#include "packet/header_set.hpp"

namespace softib::packet {

// Transport service, BTH.OpCode bits 7:5.
enum class Transport : uint8_t { kRc = 0, kUc = 1, kRd = 2, kUd = 3 };

// What a packet does; the stem of its spec name.
enum class Operation : uint8_t {
  kSend,
  kRdmaWrite,
  kRdmaReadRequest,
  kRdmaReadResponse,
  kAcknowledge,
  kAtomicAcknowledge,
  kCompareSwap,
  kFetchAdd,
  kResync,       // RD only
  kFlush,        // IBA 1.5 memory placement extensions
  kAtomicWrite,  // IBA 1.5 memory placement extensions
};

// Where a packet sits in its message (IBA 9.5). Single-packet operations are kOnly.
enum class Position : uint8_t { kFirst, kMiddle, kLast, kOnly };

// Every assigned opcode of table 38 for RC, UC, RD and UD, plus the IBA 1.5 RC FLUSH and
// ATOMIC_WRITE. The enumerator spells the spec name in this project's kConstant style; the
// table row holds the spec spelling itself, checked against the row's semantics.
enum class Opcode : uint8_t {
  kRcSendFirst = 0x00,
  kRcSendMiddle = 0x01,
  kRcSendLast = 0x02,
  kRcSendLastWithImmediate = 0x03,
  kRcSendOnly = 0x04,
  kRcSendOnlyWithImmediate = 0x05,
  kRcRdmaWriteFirst = 0x06,
  kRcRdmaWriteMiddle = 0x07,
  kRcRdmaWriteLast = 0x08,
  kRcRdmaWriteLastWithImmediate = 0x09,
  kRcRdmaWriteOnly = 0x0A,
  kRcRdmaWriteOnlyWithImmediate = 0x0B,
  kRcRdmaReadRequest = 0x0C,
  kRcRdmaReadResponseFirst = 0x0D,
  kRcRdmaReadResponseMiddle = 0x0E,
  kRcRdmaReadResponseLast = 0x0F,
  kRcRdmaReadResponseOnly = 0x10,
  kRcAcknowledge = 0x11,
  kRcAtomicAcknowledge = 0x12,
  kRcCompareSwap = 0x13,
  kRcFetchAdd = 0x14,
  // 0x15 is reserved for RC (it is RESYNC on RD).
  kRcSendLastWithInvalidate = 0x16,
  kRcSendOnlyWithInvalidate = 0x17,
  kRcFlush = 0x1C,
  kRcAtomicWrite = 0x1D,

  kUcSendFirst = 0x20,
  kUcSendMiddle = 0x21,
  kUcSendLast = 0x22,
  kUcSendLastWithImmediate = 0x23,
  kUcSendOnly = 0x24,
  kUcSendOnlyWithImmediate = 0x25,
  kUcRdmaWriteFirst = 0x26,
  kUcRdmaWriteMiddle = 0x27,
  kUcRdmaWriteLast = 0x28,
  kUcRdmaWriteLastWithImmediate = 0x29,
  kUcRdmaWriteOnly = 0x2A,
  kUcRdmaWriteOnlyWithImmediate = 0x2B,

  kRdSendFirst = 0x40,
  kRdSendMiddle = 0x41,
  kRdSendLast = 0x42,
  kRdSendLastWithImmediate = 0x43,
  kRdSendOnly = 0x44,
  kRdSendOnlyWithImmediate = 0x45,
  kRdRdmaWriteFirst = 0x46,
  kRdRdmaWriteMiddle = 0x47,
  kRdRdmaWriteLast = 0x48,
  kRdRdmaWriteLastWithImmediate = 0x49,
  kRdRdmaWriteOnly = 0x4A,
  kRdRdmaWriteOnlyWithImmediate = 0x4B,
  kRdRdmaReadRequest = 0x4C,
  kRdRdmaReadResponseFirst = 0x4D,
  kRdRdmaReadResponseMiddle = 0x4E,
  kRdRdmaReadResponseLast = 0x4F,
  kRdRdmaReadResponseOnly = 0x50,
  kRdAcknowledge = 0x51,
  kRdAtomicAcknowledge = 0x52,
  kRdCompareSwap = 0x53,
  kRdFetchAdd = 0x54,
  kRdResync = 0x55,

  kUdSendOnly = 0x64,
  kUdSendOnlyWithImmediate = 0x65,
};

constexpr uint8_t to_underlying(Opcode op) { return static_cast<uint8_t>(op); }

// "RC", "UC", "RD", "UD".
constexpr std::string_view to_string(Transport t) {
  switch (t) {
    case Transport::kRc: return "RC";
    case Transport::kUc: return "UC";
    case Transport::kRd: return "RD";
    case Transport::kUd: return "UD";
  }
  return "?";
}

// The stem of the spec names: "SEND", "RDMA_WRITE", "RDMA_READ_REQUEST", "ACKNOWLEDGE", ...
constexpr std::string_view to_string(Operation op) {
  switch (op) {
    case Operation::kSend: return "SEND";
    case Operation::kRdmaWrite: return "RDMA_WRITE";
    case Operation::kRdmaReadRequest: return "RDMA_READ_REQUEST";
    case Operation::kRdmaReadResponse: return "RDMA_READ_RESPONSE";
    case Operation::kAcknowledge: return "ACKNOWLEDGE";
    case Operation::kAtomicAcknowledge: return "ATOMIC_ACKNOWLEDGE";
    case Operation::kCompareSwap: return "COMPARE_SWAP";
    case Operation::kFetchAdd: return "FETCH_ADD";
    case Operation::kResync: return "RESYNC";
    case Operation::kFlush: return "FLUSH";
    case Operation::kAtomicWrite: return "ATOMIC_WRITE";
  }
  return "?";
}

// "FIRST", "MIDDLE", "LAST", "ONLY".
constexpr std::string_view to_string(Position p) {
  switch (p) {
    case Position::kFirst: return "FIRST";
    case Position::kMiddle: return "MIDDLE";
    case Position::kLast: return "LAST";
    case Position::kOnly: return "ONLY";
  }
  return "?";
}

// Operations whose messages span several packets (first/middle/last/only); every other
// operation is a single packet, kOnly.
constexpr bool is_multi_packet(Operation op) {
  return op == Operation::kSend || op == Operation::kRdmaWrite || op == Operation::kRdmaReadResponse;
}

// One row of table 38.
struct OpcodeInfo {
  Opcode opcode;
  std::string_view name;  // the spec's spelling: "RC_SEND_FIRST"
  Operation operation;
  Position position;
  HeaderSet headers;  // extension headers after the BTH
  bool payload;       // the packet carries a payload (possibly empty)
  bool supported;     // softib implements it (RD, FLUSH and ATOMIC_WRITE are described only)
  // Derived from `headers` when the table is built (with_layout below): every packet parsed
  // or built asks for them, and HeaderSet computes them with a loop over the header kinds.
  uint8_t header_len = 0;
  std::array<uint8_t, kExtHeaderCount> offsets{};

  constexpr uint8_t value() const { return to_underlying(opcode); }
  constexpr Transport transport() const { return static_cast<Transport>(value() >> 5); }

  // Requests travel requester -> responder; responses (read responses and acknowledgements)
  // travel back (IBA 9.2.1).
  constexpr bool is_response() const {
    return operation == Operation::kRdmaReadResponse || operation == Operation::kAcknowledge ||
           operation == Operation::kAtomicAcknowledge;
  }
  constexpr bool is_request() const { return !is_response(); }

  constexpr bool is_send() const { return operation == Operation::kSend; }
  constexpr bool is_rdma_write() const { return operation == Operation::kRdmaWrite; }
  constexpr bool is_rdma_read() const {
    return operation == Operation::kRdmaReadRequest || operation == Operation::kRdmaReadResponse;
  }
  constexpr bool is_atomic() const {
    return operation == Operation::kCompareSwap || operation == Operation::kFetchAdd;
  }
  // Carries an AETH: acknowledgements and the read responses that hold one.
  constexpr bool is_ack() const { return headers.has(ExtHeader::kAeth); }

  constexpr bool immediate() const { return headers.has(ExtHeader::kImmDt); }
  constexpr bool invalidate() const { return headers.has(ExtHeader::kIeth); }

  constexpr bool starts_message() const { return position == Position::kFirst || position == Position::kOnly; }
  constexpr bool ends_message() const { return position == Position::kLast || position == Position::kOnly; }
  // A message is cut into PMTU-sized packets and only its last (or only) packet may be
  // shorter (IBA 9.7), so first and middle packets are never empty and never padded.
  constexpr bool payload_is_full_pmtu() const {
    return payload && (position == Position::kFirst || position == Position::kMiddle);
  }

  // The responder needs a receive WQE for this packet: the first packet of a SEND, or the
  // packet of an RDMA WRITE that delivers immediate data (IBA 9.7; rxe's RWR mask).
  constexpr bool needs_recv_wqe() const {
    return (is_send() && starts_message()) || (is_rdma_write() && immediate());
  }
  // The responder completes that receive WQE on this packet: the last packet of a SEND, or
  // the RDMA WRITE packet with immediate data (rxe's COMP mask).
  constexpr bool completes_recv_wqe() const {
    return (is_send() && ends_message()) || (is_rdma_write() && immediate());
  }

  // BTH plus extension headers: where the payload starts.
  constexpr size_t header_length() const { return header_len; }
  // Offset of an extension header from the start of the BTH. REQUIRES: headers.has(h)
  constexpr size_t offset(ExtHeader h) const {
    SOFTIB_ASSERT(headers.has(h));
    return offsets[static_cast<size_t>(h)];
  }
};

namespace opcode_table_detail {

using enum ExtHeader;
using enum Operation;
using enum Position;
inline constexpr bool kData = true;
inline constexpr bool kNoData = false;
inline constexpr bool kYes = true;
inline constexpr bool kNo = false;

// Fills in each row's header_len and offsets from its header set.
template <size_t N>
constexpr std::array<OpcodeInfo, N> with_layout(std::array<OpcodeInfo, N> rows) {
  for (OpcodeInfo& r : rows) {
    r.header_len = static_cast<uint8_t>(r.headers.header_length());
    for (size_t i = 0; i < kExtHeaderCount; ++i)
      if (r.headers.has(static_cast<ExtHeader>(i))) r.offsets[i] = static_cast<uint8_t>(r.headers.offset(static_cast<ExtHeader>(i)));
  }
  return rows;
}

// clang-format off
inline constexpr auto kTable = with_layout(std::to_array<OpcodeInfo>({
//  opcode                                 spec name                               operation           position extension headers       payload  supported
  {Opcode::kRcSendFirst,                   "RC_SEND_FIRST",                        kSend,              kFirst,  {},                     kData,   kYes},
  {Opcode::kRcSendMiddle,                  "RC_SEND_MIDDLE",                       kSend,              kMiddle, {},                     kData,   kYes},
  {Opcode::kRcSendLast,                    "RC_SEND_LAST",                         kSend,              kLast,   {},                     kData,   kYes},
  {Opcode::kRcSendLastWithImmediate,       "RC_SEND_LAST_WITH_IMMEDIATE",          kSend,              kLast,   kImmDt,                 kData,   kYes},
  {Opcode::kRcSendOnly,                    "RC_SEND_ONLY",                         kSend,              kOnly,   {},                     kData,   kYes},
  {Opcode::kRcSendOnlyWithImmediate,       "RC_SEND_ONLY_WITH_IMMEDIATE",          kSend,              kOnly,   kImmDt,                 kData,   kYes},
  {Opcode::kRcRdmaWriteFirst,              "RC_RDMA_WRITE_FIRST",                  kRdmaWrite,         kFirst,  kReth,                  kData,   kYes},
  {Opcode::kRcRdmaWriteMiddle,             "RC_RDMA_WRITE_MIDDLE",                 kRdmaWrite,         kMiddle, {},                     kData,   kYes},
  {Opcode::kRcRdmaWriteLast,               "RC_RDMA_WRITE_LAST",                   kRdmaWrite,         kLast,   {},                     kData,   kYes},
  {Opcode::kRcRdmaWriteLastWithImmediate,  "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",    kRdmaWrite,         kLast,   kImmDt,                 kData,   kYes},
  {Opcode::kRcRdmaWriteOnly,               "RC_RDMA_WRITE_ONLY",                   kRdmaWrite,         kOnly,   kReth,                  kData,   kYes},
  {Opcode::kRcRdmaWriteOnlyWithImmediate,  "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",    kRdmaWrite,         kOnly,   kReth | kImmDt,         kData,   kYes},
  {Opcode::kRcRdmaReadRequest,             "RC_RDMA_READ_REQUEST",                 kRdmaReadRequest,   kOnly,   kReth,                  kNoData, kYes},
  {Opcode::kRcRdmaReadResponseFirst,       "RC_RDMA_READ_RESPONSE_FIRST",          kRdmaReadResponse,  kFirst,  kAeth,                  kData,   kYes},
  {Opcode::kRcRdmaReadResponseMiddle,      "RC_RDMA_READ_RESPONSE_MIDDLE",         kRdmaReadResponse,  kMiddle, {},                     kData,   kYes},
  {Opcode::kRcRdmaReadResponseLast,        "RC_RDMA_READ_RESPONSE_LAST",           kRdmaReadResponse,  kLast,   kAeth,                  kData,   kYes},
  {Opcode::kRcRdmaReadResponseOnly,        "RC_RDMA_READ_RESPONSE_ONLY",           kRdmaReadResponse,  kOnly,   kAeth,                  kData,   kYes},
  {Opcode::kRcAcknowledge,                 "RC_ACKNOWLEDGE",                       kAcknowledge,       kOnly,   kAeth,                  kNoData, kYes},
  {Opcode::kRcAtomicAcknowledge,           "RC_ATOMIC_ACKNOWLEDGE",                kAtomicAcknowledge, kOnly,   kAeth | kAtomicAckEth,  kNoData, kYes},
  {Opcode::kRcCompareSwap,                 "RC_COMPARE_SWAP",                      kCompareSwap,       kOnly,   kAtomicEth,             kNoData, kYes},
  {Opcode::kRcFetchAdd,                    "RC_FETCH_ADD",                         kFetchAdd,          kOnly,   kAtomicEth,             kNoData, kYes},
  {Opcode::kRcSendLastWithInvalidate,      "RC_SEND_LAST_WITH_INVALIDATE",         kSend,              kLast,   kIeth,                  kData,   kYes},
  {Opcode::kRcSendOnlyWithInvalidate,      "RC_SEND_ONLY_WITH_INVALIDATE",         kSend,              kOnly,   kIeth,                  kData,   kYes},
  {Opcode::kRcFlush,                       "RC_FLUSH",                             kFlush,             kOnly,   kFeth | kReth,          kNoData, kNo},
  {Opcode::kRcAtomicWrite,                 "RC_ATOMIC_WRITE",                      kAtomicWrite,       kOnly,   kReth,                  kData,   kNo},

  {Opcode::kUcSendFirst,                   "UC_SEND_FIRST",                        kSend,              kFirst,  {},                     kData,   kYes},
  {Opcode::kUcSendMiddle,                  "UC_SEND_MIDDLE",                       kSend,              kMiddle, {},                     kData,   kYes},
  {Opcode::kUcSendLast,                    "UC_SEND_LAST",                         kSend,              kLast,   {},                     kData,   kYes},
  {Opcode::kUcSendLastWithImmediate,       "UC_SEND_LAST_WITH_IMMEDIATE",          kSend,              kLast,   kImmDt,                 kData,   kYes},
  {Opcode::kUcSendOnly,                    "UC_SEND_ONLY",                         kSend,              kOnly,   {},                     kData,   kYes},
  {Opcode::kUcSendOnlyWithImmediate,       "UC_SEND_ONLY_WITH_IMMEDIATE",          kSend,              kOnly,   kImmDt,                 kData,   kYes},
  {Opcode::kUcRdmaWriteFirst,              "UC_RDMA_WRITE_FIRST",                  kRdmaWrite,         kFirst,  kReth,                  kData,   kYes},
  {Opcode::kUcRdmaWriteMiddle,             "UC_RDMA_WRITE_MIDDLE",                 kRdmaWrite,         kMiddle, {},                     kData,   kYes},
  {Opcode::kUcRdmaWriteLast,               "UC_RDMA_WRITE_LAST",                   kRdmaWrite,         kLast,   {},                     kData,   kYes},
  {Opcode::kUcRdmaWriteLastWithImmediate,  "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",    kRdmaWrite,         kLast,   kImmDt,                 kData,   kYes},
  {Opcode::kUcRdmaWriteOnly,               "UC_RDMA_WRITE_ONLY",                   kRdmaWrite,         kOnly,   kReth,                  kData,   kYes},
  {Opcode::kUcRdmaWriteOnlyWithImmediate,  "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",    kRdmaWrite,         kOnly,   kReth | kImmDt,         kData,   kYes},

  {Opcode::kRdSendFirst,                   "RD_SEND_FIRST",                        kSend,              kFirst,  kRdeth | kDeth,                  kData,   kNo},
  {Opcode::kRdSendMiddle,                  "RD_SEND_MIDDLE",                       kSend,              kMiddle, kRdeth | kDeth,                  kData,   kNo},
  {Opcode::kRdSendLast,                    "RD_SEND_LAST",                         kSend,              kLast,   kRdeth | kDeth,                  kData,   kNo},
  {Opcode::kRdSendLastWithImmediate,       "RD_SEND_LAST_WITH_IMMEDIATE",          kSend,              kLast,   kRdeth | kDeth | kImmDt,         kData,   kNo},
  {Opcode::kRdSendOnly,                    "RD_SEND_ONLY",                         kSend,              kOnly,   kRdeth | kDeth,                  kData,   kNo},
  {Opcode::kRdSendOnlyWithImmediate,       "RD_SEND_ONLY_WITH_IMMEDIATE",          kSend,              kOnly,   kRdeth | kDeth | kImmDt,         kData,   kNo},
  {Opcode::kRdRdmaWriteFirst,              "RD_RDMA_WRITE_FIRST",                  kRdmaWrite,         kFirst,  kRdeth | kDeth | kReth,          kData,   kNo},
  {Opcode::kRdRdmaWriteMiddle,             "RD_RDMA_WRITE_MIDDLE",                 kRdmaWrite,         kMiddle, kRdeth | kDeth,                  kData,   kNo},
  {Opcode::kRdRdmaWriteLast,               "RD_RDMA_WRITE_LAST",                   kRdmaWrite,         kLast,   kRdeth | kDeth,                  kData,   kNo},
  {Opcode::kRdRdmaWriteLastWithImmediate,  "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE",    kRdmaWrite,         kLast,   kRdeth | kDeth | kImmDt,         kData,   kNo},
  {Opcode::kRdRdmaWriteOnly,               "RD_RDMA_WRITE_ONLY",                   kRdmaWrite,         kOnly,   kRdeth | kDeth | kReth,          kData,   kNo},
  {Opcode::kRdRdmaWriteOnlyWithImmediate,  "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE",    kRdmaWrite,         kOnly,   kRdeth | kDeth | kReth | kImmDt, kData,   kNo},
  {Opcode::kRdRdmaReadRequest,             "RD_RDMA_READ_REQUEST",                 kRdmaReadRequest,   kOnly,   kRdeth | kDeth | kReth,          kNoData, kNo},
  {Opcode::kRdRdmaReadResponseFirst,       "RD_RDMA_READ_RESPONSE_FIRST",          kRdmaReadResponse,  kFirst,  kRdeth | kAeth,                  kData,   kNo},
  {Opcode::kRdRdmaReadResponseMiddle,      "RD_RDMA_READ_RESPONSE_MIDDLE",         kRdmaReadResponse,  kMiddle, kRdeth,                          kData,   kNo},
  {Opcode::kRdRdmaReadResponseLast,        "RD_RDMA_READ_RESPONSE_LAST",           kRdmaReadResponse,  kLast,   kRdeth | kAeth,                  kData,   kNo},
  {Opcode::kRdRdmaReadResponseOnly,        "RD_RDMA_READ_RESPONSE_ONLY",           kRdmaReadResponse,  kOnly,   kRdeth | kAeth,                  kData,   kNo},
  {Opcode::kRdAcknowledge,                 "RD_ACKNOWLEDGE",                       kAcknowledge,       kOnly,   kRdeth | kAeth,                  kNoData, kNo},
  {Opcode::kRdAtomicAcknowledge,           "RD_ATOMIC_ACKNOWLEDGE",                kAtomicAcknowledge, kOnly,   kRdeth | kAeth | kAtomicAckEth,  kNoData, kNo},
  {Opcode::kRdCompareSwap,                 "RD_COMPARE_SWAP",                      kCompareSwap,       kOnly,   kRdeth | kDeth | kAtomicEth,     kNoData, kNo},
  {Opcode::kRdFetchAdd,                    "RD_FETCH_ADD",                         kFetchAdd,          kOnly,   kRdeth | kDeth | kAtomicEth,     kNoData, kNo},
  {Opcode::kRdResync,                      "RD_RESYNC",                            kResync,            kOnly,   kRdeth | kDeth,                  kNoData, kNo},

  {Opcode::kUdSendOnly,                    "UD_SEND_ONLY",                         kSend,              kOnly,   kDeth,                  kData,   kYes},
  {Opcode::kUdSendOnlyWithImmediate,       "UD_SEND_ONLY_WITH_IMMEDIATE",          kSend,              kOnly,   kDeth | kImmDt,         kData,   kYes},
}));
// clang-format on

// Row index of every opcode value; kNone for reserved values.
inline constexpr uint8_t kNone = 0xFF;
inline constexpr std::array<uint8_t, 256> kIndex = [] {
  std::array<uint8_t, 256> index{};
  index.fill(kNone);
  for (size_t i = 0; i < kTable.size(); ++i) index[kTable[i].value()] = static_cast<uint8_t>(i);
  return index;
}();

}  // namespace opcode_table_detail

// Every row, in opcode order.
inline constexpr const auto& kOpcodeTable = opcode_table_detail::kTable;

// False for a reserved value.
constexpr bool is_assigned(uint8_t value) { return opcode_table_detail::kIndex[value] != opcode_table_detail::kNone; }

// The row of an opcode value, or nullptr when the value is reserved.
// (Constant expressions use is_assigned/opcode_info: g++ 12 with -fsanitize=undefined does
// not evaluate a comparison of a table address with nullptr at compile time.)
constexpr const OpcodeInfo* find_opcode(uint8_t value) {
  return is_assigned(value) ? &kOpcodeTable[opcode_table_detail::kIndex[value]] : nullptr;
}

// REQUIRES: op is an enumerator of Opcode (every enumerator has a row).
constexpr const OpcodeInfo& opcode_info(Opcode op) {
  SOFTIB_ASSERT(is_assigned(to_underlying(op)));
  return kOpcodeTable[opcode_table_detail::kIndex[to_underlying(op)]];
}

// The spec's spelling ("RC_SEND_FIRST"), or "reserved" for a value outside the table.
constexpr std::string_view to_string(Opcode op) {
  return is_assigned(to_underlying(op)) ? opcode_info(op).name : "reserved";
}

}  // namespace softib::packet
