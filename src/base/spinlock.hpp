// SpinLock: a lock for critical sections of a few dozen instructions on the data path (a post
// copying a work request into its slot, a poll taking completions), where an uncontended
// std::mutex costs more than the section itself. Test-and-test-and-set; after a short spin it
// yields, then sleeps (spin_wait), so a holder that was preempted on an oversubscribed machine
// gets the CPU back.
// Meets Lockable (std::lock_guard, std::unique_lock, try_lock).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace softib {

// One wait of a spin loop: a pause; every 64th wait a yield instead, so that a holder
// preempted on this CPU gets it back; and from the 1024th wait on (16 yields have not brought
// the lock back) a sleep in place of every 64th, 20 us doubling to 1.28 ms. `spins` counts
// the waits.
//
// Why sleep: a holder that blocks in the kernel (page faults as a channel's memory is first
// touched, during setup) is not runnable, so a yield finds nothing else to run and returns at
// once. Engine threads waiting on the device lock spun so on both vCPUs for 10-15 ms while
// their applications set up (perf: ~7,000 sched_yield calls a burst, ~4,600 a run of
// `bench_verbs lat`, all from Engine::run's lock). `bench_verbs lat --iters 1000`, mostly
// setup and teardown, 20 interleaved runs: CPU time 77 -> 43 ms (median).
// Why not sleep sooner: each wake-up preempts a runnable holder on this CPU again (Linux's
// EEVDF), where a yield lets it finish; the doubling keeps such wake-ups few.
inline constexpr int kSpinWaitsBeforeSleeping = 16 * 64;

inline void spin_wait(int& spins) {
  ++spins;
  if (spins % 64 != 0) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  } else if (spins < kSpinWaitsBeforeSleeping) {
    std::this_thread::yield();
  } else {
    // The n-th sleep lasts 20 us << min(n, 6): 20 us ... 1.28 ms. `spins` stops growing there.
    const int n = std::min((spins - kSpinWaitsBeforeSleeping) / 64, 6);
    std::this_thread::sleep_for(std::chrono::microseconds(20 << n));
    if (n == 6) spins -= 64;
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
