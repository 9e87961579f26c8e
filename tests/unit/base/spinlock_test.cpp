// SpinLock: mutual exclusion, and a waiter that does not burn its CPU while the holder
// is blocked in the kernel (spin_wait: pause, yield, then sleep).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
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

// The voluntary context switches of thread `tid` of this process: a thread that sleeps or
// blocks adds one; a yield that hands the CPU on counts as involuntary.
uint64_t voluntary_switches(pid_t tid) {
  std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stoull(line.substr(line.find(':') + 1));
  }
  ADD_FAILURE() << "no voluntary_ctxt_switches for thread " << tid;
  return 0;
}

// A holder blocked in the kernel (here on a pipe's read, as one taking page faults is on the
// fault) is not runnable, so a yield returns at once and a waiter that only yields spins the
// whole hold on its CPU. spin_wait sleeps instead once yields do not help. The holder is let
// go once the waiter has been seen sleeping three times (no timed hold: the waiter's own
// sleeps are the readiness signal); a waiter that never sleeps is let go only at the safety
// bound, having spun all of it (the old wait: 50 ms of CPU in a 50 ms hold).
TEST(SpinLock, AWaiterSleepsWhileTheHolderIsBlocked) {
  constexpr auto kSafetyBound = std::chrono::seconds(2);
  SpinLock mu;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::atomic<bool> held{false}, released{false};
  std::thread holder([&] {
    mu.lock();
    held = true;
    char c;
    EXPECT_EQ(::read(fds[0], &c, 1), 1);  // blocked in the kernel until the releaser writes
    released = true;
    mu.unlock();
  });
  while (!held.load()) std::this_thread::yield();
  const pid_t waiter = static_cast<pid_t>(::syscall(SYS_gettid));
  const uint64_t slept_before = voluntary_switches(waiter);
  std::atomic<bool> waiting{false};
  std::thread releaser([&] {
    while (!waiting.load()) std::this_thread::yield();
    const auto bound = std::chrono::steady_clock::now() + kSafetyBound;
    while (voluntary_switches(waiter) < slept_before + 3 && std::chrono::steady_clock::now() < bound)
      std::this_thread::yield();
    EXPECT_EQ(::write(fds[1], "x", 1), 1);
  });
  const double cpu_before = thread_cpu_ms();
  waiting = true;
  mu.lock();
  const double burned_ms = thread_cpu_ms() - cpu_before;
  const bool taken_after_release = released.load();
  mu.unlock();
  releaser.join();
  holder.join();
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_TRUE(taken_after_release) << "the lock was taken while held";
  EXPECT_GE(voluntary_switches(waiter), slept_before + 3) << "the waiter never slept";
  EXPECT_LT(burned_ms, 10.0) << "the waiter spun for " << burned_ms << " ms";
}

}  // namespace
}  // namespace softib
