// The data path as verbs.h reaches it: the ibv_context_ops slots that ibv_post_send,
// ibv_post_recv, ibv_post_srq_recv, ibv_poll_cq and ibv_req_notify_cq call inline, the
// ibv_cq_ex polling API and the ibv_qp_ex ibv_wr_* API.
//
// Work requests are converted in batches on the stack (no allocation on the hot path) and
// handed to the core as spans; a failure points *bad_wr at the work request that failed, and
// the ones before it are posted, as libibverbs promises.
#include <infiniband/verbs.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "compat/verbs/export.hpp"
#include "compat/verbs/objects.hpp"

namespace softib::compat {
namespace {

constexpr size_t kBatch = 16;        // work requests converted at a time
constexpr size_t kMaxSge = 32;       // verbs::default_caps().max_sge: more is EINVAL anyway

// ---- posts ----

// Room for up to N converted work requests or SGEs, not zeroed first: the types' default
// initializers would zero all of it, and most of it goes unused (a post converts one request
// or a few; a batch has room for 16 and 64 SGEs).
template <class T, size_t N>
class Slots {
 public:
  T* data() { return reinterpret_cast<T*>(bytes_); }
  T& put(size_t i, const T& value) { return *std::construct_at(data() + i, value); }
  std::span<const T> span(size_t first, size_t count) { return {data() + first, count}; }

 private:
  // An aggregate, trivially copyable and destructible: bytes hold one with no constructor run.
  static_assert(std::is_aggregate_v<T> && std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  alignas(T) std::byte bytes_[N * sizeof(T)];
};

template <size_t N>
using SgeSlots = Slots<verbs::Sge, N>;

// struct ibv_sge and the core's Sge have one layout, so an SGE converts as one 16-byte copy
// (field by field GCC made a loop of ~24 instructions for one SGE).
static_assert(sizeof(verbs::Sge) == sizeof(ibv_sge) && offsetof(verbs::Sge, addr) == offsetof(ibv_sge, addr) &&
              offsetof(verbs::Sge, length) == offsetof(ibv_sge, length) &&
              offsetof(verbs::Sge, lkey) == offsetof(ibv_sge, lkey) && sizeof(LKey) == sizeof(uint32_t));

// Converts `count` ibv_sge into slots from `first` on (first + count <= N).
template <size_t N>
std::span<const verbs::Sge> convert_sges(const ibv_sge* in, size_t count, SgeSlots<N>& sges, size_t first) {
  for (size_t i = 0; i < count; ++i) sges.put(first + i, std::bit_cast<verbs::Sge>(in[i]));
  return sges.span(first, count);
}

// Converts one ibv_send_wr into `out`, which holds a default SendWr (every field the opcode
// does not name stays as the core expects it). false: the request is malformed in a way the
// core cannot see (too many SGEs for any QP, an opcode libibverbs has and softib does not).
template <size_t N>
[[gnu::always_inline]] inline bool convert_send(const ibv_send_wr& in, verbs::SendWr* out, SgeSlots<N>& sges,
                                                size_t first) {
  if (in.num_sge < 0 || static_cast<size_t>(in.num_sge) > kMaxSge) return false;
  switch (in.opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
    case IBV_WR_LOCAL_INV:
    case IBV_WR_BIND_MW:
    case IBV_WR_SEND_WITH_INV: break;
    default: return false;
  }
  out->wr_id = in.wr_id;
  out->sg_list = convert_sges(in.sg_list, static_cast<size_t>(in.num_sge), sges, first);
  out->opcode = static_cast<verbs::WrOpcode>(in.opcode);
  out->send_flags = in.send_flags;
  out->imm_data = in.imm_data;  // the union with invalidate_rkey: carried verbatim
  switch (in.opcode) {
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      out->atomic.remote_addr = in.wr.atomic.remote_addr;
      out->atomic.compare_add = in.wr.atomic.compare_add;
      out->atomic.swap = in.wr.atomic.swap;
      out->atomic.rkey = RKey(in.wr.atomic.rkey);
      break;
    default:
      out->rdma.remote_addr = in.wr.rdma.remote_addr;
      out->rdma.rkey = RKey(in.wr.rdma.rkey);
      break;
  }
  return true;
}

// One work request with few SGEs, the common case (a latency loop posts one at a time): no
// batch arrays to construct, which cost more than the post itself.
constexpr int kFewSge = 4;

// The short path's case, for a send or a receive chain: one request, 0 to kFewSge SGEs.
template <class Wr>
bool single_and_short(const Wr* wr) {
  return wr != nullptr && wr->next == nullptr && wr->num_sge >= 0 && wr->num_sge <= kFewSge;
}

int post_one_send(Qp* q, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  verbs::SendWr one;
  SgeSlots<kFewSge> sges;
  if (!convert_send(*wr, &one, sges, 0) || (q->qpx.qp_base.qp_type == IBV_QPT_UD && wr->wr.ud.ah == nullptr)) {
    *bad_wr = wr;
    return EINVAL;
  }
  if (q->qpx.qp_base.qp_type == IBV_QPT_UD) {
    one.ud.ah = from(wr->wr.ud.ah)->core;
    one.ud.remote_qpn = Qpn(wr->wr.ud.remote_qpn & Qpn::kMask);
    one.ud.remote_qkey = QKey(wr->wr.ud.remote_qkey);
  }
  size_t bad = 0;
  Status s = q->ctx->core->post_send(q->core, std::span<const verbs::SendWr>(&one, 1), &bad);
  if (!s.ok()) {
    *bad_wr = wr;
    return s.to_errno();
  }
  return 0;
}

// A list of work requests (or one with many SGEs), in batches of kBatch. Out of line: its
// arrays made post_send's frame ~3 KiB and its prologue save every callee-saved register,
// which a latency loop's single post paid for.
[[gnu::noinline]] int post_send_list(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  Qp* q = from(qp);
  const bool ud = qp->qp_type == IBV_QPT_UD;
  Slots<verbs::SendWr, kBatch> wrs;
  std::array<ibv_send_wr*, kBatch> src;
  SgeSlots<kMaxSge * 2> sges;
  while (wr != nullptr) {
    size_t n = 0, used = 0;
    for (; wr != nullptr && n < kBatch; wr = wr->next) {
      const size_t need = wr->num_sge > 0 ? static_cast<size_t>(wr->num_sge) : 0;
      // Out of room: post what came before. Never for the first (convert_send refuses more
      // than kMaxSge): a break there posted nothing and came back to it for ever.
      if (n > 0 && used + need > kMaxSge * 2) break;
      if (!convert_send(*wr, &wrs.put(n, verbs::SendWr{}), sges, used)) {
        if (n == 0) {
          *bad_wr = wr;
          return EINVAL;
        }
        break;  // post what came before; this one fails on the next round
      }
      if (ud) {
        if (wr->wr.ud.ah == nullptr) {
          if (n == 0) {
            *bad_wr = wr;
            return EINVAL;
          }
          break;
        }
        verbs::SendWr& w = wrs.data()[n];
        w.ud.ah = from(wr->wr.ud.ah)->core;
        w.ud.remote_qpn = Qpn(wr->wr.ud.remote_qpn & Qpn::kMask);
        w.ud.remote_qkey = QKey(wr->wr.ud.remote_qkey);
      }
      src[n] = wr;
      used += need;
      ++n;
    }
    size_t bad = 0;
    Status s = q->ctx->core->post_send(q->core, wrs.span(0, n), &bad);
    if (!s.ok()) {
      *bad_wr = src[bad];
      return s.to_errno();
    }
  }
  return 0;
}

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  return single_and_short(wr) ? post_one_send(from(qp), wr, bad_wr) : post_send_list(qp, wr, bad_wr);
}

// As post_send_list, for receives.
template <class Post>
[[gnu::noinline]] int post_receive_list(ibv_recv_wr* wr, ibv_recv_wr** bad_wr, Post post) {
  Slots<verbs::RecvWr, kBatch> wrs;
  std::array<ibv_recv_wr*, kBatch> src;
  SgeSlots<kMaxSge * 2> sges;
  while (wr != nullptr) {
    size_t n = 0, used = 0;
    for (; wr != nullptr && n < kBatch; wr = wr->next) {
      if (wr->num_sge < 0 || static_cast<size_t>(wr->num_sge) > kMaxSge) {
        if (n == 0) {
          *bad_wr = wr;
          return EINVAL;
        }
        break;
      }
      const size_t need = static_cast<size_t>(wr->num_sge);
      if (used + need > kMaxSge * 2) break;
      wrs.put(n, {wr->wr_id, convert_sges(wr->sg_list, need, sges, used)});
      src[n] = wr;
      used += need;
      ++n;
    }
    size_t bad = 0;
    Status s = post(wrs.span(0, n), &bad);
    if (!s.ok()) {
      *bad_wr = src[bad];
      return s.to_errno();
    }
  }
  return 0;
}

template <class Post>
int post_receives(ibv_recv_wr* wr, ibv_recv_wr** bad_wr, Post post) {
  if (!single_and_short(wr)) return post_receive_list(wr, bad_wr, post);
  SgeSlots<kFewSge> sges;
  const verbs::RecvWr one{wr->wr_id, convert_sges(wr->sg_list, static_cast<size_t>(wr->num_sge), sges, 0)};
  size_t bad = 0;
  Status s = post(std::span<const verbs::RecvWr>(&one, 1), &bad);
  if (!s.ok()) {
    *bad_wr = wr;
    return s.to_errno();
  }
  return 0;
}

int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  Qp* q = from(qp);
  return post_receives(wr, bad_wr, [q](std::span<const verbs::RecvWr> wrs, size_t* bad) {
    return q->ctx->core->post_recv(q->core, wrs, bad);
  });
}

int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  Srq* s = from(srq);
  provider::Context& c = core_of(srq->context);
  return post_receives(wr, bad_wr, [&c, s](std::span<const verbs::RecvWr> wrs, size_t* bad) {
    return c.post_srq_recv(s->core, wrs, bad);
  });
}

// ---- polls ----

// A poll for more than one completion, through a per-thread batch. Out of line, as
// post_send_list, so that a one-completion poll saves no registers for it.
[[gnu::noinline]] int poll_cq_batch(Cq* q, int num_entries, ibv_wc* wc) {
  // Per thread, built once: a polling loop calls this millions of times, and constructing a
  // fresh batch each time cost more than the poll (threads may poll one CQ together).
  thread_local std::array<verbs::WorkCompletion, kBatch> batch;
  int total = 0;
  while (total < num_entries) {
    const size_t want = std::min<size_t>(batch.size(), static_cast<size_t>(num_entries - total));
    const size_t n = q->ctx->core->poll_cq(q->core, std::span(batch.data(), want));
    for (size_t i = 0; i < n; ++i) to_ibv(batch[i], &wc[total + static_cast<int>(i)]);
    total += static_cast<int>(n);
    if (n < want) break;
  }
  return total;
}

int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  Cq* q = from(cq);
  if (num_entries != 1) return num_entries <= 0 ? 0 : poll_cq_batch(q, num_entries, wc);
  verbs::WorkCompletion one;  // a latency loop's poll: one completion, no batch
  if (q->ctx->core->poll_cq(q->core, std::span(&one, 1)) == 0) return 0;
  to_ibv(one, wc);
  return 1;
}

int req_notify_cq(ibv_cq* cq, int solicited_only) {
  Cq* q = from(cq);
  if (cq->channel == nullptr) return EINVAL;
  Status s = q->ctx->core->req_notify_cq(q->core, solicited_only != 0);
  return s.ok() ? 0 : s.to_errno();
}

// ---- the ibv_cq_ex API: one completion at a time in Cq::current ----

int cq_next(ibv_cq_ex* cq) {
  Cq* q = from(cq);
  if (q->ctx->core->poll_cq(q->core, std::span(&q->current, 1)) == 0) return ENOENT;
  cq->wr_id = q->current.wr_id;
  cq->status = static_cast<ibv_wc_status>(q->current.status);
  return 0;
}

int cq_start_poll(ibv_cq_ex* cq, ibv_poll_cq_attr* attr) {
  if (attr->comp_mask != 0) return EINVAL;
  return cq_next(cq);
}

void cq_end_poll(ibv_cq_ex*) {}

ibv_wc_opcode cq_read_opcode(ibv_cq_ex* cq) { return static_cast<ibv_wc_opcode>(from(cq)->current.opcode); }
uint32_t cq_read_vendor_err(ibv_cq_ex* cq) { return from(cq)->current.vendor_err; }
uint32_t cq_read_byte_len(ibv_cq_ex* cq) { return from(cq)->current.byte_len; }
__be32 cq_read_imm_data(ibv_cq_ex* cq) { return from(cq)->current.imm_data; }
uint32_t cq_read_qp_num(ibv_cq_ex* cq) { return from(cq)->current.qp_num.value(); }
uint32_t cq_read_src_qp(ibv_cq_ex* cq) { return from(cq)->current.src_qp.value(); }
unsigned int cq_read_wc_flags(ibv_cq_ex* cq) { return from(cq)->current.wc_flags; }
uint32_t cq_read_slid(ibv_cq_ex* cq) { return from(cq)->current.slid.value(); }
uint8_t cq_read_sl(ibv_cq_ex* cq) { return from(cq)->current.sl; }
uint8_t cq_read_dlid_path_bits(ibv_cq_ex* cq) { return from(cq)->current.dlid_path_bits; }
uint64_t cq_read_completion_ts(ibv_cq_ex* cq) { return from(cq)->current.timestamp_ns; }
uint64_t cq_read_completion_wallclock_ns(ibv_cq_ex* cq) {
  // The timestamp is CLOCK_MONOTONIC; the wall clock moved by the same amount since.
  timespec mono{}, real{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  const int64_t offset = (real.tv_sec - mono.tv_sec) * 1000000000LL + (real.tv_nsec - mono.tv_nsec);
  return from(cq)->current.timestamp_ns + static_cast<uint64_t>(offset);
}
uint16_t cq_read_cvlan(ibv_cq_ex*) { return 0; }
uint32_t cq_read_flow_tag(ibv_cq_ex*) { return 0; }
void cq_read_tm_info(ibv_cq_ex*, ibv_wc_tm_info* info) { *info = ibv_wc_tm_info{}; }

// ---- the ibv_qp_ex API: work requests gathered between wr_start and wr_complete ----

PendingWr* begin_wr(ibv_qp_ex* qpx, verbs::WrOpcode opcode, uint64_t flag) {
  Qp* q = from(qpx);
  QpBuilder& b = q->builder;
  if (!(q->send_ops_flags & flag) && b.error == 0) b.error = EOPNOTSUPP;
  PendingWr& p = b.wrs.emplace_back();
  p.wr.wr_id = qpx->wr_id;
  p.wr.send_flags = qpx->wr_flags;
  p.wr.opcode = opcode;
  p.sge_first = b.sges.size();
  return &p;
}

PendingWr* current_wr(ibv_qp_ex* qpx) {
  QpBuilder& b = from(qpx)->builder;
  if (b.wrs.empty()) {
    if (b.error == 0) b.error = EINVAL;  // a setter before any wr_* opcode
    return nullptr;
  }
  return &b.wrs.back();
}

void wr_start(ibv_qp_ex* qpx) {
  QpBuilder& b = from(qpx)->builder;
  b.wrs.clear();
  b.sges.clear();
  b.inline_bytes.clear();
  b.error = 0;
}

int wr_complete(ibv_qp_ex* qpx) {
  Qp* q = from(qpx);
  QpBuilder& b = q->builder;
  int err = b.error;
  if (err == 0 && !b.wrs.empty()) {
    // The vectors are complete now: point each request at its SGEs and inline bytes.
    b.out.clear();
    b.inline_sges.resize(b.wrs.size());  // before any pointer into it is taken
    for (size_t i = 0; i < b.wrs.size(); ++i) {
      PendingWr& p = b.wrs[i];
      if (p.inline_data) {
        b.inline_sges[i] = {reinterpret_cast<uintptr_t>(b.inline_bytes.data() + p.inline_first),
                            static_cast<uint32_t>(p.inline_len), LKey(0)};
        p.wr.sg_list = std::span<const verbs::Sge>(&b.inline_sges[i], p.inline_len == 0 ? 0 : 1);
        p.wr.send_flags |= verbs::send_flag::kInline;
      } else {
        p.wr.sg_list = std::span<const verbs::Sge>(b.sges.data() + p.sge_first, p.sge_count);
      }
      b.out.push_back(p.wr);
    }
    // All or nothing: "the entire posting will be aborted" (ibv_wr_post(3)).
    size_t bad = 0;
    Status s = q->ctx->core->post_send_whole(q->core, b.out, &bad);
    if (!s.ok()) err = s.to_errno();
  }
  wr_start(qpx);
  return err;
}

void wr_abort(ibv_qp_ex* qpx) { wr_start(qpx); }

void wr_send(ibv_qp_ex* qpx) { begin_wr(qpx, verbs::WrOpcode::kSend, IBV_QP_EX_WITH_SEND); }
void wr_send_imm(ibv_qp_ex* qpx, __be32 imm) {
  begin_wr(qpx, verbs::WrOpcode::kSendWithImm, IBV_QP_EX_WITH_SEND_WITH_IMM)->wr.imm_data = imm;
}
void wr_send_inv(ibv_qp_ex* qpx, uint32_t rkey) {
  begin_wr(qpx, verbs::WrOpcode::kSendWithInv, IBV_QP_EX_WITH_SEND_WITH_INV)->wr.imm_data = rkey;
}
void wr_send_tso(ibv_qp_ex* qpx, void*, uint16_t, uint16_t) {
  begin_wr(qpx, verbs::WrOpcode::kSend, IBV_QP_EX_WITH_TSO);  // never in send_ops_flags: EOPNOTSUPP
}
void wr_rdma_write(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
  PendingWr* p = begin_wr(qpx, verbs::WrOpcode::kRdmaWrite, IBV_QP_EX_WITH_RDMA_WRITE);
  p->wr.rdma = {addr, RKey(rkey)};
}
void wr_rdma_write_imm(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, __be32 imm) {
  PendingWr* p = begin_wr(qpx, verbs::WrOpcode::kRdmaWriteWithImm, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
  p->wr.rdma = {addr, RKey(rkey)};
  p->wr.imm_data = imm;
}
void wr_rdma_read(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
  PendingWr* p = begin_wr(qpx, verbs::WrOpcode::kRdmaRead, IBV_QP_EX_WITH_RDMA_READ);
  p->wr.rdma = {addr, RKey(rkey)};
}
void wr_atomic_cmp_swp(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
  PendingWr* p = begin_wr(qpx, verbs::WrOpcode::kAtomicCmpAndSwp, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);
  p->wr.atomic.remote_addr = addr;
  p->wr.atomic.compare_add = compare;
  p->wr.atomic.swap = swap;
  p->wr.atomic.rkey = RKey(rkey);
}
void wr_atomic_fetch_add(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t add) {
  PendingWr* p = begin_wr(qpx, verbs::WrOpcode::kAtomicFetchAndAdd, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
  p->wr.atomic.remote_addr = addr;
  p->wr.atomic.compare_add = add;
  p->wr.atomic.rkey = RKey(rkey);
}
void wr_atomic_write(ibv_qp_ex* qpx, uint32_t, uint64_t, const void*) {
  begin_wr(qpx, verbs::WrOpcode::kRdmaWrite, IBV_QP_EX_WITH_ATOMIC_WRITE);  // EOPNOTSUPP
}
void wr_local_inv(ibv_qp_ex* qpx, uint32_t) { begin_wr(qpx, verbs::WrOpcode::kLocalInv, IBV_QP_EX_WITH_LOCAL_INV); }
void wr_bind_mw(ibv_qp_ex* qpx, ibv_mw*, uint32_t, const ibv_mw_bind_info*) {
  begin_wr(qpx, verbs::WrOpcode::kBindMw, IBV_QP_EX_WITH_BIND_MW);
}

void wr_set_ud_addr(ibv_qp_ex* qpx, ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey) {
  PendingWr* p = current_wr(qpx);
  if (p == nullptr) return;
  p->wr.ud.ah = ah == nullptr ? nullptr : from(ah)->core;
  p->wr.ud.remote_qpn = Qpn(remote_qpn & Qpn::kMask);
  p->wr.ud.remote_qkey = QKey(remote_qkey);
}
void wr_set_xrc_srqn(ibv_qp_ex* qpx, uint32_t) {
  QpBuilder& b = from(qpx)->builder;
  if (b.error == 0) b.error = EOPNOTSUPP;
}

void wr_set_sge_list(ibv_qp_ex* qpx, size_t num_sge, const ibv_sge* list) {
  PendingWr* p = current_wr(qpx);
  if (p == nullptr) return;
  QpBuilder& b = from(qpx)->builder;
  p->sge_first = b.sges.size();
  p->sge_count = num_sge;
  p->inline_data = false;
  for (size_t i = 0; i < num_sge; ++i) b.sges.push_back({list[i].addr, list[i].length, LKey(list[i].lkey)});
}
void wr_set_sge(ibv_qp_ex* qpx, uint32_t lkey, uint64_t addr, uint32_t length) {
  const ibv_sge sge{addr, length, lkey};
  wr_set_sge_list(qpx, 1, &sge);
}

// Inline data is copied now (the program may reuse its buffer before wr_complete).
void wr_set_inline_data_list(ibv_qp_ex* qpx, size_t num_buf, const ibv_data_buf* list) {
  PendingWr* p = current_wr(qpx);
  if (p == nullptr) return;
  QpBuilder& b = from(qpx)->builder;
  p->inline_data = true;
  p->inline_first = b.inline_bytes.size();
  p->inline_len = 0;
  for (size_t i = 0; i < num_buf; ++i) {
    const auto* bytes = static_cast<const uint8_t*>(list[i].addr);
    b.inline_bytes.insert(b.inline_bytes.end(), bytes, bytes + list[i].length);
    p->inline_len += list[i].length;
  }
}
void wr_set_inline_data(ibv_qp_ex* qpx, void* addr, size_t length) {
  const ibv_data_buf buf{addr, length};
  wr_set_inline_data_list(qpx, 1, &buf);
}

}  // namespace

void install_data_ops(ibv_context_ops& ops) {
  ops.post_send = post_send;
  ops.post_recv = post_recv;
  ops.post_srq_recv = post_srq_recv;
  ops.poll_cq = poll_cq;
  ops.req_notify_cq = req_notify_cq;
}

void install_cq_ex_ops(Cq& q) {
  ibv_cq_ex& c = q.cq;
  c.start_poll = cq_start_poll;
  c.next_poll = cq_next;
  c.end_poll = cq_end_poll;
  c.read_opcode = cq_read_opcode;
  c.read_vendor_err = cq_read_vendor_err;
  c.read_byte_len = cq_read_byte_len;
  c.read_imm_data = cq_read_imm_data;
  c.read_qp_num = cq_read_qp_num;
  c.read_src_qp = cq_read_src_qp;
  c.read_wc_flags = cq_read_wc_flags;
  c.read_slid = cq_read_slid;
  c.read_sl = cq_read_sl;
  c.read_dlid_path_bits = cq_read_dlid_path_bits;
  c.read_completion_ts = cq_read_completion_ts;
  c.read_completion_wallclock_ns = cq_read_completion_wallclock_ns;
  c.read_cvlan = cq_read_cvlan;
  c.read_flow_tag = cq_read_flow_tag;
  c.read_tm_info = cq_read_tm_info;
}

void install_qp_ex_ops(Qp& q) {
  ibv_qp_ex& x = q.qpx;
  x.wr_start = wr_start;
  x.wr_complete = wr_complete;
  x.wr_abort = wr_abort;
  x.wr_send = wr_send;
  x.wr_send_imm = wr_send_imm;
  x.wr_send_inv = wr_send_inv;
  x.wr_send_tso = wr_send_tso;
  x.wr_rdma_write = wr_rdma_write;
  x.wr_rdma_write_imm = wr_rdma_write_imm;
  x.wr_rdma_read = wr_rdma_read;
  x.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  x.wr_atomic_fetch_add = wr_atomic_fetch_add;
  x.wr_atomic_write = wr_atomic_write;
  x.wr_local_inv = wr_local_inv;
  x.wr_bind_mw = wr_bind_mw;
  x.wr_set_ud_addr = wr_set_ud_addr;
  x.wr_set_xrc_srqn = wr_set_xrc_srqn;
  x.wr_set_sge = wr_set_sge;
  x.wr_set_sge_list = wr_set_sge_list;
  x.wr_set_inline_data = wr_set_inline_data;
  x.wr_set_inline_data_list = wr_set_inline_data_list;
}

}  // namespace softib::compat
