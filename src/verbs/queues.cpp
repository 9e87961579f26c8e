#include "verbs/queues.hpp"

#include <cstring>

#include <fmt/format.h>

#include "base/copy.hpp"
#include "verbs/ah.hpp"

namespace softib::verbs {

namespace {

Status too_many_sges(size_t n, uint32_t max) {
  return Status(Code::kInvalidArgument, fmt::format("post: {} SGEs, the queue takes {}", n, max));
}

Status queue_full(std::string_view which) {
  return Status(Code::kResourceExhausted, fmt::format("post: the {} queue is full", which));
}

}  // namespace

RecvQueue::RecvQueue(uint32_t max_wr, uint32_t max_sge) : ring_(max_wr), max_sge_(max_sge) {
  for (uint32_t i = 0; i < ring_.slot_count(); ++i) ring_.slot(i).sge.resize(max_sge);
}

Status RecvQueue::post(const RecvWr& wr, const std::unique_lock<BiasedLock>& held) {
  SOFTIB_ASSERT(held.mutex() == &post_mu_ && held.owns_lock());
  if (wr.sg_list.size() > max_sge_) return too_many_sges(wr.sg_list.size(), max_sge_);
  if (ring_.full()) return queue_full("receive");
  RecvWqe& w = ring_.slot_to_fill();
  w.wr_id = wr.wr_id;
  w.num_sge = static_cast<uint32_t>(wr.sg_list.size());
  w.length = 0;
  for (uint32_t i = 0; i < w.num_sge; ++i) {
    w.sge[i] = wr.sg_list[i];
    w.length += wr.sg_list[i].length;
  }
  ring_.publish();
  return Status();
}

Status RecvQueue::resize(uint32_t max_wr) {
  std::lock_guard lock(post_mu_);
  if (max_wr < ring_.size())
    return Status(Code::kInvalidArgument, fmt::format("resize: {} entries cannot hold the {} queued", max_wr, ring_.size()));
  ring_.resize(max_wr);
  for (uint32_t i = 0; i < ring_.slot_count(); ++i)
    if (ring_.slot(i).sge.size() < max_sge_) ring_.slot(i).sge.resize(max_sge_);
  return Status();
}

SendQueue::SendQueue(uint32_t max_wr, uint32_t max_sge, uint32_t max_inline)
    : ring_(max_wr), max_sge_(max_sge), max_inline_(max_inline) {
  for (uint32_t i = 0; i < ring_.slot_count(); ++i) {
    ring_.slot(i).sge.resize(max_sge);
    ring_.slot(i).inline_data.resize(max_inline);
  }
}

Status SendQueue::check(const SendWr& wr) const {
  const uint64_t length = message_length(wr);
  const Refusal r = refusal(wr, length);
  return r == Refusal::kNone || r == Refusal::kFull ? Status() : refuse(r, wr, length);
}

Status SendQueue::refuse(Refusal why, const SendWr& wr, uint64_t length) const {
  switch (why) {
    case Refusal::kTooManySges: return too_many_sges(wr.sg_list.size(), max_sge_);
    case Refusal::kInlineTooLong:
      return Status(Code::kInvalidArgument,
                    fmt::format("post_send: {} bytes of inline data, max_inline_data is {}", length, max_inline_));
    case Refusal::kAtomicShape:
      return Status(Code::kInvalidArgument, "post_send: an atomic operates on 8 bytes at an 8-byte aligned address");
    case Refusal::kTooLong: return Status(Code::kInvalidArgument, "post_send: message longer than 2^31 bytes");
    case Refusal::kFull:
    case Refusal::kNone: break;
  }
  return queue_full("send");
}

}  // namespace softib::verbs
