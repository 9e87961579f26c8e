// Compile-time checks of the opcode table (opcode.hpp). Each check states one rule of IBA
// 9.2.1 table 38 a second, independent way, so a wrong row fails the build.
#include "packet/opcode.hpp"

namespace softib::packet {
namespace {

using enum ExtHeader;

constexpr bool consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// The spec name is <transport>_<operation>[_<position>][_WITH_IMMEDIATE|_WITH_INVALIDATE],
// the position present exactly for multi-packet operations.
constexpr bool name_matches_semantics(const OpcodeInfo& r) {
  std::string_view s = r.name;
  if (!consume(s, to_string(r.transport())) || !consume(s, "_") || !consume(s, to_string(r.operation)))
    return false;
  if (is_multi_packet(r.operation) && (!consume(s, "_") || !consume(s, to_string(r.position)))) return false;
  if (r.immediate() && !consume(s, "_WITH_IMMEDIATE")) return false;
  if (r.invalidate() && !consume(s, "_WITH_INVALIDATE")) return false;
  return s.empty();
}

// Which extension headers an opcode must carry, stated from its semantics (IBA 9.3).
constexpr HeaderSet expected_headers(const OpcodeInfo& r) {
  HeaderSet h;
  const Transport t = r.transport();
  if (t == Transport::kRd) h = h | kRdeth;  // every RD packet (IBA 9.3.1)
  if ((t == Transport::kRd || t == Transport::kUd) && r.is_request()) h = h | kDeth;  // IBA 9.3.2
  if (r.operation == Operation::kFlush) h = h | kFeth;
  // RETH: the first packet of an RDMA WRITE, every RDMA READ request (IBA 9.3.3), and the
  // IBA 1.5 FLUSH and ATOMIC_WRITE.
  if ((r.is_rdma_write() && r.starts_message()) || r.operation == Operation::kRdmaReadRequest ||
      r.operation == Operation::kFlush || r.operation == Operation::kAtomicWrite)
    h = h | kReth;
  if (r.is_atomic()) h = h | kAtomicEth;  // IBA 9.3.4
  // AETH: acknowledgements and the first, last and only read responses (IBA 9.3.5).
  if (r.operation == Operation::kAcknowledge || r.operation == Operation::kAtomicAcknowledge ||
      (r.operation == Operation::kRdmaReadResponse && r.position != Position::kMiddle))
    h = h | kAeth;
  if (r.operation == Operation::kAtomicAcknowledge) h = h | kAtomicAckEth;  // IBA 9.3.6
  return h;
}

constexpr bool carries_data(Operation op) {
  return op == Operation::kSend || op == Operation::kRdmaWrite || op == Operation::kRdmaReadResponse ||
         op == Operation::kAtomicWrite;
}

constexpr bool table_is_consistent() {
  for (size_t i = 0; i < kOpcodeTable.size(); ++i) {
    const OpcodeInfo& r = kOpcodeTable[i];
    if (i > 0 && kOpcodeTable[i - 1].value() >= r.value()) return false;  // sorted, unique
    if (!name_matches_semantics(r)) return false;
    if (!is_multi_packet(r.operation) && r.position != Position::kOnly) return false;
    if (r.payload != carries_data(r.operation)) return false;
    // ImmDt and IETH are optional: they may ride only on the packet that ends a SEND (either)
    // or an RDMA WRITE (ImmDt), and IETH only on RC (IBA 9.3.7, 9.3.8).
    const HeaderSet optional = HeaderSet(kImmDt) | kIeth;
    if (r.headers - optional != expected_headers(r)) return false;
    if (r.immediate() && !((r.is_send() || r.is_rdma_write()) && r.ends_message())) return false;
    if (r.invalidate() && !(r.is_send() && r.ends_message() && r.transport() == Transport::kRc)) return false;
    if (r.immediate() && r.invalidate()) return false;
    // The operation code (bits 4:0) means the same thing on every transport: rows that differ
    // only in transport share it (IBA 9.2.1).
    for (size_t j = 0; j < kOpcodeTable.size(); ++j) {
      const OpcodeInfo& o = kOpcodeTable[j];
      const bool same_meaning = o.operation == r.operation && o.position == r.position &&
                                o.immediate() == r.immediate() && o.invalidate() == r.invalidate();
      if (same_meaning && (o.value() & 0x1F) != (r.value() & 0x1F)) return false;
      if (j != i && o.name == r.name) return false;
    }
  }
  return true;
}
static_assert(table_is_consistent());

constexpr size_t count_assigned() {
  size_t n = 0;
  for (unsigned v = 0; v < 256; ++v) n += is_assigned(static_cast<uint8_t>(v));
  return n;
}
// RC 23 + FLUSH, ATOMIC_WRITE + UC 12 + RD 22 + UD 2; everything else reserved.
static_assert(kOpcodeTable.size() == 61 && count_assigned() == 61);
static_assert(!is_assigned(0x15) && !is_assigned(0x18) && !is_assigned(0x2C) && !is_assigned(0x56) &&
              !is_assigned(0x63) && !is_assigned(0x66) && !is_assigned(0x81) && !is_assigned(0xFF));

constexpr const OpcodeInfo& at(Opcode op) { return opcode_info(op); }

// Header lengths and offsets against the spec's byte counts (BTH 12, RDETH 4, DETH 8,
// FETH 4, RETH 16, AtomicETH 28, AETH 4, AtomicAckETH 8, ImmDt 4, IETH 4).
static_assert(at(Opcode::kRcSendFirst).header_length() == 12);
static_assert(at(Opcode::kRcSendOnlyWithImmediate).header_length() == 16);
static_assert(at(Opcode::kRcRdmaWriteFirst).header_length() == 28);
static_assert(at(Opcode::kRcRdmaWriteOnlyWithImmediate).header_length() == 32);
static_assert(at(Opcode::kRcRdmaWriteOnlyWithImmediate).offset(kReth) == 12);
static_assert(at(Opcode::kRcRdmaWriteOnlyWithImmediate).offset(kImmDt) == 28);
static_assert(at(Opcode::kRcRdmaReadRequest).header_length() == 28);
static_assert(at(Opcode::kRcRdmaReadResponseFirst).header_length() == 16);
static_assert(at(Opcode::kRcRdmaReadResponseMiddle).header_length() == 12);
static_assert(at(Opcode::kRcAcknowledge).header_length() == 16);
static_assert(at(Opcode::kRcAtomicAcknowledge).header_length() == 24);
static_assert(at(Opcode::kRcAtomicAcknowledge).offset(kAtomicAckEth) == 16);
static_assert(at(Opcode::kRcCompareSwap).header_length() == 40);
static_assert(at(Opcode::kRcFetchAdd).offset(kAtomicEth) == 12);
static_assert(at(Opcode::kRcSendOnlyWithInvalidate).header_length() == 16);
static_assert(at(Opcode::kRcFlush).header_length() == 32 && at(Opcode::kRcFlush).offset(kReth) == 16);
static_assert(at(Opcode::kRcAtomicWrite).header_length() == 28);
static_assert(at(Opcode::kUcRdmaWriteOnlyWithImmediate).header_length() == 32);
static_assert(at(Opcode::kRdSendFirst).header_length() == 24 && at(Opcode::kRdSendFirst).offset(kDeth) == 16);
static_assert(at(Opcode::kRdRdmaWriteOnlyWithImmediate).header_length() == 44);
static_assert(at(Opcode::kRdRdmaWriteOnlyWithImmediate).offset(kReth) == 24);
static_assert(at(Opcode::kRdRdmaWriteOnlyWithImmediate).offset(kImmDt) == 40);
static_assert(at(Opcode::kRdAtomicAcknowledge).header_length() == 28);
static_assert(at(Opcode::kRdCompareSwap).header_length() == 52);
static_assert(at(Opcode::kRdResync).header_length() == 24);
static_assert(at(Opcode::kUdSendOnly).header_length() == 20);
static_assert(at(Opcode::kUdSendOnlyWithImmediate).header_length() == 24);
static_assert(at(Opcode::kUdSendOnlyWithImmediate).offset(kImmDt) == 20);

// Semantic flags against rxe's masks for a few rows.
static_assert(at(Opcode::kRcSendFirst).needs_recv_wqe() && !at(Opcode::kRcSendFirst).completes_recv_wqe());
static_assert(!at(Opcode::kRcSendLast).needs_recv_wqe() && at(Opcode::kRcSendLast).completes_recv_wqe());
static_assert(at(Opcode::kRcRdmaWriteLastWithImmediate).needs_recv_wqe());
static_assert(!at(Opcode::kRcRdmaWriteOnly).needs_recv_wqe());
static_assert(at(Opcode::kRcAcknowledge).is_response() && at(Opcode::kRcRdmaReadResponseMiddle).is_response());
static_assert(!at(Opcode::kRcRdmaReadResponseMiddle).is_ack() && at(Opcode::kRcRdmaReadResponseLast).is_ack());
static_assert(at(Opcode::kRcRdmaReadRequest).is_request() && !at(Opcode::kRcRdmaReadRequest).payload);
static_assert(to_string(Opcode::kUdSendOnlyWithImmediate) == "UD_SEND_ONLY_WITH_IMMEDIATE");
static_assert(to_string(static_cast<Opcode>(0x15)) == "reserved");

}  // namespace
}  // namespace softib::packet
