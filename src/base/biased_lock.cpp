#include "base/biased_lock.hpp"

#include "base/membarrier.hpp"

namespace softib {

// Biased only where membarrier can revoke the bias. The registration that needs is made by
// the engine's registration thread, or by the first revocation (private_membarrier()).
BiasedLock::BiasedLock() : revoked_(!private_membarrier_available()) {}

void BiasedLock::lock_slow() {
  if (!revoked_.load(std::memory_order_acquire)) {
    uintptr_t none = 0;
    if (owner_.load(std::memory_order_relaxed) == 0 &&
        owner_.compare_exchange_strong(none, this_thread(), std::memory_order_acq_rel)) {
      // This thread's first lock: the bias is ours. lock() takes the fast path now, or the
      // fallback if someone revoked it meanwhile.
      lock();
      return;
    }
  }
  fallback_.lock();
  if (revoked_.load(std::memory_order_relaxed)) return;
  // The first thread other than the owner: revoke, once, under the fallback lock.
  revoked_.store(true, std::memory_order_relaxed);
  private_membarrier();
  // The owner's critical section, if it is in one, ends with a release of this flag.
  for (int spins = 0; owner_holds_.load(std::memory_order_acquire);) spin_wait(spins);
}

}  // namespace softib
