#include "rc/device.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "packet/builder.hpp"
#include "verbs/qp_check.hpp"

namespace softib::rc {

using verbs::QpState;
using verbs::WcStatus;

std::string_view to_string(Drop d) {
  switch (d) {
    case Drop::kMalformed: return "malformed";
    case Drop::kUnsupported: return "unsupported opcode";
    case Drop::kNoQp: return "no such QP";
    case Drop::kQpState: return "QP state";
    case Drop::kWrongTransport: return "wrong transport";
    case Drop::kBadPkey: return "P_Key mismatch";
    case Drop::kBadQkey: return "Q_Key mismatch";
    case Drop::kPsnOutOfOrder: return "PSN out of order";
    case Drop::kDuplicate: return "duplicate";
    case Drop::kNoReceiveWqe: return "no receive WQE";
    case Drop::kUcMessageLost: return "UC message lost";
    case Drop::kStaleResponse: return "stale response";
    case Drop::kCount: break;
  }
  return "?";
}

Qp::Qp(Qpn qpn, const verbs::QpInitAttr& init, const verbs::Pd* pd, verbs::Cq* send_cq, verbs::Cq* recv_cq,
       verbs::Srq* srq, void* context)
    : qpn_(qpn),
      init_(init),
      pd_(pd),
      send_cq_(send_cq),
      recv_cq_(recv_cq),
      srq_(srq),
      context_(context),
      sq_(init.cap.max_send_wr, init.cap.max_send_sge, init.cap.max_inline_data) {
  if (srq == nullptr) rq_ = std::make_unique<verbs::RecvQueue>(init.cap.max_recv_wr, init.cap.max_recv_sge);
}

Device::Device(const verbs::DeviceCaps& caps, PortAttr port, FrameSink& sink, const Clock& clock)
    : caps_(caps), port_(std::move(port)), sink_(sink), clock_(clock) {
  mrs_.set_limit(caps_.max_mr);
}

Device::~Device() = default;

// ---- objects ----

verbs::Pd* Device::alloc_pd() { return &pds_.emplace_back(next_pd_++); }

Status Device::dealloc_pd(verbs::Pd* pd) {
  auto it = std::find_if(pds_.begin(), pds_.end(), [&](const verbs::Pd& p) { return &p == pd; });
  if (it == pds_.end()) return Status(Code::kInvalidArgument, "dealloc_pd: no such PD");
  const bool used = std::any_of(qps_.begin(), qps_.end(), [&](const auto& q) { return q.second->pd() == pd; }) ||
                    std::any_of(ahs_.begin(), ahs_.end(), [&](const verbs::Ah& a) { return a.pd() == pd; });
  // An MR of the PD also keeps it (the MR table is scanned through its keys).
  if (used) return Status(Code::kBusy, "dealloc_pd: the PD is in use");
  pds_.erase(it);
  return Status();
}

Result<verbs::Cq*> Device::create_cq(uint32_t cqe, void* context) {
  if (cqe == 0 || cqe > caps_.max_cqe)
    return Status(Code::kInvalidArgument, fmt::format("create_cq: cqe {} (max_cqe {})", cqe, caps_.max_cqe));
  if (cqs_.size() >= caps_.max_cq) return Status(Code::kResourceExhausted, "create_cq: max_cq CQs exist");
  verbs::Cq& cq = cqs_.emplace_back(cqe, context);
  cq.on_overrun([this](verbs::Cq& c) { async({verbs::AsyncEventType::kCqErr, &c}); });
  return &cq;
}

Status Device::destroy_cq(verbs::Cq* cq) {
  auto it = std::find_if(cqs_.begin(), cqs_.end(), [&](const verbs::Cq& c) { return &c == cq; });
  if (it == cqs_.end()) return Status(Code::kInvalidArgument, "destroy_cq: no such CQ");
  for (const auto& [n, qp] : qps_)
    if (qp->send_cq() == cq || qp->recv_cq() == cq) return Status(Code::kBusy, "destroy_cq: a QP uses the CQ");
  cqs_.erase(it);
  return Status();
}

Result<verbs::Srq*> Device::create_srq(const verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge, uint32_t limit,
                                       void* context) {
  if (pd == nullptr || max_wr == 0 || max_wr > caps_.max_srq_wr || max_sge > caps_.max_srq_sge || limit > max_wr)
    return Status(Code::kInvalidArgument, fmt::format("create_srq: max_wr {} max_sge {} limit {}", max_wr, max_sge, limit));
  if (srqs_.size() >= caps_.max_srq) return Status(Code::kResourceExhausted, "create_srq: max_srq SRQs exist");
  return &srqs_.emplace_back(max_wr, std::max<uint32_t>(max_sge, 1), limit, context);
}

Status Device::destroy_srq(verbs::Srq* srq) {
  auto it = std::find_if(srqs_.begin(), srqs_.end(), [&](const verbs::Srq& s) { return &s == srq; });
  if (it == srqs_.end()) return Status(Code::kInvalidArgument, "destroy_srq: no such SRQ");
  for (const auto& [n, qp] : qps_)
    if (qp->srq() == srq) return Status(Code::kBusy, "destroy_srq: a QP uses the SRQ");
  srqs_.erase(it);
  return Status();
}

Result<verbs::Ah*> Device::create_ah(const verbs::Pd* pd, const verbs::AhAttr& attr) {
  if (pd == nullptr) return Status(Code::kInvalidArgument, "create_ah: no PD");
  if (attr.is_global && attr.grh.sgid_index >= std::max<size_t>(port_.gids.size(), 1))
    return Status(Code::kInvalidArgument, fmt::format("create_ah: sgid_index {} is not in the GID table", attr.grh.sgid_index));
  if (ahs_.size() >= caps_.max_ah) return Status(Code::kResourceExhausted, "create_ah: max_ah AHs exist");
  return &ahs_.emplace_back(pd, attr);
}

Status Device::destroy_ah(verbs::Ah* ah) {
  auto it = std::find_if(ahs_.begin(), ahs_.end(), [&](const verbs::Ah& a) { return &a == ah; });
  if (it == ahs_.end()) return Status(Code::kInvalidArgument, "destroy_ah: no such AH");
  ahs_.erase(it);
  return Status();
}

Result<Qp*> Device::create_qp(const verbs::Pd* pd, verbs::Cq* send_cq, verbs::Cq* recv_cq, verbs::Srq* srq,
                              const verbs::QpInitAttr& init, void* context) {
  if (pd == nullptr || send_cq == nullptr || recv_cq == nullptr)
    return Status(Code::kInvalidArgument, "create_qp: a PD and both CQs are required");
  verbs::QpInitAttr checked = init;
  checked.use_srq = srq != nullptr;
  if (Status s = verbs::check_create(checked, caps_); !s.ok()) return s;
  if (srq != nullptr && init.qp_type != verbs::QpType::kRc && init.qp_type != verbs::QpType::kUd &&
      init.qp_type != verbs::QpType::kUc)
    return Status(Code::kInvalidArgument, "create_qp: this QP type takes no SRQ");
  if (qps_.size() >= caps_.max_qp) return Status(Code::kResourceExhausted, "create_qp: max_qp QPs exist");
  verbs::QpInitAttr actual = init;
  // A QP with an SRQ has no receive queue of its own (IBA 10.2.9.2).
  if (srq != nullptr) actual.cap.max_recv_wr = actual.cap.max_recv_sge = 0;
  auto advance = [&] { next_qpn_ = next_qpn_ >= qpn_last_ ? qpn_first_ : next_qpn_ + 1; };
  while (qps_.count(next_qpn_) != 0) advance();
  const Qpn qpn(next_qpn_);
  advance();
  auto qp = std::make_unique<Qp>(qpn, actual, pd, send_cq, recv_cq, srq, context);
  Qp* raw = qp.get();
  qps_.emplace(qpn.value(), std::move(qp));
  return raw;
}

void Device::set_qpn_range(uint32_t first, uint32_t last) {
  SOFTIB_ASSERT(first <= last && last < Qpn::kMask && first >= 2);
  qpn_first_ = next_qpn_ = first;
  qpn_last_ = last;
}

Qp* Device::find_qp(Qpn qpn) const {
  if (last_qp_ != nullptr && last_qp_->qpn() == qpn) return last_qp_;
  auto it = qps_.find(qpn.value());
  if (it == qps_.end()) return nullptr;
  return last_qp_ = it->second.get();
}

Status Device::destroy_qp(Qp* qp) {
  if (qp == nullptr || find_qp(qp->qpn()) != qp) return Status(Code::kInvalidArgument, "destroy_qp: no such QP");
  flush_acks(*qp);  // one held back by an application step (AckPolicy) goes out first
  deactivate(qp);
  drop_held_flush(*qp);
  if (last_qp_ == qp) last_qp_ = nullptr;
  if (ack_qp_ == qp) {
    ack_qp_ = nullptr;
    owed_ = true;  // what else came in is not known: the next step walks
  }
  qps_.erase(qp->qpn().value());
  return Status();
}

Status Device::modify_qp(Qp* qp, const verbs::QpAttr& attr, uint32_t mask) {
  using namespace verbs::attr;
  const verbs::PortLimits limits{1, port_.max_mtu, port_.active_mtu, static_cast<uint16_t>(port_.pkeys.size()),
                                 static_cast<uint8_t>(std::min<size_t>(port_.gids.size(), 255))};
  if (Status s = verbs::check_modify(attr, mask, qp->state_, qp->type(), caps_, limits); !s.ok()) return s;
  flush_acks(*qp);  // one held back by an application step (AckPolicy) goes out first
  // A QP in SQD that is still draining may only go to Error or Reset (rxe_qp_chk_attr; IBA
  // 10.3.1: attributes change once the send queue has drained).
  if (qp->state_ == QpState::kSqd && qp->req_.draining && (mask & kState) && attr.qp_state != QpState::kError &&
      attr.qp_state != QpState::kReset)
    return Status(Code::kInvalidArgument, fmt::format("modify SQD: QP {} is still draining", qp->qpn().to_string()));
  verbs::QpAttr& a = qp->attr_;
  if (mask & kAccessFlags) a.qp_access_flags = attr.qp_access_flags;
  if (mask & kPkeyIndex) a.pkey_index = attr.pkey_index;
  if (mask & kPort) a.port_num = attr.port_num;
  if (mask & kQkey) a.qkey = attr.qkey;
  if (mask & kAv) a.ah_attr = attr.ah_attr;
  qp->path_cached_ = false;
  if (mask & kPathMtu) a.path_mtu = attr.path_mtu;
  if (mask & kTimeout) a.timeout = attr.timeout;
  if (mask & kRetryCnt) a.retry_cnt = attr.retry_cnt;
  if (mask & kRnrRetry) a.rnr_retry = attr.rnr_retry;
  if (mask & kRqPsn) a.rq_psn = attr.rq_psn;
  if (mask & kMaxQpRdAtomic) a.max_rd_atomic = attr.max_rd_atomic;
  if (mask & kAltPath) {
    a.alt_ah_attr = attr.alt_ah_attr;
    a.alt_pkey_index = attr.alt_pkey_index;
    a.alt_port_num = attr.alt_port_num;
    a.alt_timeout = attr.alt_timeout;
  }
  if (mask & kMinRnrTimer) a.min_rnr_timer = attr.min_rnr_timer;
  if (mask & kSqPsn) a.sq_psn = attr.sq_psn;
  if (mask & kMaxDestRdAtomic) a.max_dest_rd_atomic = attr.max_dest_rd_atomic;
  if (mask & kPathMigState) a.path_mig_state = attr.path_mig_state;
  if (mask & kDestQpn) a.dest_qp_num = attr.dest_qp_num;
  if (mask & kEnSqdAsyncNotify) a.en_sqd_async_notify = attr.en_sqd_async_notify;

  const QpState from = qp->state_;
  const QpState to = (mask & kState) ? attr.qp_state : from;
  qp->state_ = to;
  a.qp_state = to;
  if (to == QpState::kReset) {
    reset_transport(*qp);
  } else if (to == QpState::kRtr && from == QpState::kInit) {
    qp->resp_.epsn = a.rq_psn;
    qp->resp_.resources.assign(std::max<uint8_t>(a.max_dest_rd_atomic, 1), Resource{});
  } else if (to == QpState::kRts && from == QpState::kRtr) {
    qp->req_.next_psn = qp->req_.una = qp->req_.sent_high = a.sq_psn;
    qp->req_.retry_left = a.retry_cnt;
    qp->req_.rnr_left = a.rnr_retry;
  } else if (to == QpState::kError && from != QpState::kError) {
    to_error(*qp);
  } else if (to == QpState::kSqd && from == QpState::kRts) {
    // IBA 10.3.1 (Send Queue Drain): no new WR starts; the message being sent finishes and
    // what was sent is acknowledged; then, if asked, IBV_EVENT_SQ_DRAINED.
    qp->req_.draining = true;
    qp->req_.drain_notify = a.en_sqd_async_notify != 0;
  }
  if (to != QpState::kSqd) qp->req_.draining = false;
  // sent_high too: a retransmission is a PSN sent before, counted from the QP's first (a
  // sent_high left at 0 counted every packet of a QP whose sq_psn lies in the upper half of
  // the PSN space, as perftest's random ones may, as a retransmission).
  if (to == QpState::kRts && (mask & kSqPsn) && from != QpState::kRtr)
    qp->req_.next_psn = qp->req_.una = qp->req_.sent_high = a.sq_psn;
  // The link's way to the peer (ShmLink: softibd's answer, the peer's inbox mapped, its ring
  // touched, ~10 ms the first time) is set up here, as a HCA does at connection, not in the
  // first post's step: perftest times from its first post.
  if (qp->type() != verbs::QpType::kUd && (to == QpState::kRtr || to == QpState::kRts) && (mask & (kAv | kDestQpn)) != 0)
    sink_.prepare(path_of(*qp), a.dest_qp_num);
  activate(*qp);  // a new state may let it send (SQD -> RTS), drain or flush
  owed_ = true;    // ... in the next progress()
  return Status();
}

void Device::reset_transport(Qp& qp) {
  qp.sq_.ring().clear();
  if (qp.rq_) {
    while (!qp.rq_->empty()) qp.rq_->pop();
  }
  qp.req_ = RequesterState{};
  // The requester's positions are the ring's (free-running): it starts where the emptied
  // ring is, not at 0. Found by the fast-path test (rc_fast_path_test), which restarts QPs:
  // a QP reset after it had sent walked from 0 to the ring's tail, sending stale slots.
  qp.req_.send_pos = qp.sq_.ring().head();
  qp.resp_ = ResponderState{};
  qp.flush_pending_ = false;
  drop_held_flush(qp);
  qp.last_wqe_event_sent_ = false;
}

void Device::to_error(Qp& qp) {
  qp.state_ = QpState::kError;
  qp.attr_.qp_state = QpState::kError;
  qp.req_.ack_timer = qp.req_.rnr_wait = false;
  qp.flush_pending_ = true;
  activate(qp);
}

// IBA 10.3.1 (Error state): every outstanding and newly posted WR completes with a flush
// error; a QP on an SRQ leaves the SRQ's WQEs alone and reports "last WQE reached".
void Device::flush(Qp& qp) {
  auto& ring = qp.sq_.ring();
  while (!ring.empty()) {
    verbs::SendWqe& w = ring.peek();
    w.signaled = true;  // errors always complete
    const bool failed = qp.req_.failed_wqe && ring.head() == qp.req_.failed_pos;
    complete_send(qp, w, failed ? qp.req_.failed_status : WcStatus::kWrFlushErr);
  }
  qp.req_.failed_wqe = false;
  qp.req_.send_pos = ring.head();
  qp.req_.send_offset = 0;
  qp.req_.send_started = false;
  if (qp.resp_.wqe != nullptr) {
    // A receive WQE the responder had taken for a message that never finished: it was posted
    // before every WQE still queued, and a queue completes in order (found by fuzz_verbs_ops:
    // flushed after them, a multi-packet SEND cut short completed its WQE out of order).
    const verbs::WorkCompletion wc = recv_error(qp, qp.resp_.wqe->wr_id, WcStatus::kWrFlushErr);
    qp.resp_.wqe = nullptr;
    complete_recv(qp, wc, false);
  }
  if (qp.rq_) {
    while (!qp.rq_->empty()) {
      const verbs::WorkCompletion wc = recv_error(qp, qp.rq_->front().wr_id, WcStatus::kWrFlushErr);
      qp.rq_->pop();
      complete_recv(qp, wc, false);
    }
  } else if (!qp.last_wqe_event_sent_) {
    qp.last_wqe_event_sent_ = true;
    async({verbs::AsyncEventType::kQpLastWqeReached, nullptr, &qp});
  }
  qp.flush_pending_ = false;
}

// ---- posts ----

namespace {

// Queues a QP for progress() as its post returns, whichever way (after the post lock, which
// it is declared before, is released).
struct QueueOnReturn {
  Device& device;
  Qp& qp;
  bool queue;
  ~QueueOnReturn() {
    if (queue) device.queue_posted(qp);
  }
};

// post_send's and check_send's refusals, built out of line.
[[gnu::cold]] Status state_refused(const Qp& qp) {
  return Status(Code::kInvalidArgument,
                fmt::format("post_send: QP {} is in {}", qp.qpn().to_string(), to_string(qp.state())));
}

[[gnu::cold]] Status opcode_refused(verbs::QpType type, verbs::WrOpcode op) {
  switch (packet::wr_legality(type, op)) {
    case packet::WrLegality::kIllegal:
      return Status(Code::kInvalidArgument,
                    fmt::format("post_send: {} is not legal on this QP type", packet::wr_opcode_info(op).name));
    case packet::WrLegality::kUnsupported:
      return Status(Code::kUnsupported, fmt::format("post_send: {} is not supported", packet::wr_opcode_info(op).name));
    case packet::WrLegality::kLegal: break;
  }
  return Status(Code::kUnsupported, "post_send: memory windows and local invalidation are not supported");
}

[[gnu::cold]] Status no_ah() { return Status(Code::kInvalidArgument, "post_send: a UD work request needs an address handle"); }

bool unpostable_state(QpState st) { return st == QpState::kReset || st == QpState::kInit || st == QpState::kRtr; }

}  // namespace

Status Device::post_send(Qp* qp, std::span<const verbs::SendWr> wrs, size_t* bad, PostNotice notice) {
  const QpState st = qp->state_;
  // Queued for progress() unless the caller makes it active itself.
  const QueueOnReturn queued{*this, *qp, notice == PostNotice::kQueue};
  const auto held = qp->sq_.lock_posts();  // once for the whole list
  for (size_t i = 0; i < wrs.size(); ++i) {
    *bad = i;
    if (unpostable_state(st)) return state_refused(*qp);
    const verbs::SendWr& wr = wrs[i];
    if (!packet::postable(qp->type(), wr.opcode)) return opcode_refused(qp->type(), wr.opcode);
    if (qp->type() == verbs::QpType::kUd && wr.ud.ah == nullptr) return no_ah();
    if (Status s = qp->sq_.post(wr, qp->init_.sq_sig_all, held); !s.ok()) return s;
    if (st == QpState::kError) qp->flush_pending_ = true;
  }
  *bad = wrs.size();
  return Status();
}

Status Device::check_send(const Qp& qp, std::span<const verbs::SendWr> wrs, size_t* bad) const {
  for (size_t i = 0; i < wrs.size(); ++i) {
    *bad = i;
    if (unpostable_state(qp.state_)) return state_refused(qp);
    const verbs::SendWr& wr = wrs[i];
    if (!packet::postable(qp.type(), wr.opcode)) return opcode_refused(qp.type(), wr.opcode);
    if (qp.type() == verbs::QpType::kUd && wr.ud.ah == nullptr) return no_ah();
    if (Status s = qp.sq_.check(wr); !s.ok()) return s;
    if (qp.sq_.ring().size() + i >= qp.sq_.max_wr())
      return Status(Code::kResourceExhausted, "post_send: the send queue has no room for the whole list");
  }
  *bad = wrs.size();
  return Status();
}

Status Device::post_recv(Qp* qp, std::span<const verbs::RecvWr> wrs, size_t* bad) {
  *bad = 0;
  if (wrs.empty()) return Status();
  if (!qp->rq_) return Status(Code::kInvalidArgument, "post_recv: the QP takes its receive WQEs from an SRQ");
  // A QP in Error flushes what is posted to it (IBA 10.3.1): progress() must visit it.
  QueueOnReturn queued{*this, *qp, false};
  const auto held = qp->rq_->lock_posts();  // once for the whole list
  for (size_t i = 0; i < wrs.size(); ++i) {
    *bad = i;
    if (qp->state_ == QpState::kReset)
      return Status(Code::kInvalidArgument, fmt::format("post_recv: QP {} is in RESET", qp->qpn().to_string()));
    if (Status s = qp->rq_->post(wrs[i], held); !s.ok()) return s;
    if (qp->state_ == QpState::kError) qp->flush_pending_ = queued.queue = true;
  }
  *bad = wrs.size();
  return Status();
}

Status Device::post_srq_recv(verbs::Srq* srq, std::span<const verbs::RecvWr> wrs, size_t* bad) {
  const auto held = srq->rq().lock_posts();  // once for the whole list
  for (size_t i = 0; i < wrs.size(); ++i) {
    *bad = i;
    if (Status s = srq->rq().post(wrs[i], held); !s.ok()) return s;
  }
  *bad = wrs.size();
  return Status();
}

std::vector<AsyncEvent> Device::take_async_events() {
  std::vector<AsyncEvent> out;
  out.swap(async_);
  return out;
}

// ---- shared transport helpers ----

PKey Device::qp_pkey(const Qp& qp) const {
  const uint16_t i = qp.attr_.pkey_index;
  return i < port_.pkeys.size() ? port_.pkeys[i] : PKey(0);
}

FrameAddr Device::address_of(const verbs::AhAttr& ah) const {
  FrameAddr a;
  a.slid = Lid(static_cast<uint16_t>(port_.lid.value() | ah.src_path_bits));
  a.dlid = ah.dlid;
  a.sl = ah.sl;
  if (ah.is_global) {
    a.global = true;
    a.dgid = ah.grh.dgid;
    a.sgid = ah.grh.sgid_index < port_.gids.size() ? port_.gids[ah.grh.sgid_index] : Gid();
    a.flow_label = ah.grh.flow_label;
    a.traffic_class = ah.grh.traffic_class;
    a.hop_limit = ah.grh.hop_limit;
  }
  return a;
}

const FrameAddr& Device::refresh_path(Qp& qp) {
  qp.path_ = address_of(qp.attr_.ah_attr);
  qp.path_lid_ = port_.lid;
  // A GRH's SGID comes from the port's GID table, which changes with no LID change: built
  // each time (GRH paths are rare on an IB port).
  qp.path_cached_ = !qp.attr_.ah_attr.is_global;
  return qp.path_;
}

bool Device::send_frame(const FrameAddr& to, const packet::TransportHeaders& h, wire::ByteSpan payload) {
  const packet::OpcodeInfo* info = h.info();
  SOFTIB_ASSERT(info != nullptr);
  return send_written(to, h.bth.dest_qp, packet::transport_length(*info, payload.size()), [&](wire::MutByteSpan out) {
    packet::write_transport_headers(*info, h, payload.size(), out);
    if (!payload.empty()) std::memcpy(out.data() + info->header_length(), payload.data(), payload.size());
    return true;
  });
}

void Device::complete_send(Qp& qp, verbs::SendWqe& w, WcStatus status) {
  auto& ring = qp.sq_.ring();
  SOFTIB_ASSERT(!ring.empty() && &ring.peek() == &w);
  w.state = verbs::WqeState::kDone;
  if (!w.signaled && status == WcStatus::kSuccess) {
    ring.release();  // most WQEs of a stream: no completion to build
    return;
  }
  const verbs::WorkCompletion wc = send_completion(qp, w, status);
  // The slot is free before the completion is visible: a program that polls the completion
  // (or wakes on its event) and posts at once must find room (IBA 10.8.5: a completed WQE no
  // longer occupies the send queue). The completion is built first: once released, a post
  // (under the post lock only) may fill the slot again.
  ring.release();
  qp.send_cq_->push(wc);
}

verbs::WorkCompletion Device::send_completion(const Qp& qp, const verbs::SendWqe& w, WcStatus status) const {
  verbs::WorkCompletion wc;
  wc.wr_id = w.wr_id;
  wc.status = status;
  wc.opcode = verbs::wc_opcode_of(w.opcode);
  wc.byte_len = static_cast<uint32_t>(w.length);
  wc.qp_num = qp.qpn_;
  return wc;
}

verbs::WorkCompletion Device::recv_error(const Qp& qp, uint64_t wr_id, WcStatus status) const {
  verbs::WorkCompletion wc;
  wc.wr_id = wr_id;
  wc.status = status;
  wc.opcode = verbs::WcOpcode::kRecv;
  wc.qp_num = qp.qpn_;
  return wc;
}

void Device::complete_recv(Qp& qp, const verbs::WorkCompletion& wc, bool solicited) {
  qp.recv_cq_->push(wc, solicited);
}

// ---- progress ----

bool Device::progress(AckPolicy acks, Timers timers) {
  bool did = false;
  if (timers == Timers::kRun || ++timer_deferrals_ >= kMaxTimerDeferrals) {
    timers = Timers::kRun;
    timer_deferrals_ = 0;
  }
  refused_ = false;
  owed_ = false;
  ack_qp_ = nullptr;
  holds_acks_ = false;
  if (!held_flushes_.empty()) release_held_flushes();
  if (timers == Timers::kRun && !timed_.empty() && clock_.reached(timed_due_)) wake_parked();
  // The active QPs, then those posted to by threads that could not take the lock (since the
  // last progress(), or during this walk).
  size_t i = 0;
  do {
    while (i < active_.size()) {
      Qp& qp = *active_[i];
      ++counters_.qp_visits;
      if (visit(qp, acks, timers)) did = true;
      if (settle_visited(i)) ++i;
    }
  } while (adopt_posted());
  return did;
}

bool Device::settle_visited(size_t i) {
  Qp& qp = *active_[i];
  const bool timer = qp.req_.timer_runs();
  if ((timer && active_.size() <= few_active_) || has_untimed_work(qp)) return true;
  // Nothing left for progress() but perhaps a timer: a frame, a post or a modify makes it
  // active again, and so does its deadline (wake_parked).
  qp.active_ = false;
  active_[i] = active_.back();
  active_.pop_back();
  if (timer) park(qp);
  return false;
}

void Device::park(Qp& qp) {
  ++counters_.qp_parks;
  const TimePoint due = qp.req_.timer_deadline();
  if (timed_.empty() || due < timed_due_) timed_due_ = due;
  qp.timed_at_ = static_cast<uint32_t>(timed_.size());
  timed_.push_back(&qp);
}

void Device::unpark(Qp& qp) {
  Qp* last = timed_.back();
  timed_[qp.timed_at_] = last;
  last->timed_at_ = qp.timed_at_;
  timed_.pop_back();
  qp.timed_at_ = Qp::kNotTimed;
}

void Device::wake_parked() {
  const TimePoint now = clock_.now();
  TimePoint next = TimePoint::max();
  for (size_t i = 0; i < timed_.size();) {
    Qp& qp = *timed_[i];
    if (qp.req_.timer_runs() && qp.req_.timer_deadline() > now) {
      next = std::min(next, qp.req_.timer_deadline());
      ++i;
    } else {
      activate(qp);  // unparks it: timed_[i] is now another QP (or i is past the end)
    }
  }
  timed_due_ = next;  // unused while none is parked
}

bool Device::visit(Qp& qp, AckPolicy acks, Timers timers) {
  bool did = false;
  if (qp.flush_pending_ && flush_unless_copy_later(qp)) did = true;
  if (!qp.resp_.out.empty() && pump_output(qp)) did = true;
  // An ACK that is not held goes ahead of the requests posted since: a device acknowledges a
  // request as it takes it, before the application hears of it and answers, so a program
  // that waits on one channel for the send's event and then for the reply's (perftest 4.5
  // ib_send_lat -e) gets them in that order. The engine's step used to send a request that
  // the woken application posted while the step was still taking frames ahead of the ACK,
  // and the program's next event was the reply's: it read an empty CQ and failed (suite test
  // AnAckGoesAheadOfRequestsPostedAfterItsRequestArrived; compat ib_send_lat_events).
  if (ack_goes_now(qp, acks)) {
    flush_acks(qp);
    did = true;
  }
  if (timers == Timers::kRun && qp.req_.timer_runs() && run_timers(qp)) did = true;
  if ((qp.state_ == QpState::kRts || (qp.state_ == QpState::kSqd && qp.req_.send_started)) && run_requester(qp))
    did = true;
  if (qp.req_.draining && qp.req_.send_pos == qp.sq_.ring().head() && !qp.req_.send_started) {
    qp.req_.draining = false;
    if (qp.req_.drain_notify) async({verbs::AsyncEventType::kSqDrained, nullptr, &qp});
    did = true;
  }
  if (qp.resp_.ack_requested()) {
    hold_or_flush_ack(qp);
    did = true;
  }
  if (qp.flush_pending_ && flush_unless_copy_later(qp)) did = true;
  return did;
}

bool Device::flush_unless_copy_later(Qp& qp) {
  if (!sink_.copy_later_into(qp.qpn())) {
    flush(qp);
    return true;
  }
  qp.flush_pending_ = false;
  if (!qp.flush_held_) {
    qp.flush_held_ = true;
    held_flushes_.push_back(&qp);
  }
  return false;
}

void Device::release_held_flushes() {
  for (size_t i = 0; i < held_flushes_.size();) {
    Qp& qp = *held_flushes_[i];
    if (sink_.copy_later_into(qp.qpn())) {
      ++i;
      continue;
    }
    drop_held_flush(qp);
    qp.flush_pending_ = true;
    activate(qp);
  }
}

void Device::drop_held_flush(Qp& qp) {
  if (!qp.flush_held_) return;
  qp.flush_held_ = false;
  std::erase(held_flushes_, &qp);
}

void Device::hold_or_flush_ack(Qp& qp) {
  // Held (AckPolicy): this step's ACK waits for the next step; one held by the last step goes
  // now, behind the answer this step sent.
  if (!qp.resp_.ack_held) {
    qp.resp_.ack_held = true;
    holds_acks_ = true;
  } else {
    flush_acks(qp);
  }
}

bool Device::has_untimed_work(const Qp& qp) const {
  const RequesterState& req = qp.req_;
  // The likeliest first: a ping-pong's QP holds an ACK or has a WQE to send.
  return qp.resp_.ack_pending || req.send_pos != qp.sq_.ring().tail() || !qp.resp_.out.empty() || req.draining ||
         qp.flush_pending_.load(std::memory_order_relaxed);
}

void Device::queue_posted(Qp& qp) {
  std::lock_guard lock(posted_mu_);
  posted_.push_back(&qp);
  has_posted_.store(true, std::memory_order_release);
}

bool Device::adopt_posted_slow() {
  std::lock_guard lock(posted_mu_);
  for (Qp* qp : posted_) activate(*qp);
  const bool any = !posted_.empty();
  posted_.clear();
  has_posted_.store(false, std::memory_order_relaxed);
  return any;
}

void Device::deactivate(Qp* qp) {
  if (qp->active_) {
    active_.erase(std::find(active_.begin(), active_.end(), qp));
    qp->active_ = false;
  }
  if (qp->timed_at_ != Qp::kNotTimed) unpark(*qp);
  std::lock_guard lock(posted_mu_);
  std::erase(posted_, qp);
}

std::optional<TimePoint> Device::next_deadline() const {
  std::optional<TimePoint> best;
  for (const Qp* qp : active_) {
    if (qp->req_.timer_runs() && (!best || qp->req_.timer_deadline() < *best)) best = qp->req_.timer_deadline();
  }
  // The parked ones' (perhaps early: a step then looks and finds the true one).
  if (!timed_.empty() && (!best || timed_due_ < *best)) best = timed_due_;
  return best;
}

}  // namespace softib::rc
