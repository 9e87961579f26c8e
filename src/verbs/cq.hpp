// Completion queue (IBA 11.4.2; ibv_create_cq, ibv_poll_cq, ibv_req_notify_cq,
// ibv_resize_cq).
//
// The transport pushes completions; consumers poll them. Notification: after arm(), the
// next completion (solicited_only: the next solicited or unsuccessful one, IBA 11.4.2.2)
// fires the notify callback once, which hands the CQ to its completion channel. A push to a
// full CQ is an overrun: the completion is lost, the CQ is in error and the callback for
// async events reports IBV_EVENT_CQ_ERR (IBA 11.6.3.1, "CQ overrun").
//
// Thread: push() under the device's progress lock (one producer at a time: no lock of its
// own); poll() from any thread (a BiasedLock orders consumers, free of atomic instructions
// while only one thread polls; an empty CQ is seen without it); arm() from any thread (an
// atomic); resize() under the progress lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>

#include "base/clock.hpp"
#include "base/biased_lock.hpp"
#include "verbs/ring.hpp"
#include "verbs/work.hpp"

namespace softib::verbs {

class Cq {
 public:
  using Callback = std::function<void(Cq&)>;

  Cq(uint32_t cqe, void* cq_context) : ring_(cqe), context_(cq_context) {}
  Cq(const Cq&) = delete;
  Cq& operator=(const Cq&) = delete;

  uint32_t cqe() const { return ring_.capacity(); }
  void* context() const { return context_; }

  // Where notifications and overruns go (the completion channel, the async event queue).
  void on_notify(Callback f) { notify_ = std::move(f); }
  void on_overrun(Callback f) { overrun_ = std::move(f); }
  // Completions are stamped with clock's time as they are pushed (the completion timestamps
  // of ibv_create_cq_ex's IBV_WC_EX_WITH_COMPLETION_TIMESTAMP). REQUIRES: before any push.
  void enable_timestamps(const Clock* clock) { timestamps_ = clock; }

  // Producer side. solicited: the completion is for a message with the SE bit.
  // Returns false on overrun (the completion was lost).
  bool push(const WorkCompletion& wc, bool solicited = false) {
    return emplace(solicited, [&](WorkCompletion& slot) { slot = wc; });
  }
  // push() without a completion to copy: `fill` writes it into its slot, which it finds
  // value-initialised (a receive's completion is built in place: callgrind, 64-byte SEND,
  // the local and its copy cost ~30 instructions a message).
  template <class Fill>
  bool emplace(bool solicited, Fill&& fill) {
    // Offered (offer_direct: the step pushing now is a poll's) and nothing older queued: the
    // completion goes straight to that poll's array, not through the ring.
    const bool direct = direct_ != nullptr && ring_.empty();
    if (!direct && ring_.full()) {
      lost();
      return false;
    }
    WorkCompletion& slot = direct ? *direct_ : ring_.slot_to_fill();
    slot = WorkCompletion{};
    fill(slot);
    if (timestamps_ != nullptr) slot.timestamp_ns = static_cast<uint64_t>(timestamps_->now().time_since_epoch().count());
    const bool failed = slot.status != WcStatus::kSuccess;
    if (direct) {
      direct_ = nullptr;
      direct_taken_.store(1, std::memory_order_relaxed);
    } else {
      ring_.publish();
    }
    if (arm_.load(std::memory_order_acquire) != Arm::kNone) notify_armed(solicited || failed);
    return true;
  }

  // ibv_poll_cq: up to out.size() completions, oldest first. The empty check is inline (a
  // polling loop's common case, without the lock or a call).
  size_t poll(std::span<WorkCompletion> out) { return ring_.empty() ? 0 : take(out); }
  // A poll that found the CQ empty steps the transport itself: the first completion its
  // step pushes, if nothing older is queued by then, is written straight into `slot` (the
  // poller's array) instead of the ring, to be taken back at once (callgrind: ~60
  // instructions fewer on the way from a message to the application's poll).
  // withdraw_direct() ends the offer and says whether `slot` was filled (0 or 1).
  // REQUIRES: both under the progress lock, around that one step (engine::Engine's
  // locked_step): pushes from any other step, on any thread, never see an offer.
  void offer_direct(WorkCompletion* slot) {
    direct_taken_.store(0, std::memory_order_relaxed);
    direct_ = slot;
  }
  size_t withdraw_direct() {
    direct_ = nullptr;
    const uint32_t n = direct_taken_.load(std::memory_order_relaxed);
    direct_taken_.store(0, std::memory_order_relaxed);
    return n;
  }
  // ibv_req_notify_cq.
  void arm(bool solicited_only);
  // A notification is requested and has not fired yet.
  bool armed() const { return arm_.load(std::memory_order_acquire) != Arm::kNone; }
  // ibv_resize_cq. EINVAL when it would hold fewer than the completions queued.
  // REQUIRES: the progress lock is held (no push runs concurrently).
  Status resize(uint32_t cqe);

  bool overrun() const { return overrun_flag_.load(std::memory_order_relaxed); }
  // Completions queued, the one a poll's step delivered directly included (offer_direct: the
  // step stops taking frames once its caller has what it asked for).
  size_t queued() const { return ring_.size() + direct_taken_.load(std::memory_order_relaxed); }

 private:
  enum class Arm : uint8_t { kNone, kNext, kSolicited };

  void lost();
  size_t take(std::span<WorkCompletion> out);  // poll() of a CQ that held completions
  // An armed CQ took a completion; `solicited`: solicited or unsuccessful.
  void notify_armed(bool solicited);

  WorkRing<WorkCompletion> ring_;
  // offer_direct(): the poll's slot (null once filled or withdrawn), under the progress lock,
  // and whether it was filled (read by queued() from any thread: relaxed).
  WorkCompletion* direct_ = nullptr;
  std::atomic<uint32_t> direct_taken_{0};
  void* context_;
  BiasedLock consumers_;
  std::atomic<Arm> arm_{Arm::kNone};
  std::atomic<bool> overrun_flag_{false};
  Callback notify_;
  Callback overrun_;
  const Clock* timestamps_ = nullptr;
};

}  // namespace softib::verbs
