// BiasedLock: a lock that costs its usual thread no atomic read-modify-write.
//
// A QP's post lock and a CQ's poll lock order the application's threads among themselves,
// and most programs post to a QP and poll a CQ from one thread only. For them an ordinary
// lock's locked exchange is pure cost, and on a ping-pong's path it is a large one: it waits
// for every earlier store to leave the store buffer. Measured with bench_verbs selflat (both
// ends of an 8-byte ping-pong in one thread, so no cross-core waits; six interleaved runs
// each): median 0.207 -> 0.199 us per message; bench_verbs lat between two processes, 16
// interleaved near pairs: median 0.171 -> 0.167 us. (rdma-core's mlx5 skips these locks
// only when told the QP or CQ is single-threaded: a thread domain,
// IBV_CREATE_CQ_ATTR_SINGLE_THREADED. This needs no telling.)
//
// The first thread to lock becomes the owner. Its lock() stores a flag, orders it before
// its look at `revoked_` for the compiler only, and is in. Any other thread revokes the bias
// once for good: under the fallback lock it sets `revoked_`, runs membarrier(2) (a full
// barrier on every CPU running one of our threads: afterwards either the owner's flag is
// visible to it or the owner's next look sees `revoked_`), waits for the owner's flag to
// clear, and holds the fallback lock. From then on everyone, the owner too, takes the
// fallback SpinLock. Revoking costs the revoker one membarrier (~20 us here), once per lock.
// Where the kernel lacks private expedited membarrier the lock is never biased.
//
// Meets BasicLockable (std::lock_guard, std::unique_lock). Not recursive.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/spinlock.hpp"

namespace softib {

class BiasedLock {
 public:
  BiasedLock();
  BiasedLock(const BiasedLock&) = delete;
  BiasedLock& operator=(const BiasedLock&) = delete;

  void lock() {
    if (owner_.load(std::memory_order_relaxed) == this_thread()) [[likely]] {
      owner_holds_.store(true, std::memory_order_relaxed);
      // The flag before the look, in program order; the revoker's membarrier orders the CPU.
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (!revoked_.load(std::memory_order_relaxed)) [[likely]]
        return;
      owner_holds_.store(false, std::memory_order_relaxed);
    }
    lock_slow();
  }
  void unlock() {
    // owner_holds_ is read only by its owner here: another thread that holds the fallback
    // lock may see the owner's flag set for an instant (a fast path that found the bias
    // revoked).
    if (owner_.load(std::memory_order_relaxed) == this_thread() && owner_holds_.load(std::memory_order_relaxed)) {
      owner_holds_.store(false, std::memory_order_release);
      return;
    }
    fallback_.unlock();
  }

  // Whether the lock is biased to the calling thread (for tests and counters).
  bool biased_to_me() const {
    return owner_.load(std::memory_order_relaxed) == this_thread() && !revoked_.load(std::memory_order_relaxed);
  }
  // Whether some thread other than the owner has taken the lock, so everyone takes the
  // fallback lock now (or the lock was never biased: no membarrier).
  bool revoked() const { return revoked_.load(std::memory_order_relaxed); }

 private:
  // The thread pointer (%fs:0 on x86-64): distinct for every live thread, read in one load
  // with no TLS lookup (the drop-in is a shared library, where a thread_local's address may
  // cost a __tls_get_addr call). Never 0.
  static uintptr_t this_thread() { return reinterpret_cast<uintptr_t>(__builtin_thread_pointer()); }

  void lock_slow();

  std::atomic<uintptr_t> owner_{0};
  std::atomic<bool> owner_holds_{false};
  std::atomic<bool> revoked_;
  SpinLock fallback_;
};

}  // namespace softib
