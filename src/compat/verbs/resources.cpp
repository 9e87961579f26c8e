// Verbs objects: PD, MR, completion channels, CQ, SRQ, QP, AH. Each call converts the
// program's struct, asks the verbs core, and fills the public fields as libibverbs does
// (rdma-core v44 verbs.c and the kernel's uverbs handlers: cap write-back, qp->state
// tracking, waiting for acknowledged events on destroy).
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "compat/verbs/export.hpp"
#include "compat/verbs/objects.hpp"

namespace softib::compat {
namespace {

void init_sync(pthread_mutex_t* mu, pthread_cond_t* cond) {
  pthread_mutex_init(mu, nullptr);
  pthread_cond_init(cond, nullptr);
}

void destroy_sync(pthread_mutex_t* mu, pthread_cond_t* cond) {
  pthread_cond_destroy(cond);
  pthread_mutex_destroy(mu);
}

// ibv_destroy_*: wait until the program has acknowledged every event it was given for the
// object (libibverbs: ibv_cmd_destroy_* wait on the object's cond for the kernel's counts).
void wait_for_acks(pthread_mutex_t* mu, pthread_cond_t* cond, const uint32_t* completed, uint32_t reported) {
  pthread_mutex_lock(mu);
  while (*completed != reported) pthread_cond_wait(cond, mu);
  pthread_mutex_unlock(mu);
}

verbs::Srq* core_srq(ibv_srq* s) { return s == nullptr ? nullptr : from(s)->core; }

// The QP types softib runs, and what ibv_qp_init_attr_ex may ask of them.
constexpr uint64_t kSendOpsSupported =
    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
    IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV;
constexpr uint32_t kQpInitAttrSupported =
    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;

ibv_qp* create_qp_common(ibv_context* context, ibv_pd* pd, ibv_qp_init_attr* attr, uint64_t send_ops,
                         bool want_qp_ex) {
  verbs::QpType type;
  if (!to_core(attr->qp_type, &type)) return fail_null<ibv_qp>(EOPNOTSUPP);
  if (attr->send_cq == nullptr || (attr->recv_cq == nullptr && attr->srq == nullptr && type != verbs::QpType::kUd))
    return fail_null<ibv_qp>(EINVAL);
  if (attr->recv_cq == nullptr) attr->recv_cq = attr->send_cq;
  Context& c = *from(context);
  verbs::QpInitAttr init;
  init.qp_type = type;
  init.cap = to_core(attr->cap);
  init.sq_sig_all = attr->sq_sig_all != 0;
  init.use_srq = attr->srq != nullptr;
  auto* q = new Qp();
  auto core = c.core->create_qp(from(pd)->core, from(attr->send_cq)->core, from(attr->recv_cq)->core,
                                core_srq(attr->srq), init, q);
  if (!core) {
    delete q;
    return fail_null<ibv_qp>(core.error());
  }
  q->core = *core;
  q->ctx = &c;
  q->has_qp_ex = want_qp_ex;
  q->send_ops_flags = send_ops;
  ibv_qp& qp = q->qpx.qp_base;
  qp.context = context;
  qp.qp_context = attr->qp_context;
  qp.pd = pd;
  qp.send_cq = attr->send_cq;
  qp.recv_cq = attr->recv_cq;
  qp.srq = attr->srq;
  qp.handle = q->core->qpn().value();
  qp.qp_num = q->core->qpn().value();
  qp.state = IBV_QPS_RESET;
  qp.qp_type = attr->qp_type;
  init_sync(&qp.mutex, &qp.cond);
  attr->cap = to_ibv(q->core->init_attr().cap);
  if (want_qp_ex) install_qp_ex_ops(*q);
  return &qp;
}

ibv_qp* create_qp_ex(ibv_context* context, ibv_qp_init_attr_ex* attr) {
  if ((attr->comp_mask & ~kQpInitAttrSupported) != 0) return fail_null<ibv_qp>(EOPNOTSUPP);
  if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == nullptr) return fail_null<ibv_qp>(EINVAL);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags != 0)
    return fail_null<ibv_qp>(EOPNOTSUPP);
  uint64_t send_ops = 0;
  if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
    send_ops = attr->send_ops_flags;
    if ((send_ops & ~kSendOpsSupported) != 0) return fail_null<ibv_qp>(EOPNOTSUPP);
  }
  ibv_qp_init_attr basic{};
  basic.qp_context = attr->qp_context;
  basic.send_cq = attr->send_cq;
  basic.recv_cq = attr->recv_cq;
  basic.srq = attr->srq;
  basic.cap = attr->cap;
  basic.qp_type = attr->qp_type;
  basic.sq_sig_all = attr->sq_sig_all;
  ibv_qp* qp = create_qp_common(context, attr->pd, &basic, send_ops,
                                (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0);
  if (qp != nullptr) attr->cap = basic.cap;
  return qp;
}

// ---- CQs ----

constexpr uint64_t kCqExReadable = uint64_t{IBV_WC_STANDARD_FLAGS} | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
                                   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

ibv_cq_ex* create_cq_common(ibv_context* context, uint32_t cqe, void* cq_context, ibv_comp_channel* channel,
                            uint32_t comp_vector, uint64_t wc_flags) {
  Context& c = *from(context);
  if (cqe == 0 || cqe > c.core->caps().max_cqe) return fail_null<ibv_cq_ex>(EINVAL);
  if (comp_vector >= static_cast<uint32_t>(context->num_comp_vectors)) return fail_null<ibv_cq_ex>(EINVAL);
  auto* q = new Cq();
  auto core = c.core->create_cq(cqe, q, channel == nullptr ? nullptr : from(channel)->core);
  if (!core) {
    delete q;
    return fail_null<ibv_cq_ex>(core.error());
  }
  q->core = *core;
  q->ctx = &c;
  q->wc_flags = wc_flags;
  if (wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK))
    q->core->enable_timestamps(&SteadyClock::instance());
  ibv_cq_ex& cq = q->cq;
  cq.context = context;
  cq.channel = channel;
  cq.cq_context = cq_context;
  cq.handle = q->core->cqe();
  cq.cqe = static_cast<int>(q->core->cqe());
  init_sync(&cq.mutex, &cq.cond);
  if (channel != nullptr) ++channel->refcnt;
  install_cq_ex_ops(*q);
  return &cq;
}

ibv_cq_ex* create_cq_ex(ibv_context* context, ibv_cq_init_attr_ex* attr) {
  constexpr uint32_t kMaskSupported = IBV_CQ_INIT_ATTR_MASK_FLAGS;
  if ((attr->comp_mask & ~kMaskSupported) != 0) return fail_null<ibv_cq_ex>(EOPNOTSUPP);
  if ((attr->wc_flags & ~kCqExReadable) != 0) return fail_null<ibv_cq_ex>(EOPNOTSUPP);
  if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
      (attr->flags & ~uint32_t{IBV_CREATE_CQ_ATTR_SINGLE_THREADED}) != 0)
    return fail_null<ibv_cq_ex>(EOPNOTSUPP);
  return create_cq_common(context, attr->cqe, attr->cq_context, attr->channel, attr->comp_vector,
                          attr->wc_flags);
}

ibv_srq* create_srq_common(ibv_pd* pd, ibv_srq_init_attr* attr) {
  Context& c = *from(pd->context);
  auto* s = new Srq();
  auto core = c.core->create_srq(from(pd)->core, attr->attr.max_wr, attr->attr.max_sge, attr->attr.srq_limit, s);
  if (!core) {
    delete s;
    return fail_null<ibv_srq>(core.error());
  }
  s->core = *core;
  ibv_srq& srq = s->srq;
  srq.context = pd->context;
  srq.srq_context = attr->srq_context;
  srq.pd = pd;
  srq.handle = 0;
  init_sync(&srq.mutex, &srq.cond);
  attr->attr.max_wr = s->core->rq().max_wr();
  attr->attr.max_sge = s->core->rq().max_sge();
  return &srq;
}

ibv_srq* create_srq_ex(ibv_context* context, ibv_srq_init_attr_ex* attr) {
  constexpr uint32_t kSupported = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
  if ((attr->comp_mask & ~kSupported) != 0) return fail_null<ibv_srq>(EOPNOTSUPP);
  if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)
    return fail_null<ibv_srq>(EOPNOTSUPP);
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == nullptr || attr->pd->context != context)
    return fail_null<ibv_srq>(EINVAL);
  ibv_srq_init_attr basic{};
  basic.srq_context = attr->srq_context;
  basic.attr = attr->attr;
  ibv_srq* srq = create_srq_common(attr->pd, &basic);
  if (srq != nullptr) attr->attr = basic.attr;
  return srq;
}

}  // namespace

void install_resource_ops(Context& c) {
  c.vctx.create_qp_ex = create_qp_ex;
  c.vctx.create_cq_ex = create_cq_ex;
  c.vctx.create_srq_ex = create_srq_ex;
}

}  // namespace softib::compat

using namespace softib;
using namespace softib::compat;

// ---- protection domains ----

SOFTIB_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  verbs::Pd* core = core_of(context).alloc_pd();
  if (core == nullptr) return fail_null<ibv_pd>(ENOMEM);
  auto* p = new Pd();
  p->core = core;
  p->pd.context = context;
  p->pd.handle = core->handle();
  return &p->pd;
}

SOFTIB_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  Status s = core_of(pd->context).dealloc_pd(from(pd)->core);
  if (!s.ok()) return fail(s);
  delete from(pd);
  return 0;
}

SOFTIB_EXPORT ibv_pd* ibv_import_pd(ibv_context*, uint32_t) { return fail_null<ibv_pd>(EOPNOTSUPP); }
SOFTIB_EXPORT void ibv_unimport_pd(ibv_pd*) {}

// ---- memory regions ----

SOFTIB_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access) {
  auto core = core_of(pd->context).reg_mr(from(pd)->core, addr, length, iova, access);
  if (!core) return fail_null<ibv_mr>(core.error());
  auto* m = new Mr();
  m->core = *core;
  ibv_mr& mr = m->mr;
  mr.context = pd->context;
  mr.pd = pd;
  mr.addr = addr;
  mr.length = length;
  mr.handle = m->core->lkey.value();
  mr.lkey = m->core->lkey.value();
  mr.rkey = m->core->rkey.value();
  return &mr;
}

SOFTIB_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, reinterpret_cast<uintptr_t>(addr), static_cast<unsigned>(access));
}

SOFTIB_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, iova, static_cast<unsigned>(access));
}

SOFTIB_EXPORT ibv_mr* ibv_reg_dmabuf_mr(ibv_pd*, uint64_t, size_t, uint64_t, int, int) {
  return fail_null<ibv_mr>(EOPNOTSUPP);  // no device memory behind a dma-buf here
}

SOFTIB_EXPORT int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, size_t length, int access) {
  constexpr int kKnown = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
  if (flags == 0 || (flags & ~kKnown) != 0) return IBV_REREG_MR_ERR_INPUT;
  if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (addr == nullptr || length == 0)) return IBV_REREG_MR_ERR_INPUT;
  if ((flags & IBV_REREG_MR_CHANGE_PD) && pd == nullptr) return IBV_REREG_MR_ERR_INPUT;
  Mr* m = from(mr);
  ibv_pd* new_pd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : mr->pd;
  void* new_addr = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? addr : mr->addr;
  size_t new_len = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? length : mr->length;
  uint32_t new_access = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? static_cast<uint32_t>(access) : m->core->access;
  auto core = core_of(mr->context).rereg_mr(m->core, from(new_pd)->core, new_addr, new_len,
                                            reinterpret_cast<uintptr_t>(new_addr), new_access);
  if (!core) {
    errno = core.error().to_errno();
    return IBV_REREG_MR_ERR_INPUT;
  }
  m->core = *core;
  mr->pd = new_pd;
  mr->addr = new_addr;
  mr->length = new_len;
  mr->lkey = m->core->lkey.value();
  mr->rkey = m->core->rkey.value();
  return 0;
}

SOFTIB_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  Status s = core_of(mr->context).dereg_mr(from(mr)->core);
  if (!s.ok()) return fail(s);
  delete from(mr);
  return 0;
}

SOFTIB_EXPORT ibv_mr* ibv_import_mr(ibv_pd*, uint32_t) { return fail_null<ibv_mr>(EOPNOTSUPP); }
SOFTIB_EXPORT void ibv_unimport_mr(ibv_mr*) {}
SOFTIB_EXPORT ibv_dm* ibv_import_dm(ibv_context*, uint32_t) { return fail_null<ibv_dm>(EOPNOTSUPP); }
SOFTIB_EXPORT void ibv_unimport_dm(ibv_dm*) {}

// ---- completion channels and CQs ----

SOFTIB_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  auto core = core_of(context).create_comp_channel();
  if (!core) return fail_null<ibv_comp_channel>(core.error());
  auto* ch = new CompChannel();
  ch->core = *core;
  ch->channel.context = context;
  ch->channel.fd = ch->core->fd();
  ch->channel.refcnt = 0;
  return &ch->channel;
}

SOFTIB_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (channel->refcnt != 0) return fail(EBUSY);
  Status s = core_of(channel->context).destroy_comp_channel(from(channel)->core);
  if (!s.ok()) return fail(s);
  delete from(channel);
  return 0;
}

SOFTIB_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                                    int comp_vector) {
  if (cqe <= 0 || comp_vector < 0) return fail_null<ibv_cq>(EINVAL);
  ibv_cq_ex* cq = create_cq_common(context, static_cast<uint32_t>(cqe), cq_context, channel,
                                   static_cast<uint32_t>(comp_vector), IBV_WC_STANDARD_FLAGS);
  return cq == nullptr ? nullptr : ibv_cq_ex_to_cq(cq);
}

SOFTIB_EXPORT int ibv_resize_cq(ibv_cq* cq, int cqe) {
  if (cqe <= 0) return fail(EINVAL);
  Cq* q = from(cq);
  Status s = q->ctx->core->resize_cq(q->core, static_cast<uint32_t>(cqe));
  if (!s.ok()) return fail(s);
  cq->cqe = static_cast<int>(q->core->cqe());
  return 0;
}

SOFTIB_EXPORT int ibv_destroy_cq(ibv_cq* cq) {
  Cq* q = from(cq);
  Status s = q->ctx->core->destroy_cq(q->core);
  if (!s.ok()) return fail(s);
  wait_for_acks(&cq->mutex, &cq->cond, &cq->comp_events_completed, q->comp_events_reported);
  wait_for_acks(&cq->mutex, &cq->cond, &cq->async_events_completed, q->async_events_reported);
  if (cq->channel != nullptr) --cq->channel->refcnt;
  destroy_sync(&cq->mutex, &cq->cond);
  delete q;
  return 0;
}

SOFTIB_EXPORT int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  auto core = core_of(channel->context).get_cq_event(from(channel)->core);
  if (!core) {
    errno = core.error().to_errno();
    return -1;
  }
  Cq* q = static_cast<Cq*>((*core)->context());
  pthread_mutex_lock(&q->cq.mutex);
  ++q->comp_events_reported;
  pthread_mutex_unlock(&q->cq.mutex);
  *cq = ibv_cq_ex_to_cq(&q->cq);
  *cq_context = q->cq.cq_context;
  return 0;
}

SOFTIB_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}

// ---- shared receive queues ----

SOFTIB_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) { return create_srq_common(pd, attr); }

SOFTIB_EXPORT int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  if ((mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) != 0) return fail(EINVAL);
  std::optional<uint32_t> max_wr, limit;
  if (mask & IBV_SRQ_MAX_WR) max_wr = attr->max_wr;
  if (mask & IBV_SRQ_LIMIT) limit = attr->srq_limit;
  Status s = core_of(srq->context).modify_srq(from(srq)->core, max_wr, limit);
  return s.ok() ? 0 : fail(s);
}

SOFTIB_EXPORT int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  verbs::Srq* core = from(srq)->core;
  attr->max_wr = core->rq().max_wr();
  attr->max_sge = core->rq().max_sge();
  attr->srq_limit = core->limit();
  return 0;
}

SOFTIB_EXPORT int ibv_destroy_srq(ibv_srq* srq) {
  Srq* s = from(srq);
  Status st = core_of(srq->context).destroy_srq(s->core);
  if (!st.ok()) return fail(st);
  wait_for_acks(&srq->mutex, &srq->cond, &srq->events_completed, s->async_events_reported);
  destroy_sync(&srq->mutex, &srq->cond);
  delete s;
  return 0;
}

// ---- queue pairs ----

SOFTIB_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  return create_qp_common(pd->context, pd, attr, 0, false);
}

SOFTIB_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  Qp* q = from(qp);
  return q->has_qp_ex ? &q->qpx : nullptr;
}

SOFTIB_EXPORT int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  Qp* q = from(qp);
  Status s = q->ctx->core->modify_qp(q->core, to_core(*attr), static_cast<uint32_t>(mask));
  if (!s.ok()) return fail(s);
  if (mask & IBV_QP_STATE) qp->state = attr->qp_state;
  return 0;
}

SOFTIB_EXPORT int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int, ibv_qp_init_attr* init) {
  Qp* q = from(qp);
  verbs::QpAttr a;
  verbs::QpInitAttr i;
  Status s = q->ctx->core->query_qp(q->core, &a, &i);
  if (!s.ok()) return fail(s);
  to_ibv(a, attr);
  if (init != nullptr) {
    *init = ibv_qp_init_attr{};
    init->qp_context = qp->qp_context;
    init->send_cq = qp->send_cq;
    init->recv_cq = qp->recv_cq;
    init->srq = qp->srq;
    init->cap = to_ibv(i.cap);
    init->qp_type = qp->qp_type;
    init->sq_sig_all = i.sq_sig_all ? 1 : 0;
  }
  qp->state = attr->qp_state;
  return 0;
}

SOFTIB_EXPORT int ibv_query_qp_data_in_order(ibv_qp*, ibv_wr_opcode, uint32_t) {
  // Data of a message may land out of order (a burst falls back to packets; READ responses
  // retried): promise nothing, as a device without the capability does.
  return 0;
}

SOFTIB_EXPORT int ibv_destroy_qp(ibv_qp* qp) {
  Qp* q = from(qp);
  Status s = q->ctx->core->destroy_qp(q->core);
  if (!s.ok()) return fail(s);
  wait_for_acks(&qp->mutex, &qp->cond, &qp->events_completed, q->async_events_reported);
  destroy_sync(&qp->mutex, &qp->cond);
  delete q;
  return 0;
}

SOFTIB_EXPORT int ibv_query_ece(ibv_qp*, ibv_ece*) { return EOPNOTSUPP; }
SOFTIB_EXPORT int ibv_set_ece(ibv_qp*, ibv_ece*) { return EOPNOTSUPP; }

// ---- address handles ----

SOFTIB_EXPORT ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  auto core = core_of(pd->context).create_ah(from(pd)->core, to_core(*attr));
  if (!core) return fail_null<ibv_ah>(core.error());
  auto* a = new Ah();
  a->core = *core;
  a->ah.context = pd->context;
  a->ah.pd = pd;
  return &a->ah;
}

SOFTIB_EXPORT int ibv_destroy_ah(ibv_ah* ah) {
  Status s = core_of(ah->context).destroy_ah(from(ah)->core);
  if (!s.ok()) return fail(s);
  delete from(ah);
  return 0;
}

// IBA 11.2.2.1 / libibverbs: the address of the sender of a received UD message. With a GRH
// the reply goes back globally: the sender's GID becomes the destination, and the GID the
// message was sent to picks the source GID index.
SOFTIB_EXPORT int ibv_init_ah_from_wc(ibv_context* context, uint8_t port_num, ibv_wc* wc, ibv_grh* grh,
                                      ibv_ah_attr* ah_attr) {
  *ah_attr = ibv_ah_attr{};
  ah_attr->dlid = wc->slid;
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if (!(wc->wc_flags & IBV_WC_GRH)) return 0;
  ah_attr->is_global = 1;
  ah_attr->grh.dgid = grh->sgid;
  auto port = core_of(context).query_port(port_num);
  if (!port) return fail(EINVAL);
  int index = -1;
  for (uint32_t i = 0; i < port->gid_table_len && index < 0; ++i) {
    ibv_gid g;
    if (ibv_query_gid(context, port_num, static_cast<int>(i), &g) == 0 && std::memcmp(&g, &grh->dgid, 16) == 0)
      index = static_cast<int>(i);
  }
  if (index < 0) return fail(ENOENT);
  const uint32_t flow = be32toh(grh->version_tclass_flow);
  ah_attr->grh.sgid_index = static_cast<uint8_t>(index);
  ah_attr->grh.flow_label = flow & 0xFFFFF;
  ah_attr->grh.hop_limit = 0xFF;
  ah_attr->grh.traffic_class = static_cast<uint8_t>((flow >> 20) & 0xFF);
  return 0;
}

SOFTIB_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port_num) {
  ibv_ah_attr attr;
  if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0) return nullptr;
  return ibv_create_ah(pd, &attr);
}

// ---- multicast ----

// UD multicast needs the SA's MCMemberRecord join and the fabric's MFTs behind the verbs;
// softib's data path does not replicate to multicast groups yet.
SOFTIB_EXPORT int ibv_attach_mcast(ibv_qp*, const ibv_gid*, uint16_t) { return fail(EOPNOTSUPP); }
SOFTIB_EXPORT int ibv_detach_mcast(ibv_qp*, const ibv_gid*, uint16_t) { return fail(EOPNOTSUPP); }
