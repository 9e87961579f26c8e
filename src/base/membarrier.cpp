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

namespace {

bool offered(long need) {
  const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
  return cmds >= 0 && (cmds & need) == need;
}

// The registration's state: plain atomics (no lock a parent's thread could hold across a
// fork), reset in a forked child. Never destroyed: the thread may outlive main().
struct Registration {
  std::atomic<bool> started{false};
  std::atomic<bool> global_done{false};
  std::atomic<bool> finished{false};
};

Registration& registration() {
  static Registration* r = new Registration;
  return *r;
}

void reset_after_fork() {
  Registration& r = registration();
  r.started.store(false, std::memory_order_relaxed);
  r.global_done.store(false, std::memory_order_relaxed);
  r.finished.store(false, std::memory_order_relaxed);
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
  Registration& r = registration();
  if (r.started.load(std::memory_order_relaxed) || r.started.exchange(true)) return;
  if (global_membarrier_available() && membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0)
    r.global_done.store(true, std::memory_order_release);
  if (private_membarrier_available()) (void)membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
  r.finished.store(true, std::memory_order_release);
  r.finished.notify_all();
}

bool membarrier_registration_started() { return registration().started.load(std::memory_order_relaxed); }

bool global_membarrier_registered() { return registration().global_done.load(std::memory_order_acquire); }

void wait_for_membarrier_registration() {
  register_membarriers();
  Registration& r = registration();
  while (!r.finished.load(std::memory_order_acquire)) r.finished.wait(false, std::memory_order_acquire);
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
