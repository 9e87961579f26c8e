#include "base/process.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/unique_fd.hpp"

namespace softib {

int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

bool wait_for_pidfd(int pidfd, std::chrono::milliseconds timeout) {
  pollfd p{pidfd, POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;  // timed out (or a bad fd)
  }
}

bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const UniqueFd fd(open_pidfd(pid));
  if (!fd.valid()) return errno == ESRCH;
  return wait_for_pidfd(fd.get(), timeout);
}

}  // namespace softib
