// Send and receive work queue entries and the queues that hold them (IBA 10.8, 11.4.1).
//
// A post copies the work request into a queue slot (its scatter/gather list into the slot's
// own SGE array, inline data into the slot's own buffer), so the consumer's arrays may be
// reused as soon as the post returns, as libibverbs promises.
//
// Thread: posters serialise on the queue's post lock, taken once for a whole post list
// (lock_posts(), as rdma-core's providers take their queue lock once per ibv_post_send
// chain). It is a BiasedLock: a queue posted to from one thread only costs that thread no
// atomic instruction. The transport consumes under the device's progress lock (WorkRing
// explains the hand-over).
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/biased_lock.hpp"
#include "base/copy.hpp"
#include "base/result.hpp"
#include "verbs/ah.hpp"
#include "verbs/qp_attr.hpp"
#include "verbs/ring.hpp"
#include "verbs/work.hpp"

namespace softib::verbs {

struct RecvWqe {
  uint64_t wr_id = 0;
  uint32_t num_sge = 0;
  uint64_t length = 0;    // sum of the SGE lengths
  std::vector<Sge> sge;   // sized max_recv_sge at creation
};

// What the transport tracks of a send WQE it is working on.
enum class WqeState : uint8_t { kPosted, kSending, kSent, kDone };

struct SendWqe {
  uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  uint32_t send_flags = 0;
  uint32_t imm_data = 0;
  uint64_t remote_addr = 0;
  RKey rkey{};
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  AhAttr ah{};            // UD: a copy of the AH's attributes, so the AH may go away
  Qpn remote_qpn{};
  QKey remote_qkey{};
  uint32_t num_sge = 0;
  uint64_t length = 0;    // message length in bytes
  bool is_inline = false;
  std::vector<Sge> sge;               // sized max_send_sge at creation
  std::vector<uint8_t> inline_data;   // sized max_inline_data at creation

  // Transport bookkeeping, owned by the transport after the post.
  WqeState state = WqeState::kPosted;
  Psn first_psn{};
  Psn last_psn{};         // PSN of the last packet (READ: of the last response)
  bool signaled = false;
};

class RecvQueue {
 public:
  RecvQueue(uint32_t max_wr, uint32_t max_sge);
  uint32_t max_wr() const { return ring_.capacity(); }
  uint32_t max_sge() const { return max_sge_; }

  // The post lock, held across a post list. REQUIRES: post() is given it.
  std::unique_lock<BiasedLock> lock_posts() { return std::unique_lock(post_mu_); }
  // EINVAL for too many SGEs; ENOMEM when the queue is full (rxe's codes).
  Status post(const RecvWr& wr, const std::unique_lock<BiasedLock>& held);

  // Transport side. REQUIRES: !empty()
  bool empty() const { return ring_.empty(); }
  uint32_t size() const { return ring_.size(); }
  RecvWqe& front() { return ring_.peek(); }
  void pop() { ring_.release(); }
  // ibv_modify_srq max_wr. REQUIRES: the progress lock is held.
  Status resize(uint32_t max_wr);

 private:
  BiasedLock post_mu_;
  WorkRing<RecvWqe> ring_;
  uint32_t max_sge_;
};

// A shared receive queue (IBA 10.2.9.2): one RecvQueue for many QPs, with a limit that,
// once armed, raises IBV_EVENT_SRQ_LIMIT_REACHED when the queue falls below it.
class Srq {
 public:
  Srq(uint32_t max_wr, uint32_t max_sge, uint32_t limit, void* context)
      : rq_(max_wr, max_sge), limit_(limit), context_(context) {}
  RecvQueue& rq() { return rq_; }
  void* context() const { return context_; }
  uint32_t limit() const { return limit_; }
  // ibv_modify_srq IBV_SRQ_LIMIT: arms the limit event (0 disarms).
  void set_limit(uint32_t limit) { limit_ = limit; }
  // Called by the transport after it took a WQE: true once when the queue fell below the
  // armed limit (the limit then disarms, IBA 11.5.2.3).
  bool take_limit_event() {
    if (limit_ == 0 || rq_.size() >= limit_) return false;
    limit_ = 0;
    return true;
  }

 private:
  RecvQueue rq_;
  uint32_t limit_;
  void* context_;
};

class SendQueue {
 public:
  SendQueue(uint32_t max_wr, uint32_t max_sge, uint32_t max_inline);
  uint32_t max_wr() const { return ring_.capacity(); }
  uint32_t max_sge() const { return max_sge_; }
  uint32_t max_inline() const { return max_inline_; }

  // The post lock, held across a post list. REQUIRES: post() is given it.
  std::unique_lock<BiasedLock> lock_posts() { return std::unique_lock(post_mu_); }
  // Copies the WR into the next slot (no key checks: those happen when the transport reads
  // the memory, and fail the WR's completion, IBA 10.8.3). EINVAL for too many SGEs, inline
  // data beyond max_inline_data, an atomic that is not 8 bytes at an 8-byte aligned address;
  // ENOMEM when the queue is full.
  // Inline, below: both of rc::Device's posts (post_send's loop, post_send_now) inline it (out
  // of line it cost the loop ~35 instructions a WR: bench/instructions.py --mode rate).
  [[gnu::always_inline]] inline Status post(const SendWr& wr, bool sig_all, const std::unique_lock<BiasedLock>& held);
  // What post() would refuse `wr` for, `length` bytes (message_length), without posting it:
  // for a caller that must know before it acts that the post will take the WR
  // (rc::Device::post_send_now sends the frame first).
  enum class Refusal : uint8_t { kNone, kTooManySges, kInlineTooLong, kAtomicShape, kTooLong, kFull };
  [[gnu::always_inline]] inline Refusal refusal(const SendWr& wr, uint64_t length) const;
  // post()'s refusal of `wr` as post() would return it, but for a full queue (the caller
  // counts the room itself: rc::Device::check_send).
  Status check(const SendWr& wr) const;
  static uint64_t message_length(const SendWr& wr) {
    uint64_t length = 0;
    for (const Sge& s : wr.sg_list) length += s.length;
    return length;
  }

  // Positions (WorkRing::head/tail): [head, tail) are posted and not yet completed.
  WorkRing<SendWqe>& ring() { return ring_; }
  const WorkRing<SendWqe>& ring() const { return ring_; }

 private:
  // post()'s refusal of `wr` (`length` bytes) as a Status, built out of line.
  [[gnu::cold]] Status refuse(Refusal why, const SendWr& wr, uint64_t length) const;

  BiasedLock post_mu_;
  WorkRing<SendWqe> ring_;
  uint32_t max_sge_;
  uint32_t max_inline_;
};

inline SendQueue::Refusal SendQueue::refusal(const SendWr& wr, uint64_t length) const {
  const bool is_inline = (wr.send_flags & send_flag::kInline) != 0;
  if (!is_inline && wr.sg_list.size() > max_sge_) return Refusal::kTooManySges;
  if (is_inline && length > max_inline_) return Refusal::kInlineTooLong;
  const bool atomic = wr.opcode == WrOpcode::kAtomicCmpAndSwp || wr.opcode == WrOpcode::kAtomicFetchAndAdd;
  if (atomic && (length != 8 || (wr.atomic.remote_addr & 7) != 0)) return Refusal::kAtomicShape;
  if (length > 0x80000000ULL) return Refusal::kTooLong;
  if (ring_.full()) return Refusal::kFull;
  return Refusal::kNone;
}

inline Status SendQueue::post(const SendWr& wr, bool sig_all, const std::unique_lock<BiasedLock>& held) {
  SOFTIB_ASSERT(held.mutex() == &post_mu_ && held.owns_lock());
  const bool is_inline = (wr.send_flags & send_flag::kInline) != 0;
  const uint64_t length = message_length(wr);
  if (const Refusal r = refusal(wr, length); r != Refusal::kNone) return refuse(r, wr, length);
  const bool atomic = wr.opcode == WrOpcode::kAtomicCmpAndSwp || wr.opcode == WrOpcode::kAtomicFetchAndAdd;
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
