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

Status SendQueue::post(const SendWr& wr, bool sig_all, const std::unique_lock<BiasedLock>& held) {
  SOFTIB_ASSERT(held.mutex() == &post_mu_ && held.owns_lock());
  const bool is_inline = (wr.send_flags & send_flag::kInline) != 0;
  uint64_t length = 0;
  for (const Sge& s : wr.sg_list) length += s.length;
  if (!is_inline && wr.sg_list.size() > max_sge_) return too_many_sges(wr.sg_list.size(), max_sge_);
  if (is_inline && length > max_inline_)
    return Status(Code::kInvalidArgument,
                  fmt::format("post_send: {} bytes of inline data, max_inline_data is {}", length, max_inline_));
  const bool atomic = wr.opcode == WrOpcode::kAtomicCmpAndSwp || wr.opcode == WrOpcode::kAtomicFetchAndAdd;
  if (atomic && (length != 8 || (wr.atomic.remote_addr & 7) != 0))
    return Status(Code::kInvalidArgument, "post_send: an atomic operates on 8 bytes at an 8-byte aligned address");
  if (length > 0x80000000ULL) return Status(Code::kInvalidArgument, "post_send: message longer than 2^31 bytes");
  if (ring_.full()) return queue_full("send");
  SendWqe& w = ring_.slot_to_fill();
  w.wr_id = wr.wr_id;
  w.opcode = wr.opcode;
  w.send_flags = wr.send_flags;
  w.imm_data = wr.imm_data;
  w.remote_addr = atomic ? wr.atomic.remote_addr : wr.rdma.remote_addr;
  w.rkey = atomic ? wr.atomic.rkey : wr.rdma.rkey;
  w.compare_add = wr.atomic.compare_add;
  w.swap = wr.atomic.swap;
  if (wr.ud.ah != nullptr) w.ah = wr.ud.ah->attr();
  w.remote_qpn = wr.ud.remote_qpn;
  w.remote_qkey = wr.ud.remote_qkey;
  w.length = length;
  w.is_inline = is_inline;
  if (is_inline) {
    // Inline data is copied now and needs no L_Key (IBA 10.8.2.3 "Inline data").
    uint8_t* to = w.inline_data.data();
    if (wr.sg_list.size() == 1) {
      copy_small(to, reinterpret_cast<const void*>(wr.sg_list[0].addr), length);  // nearly every inline post
    } else {
      for (const Sge& s : wr.sg_list) {
        if (s.length != 0) std::memcpy(to, reinterpret_cast<const void*>(s.addr), s.length);
        to += s.length;
      }
    }
    w.num_sge = 0;
  } else {
    w.num_sge = static_cast<uint32_t>(wr.sg_list.size());
    for (uint32_t i = 0; i < w.num_sge; ++i) w.sge[i] = wr.sg_list[i];
  }
  w.state = WqeState::kPosted;
  w.signaled = sig_all || (wr.send_flags & send_flag::kSignaled) != 0;
  ring_.publish();
  return Status();
}

}  // namespace softib::verbs
