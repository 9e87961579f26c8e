// Work-request opcodes and where they are legal: one constexpr row per WR opcode saying, for
// each QP type, whether a send work request of that opcode is legal, and which packet
// opcodes a requester sends for it (derived from the opcode table, not listed by hand).
//
// The opcodes are libibverbs' enum ibv_wr_opcode (our own enum with the same values, so the
// verbs compatibility layer can static_assert them against verbs.h). Legality follows the
// IBA's transport services (IBA 10.8.3: which operations each service supports) as rxe
// enforces them: rxe_wr_opcode_info[] in the kernel, plus the packet opcode rxe's requester
// must find for the WR (next_opcode()).
//
//                        RC  UC  UD | RD  XRC
//   SEND                 x   x   x  | u   u
//   SEND_WITH_IMM        x   x   x  | u   u
//   SEND_WITH_INV        x   -   -  | -   u     no UC/UD/RD opcode carries an IETH
//   RDMA_WRITE           x   x   -  | u   u
//   RDMA_WRITE_WITH_IMM  x   x   -  | u   u
//   RDMA_READ            x   -   -  | u   u
//   ATOMIC_CMP_AND_SWP   x   -   -  | u   u
//   ATOMIC_FETCH_AND_ADD x   -   -  | u   u
//   LOCAL_INV            x   -   -  | u   u     local: no packet
//   BIND_MW              x   x   -  | u   u     local: no packet
//   x legal, - illegal (verbs fail it with EINVAL), u the IBA allows it but softib does not
//   implement the transport (EOPNOTSUPP).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "packet/opcode.hpp"

namespace softib::packet {

enum class QpType : uint8_t { kRc, kUc, kUd, kRd, kXrc };

// Values of libibverbs' enum ibv_wr_opcode.
enum class WrOpcode : uint8_t {
  kRdmaWrite = 0,
  kRdmaWriteWithImm = 1,
  kSend = 2,
  kSendWithImm = 3,
  kRdmaRead = 4,
  kAtomicCmpAndSwp = 5,
  kAtomicFetchAndAdd = 6,
  kLocalInv = 7,
  kBindMw = 8,
  kSendWithInv = 9,
};

enum class WrLegality : uint8_t {
  kIllegal,      // the IBA (or verbs) forbids it on this QP type: EINVAL
  kLegal,        // softib carries it out
  kUnsupported,  // allowed by the IBA on a transport softib does not implement: EOPNOTSUPP
};

// Legality of one WR opcode on each QP type.
struct WrLegalityByQp {
  WrLegality rc, uc, ud, rd, xrc;

  constexpr WrLegality on(QpType t) const {
    switch (t) {
      case QpType::kRc: return rc;
      case QpType::kUc: return uc;
      case QpType::kUd: return ud;
      case QpType::kRd: return rd;
      case QpType::kXrc: return xrc;
    }
    return WrLegality::kIllegal;
  }
};

struct WrOpcodeInfo {
  WrOpcode opcode;
  std::string_view name;  // ibv_wr_opcode without its IBV_WR_ prefix: "SEND_WITH_IMM"
  // The packets it becomes. Local operations (LOCAL_INV, BIND_MW) send none.
  std::optional<Operation> operation;
  bool immediate;   // the last (or only) packet carries ImmDt
  bool invalidate;  // the last (or only) packet carries an IETH
  WrLegalityByQp legality;

  constexpr WrLegality on(QpType t) const { return legality.on(t); }
  constexpr bool is_local() const { return !operation.has_value(); }
};

namespace wr_table_detail {

inline constexpr WrLegality X = WrLegality::kLegal;
inline constexpr WrLegality N = WrLegality::kIllegal;
inline constexpr WrLegality U = WrLegality::kUnsupported;
inline constexpr std::optional<Operation> kLocal = std::nullopt;

// clang-format off
inline constexpr auto kTable = std::to_array<WrOpcodeInfo>({
//  opcode                         name                     packets                         imm    inv      RC UC UD RD XRC
  {WrOpcode::kRdmaWrite,           "RDMA_WRITE",            Operation::kRdmaWrite,          false, false, {X, X, N, U, U}},
  {WrOpcode::kRdmaWriteWithImm,    "RDMA_WRITE_WITH_IMM",   Operation::kRdmaWrite,          true,  false, {X, X, N, U, U}},
  {WrOpcode::kSend,                "SEND",                  Operation::kSend,               false, false, {X, X, X, U, U}},
  {WrOpcode::kSendWithImm,         "SEND_WITH_IMM",         Operation::kSend,               true,  false, {X, X, X, U, U}},
  {WrOpcode::kRdmaRead,            "RDMA_READ",             Operation::kRdmaReadRequest,    false, false, {X, N, N, U, U}},
  {WrOpcode::kAtomicCmpAndSwp,     "ATOMIC_CMP_AND_SWP",    Operation::kCompareSwap,        false, false, {X, N, N, U, U}},
  {WrOpcode::kAtomicFetchAndAdd,   "ATOMIC_FETCH_AND_ADD",  Operation::kFetchAdd,           false, false, {X, N, N, U, U}},
  {WrOpcode::kLocalInv,            "LOCAL_INV",             kLocal,                         false, false, {X, N, N, U, U}},
  {WrOpcode::kBindMw,              "BIND_MW",               kLocal,                         false, false, {X, X, N, U, U}},
  {WrOpcode::kSendWithInv,         "SEND_WITH_INV",         Operation::kSend,               false, true,  {X, N, N, N, U}},
});
// clang-format on

}  // namespace wr_table_detail

inline constexpr const auto& kWrOpcodeTable = wr_table_detail::kTable;

namespace wr_table_detail {
constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<size_t>(kTable[i].opcode) != i) return false;
  return true;
}
}  // namespace wr_table_detail
// So a row is found by indexing: every post_send asks twice per WR.
static_assert(wr_table_detail::rows_in_enum_order(), "kWrOpcodeTable rows follow WrOpcode's values");

// The row of a WR opcode. REQUIRES: op is an enumerator of WrOpcode.
constexpr const WrOpcodeInfo& wr_opcode_info(WrOpcode op) {
  const auto i = static_cast<size_t>(op);
  SOFTIB_ASSERT_MSG(i < kWrOpcodeTable.size(), "WrOpcode without a row");
  return kWrOpcodeTable[i < kWrOpcodeTable.size() ? i : 0];
}

constexpr WrLegality wr_legality(QpType qp, WrOpcode op) { return wr_opcode_info(op).on(qp); }

// The WR opcodes a post on a QP of each type carries out as they are (legal, not local):
// bit i for WrOpcode i. A post tests its WR against this and looks further only for what
// fails here (to say why), not two table rows per WR (callgrind: ~25 instructions a WR).
inline constexpr auto kPostableWrOpcodes = [] {
  std::array<uint32_t, static_cast<size_t>(QpType::kXrc) + 1> m{};
  for (size_t t = 0; t < m.size(); ++t)
    for (const WrOpcodeInfo& row : kWrOpcodeTable)
      if (row.on(static_cast<QpType>(t)) == WrLegality::kLegal && !row.is_local())
        m[t] |= 1u << static_cast<uint32_t>(row.opcode);
  return m;
}();
static_assert(kWrOpcodeTable.size() <= 32);

constexpr bool postable(QpType qp, WrOpcode op) {
  return static_cast<uint32_t>(op) < 32 && ((kPostableWrOpcodes[static_cast<size_t>(qp)] >> static_cast<uint32_t>(op)) & 1) != 0;
}

// The transport service of a QP type; nullopt for XRC, whose opcodes (0xA0 - 0xBF, with an
// XRCETH) are not in this table.
constexpr std::optional<Transport> transport_of(QpType qp) {
  switch (qp) {
    case QpType::kRc: return Transport::kRc;
    case QpType::kUc: return Transport::kUc;
    case QpType::kUd: return Transport::kUd;
    case QpType::kRd: return Transport::kRd;
    case QpType::kXrc: break;
  }
  return std::nullopt;
}

// The packet opcode a requester sends for the packet at `position` of a message of WR opcode
// `op` on a QP of type `qp`: the opcode table row of the QP's transport with the WR's
// operation and that position, carrying ImmDt (IETH) exactly when the WR has immediate data
// (invalidates) and the packet ends the message. nullopt when the WR is not legal on the QP
// type, is a local operation, or has no such packet (a UD message is one packet; READ and
// atomic requests are one packet).
namespace wr_table_detail {

// requester_opcode() by searching the opcode table.
constexpr std::optional<Opcode> search_requester_opcode(QpType qp, WrOpcode op, Position position) {
  const WrOpcodeInfo& wr = wr_opcode_info(op);
  const std::optional<Transport> transport = transport_of(qp);
  if (wr.on(qp) != WrLegality::kLegal || wr.is_local() || !transport) return std::nullopt;
  const bool ends = position == Position::kLast || position == Position::kOnly;
  for (const OpcodeInfo& row : kOpcodeTable) {
    if (row.transport() == *transport && row.operation == *wr.operation && row.position == position &&
        row.immediate() == (wr.immediate && ends) && row.invalidate() == (wr.invalidate && ends))
      return row.opcode;
  }
  return std::nullopt;
}

// Every answer of the search, computed at compile time: the requester asks once per packet,
// and the search (a pass over the opcode table) was 2-3 % of the transport's CPU per message.
inline constexpr size_t kQpTypes = static_cast<size_t>(QpType::kXrc) + 1;
inline constexpr size_t kWrOpcodes = static_cast<size_t>(WrOpcode::kSendWithInv) + 1;
inline constexpr size_t kPositions = static_cast<size_t>(Position::kOnly) + 1;
inline constexpr uint8_t kNoOpcode = 0xFF;  // not an opcode of the table (0xFF is unassigned)
constexpr size_t requester_index(QpType qp, WrOpcode op, Position position) {
  return (static_cast<size_t>(qp) * kWrOpcodes + static_cast<size_t>(op)) * kPositions + static_cast<size_t>(position);
}
constexpr auto build_requester_opcodes() {
  std::array<uint8_t, kQpTypes * kWrOpcodes * kPositions> t{};
  for (size_t q = 0; q < kQpTypes; ++q)
    for (size_t o = 0; o < kWrOpcodes; ++o)
      for (size_t p = 0; p < kPositions; ++p) {
        const auto qp = static_cast<QpType>(q);
        const auto op = static_cast<WrOpcode>(o);
        const auto pos = static_cast<Position>(p);
        const std::optional<Opcode> found = search_requester_opcode(qp, op, pos);
        t[requester_index(qp, op, pos)] = found ? static_cast<uint8_t>(*found) : kNoOpcode;
      }
  return t;
}
inline constexpr auto kRequesterOpcodes = build_requester_opcodes();

}  // namespace wr_table_detail

constexpr std::optional<Opcode> requester_opcode(QpType qp, WrOpcode op, Position position) {
  using namespace wr_table_detail;
  if (static_cast<size_t>(qp) >= kQpTypes || static_cast<size_t>(op) >= kWrOpcodes ||
      static_cast<size_t>(position) >= kPositions)
    return std::nullopt;
  const uint8_t v = kRequesterOpcodes[requester_index(qp, op, position)];
  if (v == kNoOpcode) return std::nullopt;
  return static_cast<Opcode>(v);
}

// "SEND_WITH_IMM" (ibv_wr_opcode without IBV_WR_).
constexpr std::string_view to_string(WrOpcode op) { return wr_opcode_info(op).name; }
// "RC", "UC", "UD", "RD", "XRC".
constexpr std::string_view to_string(QpType qp) {
  switch (qp) {
    case QpType::kRc: return "RC";
    case QpType::kUc: return "UC";
    case QpType::kUd: return "UD";
    case QpType::kRd: return "RD";
    case QpType::kXrc: return "XRC";
  }
  return "?";
}
constexpr std::string_view to_string(WrLegality l) {
  switch (l) {
    case WrLegality::kIllegal: return "illegal";
    case WrLegality::kLegal: return "legal";
    case WrLegality::kUnsupported: return "unsupported";
  }
  return "?";
}

}  // namespace softib::packet
