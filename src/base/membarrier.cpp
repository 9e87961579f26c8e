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
  // Registered (the caller checked): the kernel's only failure left would be a bad command.
  const long r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  SOFTIB_ASSERT(r == 0);
}

}  // namespace softib
