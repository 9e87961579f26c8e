// SpinLock: a lock for critical sections of a few dozen instructions on the data path (a post
// copying a work request into its slot, a poll taking completions), where an uncontended
// std::mutex costs more than the section itself. Test-and-test-and-set; after a short spin it
// yields, so a holder that was preempted on an oversubscribed machine gets the CPU back.
// Meets Lockable (std::lock_guard, std::unique_lock, try_lock).
#pragma once

#include <atomic>
#include <thread>

namespace softib {

// One wait of a spin loop: a pause, and every 64th time a yield instead, so that a holder
// preempted on an oversubscribed machine gets the CPU back. `spins` counts the waits.
inline void spin_wait(int& spins) {
  if (++spins % 64 == 0) {
    std::this_thread::yield();
  } else {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
}

class SpinLock {
 public:
  void lock() {
    for (int spins = 0;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) spin_wait(spins);
    }
  }
  bool try_lock() { return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace softib
