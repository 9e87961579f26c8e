// RingQueue: a FIFO over a std::vector that reuses its capacity, for large elements moved
// through hot loops (a std::deque allocates every element bigger than its block).
//
// Pushing while popping is allowed: pop() moves the element out before anything else runs.
// Thread: single owner.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "base/assert.hpp"

namespace softib {

template <class T>
class RingQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  void push(T item) { items_.push_back(std::move(item)); }
  T& front() {
    SOFTIB_ASSERT(!empty());
    return items_[head_];
  }
  // REQUIRES: !empty()
  T pop() {
    SOFTIB_ASSERT(!empty());
    T item = std::move(items_[head_++]);
    if (head_ == items_.size()) {
      items_.clear();  // keeps the capacity
      head_ = 0;
    } else if (head_ > 4096 && head_ * 2 > items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return item;
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace softib
