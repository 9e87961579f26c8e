// The attributes of a queue pair as the verbs API names them (IBA 11.2.4-11.2.5, libibverbs'
// struct ibv_qp_attr). Enumerator values are libibverbs' own, so the drop-in library converts
// by value and static_asserts them against <infiniband/verbs.h>.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "packet/wr_opcode.hpp"

namespace softib::verbs {

using packet::QpType;

// enum ibv_qp_state. IBA 10.3.1: the QP state machine.
enum class QpState : uint8_t { kReset = 0, kInit = 1, kRtr = 2, kRts = 3, kSqd = 4, kSqe = 5, kError = 6 };
inline constexpr int kQpStateCount = 7;
std::string_view to_string(QpState s);  // "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"

// enum ibv_mtu: the path MTU, IBA 7.7.1 (MTU codes 1..5).
enum class Mtu : uint8_t { k256 = 1, k512 = 2, k1024 = 3, k2048 = 4, k4096 = 5 };
constexpr uint32_t mtu_bytes(Mtu m) { return 128u << static_cast<uint8_t>(m); }
// Packets a message of `length` bytes takes at a path MTU of `mtu` bytes (mtu_bytes(): a
// power of two); a message of no bytes is one packet. A shift, not a division: a 64-bit
// divide takes 10-40 cycles, and the requester asks once per WQE, on the way to the frame.
constexpr uint32_t packets_for(uint64_t length, uint32_t mtu) {
  return length == 0 ? 1 : static_cast<uint32_t>((length + mtu - 1) >> std::countr_zero(mtu));
}
static_assert(packets_for(0, 256) == 1 && packets_for(1, 256) == 1 && packets_for(256, 256) == 1 &&
              packets_for(257, 256) == 2 && packets_for(uint64_t{1} << 31, 4096) == 524288);
constexpr bool mtu_valid(uint8_t code) { return code >= 1 && code <= 5; }

// enum ibv_mig_state.
enum class MigState : uint8_t { kMigrated = 0, kRearm = 1, kArmed = 2 };

// enum ibv_qp_attr_mask: which fields of QpAttr a modify carries.
namespace attr {
inline constexpr uint32_t kState = 1u << 0;
inline constexpr uint32_t kCurState = 1u << 1;
inline constexpr uint32_t kEnSqdAsyncNotify = 1u << 2;
inline constexpr uint32_t kAccessFlags = 1u << 3;
inline constexpr uint32_t kPkeyIndex = 1u << 4;
inline constexpr uint32_t kPort = 1u << 5;
inline constexpr uint32_t kQkey = 1u << 6;
inline constexpr uint32_t kAv = 1u << 7;
inline constexpr uint32_t kPathMtu = 1u << 8;
inline constexpr uint32_t kTimeout = 1u << 9;
inline constexpr uint32_t kRetryCnt = 1u << 10;
inline constexpr uint32_t kRnrRetry = 1u << 11;
inline constexpr uint32_t kRqPsn = 1u << 12;
inline constexpr uint32_t kMaxQpRdAtomic = 1u << 13;
inline constexpr uint32_t kAltPath = 1u << 14;
inline constexpr uint32_t kMinRnrTimer = 1u << 15;
inline constexpr uint32_t kSqPsn = 1u << 16;
inline constexpr uint32_t kMaxDestRdAtomic = 1u << 17;
inline constexpr uint32_t kPathMigState = 1u << 18;
inline constexpr uint32_t kCap = 1u << 19;
inline constexpr uint32_t kDestQpn = 1u << 20;
inline constexpr uint32_t kRateLimit = 1u << 25;
}  // namespace attr

// enum ibv_access_flags (the ones softib implements).
namespace access {
inline constexpr uint32_t kLocalWrite = 1u << 0;
inline constexpr uint32_t kRemoteWrite = 1u << 1;
inline constexpr uint32_t kRemoteRead = 1u << 2;
inline constexpr uint32_t kRemoteAtomic = 1u << 3;
inline constexpr uint32_t kMwBind = 1u << 4;
inline constexpr uint32_t kZeroBased = 1u << 5;
inline constexpr uint32_t kOnDemand = 1u << 6;
inline constexpr uint32_t kHugetlb = 1u << 7;
inline constexpr uint32_t kRelaxedOrdering = 1u << 20;
}  // namespace access

// struct ibv_global_route.
struct GlobalRoute {
  Gid dgid{};
  uint32_t flow_label = 0;  // 20 bits
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
};

// struct ibv_ah_attr: where a QP (RC/UC, in RTR) or a UD work request sends.
struct AhAttr {
  GlobalRoute grh{};
  Lid dlid{};
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  uint8_t static_rate = 0;
  bool is_global = false;
  uint8_t port_num = 0;
};

// struct ibv_qp_cap.
struct QpCap {
  uint32_t max_send_wr = 0;
  uint32_t max_recv_wr = 0;
  uint32_t max_send_sge = 0;
  uint32_t max_recv_sge = 0;
  uint32_t max_inline_data = 0;
};

// struct ibv_qp_attr.
struct QpAttr {
  QpState qp_state = QpState::kReset;
  QpState cur_qp_state = QpState::kReset;
  Mtu path_mtu = Mtu::k1024;
  MigState path_mig_state = MigState::kMigrated;
  QKey qkey{};
  Psn rq_psn{};
  Psn sq_psn{};
  Qpn dest_qp_num{};
  uint32_t qp_access_flags = 0;
  QpCap cap{};
  AhAttr ah_attr{};
  AhAttr alt_ah_attr{};
  uint16_t pkey_index = 0;
  uint16_t alt_pkey_index = 0;
  uint8_t en_sqd_async_notify = 0;
  uint8_t sq_draining = 0;
  uint8_t max_rd_atomic = 0;       // initiator depth: RDMA READ/atomics this QP may have outstanding
  uint8_t max_dest_rd_atomic = 0;  // responder resources
  uint8_t min_rnr_timer = 0;       // 5-bit code, IBA table 45
  uint8_t port_num = 0;
  uint8_t timeout = 0;             // 5-bit: 4.096 us * 2^timeout, 0 = infinite
  uint8_t retry_cnt = 0;           // 3 bits
  uint8_t rnr_retry = 0;           // 3 bits, 7 = infinite
  uint8_t alt_port_num = 0;
  uint8_t alt_timeout = 0;
  uint32_t rate_limit = 0;
};

// struct ibv_qp_init_attr (without the CQ/SRQ pointers, which the object layer carries).
struct QpInitAttr {
  QpType qp_type = QpType::kRc;
  QpCap cap{};
  bool sq_sig_all = false;
  // The QP takes its receives from an SRQ (ibv_qp_init_attr.srq != NULL): its own
  // max_recv_wr and max_recv_sge are then not checked (rxe_qp_chk_cap).
  bool use_srq = false;
};

}  // namespace softib::verbs
