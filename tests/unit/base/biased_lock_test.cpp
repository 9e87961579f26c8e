// BiasedLock: the first thread to lock owns it with plain stores until another thread takes
// it; from then on everyone shares the fallback lock. Mutual exclusion holds throughout, and
// in particular across the revocation, while the owner may be inside its critical section.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "base/biased_lock.hpp"
#include "base/membarrier.hpp"

namespace softib {
namespace {

// A read-modify-write of a plain counter, slow enough (~1 us) that two threads inside it at
// once lose updates: a thread that entered beside the owner is caught almost surely.
void add_one(uint64_t& counter) {
  const uint64_t seen = counter;
  for (int i = 0; i < 40; ++i) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  counter = seen + 1;
}

TEST(BiasedLock, TheFirstThreadToLockOwnsItUntilAnotherThreadTakesIt) {
  BiasedLock lock;
  EXPECT_FALSE(lock.biased_to_me());
  { std::lock_guard held(lock); }
  if (!private_membarrier_available()) {
    EXPECT_TRUE(lock.revoked()) << "no membarrier: never biased";
    GTEST_SKIP() << "this kernel lacks MEMBARRIER_CMD_PRIVATE_EXPEDITED";
  }
  EXPECT_TRUE(lock.biased_to_me());
  EXPECT_FALSE(lock.revoked());
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard held(lock);
  }
  EXPECT_TRUE(lock.biased_to_me());
  bool other_owned = true;
  std::thread([&] {
    std::lock_guard held(lock);
    other_owned = lock.biased_to_me();
  }).join();
  EXPECT_FALSE(other_owned) << "a second thread takes the fallback, not the bias";
  EXPECT_TRUE(lock.revoked());
  EXPECT_FALSE(lock.biased_to_me());
  // The former owner goes on, through the fallback.
  for (int i = 0; i < 1000; ++i) {
    std::unique_lock held(lock);
    EXPECT_TRUE(held.owns_lock());
  }
}

TEST(BiasedLock, ExcludesTheOwnerAndTheThreadThatRevokesItsBias) {
  // Each round: the owner is busy in and out of its critical section when a second thread
  // arrives and revokes. Once a round the owner stays inside until the other thread is
  // inside lock() (and 200 us more): the other must not get in while it is there. No update
  // to the counter is lost.
  constexpr int kRounds = 50;
  constexpr uint64_t kEach = 2000;
  for (int round = 0; round < kRounds; ++round) {
    BiasedLock lock;
    uint64_t counter = 0;
    std::atomic<uint64_t> owner_progress{0};
    std::atomic<bool> owner_inside{false};
    std::atomic<bool> other_waiting{false};
    bool other_got_in_beside_owner = false;
    const uint64_t hold_at = static_cast<uint64_t>(round) * kEach / (2 * kRounds) + 1;
    std::thread owner([&] {
      for (uint64_t i = 0; i < kEach; ++i) {
        std::lock_guard held(lock);
        add_one(counter);
        if (i + 1 == hold_at) {
          owner_inside.store(true);
          owner_progress.store(i + 1, std::memory_order_relaxed);
          while (!other_waiting.load()) std::this_thread::yield();
          const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
          while (std::chrono::steady_clock::now() < until) {
          }
          owner_inside.store(false);
        }
        owner_progress.store(i + 1, std::memory_order_relaxed);
      }
    });
    std::thread other([&] {
      while (owner_progress.load(std::memory_order_relaxed) < hold_at) std::this_thread::yield();
      other_waiting.store(true);
      for (uint64_t i = 0; i < kEach; ++i) {
        std::lock_guard held(lock);
        if (i == 0) other_got_in_beside_owner = owner_inside.load();
        add_one(counter);
      }
    });
    owner.join();
    other.join();
    ASSERT_FALSE(other_got_in_beside_owner) << "round " << round;
    ASSERT_EQ(counter, 2 * kEach) << "round " << round;
    EXPECT_TRUE(lock.revoked());
  }
}

TEST(BiasedLock, ManyThreadsShareItAfterTheBiasIsGone) {
  BiasedLock lock;
  uint64_t counter = 0;
  constexpr uint64_t kEach = 2000;
  { std::lock_guard held(lock); }  // biased to this thread, which then stands by
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (uint64_t i = 0; i < kEach; ++i) {
        std::lock_guard held(lock);
        add_one(counter);
      }
    });
  for (uint64_t i = 0; i < kEach; ++i) {
    std::lock_guard held(lock);
    add_one(counter);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 5 * kEach);
  EXPECT_TRUE(lock.revoked());
}

TEST(BiasedLock, AForksChildRevokesABiasItInherited) {
  // The child of a fork has only the forking thread; a second thread there revokes the bias
  // the parent's thread held (membarrier in the child's own address space).
  BiasedLock lock;
  uint64_t counter = 0;
  { std::lock_guard held(lock); }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread([&] {
      std::lock_guard held(lock);
      add_one(counter);
    }).join();
    { std::lock_guard held(lock); }
    ::_exit(lock.revoked() && counter == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(lock.revoked(), !private_membarrier_available()) << "the parent's lock is its own";
}

}  // namespace
}  // namespace softib
