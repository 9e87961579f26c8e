#include "verbs/cq.hpp"

#include <fmt/format.h>

namespace softib::verbs {

bool Cq::push(const WorkCompletion& wc, bool solicited) {
  bool fire = false;
  bool overran = false;
  {
    std::lock_guard lock(mu_);
    if (ring_.full()) {
      overrun_flag_ = overran = true;
    } else {
      ring_.slot_to_fill() = wc;
      ring_.publish();
      if (arm_ == Arm::kNext || (arm_ == Arm::kSolicited && (solicited || wc.status != WcStatus::kSuccess))) {
        arm_ = Arm::kNone;
        fire = true;
      }
    }
  }
  if (overran) {
    if (overrun_) overrun_(*this);
    return false;
  }
  if (fire && notify_) notify_(*this);
  return true;
}

size_t Cq::poll(std::span<WorkCompletion> out) {
  std::lock_guard lock(mu_);
  size_t n = 0;
  while (n < out.size() && !ring_.empty()) {
    out[n++] = ring_.peek();
    ring_.release();
  }
  return n;
}

void Cq::arm(bool solicited_only) {
  std::lock_guard lock(mu_);
  // A stronger request is not weakened by a later solicited-only one.
  if (arm_ != Arm::kNext) arm_ = solicited_only ? Arm::kSolicited : Arm::kNext;
}

Status Cq::resize(uint32_t cqe) {
  std::lock_guard lock(mu_);
  if (cqe < ring_.size())
    return Status(Code::kInvalidArgument,
                  fmt::format("resize_cq: {} entries cannot hold the {} queued completions", cqe, ring_.size()));
  ring_.resize(cqe);
  return Status();
}

}  // namespace softib::verbs
