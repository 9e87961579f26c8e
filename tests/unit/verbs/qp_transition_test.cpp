// The transition table against a hand copy of the kernel's qp_state_table, and
// modify_is_ok() against ib_modify_qp_is_ok() restated here from that copy: every legal
// transition with exactly its required mask, every required bit dropped, every bit beyond
// the allowed ones added, every illegal pair, CUR_STATE, and random masks.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "unit/verbs/kernel_table.hpp"
#include "verbs/qp_transition.hpp"

namespace softib::verbs {
namespace {

using testing::kernel_mask;
using testing::kernel_mask_bits;
using testing::kernel_state;
using testing::KernelCell;
using testing::kKernelTable;

const std::vector<QpState> kAllStates = {QpState::kReset, QpState::kInit, QpState::kRtr, QpState::kRts,
                                         QpState::kSqd,   QpState::kSqe,  QpState::kError};
const std::vector<QpType> kOurTypes = {QpType::kRc, QpType::kUc, QpType::kUd};

QpType type_named(const std::string& name) {
  if (name == "IB_QPT_RC") return QpType::kRc;
  if (name == "IB_QPT_UC") return QpType::kUc;
  if (name == "IB_QPT_UD") return QpType::kUd;
  ADD_FAILURE() << "no QP type " << name;
  return QpType::kRd;
}

std::string trace(QpState from, QpState to, QpType type) {
  return std::string(to_string(from)) + "->" + std::string(to_string(to)) + " on " +
         std::string(packet::to_string(type));
}

// The kernel's cell for (from, to, type), or nullptr when the pair is not valid.
const KernelCell* kernel_cell(QpState from, QpState to, QpType type) {
  for (const KernelCell& cell : kKernelTable)
    if (kernel_state(cell.cur) == static_cast<int>(from) && kernel_state(cell.next) == static_cast<int>(to) &&
        type_named(cell.type) == type)
      return &cell;
  return nullptr;
}

// ib_modify_qp_is_ok, restated from the kernel source over the hand-copied table.
bool reference_is_ok(QpState cur, QpState next, QpType type, uint32_t mask) {
  const uint32_t kIbQpCurState = kernel_mask("IB_QP_CUR_STATE");
  const uint32_t kIbQpState = kernel_mask("IB_QP_STATE");
  if ((mask & kIbQpCurState) != 0 && cur != QpState::kRtr && cur != QpState::kRts && cur != QpState::kSqd &&
      cur != QpState::kSqe)
    return false;
  const KernelCell* cell = kernel_cell(cur, next, type);
  if (cell == nullptr) return false;
  const uint32_t req = kernel_mask(cell->req_param);
  const uint32_t opt = kernel_mask(cell->opt_param);
  if ((mask & req) != req) return false;
  return (mask & ~(req | opt | kIbQpState)) == 0;
}

TEST(VerbsQpAttrMask, ValuesAreThoseOfTheKernelAndLibibverbs) {
  EXPECT_EQ(attr::kState, kernel_mask("IB_QP_STATE"));
  EXPECT_EQ(attr::kCurState, kernel_mask("IB_QP_CUR_STATE"));
  EXPECT_EQ(attr::kEnSqdAsyncNotify, kernel_mask("IB_QP_EN_SQD_ASYNC_NOTIFY"));
  EXPECT_EQ(attr::kAccessFlags, kernel_mask("IB_QP_ACCESS_FLAGS"));
  EXPECT_EQ(attr::kPkeyIndex, kernel_mask("IB_QP_PKEY_INDEX"));
  EXPECT_EQ(attr::kPort, kernel_mask("IB_QP_PORT"));
  EXPECT_EQ(attr::kQkey, kernel_mask("IB_QP_QKEY"));
  EXPECT_EQ(attr::kAv, kernel_mask("IB_QP_AV"));
  EXPECT_EQ(attr::kPathMtu, kernel_mask("IB_QP_PATH_MTU"));
  EXPECT_EQ(attr::kTimeout, kernel_mask("IB_QP_TIMEOUT"));
  EXPECT_EQ(attr::kRetryCnt, kernel_mask("IB_QP_RETRY_CNT"));
  EXPECT_EQ(attr::kRnrRetry, kernel_mask("IB_QP_RNR_RETRY"));
  EXPECT_EQ(attr::kRqPsn, kernel_mask("IB_QP_RQ_PSN"));
  EXPECT_EQ(attr::kMaxQpRdAtomic, kernel_mask("IB_QP_MAX_QP_RD_ATOMIC"));
  EXPECT_EQ(attr::kAltPath, kernel_mask("IB_QP_ALT_PATH"));
  EXPECT_EQ(attr::kMinRnrTimer, kernel_mask("IB_QP_MIN_RNR_TIMER"));
  EXPECT_EQ(attr::kSqPsn, kernel_mask("IB_QP_SQ_PSN"));
  EXPECT_EQ(attr::kMaxDestRdAtomic, kernel_mask("IB_QP_MAX_DEST_RD_ATOMIC"));
  EXPECT_EQ(attr::kPathMigState, kernel_mask("IB_QP_PATH_MIG_STATE"));
  EXPECT_EQ(attr::kCap, kernel_mask("IB_QP_CAP"));
  EXPECT_EQ(attr::kDestQpn, kernel_mask("IB_QP_DEST_QPN"));
  EXPECT_EQ(attr::kRateLimit, kernel_mask("IB_QP_RATE_LIMIT"));
}

TEST(VerbsQpState, ValuesAndNames) {
  for (QpState s : kAllStates) {
    const std::string kernel_name = "IB_QPS_" + std::string(to_string(s));
    EXPECT_EQ(kernel_state(kernel_name), static_cast<int>(s)) << kernel_name;
  }
  EXPECT_EQ(to_string(QpState::kError), "ERR");
  EXPECT_EQ(to_string(static_cast<QpState>(7)), "INVALID");
}

TEST(VerbsQpTransitionTable, EveryKernelCellIsARowWithTheSameMasks) {
  for (const KernelCell& cell : kKernelTable) {
    const auto from = static_cast<QpState>(kernel_state(cell.cur));
    const auto to = static_cast<QpState>(kernel_state(cell.next));
    const QpType type = type_named(cell.type);
    SCOPED_TRACE(trace(from, to, type));
    const TransitionRule* rule = find_transition(from, to);
    ASSERT_NE(rule, nullptr);
    EXPECT_EQ(rule->from, from);
    EXPECT_EQ(rule->to, to);
    const std::optional<AttrMasks> masks = rule->masks(type);
    ASSERT_TRUE(masks.has_value());
    EXPECT_EQ(describe_mask(masks->required), describe_mask(kernel_mask(cell.req_param)));
    EXPECT_EQ(describe_mask(masks->optional), describe_mask(kernel_mask(cell.opt_param)));
  }
}

TEST(VerbsQpTransitionTable, EveryRowIsAKernelCell) {
  std::set<std::tuple<int, int, int>> cells;
  for (const KernelCell& cell : kKernelTable)
    EXPECT_TRUE(cells.emplace(kernel_state(cell.cur), kernel_state(cell.next),
                              static_cast<int>(type_named(cell.type)))
                    .second)
        << "the hand copy lists a cell twice";
  EXPECT_EQ(kKernelTable.size(), kTransitionTable.size() * kOurTypes.size());
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes)
      EXPECT_TRUE(cells.contains({static_cast<int>(rule.from), static_cast<int>(rule.to), static_cast<int>(type)}))
          << trace(rule.from, rule.to, type);
}

TEST(VerbsQpTransitionTable, LegalPairsAreExactlyTheKernels) {
  // RESET->RESET/INIT; INIT->RESET/INIT/RTR/ERR; RTR->RESET/RTS/ERR; RTS->RESET/RTS/SQD/ERR;
  // SQD->RESET/RTS/SQD/ERR; SQE->RESET/RTS/ERR; ERR->RESET/ERR.
  const std::set<std::pair<std::string, std::string>> legal = {
      {"RESET", "RESET"}, {"RESET", "INIT"}, {"INIT", "RESET"}, {"INIT", "INIT"}, {"INIT", "RTR"},
      {"INIT", "ERR"},    {"RTR", "RESET"},  {"RTR", "RTS"},    {"RTR", "ERR"},   {"RTS", "RESET"},
      {"RTS", "RTS"},     {"RTS", "SQD"},    {"RTS", "ERR"},    {"SQD", "RESET"}, {"SQD", "RTS"},
      {"SQD", "SQD"},     {"SQD", "ERR"},    {"SQE", "RESET"},  {"SQE", "RTS"},   {"SQE", "ERR"},
      {"ERR", "RESET"},   {"ERR", "ERR"},
  };
  for (QpState from : kAllStates)
    for (QpState to : kAllStates) {
      const bool expected = legal.contains({std::string(to_string(from)), std::string(to_string(to))});
      EXPECT_EQ(find_transition(from, to) != nullptr, expected) << to_string(from) << "->" << to_string(to);
      EXPECT_EQ(kernel_cell(from, to, QpType::kRc) != nullptr, expected) << "hand copy";
    }
  EXPECT_EQ(find_transition(static_cast<QpState>(7), QpState::kReset), nullptr);
}

TEST(VerbsModifyIsOk, EveryLegalTransitionPassesWithExactlyItsRequiredMask) {
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes) {
      SCOPED_TRACE(trace(rule.from, rule.to, type));
      const AttrMasks m = *rule.masks(type);
      EXPECT_TRUE(modify_is_ok(rule.from, rule.to, type, m.required));
      EXPECT_TRUE(modify_is_ok(rule.from, rule.to, type, m.required | attr::kState));
      EXPECT_TRUE(modify_is_ok(rule.from, rule.to, type, m.required | m.optional | attr::kState));
    }
}

TEST(VerbsModifyIsOk, EachOptionalBitAlonePasses) {
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes) {
      const AttrMasks m = *rule.masks(type);
      for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        if ((m.optional & bit) == 0) continue;
        EXPECT_TRUE(modify_is_ok(rule.from, rule.to, type, attr::kState | m.required | bit))
            << trace(rule.from, rule.to, type) << " + " << attr_name(bit);
      }
    }
}

TEST(VerbsModifyIsOk, DroppingAnyRequiredBitFails) {
  int dropped = 0;
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes) {
      const AttrMasks m = *rule.masks(type);
      for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        if ((m.required & bit) == 0) continue;
        ++dropped;
        const uint32_t mask = (m.required | m.optional | attr::kState) & ~bit;
        EXPECT_FALSE(modify_is_ok(rule.from, rule.to, type, mask)) << trace(rule.from, rule.to, type) << " - "
                                                                   << attr_name(bit);
      }
    }
  // RC 3 + 6 + 5, UC 3 + 4 + 1, UD 3 + 0 + 1 required bits in RESET->INIT, INIT->RTR, RTR->RTS.
  EXPECT_EQ(dropped, 26);
}

TEST(VerbsModifyIsOk, AddingAnyBitOutsideTheAllowedFails) {
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes) {
      const AttrMasks m = *rule.masks(type);
      for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        if ((m.allowed() & bit) != 0) continue;
        EXPECT_FALSE(modify_is_ok(rule.from, rule.to, type, m.required | attr::kState | bit))
            << trace(rule.from, rule.to, type) << " + " << describe_mask(bit);
      }
    }
}

TEST(VerbsModifyIsOk, IllegalPairsFailWhateverTheMask) {
  std::vector<uint32_t> masks = {0, attr::kState, 0xFFFFFFFF, 0x1FFFFF};
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes) masks.push_back(rule.masks(type)->required | rule.masks(type)->optional);
  int illegal = 0;
  for (QpState from : kAllStates)
    for (QpState to : kAllStates) {
      if (find_transition(from, to) != nullptr) continue;
      ++illegal;
      for (QpType type : kOurTypes)
        for (uint32_t mask : masks)
          EXPECT_FALSE(modify_is_ok(from, to, type, mask)) << trace(from, to, type) << " " << describe_mask(mask);
    }
  EXPECT_EQ(illegal, 49 - 22);
}

TEST(VerbsModifyIsOk, CurStateOnlyOutOfRtrRtsSqdSqeAndOnlyWhereListed) {
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : kOurTypes) {
      const AttrMasks m = *rule.masks(type);
      const bool listed = (m.optional & attr::kCurState) != 0;
      EXPECT_EQ(modify_is_ok(rule.from, rule.to, type, m.required | attr::kState | attr::kCurState), listed)
          << trace(rule.from, rule.to, type);
      if (listed) {
        EXPECT_TRUE(cur_state_allowed_from(rule.from));
      }
    }
  // Out of RTR, RTS, SQD, SQE only; even where nothing else would object (RESET -> INIT).
  EXPECT_FALSE(modify_is_ok(QpState::kReset, QpState::kInit, QpType::kUd,
                            attr::kState | attr::kCurState | attr::kPkeyIndex | attr::kPort | attr::kQkey));
  EXPECT_TRUE(modify_is_ok(QpState::kSqe, QpState::kRts, QpType::kUd, attr::kState | attr::kCurState));
  EXPECT_FALSE(modify_is_ok(QpState::kSqe, QpState::kRts, QpType::kRc, attr::kState | attr::kCurState));
  EXPECT_FALSE(modify_is_ok(QpState::kRts, QpState::kSqd, QpType::kRc, attr::kState | attr::kCurState));
}

TEST(VerbsModifyIsOk, RdXrcAndUnknownStatesAreNeverOk) {
  for (const TransitionRule& rule : kTransitionTable)
    for (QpType type : {QpType::kRd, QpType::kXrc}) {
      EXPECT_FALSE(rule.masks(type).has_value());
      EXPECT_FALSE(modify_is_ok(rule.from, rule.to, type, attr::kState));
      EXPECT_FALSE(modify_is_ok(rule.from, rule.to, type, rule.rc.required | rule.rc.optional | attr::kState));
    }
  EXPECT_FALSE(modify_is_ok(static_cast<QpState>(7), QpState::kReset, QpType::kRc, attr::kState));
  EXPECT_FALSE(modify_is_ok(QpState::kInit, static_cast<QpState>(9), QpType::kRc, attr::kState));
}

TEST(VerbsModifyIsOk, AgreesWithTheKernelOnRandomMasks) {
  // Masks drawn around each legal transition's own bits (so that many pass) and at random.
  std::mt19937 rng(20240505);
  std::uniform_int_distribution<uint32_t> any;
  int passed = 0;
  for (int i = 0; i < 40000; ++i) {
    const QpState from = kAllStates[rng() % kAllStates.size()];
    const QpState to = kAllStates[rng() % kAllStates.size()];
    const QpType type = kOurTypes[rng() % kOurTypes.size()];
    uint32_t mask = any(rng);
    if (const TransitionRule* rule = find_transition(from, to); rule != nullptr && (i % 2) == 0) {
      const AttrMasks m = *rule->masks(type);
      mask = m.required | (mask & (m.optional | attr::kState));
      if (i % 8 == 0) mask &= any(rng);           // sometimes drop required bits
      if (i % 16 == 2) mask |= 1u << (rng() % 32);  // sometimes add one bit
    }
    const bool expected = reference_is_ok(from, to, type, mask);
    passed += expected;
    ASSERT_EQ(modify_is_ok(from, to, type, mask), expected) << trace(from, to, type) << " " << describe_mask(mask);
  }
  EXPECT_GT(passed, 5000);
}

TEST(VerbsDescribeMask, NamesInBitOrder) {
  EXPECT_EQ(describe_mask(0), "none");
  EXPECT_EQ(describe_mask(attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags),
            "STATE|ACCESS_FLAGS|PKEY_INDEX|PORT");
  EXPECT_EQ(describe_mask(attr::kRateLimit | attr::kDestQpn), "DEST_QPN|RATE_LIMIT");
  EXPECT_EQ(describe_mask(1u << 21 | 1u << 31), "0x200000|0x80000000");
  for (const auto& [kernel_name, bit] : kernel_mask_bits())
    EXPECT_EQ("IB_QP_" + describe_mask(bit), kernel_name);
  EXPECT_EQ(attr_name(attr::kMaxDestRdAtomic), "MAX_DEST_RD_ATOMIC");
  EXPECT_EQ(attr_name(1u << 22), "");
}

}  // namespace
}  // namespace softib::verbs
