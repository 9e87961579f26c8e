// The objects the drop-in libibverbs.so.1 hands to programs: each is the struct verbs.h
// declares (first member, so the program's pointer is the object's) plus the verbs core's
// object behind it. Programs read and write the public fields directly (qp->qp_num,
// cq->cq_context, qpx->wr_id) and the inline functions of verbs.h call through function
// pointers in them (context->ops.post_send, cq_ex->start_poll, qp_ex->wr_send), so every
// field and pointer is filled as rdma-core fills it (compat-facts.md A.3, A.4).
//
// Thread: the public structs are the program's; the core objects carry their own locking
// (provider/context.hpp). The per-object mutex/cond pairs are the ones libibverbs uses to
// count acknowledged events, used the same way here.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "provider/context.hpp"
#include "provider/devices.hpp"
#include "rc/qp.hpp"
#include "verbs/cq.hpp"
#include "verbs/work.hpp"

namespace softib::compat {

// ibv_device. Devices live for the whole process (programs may keep a device pointer after
// ibv_free_device_list while a context on it is open; libibverbs refcounts, we keep them).
struct Device {
  ibv_device dev{};
  provider::DeviceInfo info;
  int index = 0;  // ibv_get_device_index
};

struct Context {
  verbs_context vctx{};  // programs hold &vctx.context
  Device* device = nullptr;
  std::unique_ptr<provider::Context> core;
};

struct Pd {
  ibv_pd pd{};
  verbs::Pd* core = nullptr;
};

struct Mr {
  ibv_mr mr{};
  const verbs::Mr* core = nullptr;
};

struct CompChannel {
  ibv_comp_channel channel{};
  provider::CompChannel* core = nullptr;
};

// A CQ is always an ibv_cq_ex (whose leading fields are ibv_cq's: ibv_cq_ex_to_cq is a cast),
// so ibv_create_cq and ibv_create_cq_ex make the same object.
struct Cq {
  ibv_cq_ex cq{};
  verbs::Cq* core = nullptr;
  Context* ctx = nullptr;
  uint64_t wc_flags = 0;                  // IBV_WC_EX_WITH_*: what the ibv_cq_ex API may read
  uint32_t comp_events_reported = 0;      // handed out by ibv_get_cq_event; under cq.mutex
  uint32_t async_events_reported = 0;     // handed out by ibv_get_async_event; under cq.mutex
  verbs::WorkCompletion current{};        // the completion the ibv_cq_ex API reads
};

struct Srq {
  ibv_srq srq{};
  verbs::Srq* core = nullptr;
  uint32_t async_events_reported = 0;
};

// The ibv_wr_* API (ibv_qp_ex) gathers work requests between wr_start and wr_complete.
struct PendingWr {
  verbs::SendWr wr;
  size_t sge_first = 0, sge_count = 0;  // in QpBuilder::sges
  size_t inline_first = 0, inline_len = 0;  // in QpBuilder::inline_bytes
  bool inline_data = false;
};

struct QpBuilder {
  std::vector<PendingWr> wrs;
  std::vector<verbs::Sge> sges;
  std::vector<uint8_t> inline_bytes;
  int error = 0;  // the first error of the batch; wr_complete returns it
  // wr_complete's requests and the SGEs of their inline data, kept for their capacity: made
  // afresh, they were two allocations and two frees on every post (perftest posts this way).
  std::vector<verbs::SendWr> out;
  std::vector<verbs::Sge> inline_sges;
};

// A QP is always an ibv_qp_ex (ibv_qp first): ibv_qp_to_qp_ex returns it when the QP was
// made with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
struct Qp {
  ibv_qp_ex qpx{};
  rc::Qp* core = nullptr;
  Context* ctx = nullptr;
  bool has_qp_ex = false;
  uint64_t send_ops_flags = 0;
  uint32_t async_events_reported = 0;
  QpBuilder builder;
};

struct Ah {
  ibv_ah ah{};
  verbs::Ah* core = nullptr;
};

// From the program's pointers to ours. The public struct is the first member.
inline Context* from(ibv_context* c) {
  return reinterpret_cast<Context*>(reinterpret_cast<uint8_t*>(c) - offsetof(verbs_context, context));
}
inline Pd* from(ibv_pd* p) { return reinterpret_cast<Pd*>(p); }
inline Mr* from(ibv_mr* m) { return reinterpret_cast<Mr*>(m); }
inline Cq* from(ibv_cq* c) { return reinterpret_cast<Cq*>(c); }
inline Cq* from(ibv_cq_ex* c) { return reinterpret_cast<Cq*>(c); }
inline Qp* from(ibv_qp* q) { return reinterpret_cast<Qp*>(q); }
inline Qp* from(ibv_qp_ex* q) { return reinterpret_cast<Qp*>(q); }
inline Srq* from(ibv_srq* s) { return reinterpret_cast<Srq*>(s); }
inline Ah* from(ibv_ah* a) { return reinterpret_cast<Ah*>(a); }
inline CompChannel* from(ibv_comp_channel* c) { return reinterpret_cast<CompChannel*>(c); }

inline provider::Context& core_of(ibv_context* c) { return *from(c)->core; }

// Sets errno and returns it: the convention of the int-returning verbs.
int fail(int err);
int fail(const Status& s);
// Sets errno and returns nullptr: the convention of the pointer-returning verbs.
template <class T>
T* fail_null(int err) {
  fail(err);
  return nullptr;
}
template <class T>
T* fail_null(const Status& s) {
  fail(s);
  return nullptr;
}

// Fills the context's ops and extended ops (context.cpp, datapath.cpp).
void install_context_ops(Context& c);
void install_data_ops(ibv_context_ops& ops);
void install_resource_ops(Context& c);
void install_cq_ex_ops(Cq& cq);
void install_qp_ex_ops(Qp& qp);

// Conversions between verbs.h structs and the core's values (convert.cpp).
verbs::AhAttr to_core(const ibv_ah_attr& a);
ibv_ah_attr to_ibv(const verbs::AhAttr& a);
verbs::QpAttr to_core(const ibv_qp_attr& a);
void to_ibv(const verbs::QpAttr& a, ibv_qp_attr* out);
verbs::QpCap to_core(const ibv_qp_cap& c);
ibv_qp_cap to_ibv(const verbs::QpCap& c);
// IBV_QPT_* to the core's QP type; false for types softib does not implement.
bool to_core(ibv_qp_type t, verbs::QpType* out);

// Inline: out of line it was ~33 instructions a completion, a call on the way from a message
// to perftest's answer.
inline void to_ibv(const verbs::WorkCompletion& wc, ibv_wc* out) {
  out->wr_id = wc.wr_id;
  out->status = static_cast<ibv_wc_status>(wc.status);
  out->opcode = static_cast<ibv_wc_opcode>(wc.opcode);
  out->vendor_err = wc.vendor_err;
  out->byte_len = wc.byte_len;
  out->imm_data = wc.imm_data;
  out->qp_num = wc.qp_num.value();
  out->src_qp = wc.src_qp.value();
  out->wc_flags = wc.wc_flags;
  out->pkey_index = wc.pkey_index;
  out->slid = wc.slid.value();
  out->sl = wc.sl;
  out->dlid_path_bits = wc.dlid_path_bits;
}

}  // namespace softib::compat
