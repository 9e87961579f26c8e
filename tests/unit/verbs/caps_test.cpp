// The default device capabilities against rxe's values (rxe_param.h, rxe.c), copied here by
// hand, and the vendor id against the vendors whose ids make programs use vendor extensions.
#include <gtest/gtest.h>

#include <cstdint>

#include "verbs/caps.hpp"

namespace softib::verbs {
namespace {

TEST(VerbsDeviceCaps, RxeLimits) {
  const DeviceCaps c = default_caps();
  EXPECT_EQ(c.max_mr_size, 0xFFFFFFFFFFFFFFFFull);  // RXE_MAX_MR_SIZE = -1ull
  EXPECT_EQ(c.page_size_cap, 0xFFFFF000u);          // RXE_PAGE_SIZE_CAP
  EXPECT_EQ(c.max_qp, 0x10000u);                    // RXE_MAX_QP
  EXPECT_EQ(c.max_qp_wr, 0x4000u);                  // RXE_MAX_QP_WR
  EXPECT_EQ(c.max_sge, 32u);                        // RXE_MAX_SGE
  EXPECT_EQ(c.max_sge_rd, 32u);                     // RXE_MAX_SGE_RD
  EXPECT_EQ(c.max_cq, 16384u);                      // RXE_MAX_CQ
  EXPECT_EQ(c.max_cqe, 32767u);                     // (1 << RXE_MAX_LOG_CQE) - 1, RXE_MAX_LOG_CQE = 15
  EXPECT_EQ(c.max_mr, 256u * 1024);                 // RXE_MAX_MR
  EXPECT_EQ(c.max_pd, 0x7FFCu);                     // RXE_MAX_PD
  EXPECT_EQ(c.max_qp_rd_atom, 128u);                // RXE_MAX_QP_RD_ATOM
  EXPECT_EQ(c.max_res_rd_atom, 0x3F000u);           // RXE_MAX_RES_RD_ATOM
  EXPECT_EQ(c.max_qp_init_rd_atom, 128u);           // RXE_MAX_QP_INIT_RD_ATOM
  EXPECT_EQ(c.max_mcast_grp, 8192u);                // RXE_MAX_MCAST_GRP
  EXPECT_EQ(c.max_mcast_qp_attach, 56u);            // RXE_MAX_MCAST_QP_ATTACH
  EXPECT_EQ(c.max_total_mcast_qp_attach, 0x70000u);  // RXE_MAX_TOT_MCAST_QP_ATTACH
  EXPECT_EQ(c.max_srq, 960u);                       // RXE_MAX_SRQ
  EXPECT_EQ(c.max_srq_wr, 0x4000u);                 // RXE_MAX_SRQ_WR
  EXPECT_EQ(c.max_srq_sge, 27u);                    // RXE_MAX_SRQ_SGE
  EXPECT_EQ(c.max_pkeys, 64u);                      // RXE_MAX_PKEYS
  EXPECT_EQ(c.local_ca_ack_delay, 15u);             // RXE_LOCAL_CA_ACK_DELAY
  EXPECT_EQ(c.phys_port_cnt, 1u);                   // RXE_NUM_PORT
  EXPECT_EQ(c.max_inline_data, 512u);               // RXE_MAX_SGE * sizeof(struct ib_sge)
  EXPECT_EQ(c.atomic_cap, AtomicCap::kHca);         // IB_ATOMIC_HCA
  // No RD, no memory windows, no FMRs, no raw QPs.
  EXPECT_EQ(c.max_ee + c.max_rdd + c.max_ee_rd_atom + c.max_ee_init_rd_atom, 0u);
  EXPECT_EQ(c.max_mw + c.max_fmr + c.max_map_per_fmr + c.max_raw_ipv6_qp + c.max_raw_ethy_qp, 0u);
  // Exception: rxe's 100 address handles are too few for UD programs with many peers.
  EXPECT_GE(c.max_ah, 100u);
}

TEST(VerbsDeviceCaps, VendorIsNotARealVendor) {
  const DeviceCaps c = default_caps();
  EXPECT_EQ(c.vendor_id, 0xFFFFFFu);  // no OUI: IBA A3.3.1, as rxe reports
  // perftest's ib_dev_name() and rdma-core providers key on these: Mellanox, Intel, Amazon.
  for (uint32_t real : {0x02C9u, 0x8086u, 0x1D0Fu}) EXPECT_NE(c.vendor_id, real);
}

TEST(VerbsDeviceCaps, ClaimsOnlyWhatSoftibDoes) {
  const uint32_t flags = default_caps().device_cap_flags;
  EXPECT_EQ(flags, 0x1D86u);  // BAD_PKEY_CNTR|BAD_QKEY_CNTR|CURR_QP_STATE_MOD|SHUTDOWN_PORT|
                              // PORT_ACTIVE_EVENT|SYS_IMAGE_GUID|RC_RNR_NAK_GEN
  EXPECT_NE(flags & device_cap::kRcRnrNakGen, 0u);
  EXPECT_NE(flags & device_cap::kPortActiveEvent, 0u);
  EXPECT_EQ(flags & device_cap::kResizeMaxWr, 0u);
  EXPECT_EQ(flags & device_cap::kSrqResize, 0u);
  EXPECT_EQ(flags & device_cap::kMemMgtExtensions, 0u);
  EXPECT_EQ(flags & device_cap::kXrc, 0u);
}

TEST(VerbsAtomicCap, ValuesAndNames) {
  EXPECT_EQ(static_cast<int>(AtomicCap::kNone), 0);
  EXPECT_EQ(static_cast<int>(AtomicCap::kHca), 1);
  EXPECT_EQ(static_cast<int>(AtomicCap::kGlob), 2);
  EXPECT_EQ(to_string(AtomicCap::kHca), "ATOMIC_HCA");
  EXPECT_EQ(to_string(AtomicCap::kNone), "ATOMIC_NONE");
}

}  // namespace
}  // namespace softib::verbs
