// The QP state machine's legal Modify QP transitions (IBA 10.3.1 and the Modify QP verb,
// 11.2.5), with the attributes each one requires and those it allows, per QP type: one
// constexpr row per legal (current state, next state) pair.
//
// The facts are the Linux kernel's qp_state_table[][] and ib_modify_qp_is_ok() in
// drivers/infiniband/core/verbs.c, which every kernel driver (rxe, mlx4, mlx5, ...) calls on
// each ibv_modify_qp(), so this is what libibverbs programs see on Linux. Where the kernel and
// a first reading of the IBA differ, the kernel wins:
//   - RESET -> ERR is not legal (the kernel has no such row; "any state to Error" starts at
//     INIT), nor are RTR -> RTR, RTS -> SQE (only the HCA moves a QP there) and any return to
//     INIT or RTR;
//   - SQE -> RTS is legal on RC with no attribute at all (the kernel lists no RC masks there;
//     an RC QP never enters SQE, IBA 10.3.1: send errors move it to ERR);
//   - CUR_STATE is only ever optional, and only on transitions out of RTR, RTS, SQD and SQE.
//
//   from   to     RC (required | optional)          UC                      UD
//   any    RESET  -  (from every state)             -                       -
//   any    ERR    -  (from every state but RESET)   -                       -
//   RESET  INIT   PKEY_INDEX PORT ACCESS_FLAGS      same as RC              PKEY_INDEX PORT QKEY
//   INIT   INIT   | PKEY_INDEX PORT ACCESS_FLAGS    same as RC              | PKEY_INDEX PORT QKEY
//   INIT   RTR    AV PATH_MTU DEST_QPN RQ_PSN       AV PATH_MTU DEST_QPN    | PKEY_INDEX QKEY
//                 MAX_DEST_RD_ATOMIC MIN_RNR_TIMER  RQ_PSN
//                 | ALT_PATH ACCESS_FLAGS           | ALT_PATH ACCESS_FLAGS
//                   PKEY_INDEX                        PKEY_INDEX
//   RTR    RTS    TIMEOUT RETRY_CNT RNR_RETRY       SQ_PSN | CUR_STATE       SQ_PSN | CUR_STATE
//                 SQ_PSN MAX_QP_RD_ATOMIC           ALT_PATH ACCESS_FLAGS   QKEY
//                 | CUR_STATE ALT_PATH ACCESS_FLAGS PATH_MIG_STATE
//                   MIN_RNR_TIMER PATH_MIG_STATE
//   RTS    RTS    | CUR_STATE ACCESS_FLAGS ALT_PATH | CUR_STATE ACCESS_FLAGS | CUR_STATE QKEY
//                   PATH_MIG_STATE MIN_RNR_TIMER    ALT_PATH PATH_MIG_STATE
//   RTS    SQD    | EN_SQD_ASYNC_NOTIFY             same                    same
//   SQD    RTS    as RTS -> RTS                     as RTS -> RTS           as RTS -> RTS
//   SQD    SQD    | PORT AV TIMEOUT RETRY_CNT       | AV ALT_PATH           | PKEY_INDEX QKEY
//                   RNR_RETRY MAX_QP_RD_ATOMIC        ACCESS_FLAGS
//                   MAX_DEST_RD_ATOMIC ALT_PATH       PKEY_INDEX
//                   ACCESS_FLAGS PKEY_INDEX           PATH_MIG_STATE
//                   MIN_RNR_TIMER PATH_MIG_STATE
//   SQE    RTS    -                                 | CUR_STATE ACCESS_FLAGS | CUR_STATE QKEY
//
// STATE itself is never listed: it is allowed everywhere and required nowhere, because the
// caller derives the next state from it (absent, the next state is the current one). RD and
// XRC have no columns: softib does not implement them, and every check on them fails.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "verbs/qp_attr.hpp"

namespace softib::verbs {

// The attribute masks of one transition on one QP type.
struct AttrMasks {
  uint32_t required = 0;
  uint32_t optional = 0;

  // What a modify may carry: STATE is always allowed (ib_modify_qp_is_ok ignores it).
  constexpr uint32_t allowed() const { return required | optional | attr::kState; }
  friend constexpr bool operator==(const AttrMasks&, const AttrMasks&) = default;
};

// One legal Modify QP transition: a valid cell of the kernel's qp_state_table.
struct TransitionRule {
  QpState from;
  QpState to;
  AttrMasks rc;
  AttrMasks uc;
  AttrMasks ud;

  // The masks for a QP type; nullopt for RD and XRC (not implemented: never legal).
  constexpr std::optional<AttrMasks> masks(QpType type) const {
    switch (type) {
      case QpType::kRc: return rc;
      case QpType::kUc: return uc;
      case QpType::kUd: return ud;
      case QpType::kRd:
      case QpType::kXrc: break;
    }
    return std::nullopt;
  }
};

namespace transition_detail {

using namespace ::softib::verbs::attr;
using enum QpState;

// A transition that carries nothing but STATE (every move to RESET or ERR).
inline constexpr AttrMasks kNothing{};

// clang-format off
inline constexpr auto kTable = std::to_array<TransitionRule>({
  {kReset, kReset, kNothing, kNothing, kNothing},
  {kReset, kInit,
   /* RC */ {kPkeyIndex | kPort | kAccessFlags, 0},
   /* UC */ {kPkeyIndex | kPort | kAccessFlags, 0},
   /* UD */ {kPkeyIndex | kPort | kQkey, 0}},

  {kInit, kReset, kNothing, kNothing, kNothing},
  {kInit, kInit,
   /* RC */ {0, kPkeyIndex | kPort | kAccessFlags},
   /* UC */ {0, kPkeyIndex | kPort | kAccessFlags},
   /* UD */ {0, kPkeyIndex | kPort | kQkey}},
  {kInit, kRtr,
   /* RC */ {kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
             kAltPath | kAccessFlags | kPkeyIndex},
   /* UC */ {kAv | kPathMtu | kDestQpn | kRqPsn,
             kAltPath | kAccessFlags | kPkeyIndex},
   /* UD */ {0, kPkeyIndex | kQkey}},
  {kInit, kError, kNothing, kNothing, kNothing},

  {kRtr, kReset, kNothing, kNothing, kNothing},
  {kRtr, kRts,
   /* RC */ {kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic,
             kCurState | kAltPath | kAccessFlags | kMinRnrTimer | kPathMigState},
   /* UC */ {kSqPsn, kCurState | kAltPath | kAccessFlags | kPathMigState},
   /* UD */ {kSqPsn, kCurState | kQkey}},
  {kRtr, kError, kNothing, kNothing, kNothing},

  {kRts, kReset, kNothing, kNothing, kNothing},
  {kRts, kRts,
   /* RC */ {0, kCurState | kAccessFlags | kAltPath | kPathMigState | kMinRnrTimer},
   /* UC */ {0, kCurState | kAccessFlags | kAltPath | kPathMigState},
   /* UD */ {0, kCurState | kQkey}},
  {kRts, kSqd,
   /* RC */ {0, kEnSqdAsyncNotify},
   /* UC */ {0, kEnSqdAsyncNotify},
   /* UD */ {0, kEnSqdAsyncNotify}},
  {kRts, kError, kNothing, kNothing, kNothing},

  {kSqd, kReset, kNothing, kNothing, kNothing},
  {kSqd, kRts,
   /* RC */ {0, kCurState | kAltPath | kAccessFlags | kMinRnrTimer | kPathMigState},
   /* UC */ {0, kCurState | kAltPath | kAccessFlags | kPathMigState},
   /* UD */ {0, kCurState | kQkey}},
  {kSqd, kSqd,
   /* RC */ {0, kPort | kAv | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic |
                kMaxDestRdAtomic | kAltPath | kAccessFlags | kPkeyIndex | kMinRnrTimer |
                kPathMigState},
   /* UC */ {0, kAv | kAltPath | kAccessFlags | kPkeyIndex | kPathMigState},
   /* UD */ {0, kPkeyIndex | kQkey}},
  {kSqd, kError, kNothing, kNothing, kNothing},

  {kSqe, kReset, kNothing, kNothing, kNothing},
  {kSqe, kRts,
   /* RC */ kNothing,  // the kernel lists nothing for RC: RC QPs do not enter SQE
   /* UC */ {0, kCurState | kAccessFlags},
   /* UD */ {0, kCurState | kQkey}},
  {kSqe, kError, kNothing, kNothing, kNothing},

  {kError, kReset, kNothing, kNothing, kNothing},
  {kError, kError, kNothing, kNothing, kNothing},
});
// clang-format on

}  // namespace transition_detail

inline constexpr const auto& kTransitionTable = transition_detail::kTable;

// The row of a transition, or nullptr when (cur, next) is not a legal transition (including
// values outside enum QpState).
// The index of the row, or -1. (Constant expressions compare indices, not pointers: g++ 12
// with -fsanitize=address refuses to compare a pointer into the table with nullptr there.)
constexpr int transition_index(QpState cur, QpState next) {
  for (size_t i = 0; i < kTransitionTable.size(); ++i)
    if (kTransitionTable[i].from == cur && kTransitionTable[i].to == next) return static_cast<int>(i);
  return -1;
}
constexpr const TransitionRule* find_transition(QpState cur, QpState next) {
  const int i = transition_index(cur, next);
  return i < 0 ? nullptr : &kTransitionTable[static_cast<size_t>(i)];
}

// The states from which a modify may name CUR_STATE at all (ib_modify_qp_is_ok's first test).
constexpr bool cur_state_allowed_from(QpState cur) {
  return cur == QpState::kRtr || cur == QpState::kRts || cur == QpState::kSqd || cur == QpState::kSqe;
}

// Exactly ib_modify_qp_is_ok(cur, next, type, mask): the transition is legal and `mask`
// carries every required attribute and nothing beyond required | optional | STATE.
// CUR_STATE only from RTR, RTS, SQD or SQE (and only where the row lists it). STATE is neither
// required nor checked against `next`: the caller sets next = cur when the mask has no STATE
// (check_modify() in qp_check.hpp does). RD and XRC: always false.
constexpr bool modify_is_ok(QpState cur, QpState next, QpType type, uint32_t mask) {
  if ((mask & attr::kCurState) != 0 && !cur_state_allowed_from(cur)) return false;
  const int i = transition_index(cur, next);
  if (i < 0) return false;
  const std::optional<AttrMasks> m = kTransitionTable[static_cast<size_t>(i)].masks(type);
  if (!m) return false;
  if ((mask & m->required) != m->required) return false;
  return (mask & ~m->allowed()) == 0;
}

// The mask bits libibverbs defines (enum ibv_qp_attr_mask up to IBV_QP_DEST_QPN, which is
// also IB_QP_ATTR_STANDARD_BITS in the kernel), and RATE_LIMIT (bit 25, which rxe refuses).
inline constexpr uint32_t kStandardAttrBits = (attr::kDestQpn << 1) - 1;

// The name of one mask bit as libibverbs spells it without IBV_QP_ ("PKEY_INDEX"); empty for
// a bit libibverbs does not name (21-24, 26-31). REQUIRES: bit is a single bit.
std::string_view attr_name(uint32_t bit);

// "STATE|ACCESS_FLAGS|PKEY_INDEX|PORT": the bits of `mask` in bit order, unnamed bits as hex
// ("0x200000"), "none" for 0. For error messages and logs.
std::string describe_mask(uint32_t mask);

}  // namespace softib::verbs
