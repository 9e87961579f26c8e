// The WR opcode x QP type legality table and the requester's packet opcodes, pinned cell by
// cell against what libibverbs/rxe do (rxe_wr_opcode_info[] and next_opcode()).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "packet/wr_opcode.hpp"

namespace softib::packet {
namespace {

using enum QpType;
using enum WrOpcode;

const std::vector<WrOpcode> kAllWr = {kRdmaWrite,       kRdmaWriteWithImm,  kSend,     kSendWithImm,
                                      kRdmaRead,        kAtomicCmpAndSwp,   kAtomicFetchAndAdd,
                                      kLocalInv,        kBindMw,            kSendWithInv};
const std::vector<QpType> kAllQp = {kRc, kUc, kUd, kRd, kXrc};
const std::vector<Position> kAllPositions = {Position::kFirst, Position::kMiddle, Position::kLast, Position::kOnly};

TEST(WrOpcode, ValuesAreThoseOfIbvWrOpcode) {
  // enum ibv_wr_opcode in <infiniband/verbs.h>.
  EXPECT_EQ(static_cast<int>(kRdmaWrite), 0);
  EXPECT_EQ(static_cast<int>(kRdmaWriteWithImm), 1);
  EXPECT_EQ(static_cast<int>(kSend), 2);
  EXPECT_EQ(static_cast<int>(kSendWithImm), 3);
  EXPECT_EQ(static_cast<int>(kRdmaRead), 4);
  EXPECT_EQ(static_cast<int>(kAtomicCmpAndSwp), 5);
  EXPECT_EQ(static_cast<int>(kAtomicFetchAndAdd), 6);
  EXPECT_EQ(static_cast<int>(kLocalInv), 7);
  EXPECT_EQ(static_cast<int>(kBindMw), 8);
  EXPECT_EQ(static_cast<int>(kSendWithInv), 9);
  for (WrOpcode op : kAllWr) EXPECT_EQ(wr_opcode_info(op).opcode, op);
  EXPECT_EQ(to_string(kSendWithImm), "SEND_WITH_IMM");
  EXPECT_EQ(to_string(kRdmaWriteWithImm), "RDMA_WRITE_WITH_IMM");
  EXPECT_EQ(to_string(kBindMw), "BIND_MW");
}

TEST(WrOpcode, LegalityMatrix) {
  // Rows: WR opcode; columns RC UC UD RD XRC. L legal, . illegal, u unsupported.
  const std::map<WrOpcode, std::string> expected = {
      {kSend, "LLLuu"},          {kSendWithImm, "LLLuu"},       {kSendWithInv, "L...u"},
      {kRdmaWrite, "LL.uu"},     {kRdmaWriteWithImm, "LL.uu"},  {kRdmaRead, "L..uu"},
      {kAtomicCmpAndSwp, "L..uu"}, {kAtomicFetchAndAdd, "L..uu"}, {kLocalInv, "L..uu"},
      {kBindMw, "LL.uu"},
  };
  ASSERT_EQ(expected.size(), kAllWr.size());
  for (const auto& [op, cells] : expected) {
    for (size_t i = 0; i < kAllQp.size(); ++i) {
      const WrLegality want = cells[i] == 'L'   ? WrLegality::kLegal
                              : cells[i] == 'u' ? WrLegality::kUnsupported
                                                : WrLegality::kIllegal;
      EXPECT_EQ(wr_legality(kAllQp[i], op), want) << to_string(op) << " on " << to_string(kAllQp[i]);
    }
  }
}

TEST(WrOpcode, RequesterOpcodes) {
  using P = Position;
  // Every (QP type, WR opcode, position) with a packet; every other combination has none.
  const std::map<std::tuple<QpType, WrOpcode, P>, Opcode> expected = {
      {{kRc, kSend, P::kFirst}, Opcode::kRcSendFirst},
      {{kRc, kSend, P::kMiddle}, Opcode::kRcSendMiddle},
      {{kRc, kSend, P::kLast}, Opcode::kRcSendLast},
      {{kRc, kSend, P::kOnly}, Opcode::kRcSendOnly},
      {{kRc, kSendWithImm, P::kFirst}, Opcode::kRcSendFirst},
      {{kRc, kSendWithImm, P::kMiddle}, Opcode::kRcSendMiddle},
      {{kRc, kSendWithImm, P::kLast}, Opcode::kRcSendLastWithImmediate},
      {{kRc, kSendWithImm, P::kOnly}, Opcode::kRcSendOnlyWithImmediate},
      {{kRc, kSendWithInv, P::kFirst}, Opcode::kRcSendFirst},
      {{kRc, kSendWithInv, P::kMiddle}, Opcode::kRcSendMiddle},
      {{kRc, kSendWithInv, P::kLast}, Opcode::kRcSendLastWithInvalidate},
      {{kRc, kSendWithInv, P::kOnly}, Opcode::kRcSendOnlyWithInvalidate},
      {{kRc, kRdmaWrite, P::kFirst}, Opcode::kRcRdmaWriteFirst},
      {{kRc, kRdmaWrite, P::kMiddle}, Opcode::kRcRdmaWriteMiddle},
      {{kRc, kRdmaWrite, P::kLast}, Opcode::kRcRdmaWriteLast},
      {{kRc, kRdmaWrite, P::kOnly}, Opcode::kRcRdmaWriteOnly},
      {{kRc, kRdmaWriteWithImm, P::kFirst}, Opcode::kRcRdmaWriteFirst},
      {{kRc, kRdmaWriteWithImm, P::kMiddle}, Opcode::kRcRdmaWriteMiddle},
      {{kRc, kRdmaWriteWithImm, P::kLast}, Opcode::kRcRdmaWriteLastWithImmediate},
      {{kRc, kRdmaWriteWithImm, P::kOnly}, Opcode::kRcRdmaWriteOnlyWithImmediate},
      {{kRc, kRdmaRead, P::kOnly}, Opcode::kRcRdmaReadRequest},
      {{kRc, kAtomicCmpAndSwp, P::kOnly}, Opcode::kRcCompareSwap},
      {{kRc, kAtomicFetchAndAdd, P::kOnly}, Opcode::kRcFetchAdd},
      {{kUc, kSend, P::kFirst}, Opcode::kUcSendFirst},
      {{kUc, kSend, P::kMiddle}, Opcode::kUcSendMiddle},
      {{kUc, kSend, P::kLast}, Opcode::kUcSendLast},
      {{kUc, kSend, P::kOnly}, Opcode::kUcSendOnly},
      {{kUc, kSendWithImm, P::kFirst}, Opcode::kUcSendFirst},
      {{kUc, kSendWithImm, P::kMiddle}, Opcode::kUcSendMiddle},
      {{kUc, kSendWithImm, P::kLast}, Opcode::kUcSendLastWithImmediate},
      {{kUc, kSendWithImm, P::kOnly}, Opcode::kUcSendOnlyWithImmediate},
      {{kUc, kRdmaWrite, P::kFirst}, Opcode::kUcRdmaWriteFirst},
      {{kUc, kRdmaWrite, P::kMiddle}, Opcode::kUcRdmaWriteMiddle},
      {{kUc, kRdmaWrite, P::kLast}, Opcode::kUcRdmaWriteLast},
      {{kUc, kRdmaWrite, P::kOnly}, Opcode::kUcRdmaWriteOnly},
      {{kUc, kRdmaWriteWithImm, P::kFirst}, Opcode::kUcRdmaWriteFirst},
      {{kUc, kRdmaWriteWithImm, P::kMiddle}, Opcode::kUcRdmaWriteMiddle},
      {{kUc, kRdmaWriteWithImm, P::kLast}, Opcode::kUcRdmaWriteLastWithImmediate},
      {{kUc, kRdmaWriteWithImm, P::kOnly}, Opcode::kUcRdmaWriteOnlyWithImmediate},
      {{kUd, kSend, P::kOnly}, Opcode::kUdSendOnly},
      {{kUd, kSendWithImm, P::kOnly}, Opcode::kUdSendOnlyWithImmediate},
  };
  size_t found = 0;
  for (QpType qp : kAllQp) {
    for (WrOpcode op : kAllWr) {
      for (P p : kAllPositions) {
        const auto got = requester_opcode(qp, op, p);
        const auto it = expected.find({qp, op, p});
        SCOPED_TRACE(std::string(to_string(qp)) + " " + std::string(to_string(op)) + " " +
                     std::string(to_string(p)));
        if (it == expected.end()) {
          EXPECT_FALSE(got.has_value()) << to_string(*got);
        } else {
          ASSERT_TRUE(got.has_value());
          EXPECT_EQ(*got, it->second) << to_string(*got);
          // The packet a requester sends is a request of the QP's transport.
          EXPECT_TRUE(opcode_info(*got).is_request());
          EXPECT_TRUE(opcode_info(*got).supported);
          ++found;
        }
      }
    }
  }
  EXPECT_EQ(found, expected.size());
}

TEST(WrOpcode, LocalOperationsSendNothing) {
  EXPECT_TRUE(wr_opcode_info(kLocalInv).is_local());
  EXPECT_TRUE(wr_opcode_info(kBindMw).is_local());
  EXPECT_FALSE(wr_opcode_info(kSend).is_local());
  EXPECT_EQ(to_string(WrLegality::kUnsupported), "unsupported");
  EXPECT_EQ(to_string(kXrc), "XRC");
  EXPECT_FALSE(transport_of(kXrc).has_value());
  EXPECT_EQ(transport_of(kUd), Transport::kUd);
}

}  // namespace
}  // namespace softib::packet
