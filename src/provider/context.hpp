// Context: one opened device (what ibv_open_device returns): an rc::Device run by an engine
// and joined to the other endpoints of the host by a link, with libibverbs' error semantics on
// every call. The native C++ API (include/softib/verbs.hpp) and the drop-in libibverbs wrap
// it; neither adds behaviour of its own.
//
// Opening a device through softibd (open()): the context attaches to the HCA as an endpoint
// with its shared-memory inbox and doorbell, receives the directory (ports, LIDs, who owns
// which QPN) and its QPN block, and keeps the session open for as long as it lives: softibd
// notices a process that dies and frees its endpoint. A context can also join an in-process
// LocalFabric (open_local(): no daemon, loopback link), for tests and for programs that want
// RDMA between threads only.
//
// Thread: every method may be called from any thread. Object calls take the device lock;
// posts and polls take only their queue's lock and run a transport step inline when the
// device is free (engine/engine.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "engine/engine.hpp"
#include "link/shm_directory.hpp"
#include "link/shm_link.hpp"
#include "provider/devices.hpp"
#include "rc/device.hpp"
#include "verbs/event_queue.hpp"

namespace softib::ipc {
class Connection;
}

namespace softib::provider {

class LocalFabric;

// A completion channel (ibv_comp_channel): CQs armed with req_notify_cq hand themselves to
// it when their next completion arrives; fd() is readable while events wait.
class CompChannel {
 public:
  explicit CompChannel(verbs::EventFd fd) : queue_(std::move(fd)) {}
  int fd() const { return queue_.fd(); }
  size_t pending() const { return queue_.pending(); }

 private:
  friend class Context;
  verbs::EventQueue<verbs::Cq*> queue_;
  std::atomic<uint32_t> users_{0};  // CQs that use it
};

// An asynchronous event (struct ibv_async_event): the object it concerns (by the context
// pointer its creator gave: the wrapper object of the API that made it) and, for port events,
// the port.
struct AsyncEvent {
  verbs::AsyncEventType type;
  void* object = nullptr;  // the CQ's, QP's or SRQ's context pointer
  uint8_t port_num = 0;
};

// What ibv_query_port reports (struct ibv_port_attr's fields, as the port has them).
// What kind of address a GID table entry is (ibv_gid_type).
enum class GidType : uint8_t { kIb, kRoceV2 };

struct PortAttributes {
  link::PortSnapshot port;
  uint16_t gid_table_len = 0;
  uint16_t pkey_table_len = 0;
};

class Context {
 public:
  // Attaches to `device` through softibd. Errors: Unavailable without softibd; the daemon's
  // error (a node that is not a CA, no free endpoint or QPN block).
  static Result<std::unique_ptr<Context>> open(const DeviceInfo& device, const Options& options);
  // Joins CA `hca` of an in-process fabric (no daemon).
  static Result<std::unique_ptr<Context>> open_local(LocalFabric& fabric, uint32_t hca);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  // ibv_query_device: capabilities plus identity.
  const verbs::DeviceCaps& caps() const { return caps_; }
  // ibv_query_port. EINVAL for a port the device does not have.
  Result<PortAttributes> query_port(uint8_t port);
  Result<Gid> query_gid(uint8_t port, uint32_t index);
  Result<GidType> query_gid_type(uint8_t port, uint32_t index);
  Result<PKey> query_pkey(uint8_t port, uint32_t index);

  // ---- objects (libibverbs' errors) ----
  verbs::Pd* alloc_pd();
  Status dealloc_pd(verbs::Pd* pd);
  Result<const verbs::Mr*> reg_mr(verbs::Pd* pd, void* addr, uint64_t length, uint64_t iova, uint32_t access);
  // ibv_rereg_mr: the region keeps its slot and gets new keys.
  Result<const verbs::Mr*> rereg_mr(const verbs::Mr* mr, verbs::Pd* pd, void* addr, uint64_t length, uint64_t iova,
                                    uint32_t access);
  Status dereg_mr(const verbs::Mr* mr);

  Result<CompChannel*> create_comp_channel();
  Status destroy_comp_channel(CompChannel* channel);  // EBUSY while a CQ uses it
  Result<verbs::Cq*> create_cq(uint32_t cqe, void* user_context, CompChannel* channel);
  Status resize_cq(verbs::Cq* cq, uint32_t cqe);
  Status destroy_cq(verbs::Cq* cq);
  // ibv_req_notify_cq: the next completion (solicited_only: the next solicited or error one)
  // hands the CQ to its channel. EINVAL for a CQ without a channel.
  Status req_notify_cq(verbs::Cq* cq, bool solicited_only);
  // ibv_get_cq_event: blocks until a CQ of the channel has an event (unless the fd is
  // non-blocking: WouldBlock). The caller stops polling, so the engine takes over first.
  Result<verbs::Cq*> get_cq_event(CompChannel* channel);
  // ibv_poll_cq: up to out.size() completions. An empty CQ makes the calling thread run a
  // transport step itself (and hold the inbox lease, engine/engine.hpp).
  size_t poll_cq(verbs::Cq* cq, std::span<verbs::WorkCompletion> out);

  Result<verbs::Srq*> create_srq(verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge, uint32_t limit, void* user_context);
  // ibv_modify_srq: IBV_SRQ_LIMIT arms the limit; IBV_SRQ_MAX_WR is not supported (EINVAL,
  // as a device without IBV_DEVICE_SRQ_RESIZE).
  Status modify_srq(verbs::Srq* srq, std::optional<uint32_t> max_wr, std::optional<uint32_t> limit);
  Status destroy_srq(verbs::Srq* srq);
  Status post_srq_recv(verbs::Srq* srq, std::span<const verbs::RecvWr> wrs, size_t* bad);

  Result<rc::Qp*> create_qp(verbs::Pd* pd, verbs::Cq* send_cq, verbs::Cq* recv_cq, verbs::Srq* srq,
                            const verbs::QpInitAttr& init, void* user_context);
  Status modify_qp(rc::Qp* qp, const verbs::QpAttr& attr, uint32_t mask);
  // ibv_query_qp: the attributes and the capabilities the QP was created with.
  Status query_qp(rc::Qp* qp, verbs::QpAttr* attr, verbs::QpInitAttr* init);
  Status destroy_qp(rc::Qp* qp);
  Status post_send(rc::Qp* qp, std::span<const verbs::SendWr> wrs, size_t* bad);
  // All of `wrs` or none (ibv_wr_complete): rc::Device::check_send, then post_send.
  Status post_send_whole(rc::Qp* qp, std::span<const verbs::SendWr> wrs, size_t* bad);
  Status post_recv(rc::Qp* qp, std::span<const verbs::RecvWr> wrs, size_t* bad);

  Result<verbs::Ah*> create_ah(verbs::Pd* pd, const verbs::AhAttr& attr);
  Status destroy_ah(verbs::Ah* ah);

  // ---- asynchronous events (ibv_get_async_event) ----
  int async_fd() const { return async_.fd(); }
  // Blocks (unless async_fd() is non-blocking: WouldBlock) until an event arrives.
  Result<AsyncEvent> get_async_event();

  // For tests and diagnostics.
  rc::Device& device() { return *device_; }
  engine::Engine& engine() { return *engine_; }
  const link::ShmLink* shm_link() const { return shm_.get(); }
  // The shared-memory link's counters, copied under the device's lock (the engine's steps
  // count while the application reads them); all zero for a local context.
  link::ShmLinkCounters shm_counters() {
    std::lock_guard lock(device_->lock());
    return shm_ ? shm_->counters() : link::ShmLinkCounters{};
  }
  // No peer writes into this process's memory any more for a copy that ended later
  // (link::ShmLink::settle_copies): before memory goes back to the application. REQUIRES:
  // the device's lock.
  void settle_copies() {
    if (shm_) shm_->settle_copies();
  }

 private:
  Context(DeviceInfo info, verbs::EventFd async_fd);
  void on_step();  // REQUIRES: device lock (the engine's step hook)
  // An armed CQ's event for its channel: signalled at once, or, in a step, queued and its
  // signal owed until the step lets go of the device lock (engine::Engine::signals_deferred).
  void notify(CompChannel& channel, verbs::Cq& cq);
  void signal_owed_channels();  // the engine's signal hook, after a step's unlock
  // On a RoCE port, the address's GID becomes the link's internal LID (EINVAL without a GRH).
  Status resolve(verbs::AhAttr& ah, const char* what) const;
  void sync_ports();

  DeviceInfo info_;
  verbs::DeviceCaps caps_;
  // softibd's session (the endpoint lives as long as it does) and the directory. Absent for a
  // local context.
  std::unique_ptr<ipc::Connection> conn_;
  std::mutex conn_mu_;
  std::unique_ptr<link::ShmDirectory> dir_;
  std::vector<uint32_t> port_slots_;  // by port number - 1
  std::vector<link::PortSnapshot> ports_;
  uint64_t generation_ = UINT64_MAX;
  std::unique_ptr<link::ShmLink> shm_;
  LocalFabric* local_ = nullptr;
  uint64_t local_route_ = 0;
  std::unique_ptr<rc::Device> device_;
  std::unique_ptr<engine::Engine> engine_;
  verbs::EventQueue<AsyncEvent> async_;
  std::vector<std::unique_ptr<CompChannel>> channels_;
  std::mutex channels_mu_;
  std::vector<CompChannel*> owed_channels_;  // under channels_mu_: signals a step still owes
  std::unordered_map<verbs::Cq*, CompChannel*> cq_channels_;  // under the device lock
};

}  // namespace softib::provider
