// What a softib device can do: the fields of libibverbs' struct ibv_device_attr, plus the
// largest inline send (which ibv_device_attr does not carry; ibv_create_qp reports it back),
// and the values softib enforces. Limits are modelled on the kernel's Soft-RoCE (rxe:
// drivers/infiniband/sw/rxe/rxe_param.h and rxe_init_device_param() in rxe.c), the software
// HCA programs are most often tested on.
//
// The identity fields of ibv_device_attr (fw_ver, node_guid, sys_image_guid) are not
// capabilities: the device object fills them from its fabric node.
#pragma once

#include <cstdint>
#include <string_view>

namespace softib::verbs {

// enum ibv_atomic_cap.
enum class AtomicCap : uint8_t {
  kNone = 0,  // IBV_ATOMIC_NONE
  kHca = 1,   // IBV_ATOMIC_HCA: atomic against other atomics of this HCA (not the CPU)
  kGlob = 2,  // IBV_ATOMIC_GLOB: also against the CPU and other HCAs
};
std::string_view to_string(AtomicCap cap);  // "ATOMIC_HCA", as ibv_devinfo -v prints it

// enum ibv_device_cap_flags (values from <infiniband/verbs.h>).
namespace device_cap {
inline constexpr uint32_t kResizeMaxWr = 1u << 0;
inline constexpr uint32_t kBadPkeyCntr = 1u << 1;
inline constexpr uint32_t kBadQkeyCntr = 1u << 2;
inline constexpr uint32_t kRawMulti = 1u << 3;
inline constexpr uint32_t kAutoPathMig = 1u << 4;
inline constexpr uint32_t kChangePhyPort = 1u << 5;
inline constexpr uint32_t kUdAvPortEnforce = 1u << 6;
inline constexpr uint32_t kCurrQpStateMod = 1u << 7;
inline constexpr uint32_t kShutdownPort = 1u << 8;
inline constexpr uint32_t kInitType = 1u << 9;
inline constexpr uint32_t kPortActiveEvent = 1u << 10;
inline constexpr uint32_t kSysImageGuid = 1u << 11;
inline constexpr uint32_t kRcRnrNakGen = 1u << 12;
inline constexpr uint32_t kSrqResize = 1u << 13;
inline constexpr uint32_t kNNotifyCq = 1u << 14;
inline constexpr uint32_t kMemWindow = 1u << 17;
inline constexpr uint32_t kUdIpCsum = 1u << 18;
inline constexpr uint32_t kXrc = 1u << 20;
inline constexpr uint32_t kMemMgtExtensions = 1u << 21;
inline constexpr uint32_t kMemWindowType2A = 1u << 23;
inline constexpr uint32_t kMemWindowType2B = 1u << 24;
inline constexpr uint32_t kRcIpCsum = 1u << 25;
inline constexpr uint32_t kRawIpCsum = 1u << 26;
inline constexpr uint32_t kManagedFlowSteering = 1u << 29;

// What softib claims. Only what it does (or this issue makes it do), each for a reason:
//   BAD_PKEY_CNTR, BAD_QKEY_CNTR  every packet's P_Key (and UD Q_Key) is checked and a
//                                 mismatch is counted (PortInfo P_KeyViolations/Q_KeyViolations)
//   CURR_QP_STATE_MOD             Modify QP takes CUR_STATE where the transition table allows it
//   SHUTDOWN_PORT                 ports can be taken down (`softib` link down; PortInfo Disabled)
//   PORT_ACTIVE_EVENT             IBV_EVENT_PORT_ACTIVE / PORT_ERR are delivered
//   SYS_IMAGE_GUID                every node has a system image GUID (NodeInfo.SystemImageGUID)
//   RC_RNR_NAK_GEN                the RC responder sends RNR NAKs when no receive is posted
// Not claimed, though rxe claims some: RESIZE_MAX_WR (no transition carries CAP), SRQ_RESIZE
// (SRQs get their limit, not a resize), AUTO_PATH_MIG and CHANGE_PHY_PORT (alternate paths are
// stored, never migrated to), UD_AV_PORT_ENFORCE, MEM_WINDOW* and MEM_MGT_EXTENSIONS (no
// memory windows or fast registration yet), N_NOTIFY_CQ, XRC, checksum offloads, RAW_MULTI,
// INIT_TYPE, MANAGED_FLOW_STEERING.
inline constexpr uint32_t kSoftibFlags = kBadPkeyCntr | kBadQkeyCntr | kCurrQpStateMod |
                                         kShutdownPort | kPortActiveEvent | kSysImageGuid |
                                         kRcRnrNakGen;
}  // namespace device_cap

// struct ibv_device_attr without its identity fields, plus max_inline_data. Counts are
// unsigned here (libibverbs uses int); the drop-in library converts.
struct DeviceCaps {
  uint64_t max_mr_size = 0;
  uint64_t page_size_cap = 0;
  uint32_t vendor_id = 0;       // IEEE OUI, 24 bits
  uint32_t vendor_part_id = 0;
  uint32_t hw_ver = 0;
  uint32_t max_qp = 0;
  uint32_t max_qp_wr = 0;       // per work queue, send or receive
  uint32_t device_cap_flags = 0;
  uint32_t max_sge = 0;         // per send or receive WR
  uint32_t max_sge_rd = 0;      // per RDMA READ WR
  uint32_t max_cq = 0;
  uint32_t max_cqe = 0;
  uint32_t max_mr = 0;
  uint32_t max_pd = 0;
  uint32_t max_qp_rd_atom = 0;       // RDMA READ/atomics a QP may have outstanding as target
  uint32_t max_ee_rd_atom = 0;
  uint32_t max_res_rd_atom = 0;      // responder resources of the whole device
  uint32_t max_qp_init_rd_atom = 0;  // RDMA READ/atomics a QP may have outstanding as initiator
  uint32_t max_ee_init_rd_atom = 0;
  AtomicCap atomic_cap = AtomicCap::kNone;
  uint32_t max_ee = 0;
  uint32_t max_rdd = 0;
  uint32_t max_mw = 0;
  uint32_t max_raw_ipv6_qp = 0;
  uint32_t max_raw_ethy_qp = 0;
  uint32_t max_mcast_grp = 0;
  uint32_t max_mcast_qp_attach = 0;
  uint32_t max_total_mcast_qp_attach = 0;
  uint32_t max_ah = 0;
  uint32_t max_fmr = 0;
  uint32_t max_map_per_fmr = 0;
  uint32_t max_srq = 0;
  uint32_t max_srq_wr = 0;
  uint32_t max_srq_sge = 0;
  uint16_t max_pkeys = 0;
  uint8_t local_ca_ack_delay = 0;  // IBA 4.096 us * 2^x
  uint8_t phys_port_cnt = 0;
  uint32_t max_inline_data = 0;    // not in ibv_device_attr: the largest inline send
};

// 0xFFFFFF: not a real vendor's OUI. It is what the IBA says a vendor without an OUI reports
// (rxe_param.h: RXE_VENDOR_ID = 0XFFFFFF, "IBTA v1.4 A3.3.1 VENDOR INFORMATION section"), and
// perftest enables no vendor extension (mlx5dv, efadv) for it.
inline constexpr uint32_t kSoftibVendorId = 0xFFFFFF;
inline constexpr uint32_t kSoftibVendorPartId = 1;  // rxe's RXE_VENDOR_PART_ID

// The capabilities of a softib device: rxe's limits, the classic rxe_param.h values (the
// ones hardware-like programs and guides show; later kernels raised several to 1 << 20), with
// the exceptions noted. caps.cpp pins them.
constexpr DeviceCaps default_caps() {
  DeviceCaps c;
  c.max_mr_size = ~uint64_t{0};      // RXE_MAX_MR_SIZE -1ull: any length
  c.page_size_cap = 0xFFFFF000;      // RXE_PAGE_SIZE_CAP: 4 KiB and every larger power of 2
  c.vendor_id = kSoftibVendorId;
  c.vendor_part_id = kSoftibVendorPartId;
  c.hw_ver = 0;                      // RXE_HW_VER
  c.max_qp = 0x10000;                // RXE_MAX_QP
  c.max_qp_wr = 0x4000;              // RXE_MAX_QP_WR
  c.device_cap_flags = device_cap::kSoftibFlags;
  c.max_sge = 32;                    // RXE_MAX_SGE
  c.max_sge_rd = 32;                 // RXE_MAX_SGE_RD
  c.max_cq = 16384;                  // RXE_MAX_CQ
  c.max_cqe = (1u << 15) - 1;        // (1 << RXE_MAX_LOG_CQE) - 1, as rxe_init_device_param()
  c.max_mr = 256 * 1024;             // RXE_MAX_MR
  c.max_pd = 0x7FFC;                 // RXE_MAX_PD
  c.max_qp_rd_atom = 128;            // RXE_MAX_QP_RD_ATOM
  c.max_ee_rd_atom = 0;              // no RD (no end-to-end contexts)
  c.max_res_rd_atom = 0x3F000;       // RXE_MAX_RES_RD_ATOM
  c.max_qp_init_rd_atom = 128;       // RXE_MAX_QP_INIT_RD_ATOM
  c.max_ee_init_rd_atom = 0;
  c.atomic_cap = AtomicCap::kHca;    // rxe: IB_ATOMIC_HCA; softib's atomics are atomic
                                     // against each other on one HCA, not against the CPU
  c.max_ee = 0;
  c.max_rdd = 0;
  c.max_mw = 0;                      // no memory windows yet (rxe today: as many as MRs)
  c.max_raw_ipv6_qp = 0;
  c.max_raw_ethy_qp = 0;
  c.max_mcast_grp = 8192;            // RXE_MAX_MCAST_GRP
  c.max_mcast_qp_attach = 56;        // RXE_MAX_MCAST_QP_ATTACH
  c.max_total_mcast_qp_attach = 0x70000;  // RXE_MAX_TOT_MCAST_QP_ATTACH
  c.max_ah = 0x8000;                 // RXE_MAX_AH is 100, too few for UD programs with
                                     // many peers; softib takes 32 Ki
  c.max_fmr = 0;
  c.max_map_per_fmr = 0;
  c.max_srq = 960;                   // RXE_MAX_SRQ
  c.max_srq_wr = 0x4000;             // RXE_MAX_SRQ_WR
  c.max_srq_sge = 27;                // RXE_MAX_SRQ_SGE
  c.max_pkeys = 64;                  // RXE_MAX_PKEYS (and RXE_PORT_PKEY_TBL_LEN)
  c.local_ca_ack_delay = 15;         // RXE_LOCAL_CA_ACK_DELAY
  c.phys_port_cnt = 1;               // RXE_NUM_PORT; a multi-port node sets its own
  c.max_inline_data = 32 * 16;       // RXE_MAX_INLINE_DATA: RXE_MAX_SGE struct ib_sge's (16 bytes)
  return c;
}

// The QPs one process can own on a CA: a block of 65,536 QPNs (link/shm_directory.hpp), the
// first of which starts at 0x11 (QP0 and QP1 are the special QPs). Every process may create
// this many, whichever block it got, so it is the device's max_qp.
inline constexpr uint32_t kQpsPerProcess = 0x10000 - 0x11;

// The capabilities one of softib's CAs reports (ibv_query_device, `softib devinfo -v`): the
// defaults, the node's port count, and the QPs a process can own.
constexpr DeviceCaps ca_caps(uint8_t ports) {
  DeviceCaps c = default_caps();
  c.phys_port_cnt = ports;
  c.max_qp = kQpsPerProcess;
  return c;
}

}  // namespace softib::verbs
