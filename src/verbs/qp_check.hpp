// The checks ibv_create_qp and ibv_modify_qp pass before anything changes: validate
// everything, then let the QP act (style rule 3). They fail as Linux fails them, with the
// errno a libibverbs program sees (Status::to_errno()):
//
//   check_modify   1. QP type RD or XRC: EOPNOTSUPP (softib implements RC, UC, UD)
//                  2. mask bits beyond DEST_QPN (RATE_LIMIT, reserved): EOPNOTSUPP
//                     (uverbs' legacy modify_qp; rxe's IB_QP_ATTR_STANDARD_BITS)
//                  3. STATE or CUR_STATE naming no state: EINVAL (uverbs modify_qp)
//                  4. AV outside INIT->RTR: with PORT, the two port numbers must agree; without
//                     it, PORT is implied (uverbs modify_qp, see effective_modify_mask)
//                  5. the transition and its masks: EINVAL (ib_modify_qp_is_ok, with the current
//                     state from CUR_STATE when given and the next from STATE, else unchanged,
//                     as rxe, mlx4 and mlx5 derive them); a CUR_STATE that is not the QP's
//                     state: EINVAL (softib: see qp_check.cpp)
//                  6. the values of the attributes the mask carries: EINVAL (the rule table in
//                     qp_check.cpp: rxe_qp_chk_attr, rxe_av_chk_attr, mlx4_ib_modify_qp,
//                     uverbs' port checks, ib_core's P_Key and GID index lookups)
//   check_create   QP type, then the capacities against the device (rxe_qp_chk_cap): EINVAL
//
// Left to the QP object, which knows its own state: an AV's port_num at INIT->RTR must be the
// port the QP was given at RESET->INIT (uverbs), and a QP in SQD that is still draining may
// only go to ERR (rxe __qp_chk_state).
#pragma once

#include <cstdint>

#include "base/status.hpp"
#include "verbs/caps.hpp"
#include "verbs/qp_attr.hpp"

namespace softib::verbs {

// What a modify is checked against from the port (ibv_port_attr, PortInfo).
struct PortLimits {
  uint8_t phys_port_cnt;    // ports are 1..phys_port_cnt (rdma_is_port_valid)
  Mtu max_mtu;              // PATH_MTU may not exceed it (rxe_qp_chk_attr)
  Mtu active_mtu;           // not a modify check: rxe and mlx5 accept a PATH_MTU above it; the
                            // UD QPs, which have no PATH_MTU, send at it
  uint16_t pkey_table_len;  // pkey_index and alt_pkey_index must be below it
  uint8_t gid_table_len;    // a global AV's sgid_index must be below it (sgid_index is 8 bits)
};

// The access flags softib accepts on a QP (IBV_QP_ACCESS_FLAGS): rxe's RXE_ACCESS_SUPPORTED_QP
// without ON_DEMAND and FLUSH_* (softib has neither), so LOCAL_WRITE, REMOTE_WRITE,
// REMOTE_READ, REMOTE_ATOMIC, MW_BIND, and the optional range (bits 20-29, RELAXED_ORDERING
// among them), which a device may ignore. ZERO_BASED and HUGETLB are MR flags: EINVAL.
inline constexpr uint32_t kAccessOptionalRange = 0x3FF00000;  // IBV_ACCESS_OPTIONAL_RANGE
inline constexpr uint32_t kQpAccessSupported = access::kLocalWrite | access::kRemoteWrite |
                                               access::kRemoteRead | access::kRemoteAtomic |
                                               access::kMwBind | kAccessOptionalRange;

// The mask a modify really carries: uverbs adds PORT to a mask with AV and without PORT unless
// the modify goes to RTR (then the AV's port must be the QP's), taking port_num from the AV.
// The QP object must apply it the same way (port_num = ah_attr.port_num).
uint32_t effective_modify_mask(const QpAttr& attr, uint32_t mask);

// Everything ibv_modify_qp checks before it changes anything, for a QP of type `type` in
// state `cur`, with the device's and the port's limits. OK, or kInvalidArgument (EINVAL) /
// kUnsupported (EOPNOTSUPP) with a message naming the transition, the field and the rule:
// "modify RTR->RTS: missing TIMEOUT|RETRY_CNT|RNR_RETRY|MAX_QP_RD_ATOMIC|SQ_PSN".
Status check_modify(const QpAttr& attr, uint32_t mask, QpState cur, QpType type, const DeviceCaps& caps,
                    const PortLimits& port);

// Everything ibv_create_qp checks of its attributes: the QP type, then the work queue sizes,
// SGEs and inline size against the device (rxe_qp_chk_init, rxe_qp_chk_cap).
Status check_create(const QpInitAttr& init, const DeviceCaps& caps);

}  // namespace softib::verbs
