// WorkRing<T>: the fixed-capacity ring behind send queues, receive queues, shared receive
// queues and completion queues. One producer side and one consumer side, each possibly
// shared by several threads that serialise among themselves (posters hold the queue's post
// lock; the transport runs under the device's progress lock), so the indices are atomics:
// the producer publishes a filled slot with a release store of tail, the consumer frees it
// with a release store of head.
//
// Capacity is fixed at creation (the verbs max_*_wr / cqe); indices are free-running 32-bit
// counters, so size() = tail - head even across wrap. There are a power of two of slots (at
// least capacity): a position's slot is a mask, not a division (a 32-bit DIV is 10-20 cycles,
// and a post, a step and a poll each find several slots), and the slots stay in step when the
// counters wrap at 2^32, which a remainder by a capacity that is not a power of two would not.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <vector>

#include "base/assert.hpp"

namespace softib::verbs {

template <class T>
class WorkRing {
 public:
  // `start`: the first position (tests start near 2^32 to cross the counters' wrap).
  explicit WorkRing(uint32_t capacity = 0, uint32_t start = 0)
      : slots_(slots_for(capacity)), mask_(slots_for(capacity) - 1), capacity_(capacity), head_(start), tail_(start) {}

  uint32_t capacity() const { return capacity_; }
  uint32_t size() const { return tail_.load(std::memory_order_acquire) - head_.load(std::memory_order_acquire); }
  bool empty() const { return size() == 0; }
  bool full() const { return size() >= capacity_; }

  // Producer side. REQUIRES: !full()
  T& slot_to_fill() { return at(tail_.load(std::memory_order_relaxed)); }
  void publish() { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  // Consumer side: the i-th filled element from the head. REQUIRES: i < size()
  T& peek(uint32_t i = 0) { return at(head_.load(std::memory_order_relaxed) + i); }
  void release(uint32_t n = 1) {
    SOFTIB_ASSERT(n <= size());
    head_.store(head_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }

  // Absolute positions, for queues whose consumer walks ahead of what it has released (a
  // send queue's requester runs ahead of its completer).
  uint32_t head() const { return head_.load(std::memory_order_acquire); }
  uint32_t tail() const { return tail_.load(std::memory_order_acquire); }
  T& at(uint32_t position) { return slots_[position & mask_]; }
  // Every slot, for set-up (there may be more slots than capacity).
  uint32_t slot_count() const { return mask_ + 1; }
  T& slot(uint32_t index) { return slots_[index]; }

  // Drops every element. REQUIRES: the caller excludes both sides.
  void clear() { head_.store(tail_.load(std::memory_order_relaxed), std::memory_order_release); }

  // REQUIRES: the caller excludes both sides; new_capacity >= size().
  void resize(uint32_t new_capacity) {
    const uint32_t n = size();
    SOFTIB_ASSERT(new_capacity >= n);
    std::vector<T> next(slots_for(new_capacity));
    for (uint32_t i = 0; i < n; ++i) next[i] = std::move(peek(i));
    slots_ = std::move(next);
    mask_ = slots_for(new_capacity) - 1;
    capacity_ = new_capacity;
    head_.store(0, std::memory_order_relaxed);
    tail_.store(n, std::memory_order_release);
  }

 private:
  static uint32_t slots_for(uint32_t capacity) { return std::bit_ceil(std::max<uint32_t>(capacity, 1)); }

  std::vector<T> slots_;
  uint32_t mask_;
  uint32_t capacity_;
  alignas(64) std::atomic<uint32_t> head_{0};
  alignas(64) std::atomic<uint32_t> tail_{0};
};

}  // namespace softib::verbs
