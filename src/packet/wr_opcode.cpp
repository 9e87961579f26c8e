// Compile-time checks of the WR opcode table (wr_opcode.hpp) and of the requester mapping
// derived from the opcode table.
#include "packet/wr_opcode.hpp"

namespace softib::packet {
namespace {

constexpr bool every_wr_opcode_has_one_row() {
  for (unsigned v = 0; v <= static_cast<unsigned>(WrOpcode::kSendWithInv); ++v) {
    size_t rows = 0;
    for (const WrOpcodeInfo& row : kWrOpcodeTable) rows += static_cast<unsigned>(row.opcode) == v;
    if (rows != 1) return false;
  }
  return kWrOpcodeTable.size() == 10;
}
static_assert(every_wr_opcode_has_one_row());

constexpr bool row_is_consistent(const WrOpcodeInfo& wr) {
  // softib implements RC, UC and UD only: nothing is legal on RD or XRC.
  if (wr.on(QpType::kRd) == WrLegality::kLegal || wr.on(QpType::kXrc) == WrLegality::kLegal) return false;
  // Immediate data and invalidation are properties of SENDs and RDMA WRITEs only.
  if ((wr.immediate || wr.invalidate) &&
      !(wr.operation == Operation::kSend || wr.operation == Operation::kRdmaWrite))
    return false;
  // A legal WR that sends packets has an opcode for its only packet, and for first, middle
  // and last packets when its operation spans several.
  for (QpType qp : {QpType::kRc, QpType::kUc, QpType::kUd}) {
    if (wr.on(qp) != WrLegality::kLegal || wr.is_local()) continue;
    if (!requester_opcode(qp, wr.opcode, Position::kOnly)) return false;
    const bool multi = is_multi_packet(*wr.operation) && qp != QpType::kUd;  // UD: one packet per message
    for (Position p : {Position::kFirst, Position::kMiddle, Position::kLast})
      if (requester_opcode(qp, wr.opcode, p).has_value() != multi) return false;
  }
  return true;
}

constexpr bool table_is_consistent() {
  for (const WrOpcodeInfo& wr : kWrOpcodeTable)
    if (!row_is_consistent(wr)) return false;
  return true;
}
static_assert(table_is_consistent());

constexpr bool no_opcode_is_the_empty_mark() {
  for (const OpcodeInfo& row : kOpcodeTable)
    if (static_cast<uint8_t>(row.opcode) == wr_table_detail::kNoOpcode) return false;
  return true;
}
static_assert(no_opcode_is_the_empty_mark(), "the requester table marks a missing opcode with an assigned one");

// The precomputed table answers as the search does, for every QP type, WR opcode and position.
constexpr bool table_matches_search() {
  for (size_t q = 0; q < wr_table_detail::kQpTypes; ++q)
    for (size_t o = 0; o < wr_table_detail::kWrOpcodes; ++o)
      for (size_t p = 0; p < wr_table_detail::kPositions; ++p) {
        const auto qp = static_cast<QpType>(q);
        const auto op = static_cast<WrOpcode>(o);
        const auto pos = static_cast<Position>(p);
        if (requester_opcode(qp, op, pos) != wr_table_detail::search_requester_opcode(qp, op, pos)) return false;
      }
  return true;
}
static_assert(table_matches_search());

using enum QpType;
using enum WrOpcode;
using enum Position;
static_assert(requester_opcode(kRc, kSend, kFirst) == Opcode::kRcSendFirst);
static_assert(requester_opcode(kRc, kSendWithImm, kMiddle) == Opcode::kRcSendMiddle);
static_assert(requester_opcode(kRc, kSendWithImm, kLast) == Opcode::kRcSendLastWithImmediate);
static_assert(requester_opcode(kRc, kSendWithInv, kOnly) == Opcode::kRcSendOnlyWithInvalidate);
static_assert(requester_opcode(kUc, kRdmaWriteWithImm, kFirst) == Opcode::kUcRdmaWriteFirst);
static_assert(requester_opcode(kUc, kRdmaWriteWithImm, kOnly) == Opcode::kUcRdmaWriteOnlyWithImmediate);
static_assert(requester_opcode(kRc, kRdmaRead, kOnly) == Opcode::kRcRdmaReadRequest);
static_assert(requester_opcode(kRc, kAtomicFetchAndAdd, kOnly) == Opcode::kRcFetchAdd);
static_assert(requester_opcode(kUd, kSendWithImm, kOnly) == Opcode::kUdSendOnlyWithImmediate);
static_assert(!requester_opcode(kUd, kSend, kFirst));
static_assert(!requester_opcode(kRc, kRdmaRead, kFirst));
static_assert(!requester_opcode(kUc, kRdmaRead, kOnly));
static_assert(!requester_opcode(kUc, kSendWithInv, kOnly));
static_assert(!requester_opcode(kRc, kLocalInv, kOnly));
static_assert(!requester_opcode(kRd, kSend, kOnly));
static_assert(wr_legality(kUd, kRdmaWrite) == WrLegality::kIllegal);
static_assert(wr_legality(kRd, kRdmaRead) == WrLegality::kUnsupported);
static_assert(to_string(kAtomicCmpAndSwp) == "ATOMIC_CMP_AND_SWP");

}  // namespace
}  // namespace softib::packet
