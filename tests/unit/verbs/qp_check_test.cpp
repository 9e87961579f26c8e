// check_modify and check_create: the sequences rdma-core's example programs use pass, and
// every mask and value rule fails with the errno Linux returns and a message naming the
// transition, the field and the rule.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "verbs/caps.hpp"
#include "verbs/qp_check.hpp"
#include "verbs/qp_transition.hpp"

namespace softib::verbs {
namespace {

using namespace attr;
using enum QpState;

const DeviceCaps kCaps = default_caps();
const PortLimits kPortLimits = {.phys_port_cnt = 1,
                          .max_mtu = Mtu::k4096,
                          .active_mtu = Mtu::k1024,
                          .pkey_table_len = 64,
                          .gid_table_len = 16};

// The attributes ibv_rc_pingpong sets (libibverbs/examples/rc_pingpong.c), all at once: each
// modify names the ones it carries in its mask.
QpAttr pingpong_attr() {
  QpAttr a;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = 0;
  a.qkey = QKey(0x11111111);
  a.path_mtu = Mtu::k1024;
  a.dest_qp_num = Qpn(0x000012);
  a.rq_psn = Psn(0x123456);
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = false;
  a.ah_attr.dlid = Lid(2);
  a.ah_attr.sl = 0;
  a.ah_attr.src_path_bits = 0;
  a.ah_attr.port_num = 1;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = Psn(0x654321);
  a.max_rd_atomic = 1;
  return a;
}

// One modify: the attributes with qp_state set to `to`.
Status modify(QpAttr a, QpState to, uint32_t mask, QpState cur, QpType type, const PortLimits& port = kPortLimits) {
  a.qp_state = to;
  return check_modify(a, mask, cur, type, kCaps, port);
}

void expect_einval(const Status& s, const std::string& message) {
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.to_string();
  EXPECT_EQ(s.to_errno(), EINVAL);
  EXPECT_EQ(s.message(), message);
}

void expect_einval_naming(const Status& s, const std::string& part) {
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.to_string();
  EXPECT_EQ(s.to_errno(), EINVAL);
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

// --- the rdma-core example programs' sequences -------------------------------------------

TEST(VerbsCheckModify, RcPingpongSequence) {
  const QpAttr a = pingpong_attr();
  EXPECT_TRUE(modify(a, kInit, kState | kPkeyIndex | kPort | kAccessFlags, kReset, QpType::kRc).ok());
  EXPECT_TRUE(
      modify(a, kRtr, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer, kInit, QpType::kRc)
          .ok());
  EXPECT_TRUE(
      modify(a, kRts, kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic, kRtr, QpType::kRc).ok());
  // ... and on: drain, resume, fail, reset (ibv_srq_pingpong and xsrq use the same RC masks).
  EXPECT_TRUE(modify(a, kSqd, kState, kRts, QpType::kRc).ok());
  EXPECT_TRUE(modify(a, kRts, kState, kSqd, QpType::kRc).ok());
  EXPECT_TRUE(modify(a, kError, kState, kRts, QpType::kRc).ok());
  EXPECT_TRUE(modify(a, kReset, kState, kError, QpType::kRc).ok());
}

TEST(VerbsCheckModify, RcPingpongWithAGlobalRoute) {
  QpAttr a = pingpong_attr();
  a.ah_attr.is_global = true;
  a.ah_attr.grh.sgid_index = 3;  // ibv_rc_pingpong -g 3
  a.ah_attr.grh.hop_limit = 1;
  EXPECT_TRUE(
      modify(a, kRtr, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer, kInit, QpType::kRc)
          .ok());
}

TEST(VerbsCheckModify, UcPingpongSequence) {
  const QpAttr a = pingpong_attr();
  EXPECT_TRUE(modify(a, kInit, kState | kPkeyIndex | kPort | kAccessFlags, kReset, QpType::kUc).ok());
  EXPECT_TRUE(modify(a, kRtr, kState | kAv | kPathMtu | kDestQpn | kRqPsn, kInit, QpType::kUc).ok());
  EXPECT_TRUE(modify(a, kRts, kState | kSqPsn, kRtr, QpType::kUc).ok());
}

TEST(VerbsCheckModify, UdPingpongSequence) {
  const QpAttr a = pingpong_attr();
  EXPECT_TRUE(modify(a, kInit, kState | kPkeyIndex | kPort | kQkey, kReset, QpType::kUd).ok());
  EXPECT_TRUE(modify(a, kRtr, kState, kInit, QpType::kUd).ok());
  EXPECT_TRUE(modify(a, kRts, kState | kSqPsn, kRtr, QpType::kUd).ok());
}

TEST(VerbsCheckModify, PerftestAccessFlagsAndRelaxedOrderingPass) {
  QpAttr a = pingpong_attr();
  a.qp_access_flags = access::kRemoteWrite | access::kLocalWrite | access::kRemoteRead | access::kRemoteAtomic;
  EXPECT_TRUE(modify(a, kInit, kState | kPkeyIndex | kPort | kAccessFlags, kReset, QpType::kRc).ok());
  a.qp_access_flags |= access::kRelaxedOrdering | access::kMwBind;
  EXPECT_TRUE(modify(a, kInit, kState | kPkeyIndex | kPort | kAccessFlags, kReset, QpType::kRc).ok());
}

// --- masks and transitions ---------------------------------------------------------------

TEST(VerbsCheckModify, MissingAttributesAreNamed) {
  const QpAttr a = pingpong_attr();
  expect_einval(modify(a, kRts, kState, kRtr, QpType::kRc),
                "modify RTR->RTS: missing TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC|SQ_PSN");
  expect_einval(modify(a, kInit, kState | kPkeyIndex | kPort, kReset, QpType::kUd), "modify RESET->INIT: missing QKEY");
}

TEST(VerbsCheckModify, AttributesTheTransitionDoesNotTakeAreNamed) {
  const QpAttr a = pingpong_attr();
  expect_einval(modify(a, kRtr, kState | kAv, kInit, QpType::kUd), "modify INIT->RTR: not allowed on UD: AV");
  // A UD INIT with an RC's mask: both at once.
  expect_einval(modify(a, kInit, kState | kPkeyIndex | kPort | kAccessFlags, kReset, QpType::kUd),
                "modify RESET->INIT: missing QKEY; not allowed on UD: ACCESS_FLAGS");
  // PORT may not change at INIT->RTR (only at RESET->INIT, INIT->INIT, and RC's SQD->SQD).
  expect_einval(modify(a, kRtr, kState | kAv | kPathMtu | kDestQpn | kRqPsn | kPort, kInit, QpType::kUc),
                "modify INIT->RTR: not allowed on UC: PORT");
}

TEST(VerbsCheckModify, IllegalTransitions) {
  const QpAttr a = pingpong_attr();
  expect_einval(modify(a, kInit, kState, kRts, QpType::kRc), "modify RTS->INIT: not a legal transition");
  expect_einval(modify(a, kError, kState, kReset, QpType::kRc), "modify RESET->ERR: not a legal transition");
  expect_einval(modify(a, kSqe, kState, kRts, QpType::kUd), "modify RTS->SQE: not a legal transition");
  expect_einval(modify(a, kRts, kState | kSqPsn, kInit, QpType::kUd), "modify INIT->RTS: not a legal transition");
}

TEST(VerbsCheckModify, WithoutStateTheQpStaysInItsState) {
  QpAttr a = pingpong_attr();
  a.qp_state = kError;  // ignored: STATE is not in the mask
  EXPECT_TRUE(check_modify(a, kPkeyIndex, kInit, QpType::kRc, kCaps, kPortLimits).ok());   // INIT->INIT
  EXPECT_TRUE(check_modify(a, kMinRnrTimer, kRts, QpType::kRc, kCaps, kPortLimits).ok());  // RTS->RTS
  EXPECT_TRUE(check_modify(a, 0, kReset, QpType::kRc, kCaps, kPortLimits).ok());           // RESET->RESET
  expect_einval(check_modify(a, kTimeout, kRts, QpType::kRc, kCaps, kPortLimits),
                "modify RTS->RTS: not allowed on RC: TIMEOUT");
  expect_einval(check_modify(a, 0, kRtr, QpType::kRc, kCaps, kPortLimits), "modify RTR->RTR: not a legal transition");
}

TEST(VerbsCheckModify, CurStateNamesTheCurrentState) {
  QpAttr a = pingpong_attr();
  a.cur_qp_state = kSqe;
  // A UD QP that went to SQE on a send error comes back to RTS.
  EXPECT_TRUE(modify(a, kRts, kState | kCurState, kSqe, QpType::kUd).ok());
  // The claim must be the QP's state.
  expect_einval(modify(a, kRts, kState | kCurState, kRts, QpType::kUd),
                "modify SQE->RTS: cur_qp_state is SQE but the QP is in RTS");
  // CUR_STATE only out of RTR, RTS, SQD, SQE, and only where the transition lists it.
  a.cur_qp_state = kInit;
  expect_einval(modify(a, kInit, kState | kCurState | kPkeyIndex, kInit, QpType::kRc),
                "modify INIT->INIT: CUR_STATE is allowed only from RTR, RTS, SQD or SQE");
  a.cur_qp_state = kRts;
  expect_einval(modify(a, kSqd, kState | kCurState, kRts, QpType::kRc),
                "modify RTS->SQD: not allowed on RC: CUR_STATE");
}

TEST(VerbsCheckModify, StateValuesOutsideTheEnum) {
  QpAttr a = pingpong_attr();
  a.qp_state = static_cast<QpState>(7);
  expect_einval(check_modify(a, kState, kInit, QpType::kRc, kCaps, kPortLimits),
                "modify: qp_state 7 is not a QP state");
  a.qp_state = kRts;
  a.cur_qp_state = static_cast<QpState>(200);
  expect_einval(check_modify(a, kState | kCurState, kRtr, QpType::kRc, kCaps, kPortLimits),
                "modify: cur_qp_state 200 is not a QP state");
}

TEST(VerbsCheckModify, NoTransitionResizesAQp) {
  const QpAttr a = pingpong_attr();
  expect_einval(modify(a, kRts, kState | kCap, kRts, QpType::kRc), "modify RTS->RTS: not allowed on RC: CAP");
  expect_einval(check_modify(a, kCap, kInit, QpType::kUd, kCaps, kPortLimits),
                "modify INIT->INIT: not allowed on UD: CAP");
}

TEST(VerbsCheckModify, MaskBitsBeyondDestQpnAreUnsupported) {
  const QpAttr a = pingpong_attr();
  const Status rate = modify(a, kRts, kState | kRateLimit, kRts, QpType::kRc);
  EXPECT_EQ(rate.code(), Code::kUnsupported);
  EXPECT_EQ(rate.to_errno(), EOPNOTSUPP);
  EXPECT_EQ(rate.message(), "modify: attribute mask RATE_LIMIT is not supported");
  EXPECT_EQ(modify(a, kRts, kState | 1u << 21, kRts, QpType::kRc).to_errno(), EOPNOTSUPP);
}

TEST(VerbsCheckModify, RdAndXrcAreUnsupported) {
  const QpAttr a = pingpong_attr();
  for (QpType type : {QpType::kRd, QpType::kXrc}) {
    const Status s = modify(a, kInit, kState | kPkeyIndex | kPort | kAccessFlags, kReset, type);
    EXPECT_EQ(s.code(), Code::kUnsupported);
    EXPECT_EQ(s.to_errno(), EOPNOTSUPP);
  }
}

TEST(VerbsCheckModify, AnAvOutsideInitToRtrMovesThePortAsUverbsDoes) {
  QpAttr a = pingpong_attr();
  // Not going to RTR: AV implies PORT (port_num := ah_attr.port_num).
  EXPECT_EQ(effective_modify_mask(a, kAv), kAv | kPort);
  EXPECT_EQ(effective_modify_mask(a, kAv | kPort), kAv | kPort);
  a.qp_state = kRtr;
  EXPECT_EQ(effective_modify_mask(a, kState | kAv), kState | kAv);
  a.qp_state = kSqd;
  EXPECT_EQ(effective_modify_mask(a, kState | kAv), kState | kAv | kPort);

  // RC SQD->SQD takes PORT: fine. UC SQD->SQD does not: the implied PORT makes it fail.
  a.port_num = 0;  // not in the mask: uverbs overwrites it with the AV's port
  EXPECT_TRUE(check_modify(a, kAv, kSqd, QpType::kRc, kCaps, kPortLimits).ok());
  expect_einval(check_modify(a, kAv, kSqd, QpType::kUc, kCaps, kPortLimits),
                "modify SQD->SQD: not allowed on UC: PORT (PORT implied by AV outside INIT->RTR)");
  // With both, the two port numbers must agree.
  a.port_num = 1;
  a.ah_attr.port_num = 2;
  expect_einval(check_modify(a, kAv | kPort, kSqd, QpType::kRc, kCaps, PortLimits{.phys_port_cnt = 2,
                                                                                 .max_mtu = Mtu::k4096,
                                                                                 .active_mtu = Mtu::k4096,
                                                                                 .pkey_table_len = 64,
                                                                                 .gid_table_len = 16}),
                "modify: port_num 1 is not ah_attr.port_num 2");
}

// --- values ------------------------------------------------------------------------------

constexpr uint32_t kRcInit = kState | kPkeyIndex | kPort | kAccessFlags;
constexpr uint32_t kRcRtr = kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer;
constexpr uint32_t kRcRts = kState | kTimeout | kRetryCnt | kRnrRetry | kSqPsn | kMaxQpRdAtomic;

TEST(VerbsCheckModify, PortNumbers) {
  QpAttr a = pingpong_attr();
  a.port_num = 0;
  expect_einval(modify(a, kInit, kRcInit, kReset, QpType::kRc),
                "modify RESET->INIT: port_num 0 is not a port: 1..1 (phys_port_cnt)");
  a.port_num = 2;
  expect_einval_naming(modify(a, kInit, kRcInit, kReset, QpType::kRc), "port_num 2 is not a port");
  a = pingpong_attr();
  a.ah_attr.port_num = 2;
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc),
                "modify INIT->RTR: ah_attr.port_num 2 is not a port: 1..1 (phys_port_cnt)");
}

TEST(VerbsCheckModify, PkeyIndex) {
  QpAttr a = pingpong_attr();
  a.pkey_index = 63;
  EXPECT_TRUE(modify(a, kInit, kRcInit, kReset, QpType::kRc).ok());
  a.pkey_index = 64;
  expect_einval(modify(a, kInit, kRcInit, kReset, QpType::kRc),
                "modify RESET->INIT: pkey_index 64 is not below 64 (pkey_table_len)");
  // Not in the mask: not looked at.
  EXPECT_TRUE(modify(a, kRtr, kRcRtr, kInit, QpType::kRc).ok());
}

TEST(VerbsCheckModify, AccessFlags) {
  QpAttr a = pingpong_attr();
  a.qp_access_flags = access::kRemoteWrite | access::kZeroBased;
  expect_einval(modify(a, kInit, kRcInit, kReset, QpType::kRc),
                "modify RESET->INIT: qp_access_flags 0x22 has bits 0x20 outside 0x3ff0001f (access flags a softib QP "
                "takes)");
  a.qp_access_flags = access::kOnDemand;
  expect_einval_naming(modify(a, kInit, kRcInit, kReset, QpType::kRc), "has bits 0x40 outside");
  a.qp_access_flags = access::kHugetlb;
  expect_einval_naming(modify(a, kInit, kRcInit, kReset, QpType::kRc), "has bits 0x80 outside");
}

TEST(VerbsCheckModify, PathMtu) {
  QpAttr a = pingpong_attr();
  a.path_mtu = Mtu::k4096;
  EXPECT_TRUE(modify(a, kRtr, kRcRtr, kInit, QpType::kRc).ok());  // above the active MTU: accepted, as rxe does
  const PortLimits small = {.phys_port_cnt = 1,
                            .max_mtu = Mtu::k2048,
                            .active_mtu = Mtu::k2048,
                            .pkey_table_len = 64,
                            .gid_table_len = 16};
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc, small),
                "modify INIT->RTR: path_mtu 5 (4096) exceeds max_mtu of the port 4 (2048)");
  a.path_mtu = static_cast<Mtu>(0);
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc),
                "modify INIT->RTR: path_mtu 0 is not an MTU code (1..5 = 256..4096)");
  a.path_mtu = static_cast<Mtu>(6);
  expect_einval_naming(modify(a, kRtr, kRcRtr, kInit, QpType::kRc), "path_mtu 6 is not an MTU code");
}

TEST(VerbsCheckModify, AddressVector) {
  QpAttr a = pingpong_attr();
  a.ah_attr.is_global = true;
  a.ah_attr.grh.sgid_index = 15;
  EXPECT_TRUE(modify(a, kRtr, kRcRtr, kInit, QpType::kRc).ok());
  a.ah_attr.grh.sgid_index = 16;
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc),
                "modify INIT->RTR: ah_attr.grh.sgid_index 16 is not below 16 (gid_table_len)");
  a.ah_attr.grh.sgid_index = 0;
  a.ah_attr.grh.flow_label = 0x100000;
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc),
                "modify INIT->RTR: ah_attr.grh.flow_label 1048576 exceeds 1048575 (20-bit field)");
  // Without a GRH the GRH fields are not looked at.
  a.ah_attr.is_global = false;
  a.ah_attr.grh.sgid_index = 200;
  EXPECT_TRUE(modify(a, kRtr, kRcRtr, kInit, QpType::kRc).ok());
  a.ah_attr.sl = 16;
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc),
                "modify INIT->RTR: ah_attr.sl 16 exceeds 15 (4-bit field)");
}

TEST(VerbsCheckModify, ReliabilityFields) {
  QpAttr a = pingpong_attr();
  a.timeout = 31;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  EXPECT_TRUE(modify(a, kRts, kRcRts, kRtr, QpType::kRc).ok());
  a.timeout = 32;
  expect_einval(modify(a, kRts, kRcRts, kRtr, QpType::kRc), "modify RTR->RTS: timeout 32 exceeds 31 (5-bit field)");
  a.timeout = 14;
  a.retry_cnt = 8;
  expect_einval(modify(a, kRts, kRcRts, kRtr, QpType::kRc), "modify RTR->RTS: retry_cnt 8 exceeds 7 (3-bit field)");
  a.retry_cnt = 7;
  a.rnr_retry = 8;
  expect_einval_naming(modify(a, kRts, kRcRts, kRtr, QpType::kRc), "rnr_retry 8 exceeds 7");
  a = pingpong_attr();
  a.min_rnr_timer = 32;
  expect_einval_naming(modify(a, kRtr, kRcRtr, kInit, QpType::kRc), "min_rnr_timer 32 exceeds 31");
  // A value whose bit is not in the mask is not looked at.
  a = pingpong_attr();
  a.timeout = 99;
  EXPECT_TRUE(modify(a, kRtr, kRcRtr, kInit, QpType::kRc).ok());
}

TEST(VerbsCheckModify, ReadAndAtomicDepths) {
  QpAttr a = pingpong_attr();
  a.max_rd_atomic = 128;
  a.max_dest_rd_atomic = 128;
  EXPECT_TRUE(modify(a, kRts, kRcRts, kRtr, QpType::kRc).ok());
  EXPECT_TRUE(modify(a, kRtr, kRcRtr, kInit, QpType::kRc).ok());
  a.max_rd_atomic = 129;
  expect_einval(modify(a, kRts, kRcRts, kRtr, QpType::kRc),
                "modify RTR->RTS: max_rd_atomic 129 exceeds 128 (max_qp_init_rd_atom)");
  a.max_dest_rd_atomic = 200;
  expect_einval(modify(a, kRtr, kRcRtr, kInit, QpType::kRc),
                "modify INIT->RTR: max_dest_rd_atomic 200 exceeds 128 (max_qp_rd_atom)");
}

TEST(VerbsCheckModify, AlternatePath) {
  QpAttr a = pingpong_attr();
  a.alt_ah_attr = a.ah_attr;
  a.alt_port_num = 1;
  a.alt_timeout = 14;
  a.alt_pkey_index = 0;
  const uint32_t mask = kRcRtr | kAltPath;
  EXPECT_TRUE(modify(a, kRtr, mask, kInit, QpType::kRc).ok());
  a.alt_timeout = 32;
  expect_einval(modify(a, kRtr, mask, kInit, QpType::kRc), "modify INIT->RTR: alt_timeout 32 exceeds 31 (5-bit field)");
  a.alt_timeout = 14;
  a.alt_pkey_index = 64;
  expect_einval_naming(modify(a, kRtr, mask, kInit, QpType::kRc), "alt_pkey_index 64 is not below 64");
  a.alt_pkey_index = 0;
  a.alt_port_num = 0;
  expect_einval(modify(a, kRtr, mask, kInit, QpType::kRc), "modify: alt_port_num 0 is not alt_ah_attr.port_num 1");
  a.alt_ah_attr.port_num = 0;
  expect_einval(modify(a, kRtr, mask, kInit, QpType::kRc),
                "modify INIT->RTR: alt_port_num 0 is not a port: 1..1 (phys_port_cnt)");
}

TEST(VerbsCheckModify, PathMigState) {
  QpAttr a = pingpong_attr();
  a.path_mig_state = MigState::kArmed;
  EXPECT_TRUE(modify(a, kRts, kRcRts | kPathMigState, kRtr, QpType::kRc).ok());
  a.path_mig_state = static_cast<MigState>(3);
  expect_einval_naming(modify(a, kRts, kRcRts | kPathMigState, kRtr, QpType::kRc), "path_mig_state 3 exceeds 2");
}

// --- create ------------------------------------------------------------------------------

QpInitAttr init_attr(QpType type) {
  QpInitAttr init;
  init.qp_type = type;
  init.cap = {.max_send_wr = 16384, .max_recv_wr = 16384, .max_send_sge = 32, .max_recv_sge = 32,
              .max_inline_data = 512};
  return init;
}

TEST(VerbsCheckCreate, AtTheLimitsPasses) {
  for (QpType type : {QpType::kRc, QpType::kUc, QpType::kUd}) EXPECT_TRUE(check_create(init_attr(type), kCaps).ok());
}

TEST(VerbsCheckCreate, BeyondTheLimitsIsEinval) {
  QpInitAttr init = init_attr(QpType::kRc);
  init.cap.max_send_wr = 16385;
  expect_einval(check_create(init, kCaps), "create QP: max_send_wr 16385 exceeds max_qp_wr 16384");
  init = init_attr(QpType::kRc);
  init.cap.max_send_sge = 33;
  expect_einval(check_create(init, kCaps), "create QP: max_send_sge 33 exceeds max_sge 32");
  init = init_attr(QpType::kUd);
  init.cap.max_recv_wr = 16385;
  expect_einval(check_create(init, kCaps), "create QP: max_recv_wr 16385 exceeds max_qp_wr 16384");
  init = init_attr(QpType::kUd);
  init.cap.max_recv_sge = 33;
  expect_einval(check_create(init, kCaps), "create QP: max_recv_sge 33 exceeds max_sge 32");
  init = init_attr(QpType::kUc);
  init.cap.max_inline_data = 513;
  expect_einval(check_create(init, kCaps), "create QP: max_inline_data 513 exceeds max_inline_data 512");
}

TEST(VerbsCheckCreate, WithAnSrqTheReceiveQueueIsNotChecked) {
  QpInitAttr init = init_attr(QpType::kRc);
  init.use_srq = true;
  init.cap.max_recv_wr = 1u << 20;
  init.cap.max_recv_sge = 1000;
  EXPECT_TRUE(check_create(init, kCaps).ok());
  init.cap.max_send_wr = 1u << 20;  // the send queue still is
  expect_einval_naming(check_create(init, kCaps), "max_send_wr");
}

TEST(VerbsCheckCreate, RdAndXrcAreUnsupported) {
  EXPECT_EQ(check_create(init_attr(QpType::kRd), kCaps).to_errno(), EOPNOTSUPP);
  EXPECT_EQ(check_create(init_attr(QpType::kXrc), kCaps).to_errno(), EOPNOTSUPP);
}

}  // namespace
}  // namespace softib::verbs
