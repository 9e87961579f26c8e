#include "verbs/cq.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace softib::verbs {

void Cq::lost() {
  overrun_flag_.store(true, std::memory_order_relaxed);
  if (overrun_) overrun_(*this);
}

void Cq::notify_armed(bool solicited) {
  // IBA 11.4.2.2: an armed CQ notifies once, for the next completion or (solicited only) the
  // next solicited or unsuccessful one. arm() may race with this push: the CAS decides which
  // completion the arm saw, as an HCA's event queue does.
  Arm a = arm_.load(std::memory_order_acquire);
  while (a != Arm::kNone && (a == Arm::kNext || solicited)) {
    if (arm_.compare_exchange_weak(a, Arm::kNone, std::memory_order_acq_rel)) {
      if (notify_) notify_(*this);
      break;
    }
  }
}

size_t Cq::take(std::span<WorkCompletion> out) {
  std::lock_guard lock(consumers_);
  // One look at the indices and one release for the lot (not one of each a completion).
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(out.size(), ring_.size()));
  for (uint32_t i = 0; i < n; ++i) out[i] = ring_.peek(i);
  ring_.release(n);
  return n;
}

void Cq::arm(bool solicited_only) {
  // A stronger request is not weakened by a later solicited-only one.
  Arm a = arm_.load(std::memory_order_acquire);
  const Arm want = solicited_only ? Arm::kSolicited : Arm::kNext;
  while (a != Arm::kNext && !arm_.compare_exchange_weak(a, want, std::memory_order_acq_rel)) {
  }
}

Status Cq::resize(uint32_t cqe) {
  std::lock_guard lock(consumers_);
  if (cqe < ring_.size())
    return Status(Code::kInvalidArgument,
                  fmt::format("resize_cq: {} entries cannot hold the {} queued completions", cqe, ring_.size()));
  ring_.resize(cqe);
  return Status();
}

}  // namespace softib::verbs
