// The opcode table against a second, hand-copied version of IBA 9.2.1 table 38: names,
// header lists (in wire order), lengths and offsets computed here from the spec's byte
// counts, reserved values, and the semantic flags against rxe's masks.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "packet/opcode.hpp"
#include "unit/packet/spec_table.hpp"

namespace softib::packet {
namespace {

using testing::kSpec;
using testing::kSpecBthLength;
using testing::kSpecLength;
using testing::SpecRow;
using testing::words;

ExtHeader header_named(const std::string& name) {
  for (size_t i = 0; i < kExtHeaderCount; ++i)
    if (to_string(static_cast<ExtHeader>(i)) == name) return static_cast<ExtHeader>(i);
  ADD_FAILURE() << "no extension header named " << name;
  return ExtHeader::kRdeth;
}

TEST(OpcodeTable, EveryRowMatchesTheSpec) {
  ASSERT_EQ(kOpcodeTable.size(), kSpec.size());
  for (const SpecRow& spec : kSpec) {
    SCOPED_TRACE(spec.name);
    const OpcodeInfo* info = find_opcode(spec.value);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->value(), spec.value);
    EXPECT_EQ(info->name, spec.name);
    EXPECT_EQ(to_string(info->opcode), spec.name);
    EXPECT_EQ(info->payload, spec.payload);
    EXPECT_EQ(info->supported, spec.supported);
    EXPECT_EQ(static_cast<unsigned>(info->transport()), spec.value >> 5u);

    // Offsets and length computed here by walking the spec's list in wire order.
    size_t at = kSpecBthLength;
    HeaderSet listed;
    for (const std::string& name : words(spec.headers)) {
      const ExtHeader h = header_named(name);
      ASSERT_TRUE(info->headers.has(h)) << name;
      EXPECT_EQ(info->offset(h), at) << name;
      at += kSpecLength.at(name);
      listed = listed | h;
    }
    EXPECT_EQ(info->headers, listed);
    EXPECT_EQ(info->header_length(), at);
  }
}

TEST(OpcodeTable, KnownLengthsFromTheBrief) {
  EXPECT_EQ(opcode_info(Opcode::kRcRdmaWriteOnlyWithImmediate).header_length(), 32u);
  EXPECT_EQ(opcode_info(Opcode::kUdSendOnlyWithImmediate).header_length(), 24u);
  EXPECT_EQ(opcode_info(Opcode::kRcAtomicAcknowledge).header_length(), 24u);
  EXPECT_EQ(opcode_info(Opcode::kRcCompareSwap).header_length(), 40u);
}

TEST(OpcodeTable, UnassignedValuesAreReserved) {
  std::set<unsigned> assigned;
  for (const SpecRow& spec : kSpec) assigned.insert(spec.value);
  size_t reserved = 0;
  for (unsigned v = 0; v < 256; ++v) {
    const OpcodeInfo* info = find_opcode(static_cast<uint8_t>(v));
    EXPECT_EQ(info != nullptr, assigned.count(v) == 1) << "opcode " << v;
    if (info == nullptr) {
      ++reserved;
      EXPECT_EQ(to_string(static_cast<Opcode>(v)), "reserved");
    }
  }
  EXPECT_EQ(reserved, 256u - kSpec.size());
}

TEST(OpcodeTable, NamesAreUniqueAndSpelledAsTheSpec) {
  std::set<std::string_view> names;
  for (const OpcodeInfo& r : kOpcodeTable) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_TRUE(r.name.starts_with(std::string(to_string(r.transport())) + "_")) << r.name;
  }
}

TEST(OpcodeTable, EnumeratorsNameTheirRows) {
  // A sample across transports: the enumerator, its value and its row agree.
  EXPECT_EQ(to_string(Opcode::kRcSendFirst), "RC_SEND_FIRST");
  EXPECT_EQ(to_string(Opcode::kRcSendOnlyWithInvalidate), "RC_SEND_ONLY_WITH_INVALIDATE");
  EXPECT_EQ(to_string(Opcode::kRcAtomicWrite), "RC_ATOMIC_WRITE");
  EXPECT_EQ(to_string(Opcode::kUcRdmaWriteOnlyWithImmediate), "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
  EXPECT_EQ(to_string(Opcode::kRdResync), "RD_RESYNC");
  EXPECT_EQ(to_string(Opcode::kUdSendOnly), "UD_SEND_ONLY");
  EXPECT_EQ(to_underlying(Opcode::kUdSendOnlyWithImmediate), 0x65);
}

// rxe's masks (drivers/infiniband/sw/rxe/rxe_opcode.c) for the supported opcodes.
TEST(OpcodeTable, SemanticFlagsAgreeWithRxe) {
  const std::set<std::string_view> rwr = {
      "RC_SEND_FIRST", "RC_SEND_ONLY", "RC_SEND_ONLY_WITH_IMMEDIATE", "RC_SEND_ONLY_WITH_INVALIDATE",
      "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "UC_SEND_FIRST", "UC_SEND_ONLY",
      "UC_SEND_ONLY_WITH_IMMEDIATE", "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
      "UD_SEND_ONLY", "UD_SEND_ONLY_WITH_IMMEDIATE"};
  const std::set<std::string_view> comp = {
      "RC_SEND_LAST", "RC_SEND_LAST_WITH_IMMEDIATE", "RC_SEND_ONLY", "RC_SEND_ONLY_WITH_IMMEDIATE",
      "RC_SEND_LAST_WITH_INVALIDATE", "RC_SEND_ONLY_WITH_INVALIDATE", "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
      "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "UC_SEND_LAST", "UC_SEND_LAST_WITH_IMMEDIATE", "UC_SEND_ONLY",
      "UC_SEND_ONLY_WITH_IMMEDIATE", "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
      "UD_SEND_ONLY", "UD_SEND_ONLY_WITH_IMMEDIATE"};
  const std::set<std::string_view> response = {
      "RC_RDMA_READ_RESPONSE_FIRST", "RC_RDMA_READ_RESPONSE_MIDDLE", "RC_RDMA_READ_RESPONSE_LAST",
      "RC_RDMA_READ_RESPONSE_ONLY", "RC_ACKNOWLEDGE", "RC_ATOMIC_ACKNOWLEDGE"};
  for (const OpcodeInfo& r : kOpcodeTable) {
    if (!r.supported) continue;
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.needs_recv_wqe(), rwr.count(r.name) == 1);
    EXPECT_EQ(r.completes_recv_wqe(), comp.count(r.name) == 1);
    EXPECT_EQ(r.is_response(), response.count(r.name) == 1);
    EXPECT_EQ(r.is_request(), response.count(r.name) == 0);
    const std::string name(r.name);
    EXPECT_EQ(r.starts_message(), name.find("_FIRST") != std::string::npos ||
                                      name.find("_ONLY") != std::string::npos ||
                                      name.find("_READ_REQUEST") != std::string::npos ||
                                      name.find("ACKNOWLEDGE") != std::string::npos ||
                                      name.find("COMPARE_SWAP") != std::string::npos ||
                                      name.find("FETCH_ADD") != std::string::npos);
    EXPECT_EQ(r.immediate(), name.find("WITH_IMMEDIATE") != std::string::npos);
    EXPECT_EQ(r.invalidate(), name.find("WITH_INVALIDATE") != std::string::npos);
    EXPECT_EQ(r.is_atomic(), name.find("COMPARE_SWAP") != std::string::npos ||
                                 name.find("FETCH_ADD") != std::string::npos);
    EXPECT_EQ(r.is_send(), name.find("_SEND_") != std::string::npos);
    EXPECT_EQ(r.is_rdma_write(), name.find("_RDMA_WRITE_") != std::string::npos);
    EXPECT_EQ(r.is_rdma_read(), name.find("_RDMA_READ_") != std::string::npos);
  }
}

TEST(OpcodeTable, OnlyLastOrOnlyPacketsMayBeShort) {
  for (const OpcodeInfo& r : kOpcodeTable) {
    const bool first_or_middle = r.position == Position::kFirst || r.position == Position::kMiddle;
    EXPECT_EQ(r.payload_is_full_pmtu(), first_or_middle) << r.name;
  }
}

TEST(OpcodeTable, HeaderSetLengths) {
  EXPECT_EQ(HeaderSet().length(), 0u);
  EXPECT_EQ(HeaderSet().header_length(), 12u);
  const HeaderSet all = ExtHeader::kRdeth | ExtHeader::kDeth | ExtHeader::kFeth | ExtHeader::kReth |
                        ExtHeader::kAtomicEth | ExtHeader::kAeth | ExtHeader::kAtomicAckEth |
                        ExtHeader::kImmDt | ExtHeader::kIeth;
  EXPECT_EQ(all.length(), 4u + 8 + 4 + 16 + 28 + 4 + 8 + 4 + 4);
  EXPECT_EQ(all.offset(ExtHeader::kIeth), 12u + 4 + 8 + 4 + 16 + 28 + 4 + 8 + 4);
  EXPECT_EQ((all - ExtHeader::kRdeth).offset(ExtHeader::kDeth), 12u);
}

}  // namespace
}  // namespace softib::packet
