#include "base/membarrier.hpp"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "base/assert.hpp"

namespace softib {

long membarrier(int cmd) { return ::syscall(SYS_membarrier, cmd, 0u, 0); }

// The registration's state: plain atomics (no lock a parent's thread could hold across a
// fork; trivially destroyed, so a registering thread may outlive main()), reset in a forked
// child.
constinit std::atomic<bool> membarrier_detail::global_registered{false};

namespace {

bool offered(long need) {
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  return cmds >= 0 && (cmds & need) == need;
}

constinit std::atomic<bool> started{false};
constinit std::atomic<bool> finished{false};

void reset_after_fork() {
  started.store(false, std::memory_order_relaxed);
  membarrier_detail::global_registered.store(false, std::memory_order_relaxed);
  finished.store(false, std::memory_order_relaxed);
}

}  // namespace

bool private_membarrier_available() {
  static const bool available = offered(MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  return available;
}

bool global_membarrier_available() {
  static const bool available = offered(MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED);
  return available;
}

void register_membarriers() {
  static std::once_flag atfork;
  std::call_once(atfork, [] { ::pthread_atfork(nullptr, nullptr, reset_after_fork); });
  if (started.load(std::memory_order_relaxed) || started.exchange(true)) return;
  if (global_membarrier_available() && membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0)
    membarrier_detail::global_registered.store(true, std::memory_order_release);
  if (private_membarrier_available()) (void)membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  finished.store(true, std::memory_order_release);
  finished.notify_all();
}

bool membarrier_registration_started() { return started.load(std::memory_order_relaxed); }

void wait_for_membarrier_registration() {
  register_membarriers();
  while (!finished.load(std::memory_order_acquire)) finished.wait(false, std::memory_order_acquire);
}

void private_membarrier() {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // EPERM: not registered yet (the registration thread is still at it, or this is a forked
  // child, which does not inherit it). Register here and ask again; anything else is a bug.
  const bool ok = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
                  membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
  SOFTIB_ASSERT_MSG(ok, "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration");
}

}  // namespace softib
