// Counters: every drop, error and notable event is counted, never silently lost.
//
// Thread: a Counter has one writer (its owner thread) and any number of readers. The writer
// uses a relaxed load + store instead of an atomic read-modify-write, which costs a plain add
// on x86 rather than a locked instruction; readers see a value that is at most slightly stale.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace softib {

class Counter {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void reset() { v_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

// Requirements on Enum: its last enumerator is kCount, and to_string(Enum) is found by ADL
// and returns the name reported to users (a drop reason, a counter name).
template <class Enum>
class CounterSet {
  static_assert(std::is_enum_v<Enum>);

 public:
  static constexpr size_t kSize = static_cast<size_t>(Enum::kCount);

  void inc(Enum e, uint64_t n = 1) { counters_[index(e)].add(n); }
  uint64_t get(Enum e) const { return counters_[index(e)].get(); }
  uint64_t total() const {
    uint64_t sum = 0;
    for (const auto& c : counters_) sum += c.get();
    return sum;
  }
  void reset() {
    for (auto& c : counters_) c.reset();
  }
  // Calls f(std::string_view name, uint64_t value) for every counter, in enum order.
  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < kSize; ++i) f(to_string(static_cast<Enum>(i)), counters_[i].get());
  }

 private:
  static constexpr size_t index(Enum e) { return static_cast<size_t>(e); }
  std::array<Counter, kSize> counters_{};
};

}  // namespace softib
