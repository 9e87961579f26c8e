// The native C++ API (include/softib/verbs.hpp): each call is the provider's, with its Status
// turned into softib::Error on the set-up path and into an errno on the data path.
#include "softib/verbs.hpp"

#include "base/log.hpp"

namespace softib {

namespace {

template <class T>
T take(Result<T> r) {
  if (!r.ok()) throw Error(r.error());
  return std::move(*r);
}

void check(const Status& s) {
  if (!s.ok()) throw Error(s);
}

// A destructor cannot throw: an object still in use stays with its context (freed with it).
void release_status(const Status& s, const char* what) {
  if (!s.ok()) log(LogLevel::kWarn, "verbs", "{}: {}", what, s.to_string());
}

}  // namespace

std::vector<DeviceInfo> devices(const Options& options) { return take(provider::list_devices(options)); }

// ---- Context ----

Context Context::open(const std::string& name, const Options& options) {
  const auto devs = devices(options);
  for (const auto& d : devs)
    if (name.empty() || d.name == name) return open(d, options);
  throw Error(ENODEV, name.empty() ? "no softib device" : "no softib device named " + name);
}

Context Context::open(const DeviceInfo& device, const Options& options) {
  return Context(std::shared_ptr<provider::Context>(take(provider::Context::open(device, options))));
}

Context Context::open_local(LocalFabric& fabric, uint32_t hca) {
  return Context(std::shared_ptr<provider::Context>(take(provider::Context::open_local(fabric, hca))));
}

PortAttributes Context::query_port(uint8_t port) const { return take(impl_->query_port(port)); }
Gid Context::query_gid(uint8_t port, uint32_t index) const { return take(impl_->query_gid(port, index)); }
PKey Context::query_pkey(uint8_t port, uint32_t index) const { return take(impl_->query_pkey(port, index)); }

ProtectionDomain Context::alloc_pd() { return ProtectionDomain(impl_, impl_->alloc_pd()); }

CompletionChannel Context::create_comp_channel() {
  return CompletionChannel(impl_, take(impl_->create_comp_channel()));
}

CompletionQueue Context::create_cq(uint32_t cqe, CompletionChannel* channel, void* user_context) {
  return CompletionQueue(impl_, take(impl_->create_cq(cqe, user_context, channel ? channel->native() : nullptr)));
}

std::optional<AsyncEvent> Context::get_async_event() {
  auto e = impl_->get_async_event();
  if (!e) {
    if (e.error().code() == Code::kWouldBlock) return std::nullopt;
    throw Error(e.error());
  }
  return AsyncEvent{e->type, e->object, e->port_num};
}

// ---- ProtectionDomain ----

ProtectionDomain& ProtectionDomain::operator=(ProtectionDomain&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    pd_ = std::move(o.pd_);
  }
  return *this;
}
ProtectionDomain::~ProtectionDomain() { release(); }
void ProtectionDomain::release() {
  if (pd_) release_status(ctx_->dealloc_pd(pd_.get()), "dealloc_pd");
  pd_ = Handle<verbs::Pd>();
}

MemoryRegion ProtectionDomain::reg_mr(void* addr, uint64_t length, uint32_t access) {
  return reg_mr_iova(addr, length, reinterpret_cast<uint64_t>(addr), access);
}

MemoryRegion ProtectionDomain::reg_mr_iova(void* addr, uint64_t length, uint64_t iova, uint32_t access) {
  return MemoryRegion(ctx_, pd_.get(), take(ctx_->reg_mr(pd_.get(), addr, length, iova, access)));
}

QueuePair ProtectionDomain::create_qp(const QpInitAttr& init, CompletionQueue& send_cq, CompletionQueue& recv_cq,
                                      SharedReceiveQueue* srq, void* user_context) {
  return QueuePair(ctx_, take(ctx_->create_qp(pd_.get(), send_cq.native(), recv_cq.native(),
                                              srq ? srq->native() : nullptr, init, user_context)));
}

SharedReceiveQueue ProtectionDomain::create_srq(uint32_t max_wr, uint32_t max_sge, uint32_t limit, void* user_context) {
  return SharedReceiveQueue(ctx_, take(ctx_->create_srq(pd_.get(), max_wr, max_sge, limit, user_context)));
}

AddressHandle ProtectionDomain::create_ah(const AhAttr& attr) {
  return AddressHandle(ctx_, take(ctx_->create_ah(pd_.get(), attr)));
}

// ---- MemoryRegion ----

MemoryRegion& MemoryRegion::operator=(MemoryRegion&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    pd_ = o.pd_;
    mr_ = std::move(o.mr_);
  }
  return *this;
}
MemoryRegion::~MemoryRegion() { release(); }
void MemoryRegion::release() {
  if (mr_) release_status(ctx_->dereg_mr(mr_.get()), "dereg_mr");
  mr_ = Handle<const verbs::Mr>();
}

void MemoryRegion::rereg(void* addr, uint64_t length, uint32_t access) {
  mr_ = Handle<const verbs::Mr>(take(ctx_->rereg_mr(mr_.get(), pd_, addr, length, reinterpret_cast<uint64_t>(addr), access)));
}

// ---- CompletionChannel ----

CompletionChannel& CompletionChannel::operator=(CompletionChannel&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    ch_ = std::move(o.ch_);
  }
  return *this;
}
CompletionChannel::~CompletionChannel() { release(); }
void CompletionChannel::release() {
  if (ch_) release_status(ctx_->destroy_comp_channel(ch_.get()), "destroy_comp_channel");
  ch_ = Handle<provider::CompChannel>();
}

std::optional<void*> CompletionChannel::get_event() {
  auto cq = ctx_->get_cq_event(ch_.get());
  if (!cq) {
    if (cq.error().code() == Code::kWouldBlock) return std::nullopt;
    throw Error(cq.error());
  }
  return (*cq)->context();
}

// ---- CompletionQueue ----

CompletionQueue& CompletionQueue::operator=(CompletionQueue&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    cq_ = std::move(o.cq_);
  }
  return *this;
}
CompletionQueue::~CompletionQueue() { release(); }
void CompletionQueue::release() {
  if (cq_) release_status(ctx_->destroy_cq(cq_.get()), "destroy_cq");
  cq_ = Handle<verbs::Cq>();
}
void CompletionQueue::req_notify(bool solicited_only) { check(ctx_->req_notify_cq(cq_.get(), solicited_only)); }
void CompletionQueue::resize(uint32_t cqe) { check(ctx_->resize_cq(cq_.get(), cqe)); }

// ---- SharedReceiveQueue ----

SharedReceiveQueue& SharedReceiveQueue::operator=(SharedReceiveQueue&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    srq_ = std::move(o.srq_);
  }
  return *this;
}
SharedReceiveQueue::~SharedReceiveQueue() { release(); }
void SharedReceiveQueue::release() {
  if (srq_) release_status(ctx_->destroy_srq(srq_.get()), "destroy_srq");
  srq_ = Handle<verbs::Srq>();
}
int SharedReceiveQueue::post_recv(std::span<const RecvWr> wrs, size_t* bad) {
  size_t b = 0;
  const Status s = ctx_->post_srq_recv(srq_.get(), wrs, &b);
  if (bad != nullptr) *bad = b;
  return s.to_errno();
}
void SharedReceiveQueue::set_limit(uint32_t limit) { check(ctx_->modify_srq(srq_.get(), std::nullopt, limit)); }

// ---- AddressHandle ----

AddressHandle& AddressHandle::operator=(AddressHandle&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    ah_ = std::move(o.ah_);
  }
  return *this;
}
AddressHandle::~AddressHandle() { release(); }
void AddressHandle::release() {
  if (ah_) release_status(ctx_->destroy_ah(ah_.get()), "destroy_ah");
  ah_ = Handle<verbs::Ah>();
}

// ---- QueuePair ----

QueuePair& QueuePair::operator=(QueuePair&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = std::move(o.ctx_);
    qp_ = std::move(o.qp_);
  }
  return *this;
}
QueuePair::~QueuePair() { release(); }
void QueuePair::release() {
  if (qp_) release_status(ctx_->destroy_qp(qp_.get()), "destroy_qp");
  qp_ = Handle<rc::Qp>();
}

void QueuePair::modify(const QpAttr& attr, uint32_t mask) { check(ctx_->modify_qp(qp_.get(), attr, mask)); }

QpAttr QueuePair::query(QpInitAttr* init) const {
  QpAttr a;
  QpInitAttr i;
  check(ctx_->query_qp(qp_.get(), &a, &i));
  if (init != nullptr) *init = i;
  return a;
}

int QueuePair::post_send(std::span<const SendWr> wrs, size_t* bad) {
  size_t b = 0;
  const Status s = ctx_->post_send(qp_.get(), wrs, &b);
  if (bad != nullptr) *bad = b;
  return s.to_errno();
}

int QueuePair::post_recv(std::span<const RecvWr> wrs, size_t* bad) {
  size_t b = 0;
  const Status s = ctx_->post_recv(qp_.get(), wrs, &b);
  if (bad != nullptr) *bad = b;
  return s.to_errno();
}

}  // namespace softib
