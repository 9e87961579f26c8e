// SpinLock: mutual exclusion, and a waiter that does not burn its CPU while the holder
// is blocked in the kernel (spin_wait: pause, yield, then sleep).
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "base/spinlock.hpp"

namespace softib {
namespace {

double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

TEST(SpinLock, ThreadsTakeTurns) {
  SpinLock mu;
  uint64_t counter = 0;  // plain: lost updates would show a section entered twice at once
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50'000; ++i) {
        std::lock_guard held(mu);
        const uint64_t seen = counter;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        counter = seen + 1;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 4u * 50'000u);
  EXPECT_TRUE(mu.try_lock());
  EXPECT_FALSE(mu.try_lock());
  mu.unlock();
}

// A holder asleep in the kernel (as one taking page faults is) is not runnable, so a yield
// returns at once and a waiter that only yields spins the whole hold on its CPU: it burned
// 50 ms of CPU in a 50 ms hold. spin_wait sleeps instead once yields do not help (~1 ms of CPU
// here), and still takes the lock within its longest sleep (1.28 ms) of the release.
TEST(SpinLock, AWaiterSleepsWhileTheHolderIsBlocked) {
  constexpr auto kHold = std::chrono::milliseconds(50);
  SpinLock mu;
  std::atomic<bool> held{false};
  std::thread holder([&] {
    mu.lock();
    held = true;
    std::this_thread::sleep_for(kHold);
    mu.unlock();
  });
  while (!held.load()) std::this_thread::yield();
  const double cpu_before = thread_cpu_ms();
  const auto wall_before = std::chrono::steady_clock::now();
  mu.lock();
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_before).count();
  const double burned_ms = thread_cpu_ms() - cpu_before;
  mu.unlock();
  holder.join();
  EXPECT_GT(waited_ms, 40.0) << "the lock was taken while held";
  EXPECT_LT(burned_ms, 10.0) << "the waiter spun for " << burned_ms << " ms of a " << waited_ms << " ms wait";
}

}  // namespace
}  // namespace softib
