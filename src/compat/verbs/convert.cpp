// verbs.h structs <-> the verbs core's values. The core keeps libibverbs' enumerator and flag
// values (src/verbs), so most fields copy by value; the static_asserts below pin that.
#include <infiniband/verbs.h>

#include <cstring>

#include "compat/verbs/objects.hpp"

namespace softib::compat {

static_assert(static_cast<int>(verbs::QpState::kError) == IBV_QPS_ERR);
static_assert(static_cast<int>(verbs::QpState::kSqd) == IBV_QPS_SQD);
static_assert(static_cast<int>(verbs::Mtu::k4096) == IBV_MTU_4096);
static_assert(static_cast<int>(verbs::WcStatus::kGeneralErr) == IBV_WC_GENERAL_ERR);
static_assert(static_cast<int>(verbs::WcStatus::kRnrRetryExcErr) == IBV_WC_RNR_RETRY_EXC_ERR);
static_assert(static_cast<int>(verbs::WcOpcode::kRecvRdmaWithImm) == IBV_WC_RECV_RDMA_WITH_IMM);
static_assert(static_cast<int>(verbs::WcOpcode::kFetchAdd) == IBV_WC_FETCH_ADD);
static_assert(static_cast<int>(verbs::WrOpcode::kSendWithInv) == IBV_WR_SEND_WITH_INV);
static_assert(static_cast<int>(verbs::WrOpcode::kAtomicFetchAndAdd) == IBV_WR_ATOMIC_FETCH_AND_ADD);
static_assert(static_cast<int>(verbs::AsyncEventType::kWqFatal) == IBV_EVENT_WQ_FATAL);
static_assert(verbs::send_flag::kInline == IBV_SEND_INLINE && verbs::send_flag::kFence == IBV_SEND_FENCE);
static_assert(verbs::wc_flag::kGrh == IBV_WC_GRH && verbs::wc_flag::kWithInv == IBV_WC_WITH_INV);
static_assert(verbs::attr::kDestQpn == IBV_QP_DEST_QPN && verbs::attr::kRateLimit == IBV_QP_RATE_LIMIT);
static_assert(verbs::access::kRelaxedOrdering == IBV_ACCESS_RELAXED_ORDERING);
static_assert(verbs::access::kOnDemand == IBV_ACCESS_ON_DEMAND);

bool to_core(ibv_qp_type t, verbs::QpType* out) {
  switch (t) {
    case IBV_QPT_RC: *out = verbs::QpType::kRc; return true;
    case IBV_QPT_UC: *out = verbs::QpType::kUc; return true;
    case IBV_QPT_UD: *out = verbs::QpType::kUd; return true;
    default: return false;  // RAW_PACKET, XRC_SEND, XRC_RECV, DRIVER
  }
}

verbs::AhAttr to_core(const ibv_ah_attr& a) {
  verbs::AhAttr out;
  std::array<uint8_t, 16> raw;
  std::memcpy(raw.data(), a.grh.dgid.raw, 16);
  out.grh.dgid = Gid(raw);
  out.grh.flow_label = a.grh.flow_label;
  out.grh.sgid_index = a.grh.sgid_index;
  out.grh.hop_limit = a.grh.hop_limit;
  out.grh.traffic_class = a.grh.traffic_class;
  out.dlid = Lid(a.dlid);
  out.sl = a.sl;
  out.src_path_bits = a.src_path_bits;
  out.static_rate = a.static_rate;
  out.is_global = a.is_global != 0;
  out.port_num = a.port_num;
  return out;
}

ibv_ah_attr to_ibv(const verbs::AhAttr& a) {
  ibv_ah_attr out{};
  std::memcpy(out.grh.dgid.raw, a.grh.dgid.raw().data(), 16);
  out.grh.flow_label = a.grh.flow_label;
  out.grh.sgid_index = a.grh.sgid_index;
  out.grh.hop_limit = a.grh.hop_limit;
  out.grh.traffic_class = a.grh.traffic_class;
  out.dlid = a.dlid.value();
  out.sl = a.sl;
  out.src_path_bits = a.src_path_bits;
  out.static_rate = a.static_rate;
  out.is_global = a.is_global ? 1 : 0;
  out.port_num = a.port_num;
  return out;
}

verbs::QpCap to_core(const ibv_qp_cap& c) {
  return {c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.max_recv_sge, c.max_inline_data};
}

ibv_qp_cap to_ibv(const verbs::QpCap& c) {
  return {c.max_send_wr, c.max_recv_wr, c.max_send_sge, c.max_recv_sge, c.max_inline_data};
}

// Fields a modify does not carry (its mask says so) may hold anything; values outside an
// enum's range still convert, and the core's checks reject them where the mask names them.
verbs::QpAttr to_core(const ibv_qp_attr& a) {
  verbs::QpAttr out;
  out.qp_state = static_cast<verbs::QpState>(a.qp_state);
  out.cur_qp_state = static_cast<verbs::QpState>(a.cur_qp_state);
  out.path_mtu = static_cast<verbs::Mtu>(a.path_mtu);
  out.path_mig_state = static_cast<verbs::MigState>(a.path_mig_state);
  out.qkey = QKey(a.qkey);
  out.rq_psn = Psn::wrap(a.rq_psn);  // 24 bits, as HCAs take them
  out.sq_psn = Psn::wrap(a.sq_psn);
  out.dest_qp_num = Qpn(a.dest_qp_num & Qpn::kMask);
  out.qp_access_flags = a.qp_access_flags;
  out.cap = to_core(a.cap);
  out.ah_attr = to_core(a.ah_attr);
  out.alt_ah_attr = to_core(a.alt_ah_attr);
  out.pkey_index = a.pkey_index;
  out.alt_pkey_index = a.alt_pkey_index;
  out.en_sqd_async_notify = a.en_sqd_async_notify;
  out.sq_draining = a.sq_draining;
  out.max_rd_atomic = a.max_rd_atomic;
  out.max_dest_rd_atomic = a.max_dest_rd_atomic;
  out.min_rnr_timer = a.min_rnr_timer;
  out.port_num = a.port_num;
  out.timeout = a.timeout;
  out.retry_cnt = a.retry_cnt;
  out.rnr_retry = a.rnr_retry;
  out.alt_port_num = a.alt_port_num;
  out.alt_timeout = a.alt_timeout;
  out.rate_limit = a.rate_limit;
  return out;
}

void to_ibv(const verbs::QpAttr& a, ibv_qp_attr* out) {
  *out = ibv_qp_attr{};
  out->qp_state = static_cast<ibv_qp_state>(a.qp_state);
  out->cur_qp_state = static_cast<ibv_qp_state>(a.cur_qp_state);
  out->path_mtu = static_cast<ibv_mtu>(a.path_mtu);
  out->path_mig_state = static_cast<ibv_mig_state>(a.path_mig_state);
  out->qkey = a.qkey.value();
  out->rq_psn = a.rq_psn.value();
  out->sq_psn = a.sq_psn.value();
  out->dest_qp_num = a.dest_qp_num.value();
  out->qp_access_flags = a.qp_access_flags;
  out->cap = to_ibv(a.cap);
  out->ah_attr = to_ibv(a.ah_attr);
  out->alt_ah_attr = to_ibv(a.alt_ah_attr);
  out->pkey_index = a.pkey_index;
  out->alt_pkey_index = a.alt_pkey_index;
  out->en_sqd_async_notify = a.en_sqd_async_notify;
  out->sq_draining = a.sq_draining;
  out->max_rd_atomic = a.max_rd_atomic;
  out->max_dest_rd_atomic = a.max_dest_rd_atomic;
  out->min_rnr_timer = a.min_rnr_timer;
  out->port_num = a.port_num;
  out->timeout = a.timeout;
  out->retry_cnt = a.retry_cnt;
  out->rnr_retry = a.rnr_retry;
  out->alt_port_num = a.alt_port_num;
  out->alt_timeout = a.alt_timeout;
  out->rate_limit = a.rate_limit;
}

}  // namespace softib::compat
