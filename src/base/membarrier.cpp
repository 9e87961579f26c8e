#include "base/membarrier.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/assert.hpp"

namespace softib {

long membarrier(int cmd) { return ::syscall(SYS_membarrier, cmd, 0u, 0); }

bool private_membarrier_ready() {
  static const bool ready = [] {
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    constexpr long kNeed = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
    return cmds >= 0 && (cmds & kNeed) == kNeed && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return ready;
}

void private_membarrier() {
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // EPERM: this process is not registered (any more: a kernel that does not carry the
  // registration into a fork's child). Register and ask again; anything else is a bug.
  const bool ok = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
                  membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
  SOFTIB_ASSERT_MSG(ok, "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration");
}

}  // namespace softib
