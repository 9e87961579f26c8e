// libibverbs' helpers that need no device: rates, the *_str functions, the kernel-struct
// copies librdmacm uses, fork support.
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include <array>
#include <cstring>
#include <type_traits>

#include "compat/verbs/export.hpp"
#include "compat/verbs/objects.hpp"
#include "verbs/async_event.hpp"

namespace softib::compat {
namespace {

// IBA 9.11 / enum ibv_rate: each static rate, as a multiple of 2.5 Gb/s where it is one
// (ibv_rate_to_mult) and in Mb/s of data (ibv_rate_to_mbps: 64b/66b links carry less than
// their signalling rate).
struct RateRow {
  ibv_rate rate;
  int mult;  // -1: not a multiple of 2.5 Gb/s
  int mbps;
};
constexpr std::array<RateRow, 23> kRates{{
    {IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},       {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},     {IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},    {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_14_GBPS, -1, 14062},    {IBV_RATE_56_GBPS, -1, 56250},    {IBV_RATE_112_GBPS, -1, 112500},
    {IBV_RATE_168_GBPS, -1, 168750},  {IBV_RATE_25_GBPS, -1, 25781},    {IBV_RATE_100_GBPS, -1, 103125},
    {IBV_RATE_200_GBPS, -1, 206250},  {IBV_RATE_300_GBPS, -1, 309375},  {IBV_RATE_28_GBPS, 11, 28125},
    {IBV_RATE_50_GBPS, 20, 53125},    {IBV_RATE_400_GBPS, 160, 425000}, {IBV_RATE_600_GBPS, 240, 637500},
    {IBV_RATE_800_GBPS, 320, 850000}, {IBV_RATE_1200_GBPS, 480, 1275000},
}};

const RateRow* rate_row(ibv_rate r) {
  for (const RateRow& row : kRates)
    if (row.rate == r) return &row;
  return nullptr;
}

template <size_t N>
const char* lookup(const std::array<const char*, N>& names, int value) {
  if (value < 0 || static_cast<size_t>(value) >= N || names[static_cast<size_t>(value)] == nullptr) return "unknown";
  return names[static_cast<size_t>(value)];
}

// dst = src between the kernel's and libibverbs' integer types for the same field.
template <class To, class From>
void put(To& dst, From src) {
  if constexpr (std::is_same_v<To, From>) {
    dst = src;
  } else {
    dst = static_cast<To>(src);
  }
}

void ah_from_kern(ibv_ah_attr* dst, const ib_uverbs_ah_attr& src) {
  std::memcpy(dst->grh.dgid.raw, src.grh.dgid, sizeof dst->grh.dgid.raw);
  put(dst->grh.flow_label, src.grh.flow_label);
  put(dst->grh.sgid_index, src.grh.sgid_index);
  put(dst->grh.hop_limit, src.grh.hop_limit);
  put(dst->grh.traffic_class, src.grh.traffic_class);
  put(dst->dlid, src.dlid);
  put(dst->sl, src.sl);
  put(dst->src_path_bits, src.src_path_bits);
  put(dst->static_rate, src.static_rate);
  put(dst->is_global, src.is_global);
  put(dst->port_num, src.port_num);
}

// The path record fields, which ib_user_path_rec and ibv_sa_path_rec name alike.
template <class To, class From>
void copy_path_fields(To* dst, const From& src) {
  put(dst->dlid, src.dlid);
  put(dst->slid, src.slid);
  put(dst->raw_traffic, src.raw_traffic);
  put(dst->flow_label, src.flow_label);
  put(dst->hop_limit, src.hop_limit);
  put(dst->traffic_class, src.traffic_class);
  put(dst->reversible, src.reversible);
  put(dst->numb_path, src.numb_path);
  put(dst->pkey, src.pkey);
  put(dst->sl, src.sl);
  put(dst->mtu_selector, src.mtu_selector);
  put(dst->mtu, src.mtu);
  put(dst->rate_selector, src.rate_selector);
  put(dst->rate, src.rate);
  put(dst->packet_life_time_selector, src.packet_life_time_selector);
  put(dst->packet_life_time, src.packet_life_time);
  put(dst->preference, src.preference);
}

}  // namespace
}  // namespace softib::compat

using namespace softib;
using namespace softib::compat;

// ---- rates ----

SOFTIB_EXPORT int ibv_rate_to_mult(ibv_rate rate) {
  const RateRow* r = rate_row(rate);
  return r == nullptr ? -1 : r->mult;
}

SOFTIB_EXPORT ibv_rate mult_to_ibv_rate(int mult) {
  for (const RateRow& row : kRates)
    if (row.mult == mult && mult > 0) return row.rate;
  return IBV_RATE_MAX;
}

SOFTIB_EXPORT int ibv_rate_to_mbps(ibv_rate rate) {
  const RateRow* r = rate_row(rate);
  return r == nullptr ? -1 : r->mbps;
}

SOFTIB_EXPORT ibv_rate mbps_to_ibv_rate(int mbps) {
  for (const RateRow& row : kRates)
    if (row.mbps == mbps) return row.rate;
  return IBV_RATE_MAX;
}

// ---- names (libibverbs' wording, which programs print) ----

SOFTIB_EXPORT const char* ibv_node_type_str(ibv_node_type type) {
  static constexpr std::array<const char*, 7> kNames{
      nullptr,  // 0 is not a node type
      "InfiniBand channel adapter", "InfiniBand switch", "InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP"};
  if (type == IBV_NODE_UNSPECIFIED) return "unspecified";
  return lookup(kNames, type);
}

SOFTIB_EXPORT const char* ibv_port_state_str(ibv_port_state state) {
  static constexpr std::array<const char*, 6> kNames{"no state change (NOP)", "down", "init",
                                                      "armed", "active", "active defer"};
  return lookup(kNames, state);
}

// The verbs layer holds libibverbs' wording for these two (tools print them too); its views
// are of string literals, so their data() are C strings.
SOFTIB_EXPORT const char* ibv_event_type_str(ibv_event_type event) {
  return verbs::to_string(static_cast<verbs::AsyncEventType>(event)).data();
}

SOFTIB_EXPORT const char* ibv_wc_status_str(ibv_wc_status status) {
  return verbs::to_string(static_cast<verbs::WcStatus>(status)).data();
}

// ---- the kernel structs librdmacm converts ----

SOFTIB_EXPORT void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, ib_uverbs_ah_attr* src) { ah_from_kern(dst, *src); }

SOFTIB_EXPORT void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, ib_uverbs_qp_attr* src) {
  dst->cur_qp_state = static_cast<ibv_qp_state>(src->cur_qp_state);
  dst->path_mtu = static_cast<ibv_mtu>(src->path_mtu);
  dst->path_mig_state = static_cast<ibv_mig_state>(src->path_mig_state);
  dst->qkey = src->qkey;
  dst->rq_psn = src->rq_psn;
  dst->sq_psn = src->sq_psn;
  dst->dest_qp_num = src->dest_qp_num;
  dst->qp_access_flags = src->qp_access_flags;
  dst->cap = {src->max_send_wr, src->max_recv_wr, src->max_send_sge, src->max_recv_sge, src->max_inline_data};
  ah_from_kern(&dst->ah_attr, src->ah_attr);
  ah_from_kern(&dst->alt_ah_attr, src->alt_ah_attr);
  dst->pkey_index = src->pkey_index;
  dst->alt_pkey_index = src->alt_pkey_index;
  dst->en_sqd_async_notify = src->en_sqd_async_notify;
  dst->sq_draining = src->sq_draining;
  dst->max_rd_atomic = src->max_rd_atomic;
  dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
  dst->min_rnr_timer = src->min_rnr_timer;
  dst->port_num = src->port_num;
  dst->timeout = src->timeout;
  dst->retry_cnt = src->retry_cnt;
  dst->rnr_retry = src->rnr_retry;
  dst->alt_port_num = src->alt_port_num;
  dst->alt_timeout = src->alt_timeout;
}

SOFTIB_EXPORT void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, ib_user_path_rec* src) {
  std::memcpy(dst->dgid.raw, src->dgid, 16);
  std::memcpy(dst->sgid.raw, src->sgid, 16);
  copy_path_fields(dst, *src);
}

SOFTIB_EXPORT void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, ibv_sa_path_rec* src) {
  std::memcpy(dst->dgid, src->dgid.raw, 16);
  std::memcpy(dst->sgid, src->sgid.raw, 16);
  copy_path_fields(dst, *src);
}

// ---- fork ----

// softib pins nothing and maps nothing from a device: a child of fork() sees its memory as any
// child does. So fork support is not needed (IBV_FORK_UNNEEDED), as on kernels with
// copy-on-fork for pinned pages.
SOFTIB_EXPORT int ibv_fork_init() { return 0; }
SOFTIB_EXPORT ibv_fork_status ibv_is_fork_initialized() { return IBV_FORK_UNNEEDED; }
SOFTIB_EXPORT int ibv_dontfork_range(void*, size_t) { return 0; }
SOFTIB_EXPORT int ibv_dofork_range(void*, size_t) { return 0; }

// ---- providers and RoCE ----

// Providers register themselves from their ELF constructors (libmlx5, libefa are NEEDED by
// perftest); softib loads no provider, so registration is accepted and ignored.
SOFTIB_EXPORT void ibv_register_driver(const char*, void*) {}

// RoCE L2 resolution (libmlx5 imports it): there is no Ethernet neighbour to resolve.
SOFTIB_EXPORT int ibv_resolve_eth_l2_from_gid(ibv_context*, ibv_ah_attr*, uint8_t*, uint16_t*) {
  return EOPNOTSUPP;
}
