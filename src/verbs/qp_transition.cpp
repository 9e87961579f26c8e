// Compile-time checks of the transition table (qp_transition.hpp) against the IBA's
// structure and a few rows pinned to the kernel's qp_state_table, plus the mask names.
#include "verbs/qp_transition.hpp"

#include <fmt/format.h>

namespace softib::verbs {
namespace {

using namespace attr;
using enum QpState;
using enum QpType;

constexpr int rank(QpState s) { return static_cast<int>(s); }

// Sorted by (from, to), hence no pair twice; every state value in range.
constexpr bool table_is_sorted_and_unique() {
  for (size_t i = 0; i < kTransitionTable.size(); ++i) {
    const TransitionRule& r = kTransitionTable[i];
    if (rank(r.from) >= kQpStateCount || rank(r.to) >= kQpStateCount) return false;
    if (i == 0) continue;
    const TransitionRule& p = kTransitionTable[i - 1];
    if (rank(p.from) * kQpStateCount + rank(p.to) >= rank(r.from) * kQpStateCount + rank(r.to))
      return false;
  }
  return true;
}
static_assert(table_is_sorted_and_unique());
static_assert(kTransitionTable.size() == 22, "the kernel's qp_state_table has 22 valid cells");

// Attributes only a connected service has (UD never names them) and attributes only the
// reliable service has (UC never names them either: no ACKs, no RDMA READ or atomics).
constexpr uint32_t kConnectedOnly = kAv | kPathMtu | kDestQpn | kRqPsn | kAccessFlags | kAltPath |
                                    kPathMigState;
constexpr uint32_t kReliableOnly = kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic |
                                   kMaxDestRdAtomic | kMinRnrTimer;

constexpr bool masks_are_consistent(const TransitionRule& r, QpType type) {
  const AttrMasks m = *r.masks(type);
  // A bit is required or optional, not both; STATE is in neither (the caller's business);
  // nothing outside the standard bits (RATE_LIMIT is for raw packet QPs only).
  if ((m.required & m.optional) != 0) return false;
  if (((m.required | m.optional) & kState) != 0) return false;
  if (((m.required | m.optional) & ~kStandardAttrBits) != 0) return false;
  // CUR_STATE: optional only, and only out of RTR, RTS, SQD, SQE.
  if ((m.required & kCurState) != 0) return false;
  if ((m.optional & kCurState) != 0 && !cur_state_allowed_from(r.from)) return false;
  // No transition resizes a QP: CAP is in no row (so IBV_DEVICE_RESIZE_MAX_WR is not claimed).
  if (((m.required | m.optional) & kCap) != 0) return false;
  // Q_Key is a UD attribute; the connected services never name it.
  if (type != kUd && ((m.required | m.optional) & kQkey) != 0) return false;
  if (type == kUd && ((m.required | m.optional) & (kConnectedOnly | kReliableOnly)) != 0) return false;
  if (type == kUc && ((m.required | m.optional) & kReliableOnly) != 0) return false;
  // Going to RESET or ERR carries nothing but STATE.
  if ((r.to == kReset || r.to == kError) && (m.required | m.optional) != 0) return false;
  // Only the forward steps RESET->INIT, INIT->RTR and RTR->RTS require anything.
  const bool forward = (r.from == kReset && r.to == kInit) || (r.from == kInit && r.to == kRtr) ||
                       (r.from == kRtr && r.to == kRts);
  if (!forward && m.required != 0) return false;
  return true;
}

constexpr bool every_row_is_consistent() {
  for (const TransitionRule& r : kTransitionTable)
    for (QpType t : {kRc, kUc, kUd})
      if (!masks_are_consistent(r, t)) return false;
  return true;
}
static_assert(every_row_is_consistent());

// Every state may go to RESET; every state but RESET to ERR (IBA 10.3.1, as the kernel has it).
constexpr bool reset_and_error_reachable() {
  for (int s = 0; s < kQpStateCount; ++s) {
    const auto from = static_cast<QpState>(s);
    if (transition_index(from, kReset) < 0) return false;
    if ((transition_index(from, kError) >= 0) == (from == kReset)) return false;
  }
  return true;
}
static_assert(reset_and_error_reachable());

// RD and XRC are never legal.
static_assert(!modify_is_ok(kReset, kInit, kRd, kState | kPkeyIndex | kPort | kAccessFlags));
static_assert(!modify_is_ok(kReset, kInit, kXrc, kState | kPkeyIndex | kPort | kAccessFlags));

// Pinned rows (drivers/infiniband/core/verbs.c, qp_state_table).
static_assert(find_transition(kReset, kInit)->rc == AttrMasks{kPkeyIndex | kPort | kAccessFlags, 0});
static_assert(find_transition(kReset, kInit)->ud == AttrMasks{kPkeyIndex | kPort | kQkey, 0});
static_assert(find_transition(kInit, kRtr)->rc.required ==
              (kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer));
static_assert(find_transition(kInit, kRtr)->uc.required == (kAv | kPathMtu | kDestQpn | kRqPsn));
static_assert(find_transition(kInit, kRtr)->ud == AttrMasks{0, kPkeyIndex | kQkey});
static_assert(find_transition(kRtr, kRts)->rc.required ==
              (kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic));
static_assert(find_transition(kRtr, kRts)->ud == AttrMasks{kSqPsn, kCurState | kQkey});
static_assert(find_transition(kSqe, kRts)->rc == AttrMasks{});
static_assert(find_transition(kSqd, kSqd)->uc.optional == (kAv | kAltPath | kAccessFlags | kPkeyIndex | kPathMigState));
static_assert(transition_index(kReset, kError) < 0);
static_assert(transition_index(kRtr, kRtr) < 0);
static_assert(transition_index(kRts, kSqe) < 0);
static_assert(transition_index(kRts, kInit) < 0);

// ibv_rc_pingpong's and ibv_ud_pingpong's masks (libibverbs/examples in rdma-core).
static_assert(modify_is_ok(kReset, kInit, kRc, kState | kPkeyIndex | kPort | kAccessFlags));
static_assert(modify_is_ok(kInit, kRtr, kRc,
                           kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer));
static_assert(modify_is_ok(kRtr, kRts, kRc, kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic));
static_assert(modify_is_ok(kInit, kRtr, kUd, kState));
static_assert(!modify_is_ok(kInit, kRtr, kUd, kState | kAv));
static_assert(!modify_is_ok(kReset, kInit, kRc, kState | kCurState | kPkeyIndex | kPort | kAccessFlags));
static_assert(modify_is_ok(kRts, kRts, kRc, kCurState | kMinRnrTimer));

// The mask names, indexed by bit (enum ibv_qp_attr_mask; 21-24 are the kernel's reserved bits).
constexpr std::array<std::string_view, 32> kAttrNames = {
    "STATE",        "CUR_STATE",     "EN_SQD_ASYNC_NOTIFY", "ACCESS_FLAGS",
    "PKEY_INDEX",   "PORT",          "QKEY",                "AV",
    "PATH_MTU",     "TIMEOUT",       "RETRY_CNT",           "RNR_RETRY",
    "RQ_PSN",       "MAX_QP_RD_ATOMIC", "ALT_PATH",         "MIN_RNR_TIMER",
    "SQ_PSN",       "MAX_DEST_RD_ATOMIC", "PATH_MIG_STATE", "CAP",
    "DEST_QPN",     "",              "",                    "",
    "",             "RATE_LIMIT",    "",                    "",
    "",             "",              "",                    "",
};
static_assert(kAttrNames[4] == "PKEY_INDEX" && kAttrNames[13] == "MAX_QP_RD_ATOMIC" &&
              kAttrNames[17] == "MAX_DEST_RD_ATOMIC" && kAttrNames[20] == "DEST_QPN" &&
              kAttrNames[25] == "RATE_LIMIT");
static_assert(kDestQpn == 1u << 20 && kRateLimit == 1u << 25 && kStandardAttrBits == 0x1FFFFF);

}  // namespace

std::string_view attr_name(uint32_t bit) {
  SOFTIB_ASSERT(bit != 0 && (bit & (bit - 1)) == 0);
  for (size_t i = 0; i < kAttrNames.size(); ++i)
    if (bit == 1u << i) return kAttrNames[i];
  return {};
}

std::string describe_mask(uint32_t mask) {
  if (mask == 0) return "none";
  std::string out;
  for (size_t i = 0; i < 32; ++i) {
    const uint32_t bit = 1u << i;
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out += '|';
    const std::string_view name = kAttrNames[i];
    if (name.empty())
      out += fmt::format("{:#x}", bit);
    else
      out += name;
  }
  return out;
}

}  // namespace softib::verbs
