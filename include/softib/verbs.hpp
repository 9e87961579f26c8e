// softib's native C++ verbs API: RAII objects over the same core (provider::Context) that the
// drop-in libibverbs.so.1 wraps, so a program written against it behaves exactly as an
// ibv_* program on softib does.
//
//   auto devs = softib::devices();                 // the CAs this host sees (SOFTIB_HOST)
//   softib::Context ctx = softib::Context::open(devs.at(0));
//   softib::ProtectionDomain pd = ctx.alloc_pd();
//   softib::MemoryRegion mr = pd.reg_mr(buf, len, softib::access::kLocalWrite);
//   softib::CompletionQueue cq = ctx.create_cq(256);
//   softib::QueuePair qp = pd.create_qp({.qp_type = softib::QpType::kRc, .cap = {...}}, cq, cq);
//   qp.modify(attr, softib::attr::kState | ...);   // RESET -> INIT -> RTR -> RTS
//   qp.post_send(wr);  cq.poll(wcs);
//
// Value types (SendWr, RecvWr, Sge, WorkCompletion, QpAttr, AhAttr, DeviceCaps, the enums and
// flag sets) are the verbs layer's own (src/verbs), re-exported here; their values are
// libibverbs'. Set-up calls throw softib::Error (its code() is the errno libibverbs would
// return); the data path (post, poll) never throws: posts return an errno and the index of
// the first work request that failed, polls return a count.
//
// Lifetimes: every object keeps its context alive; destroy objects before the resources they
// use (a QP before its CQs and PD), as with libibverbs — a destructor that finds its object
// still in use (EBUSY) leaves it to the context and logs a warning.
//
// Thread: objects may be used from any thread; posts and polls on different queues run in
// parallel.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "provider/context.hpp"
#include "provider/devices.hpp"
#include "provider/local_fabric.hpp"
#include "verbs/caps.hpp"
#include "verbs/qp_attr.hpp"
#include "verbs/work.hpp"

namespace softib {

// ---- the value types (libibverbs' values) ----
using verbs::AhAttr;
using verbs::AsyncEventType;
using verbs::DeviceCaps;
using verbs::GlobalRoute;
using verbs::Mtu;
using verbs::QpAttr;
using verbs::QpCap;
using verbs::QpInitAttr;
using verbs::QpState;
using verbs::QpType;
using verbs::RecvWr;
using verbs::SendWr;
using verbs::Sge;
using verbs::WcOpcode;
using verbs::WcStatus;
using verbs::WorkCompletion;
using verbs::WrOpcode;
namespace access = verbs::access;
namespace attr = verbs::attr;
namespace send_flag = verbs::send_flag;
namespace wc_flag = verbs::wc_flag;
using DeviceInfo = provider::DeviceInfo;
using Options = provider::Options;
using PortAttributes = provider::PortAttributes;
using LocalFabric = provider::LocalFabric;

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  explicit Error(const Status& s) : Error(s.to_errno(), s.to_string()) {}
  int code() const { return code_; }  // the errno libibverbs returns for the same failure

 private:
  int code_;
};

// The CAs this process sees (provider/devices.hpp). Throws Error (ECONNREFUSED: no softibd).
std::vector<DeviceInfo> devices(const Options& options = Options::from_environment());

// A raw pointer that a move leaves null, so that a moved-from RAII object releases nothing.
template <class T>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T* p) : p_(p) {}
  Handle(Handle&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Handle& operator=(Handle&& o) noexcept {
    p_ = o.p_;
    o.p_ = nullptr;
    return *this;
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

class ProtectionDomain;
class CompletionQueue;
class CompletionChannel;
class QueuePair;
class SharedReceiveQueue;
class AddressHandle;
class MemoryRegion;

struct AsyncEvent {
  AsyncEventType type;
  void* object;      // the user context given when the CQ/QP/SRQ was created
  uint8_t port_num;  // port events
};

class Context {
 public:
  // The first device when `name` is empty ("softib0", ...).
  static Context open(const std::string& name = {}, const Options& options = Options::from_environment());
  static Context open(const DeviceInfo& device, const Options& options = Options::from_environment());
  // A CA of an in-process fabric (no softibd).
  static Context open_local(LocalFabric& fabric, uint32_t hca);

  const DeviceInfo& info() const { return impl_->info(); }
  const DeviceCaps& query_device() const { return impl_->caps(); }
  PortAttributes query_port(uint8_t port = 1) const;
  Gid query_gid(uint8_t port, uint32_t index) const;
  PKey query_pkey(uint8_t port, uint32_t index) const;

  ProtectionDomain alloc_pd();
  CompletionChannel create_comp_channel();
  CompletionQueue create_cq(uint32_t cqe, CompletionChannel* channel = nullptr, void* user_context = nullptr);

  // Asynchronous events: a pollable fd, and the next event (nullopt: none and the fd is
  // non-blocking; otherwise blocks).
  int async_fd() const { return impl_->async_fd(); }
  std::optional<AsyncEvent> get_async_event();

  provider::Context& native() const { return *impl_; }

 private:
  explicit Context(std::shared_ptr<provider::Context> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<provider::Context> impl_;
};

class ProtectionDomain {
 public:
  ProtectionDomain(ProtectionDomain&&) noexcept = default;
  ProtectionDomain& operator=(ProtectionDomain&&) noexcept;
  ~ProtectionDomain();

  MemoryRegion reg_mr(void* addr, uint64_t length, uint32_t access);
  // The same with the address peers and SGEs use (ibv_reg_mr_iova).
  MemoryRegion reg_mr_iova(void* addr, uint64_t length, uint64_t iova, uint32_t access);
  QueuePair create_qp(const QpInitAttr& init, CompletionQueue& send_cq, CompletionQueue& recv_cq,
                      SharedReceiveQueue* srq = nullptr, void* user_context = nullptr);
  SharedReceiveQueue create_srq(uint32_t max_wr, uint32_t max_sge, uint32_t limit = 0, void* user_context = nullptr);
  AddressHandle create_ah(const AhAttr& attr);

  verbs::Pd* native() const { return pd_.get(); }

 private:
  friend class Context;
  ProtectionDomain(std::shared_ptr<provider::Context> ctx, verbs::Pd* pd) : ctx_(std::move(ctx)), pd_(pd) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  Handle<verbs::Pd> pd_;
};

class MemoryRegion {
 public:
  MemoryRegion(MemoryRegion&&) noexcept = default;
  MemoryRegion& operator=(MemoryRegion&&) noexcept;
  ~MemoryRegion();

  uint32_t lkey() const { return mr_->lkey.value(); }
  uint32_t rkey() const { return mr_->rkey.value(); }
  void* addr() const { return mr_->addr; }
  uint64_t iova() const { return mr_->iova; }
  uint64_t length() const { return mr_->length; }
  // An SGE for [offset, offset + length) of the region.
  Sge sge(uint64_t offset, uint32_t length) const { return Sge{mr_->iova + offset, length, mr_->lkey}; }
  // ibv_rereg_mr: new translation and access, new keys.
  void rereg(void* addr, uint64_t length, uint32_t access);

 private:
  friend class ProtectionDomain;
  MemoryRegion(std::shared_ptr<provider::Context> ctx, verbs::Pd* pd, const verbs::Mr* mr)
      : ctx_(std::move(ctx)), pd_(pd), mr_(mr) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  verbs::Pd* pd_ = nullptr;
  Handle<const verbs::Mr> mr_;
};

class CompletionChannel {
 public:
  CompletionChannel(CompletionChannel&&) noexcept = default;
  CompletionChannel& operator=(CompletionChannel&&) noexcept;
  ~CompletionChannel();

  int fd() const { return ch_->fd(); }
  // ibv_get_cq_event: the user context of the CQ that has an event (blocks unless the fd is
  // non-blocking; then nullopt when none waits).
  std::optional<void*> get_event();

  provider::CompChannel* native() const { return ch_.get(); }

 private:
  friend class Context;
  CompletionChannel(std::shared_ptr<provider::Context> ctx, provider::CompChannel* ch) : ctx_(std::move(ctx)), ch_(ch) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  Handle<provider::CompChannel> ch_;
};

class CompletionQueue {
 public:
  CompletionQueue(CompletionQueue&&) noexcept = default;
  CompletionQueue& operator=(CompletionQueue&&) noexcept;
  ~CompletionQueue();

  // Up to out.size() completions, oldest first. Never throws.
  size_t poll(std::span<WorkCompletion> out) { return ctx_->poll_cq(cq_.get(), out); }
  // Arms the CQ's channel for the next completion (solicited_only: the next solicited or
  // error one).
  void req_notify(bool solicited_only = false);
  void resize(uint32_t cqe);
  uint32_t cqe() const { return cq_->cqe(); }

  verbs::Cq* native() const { return cq_.get(); }

 private:
  friend class Context;
  CompletionQueue(std::shared_ptr<provider::Context> ctx, verbs::Cq* cq) : ctx_(std::move(ctx)), cq_(cq) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  Handle<verbs::Cq> cq_;
};

class SharedReceiveQueue {
 public:
  SharedReceiveQueue(SharedReceiveQueue&&) noexcept = default;
  SharedReceiveQueue& operator=(SharedReceiveQueue&&) noexcept;
  ~SharedReceiveQueue();

  // 0 or the errno; *bad (when given) the index of the first WR not posted.
  int post_recv(std::span<const RecvWr> wrs, size_t* bad = nullptr);
  int post_recv(const RecvWr& wr) { return post_recv(std::span<const RecvWr>(&wr, 1)); }
  // Arms the limit event (IBV_EVENT_SRQ_LIMIT_REACHED).
  void set_limit(uint32_t limit);

  verbs::Srq* native() const { return srq_.get(); }

 private:
  friend class ProtectionDomain;
  SharedReceiveQueue(std::shared_ptr<provider::Context> ctx, verbs::Srq* srq) : ctx_(std::move(ctx)), srq_(srq) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  Handle<verbs::Srq> srq_;
};

class AddressHandle {
 public:
  AddressHandle(AddressHandle&&) noexcept = default;
  AddressHandle& operator=(AddressHandle&&) noexcept;
  ~AddressHandle();

  const verbs::Ah* native() const { return ah_.get(); }

 private:
  friend class ProtectionDomain;
  AddressHandle(std::shared_ptr<provider::Context> ctx, verbs::Ah* ah) : ctx_(std::move(ctx)), ah_(ah) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  Handle<verbs::Ah> ah_;
};

class QueuePair {
 public:
  QueuePair(QueuePair&&) noexcept = default;
  QueuePair& operator=(QueuePair&&) noexcept;
  ~QueuePair();

  uint32_t qp_num() const { return qp_->qpn().value(); }
  QpState state() const { return qp_->state(); }
  QpType type() const { return qp_->type(); }
  // ibv_modify_qp. Throws Error (EINVAL for an illegal transition or attribute).
  void modify(const QpAttr& attr, uint32_t mask);
  // ibv_query_qp: the attributes (and, in `init`, the creation attributes).
  QpAttr query(QpInitAttr* init = nullptr) const;

  // 0 or the errno (EINVAL, ENOMEM for a full queue); *bad (when given) the index of the first
  // WR not posted. Never throws.
  int post_send(std::span<const SendWr> wrs, size_t* bad = nullptr);
  int post_send(const SendWr& wr) { return post_send(std::span<const SendWr>(&wr, 1)); }
  int post_recv(std::span<const RecvWr> wrs, size_t* bad = nullptr);
  int post_recv(const RecvWr& wr) { return post_recv(std::span<const RecvWr>(&wr, 1)); }

  rc::Qp* native() const { return qp_.get(); }

 private:
  friend class ProtectionDomain;
  QueuePair(std::shared_ptr<provider::Context> ctx, rc::Qp* qp) : ctx_(std::move(ctx)), qp_(qp) {}
  void release();
  std::shared_ptr<provider::Context> ctx_;
  Handle<rc::Qp> qp_;
};

}  // namespace softib
