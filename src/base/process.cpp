#include "base/process.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "base/poll_fd.hpp"
#include "base/unique_fd.hpp"

namespace softib {

int open_pidfd(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

bool wait_for_pidfd(int pidfd, std::chrono::milliseconds timeout) {
  const Result<bool> ready = wait_fd(pidfd, POLLIN, timeout);
  return ready.ok() && *ready;  // an error of poll itself (ENOMEM): not seen to end
}

bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  const UniqueFd fd(open_pidfd(pid));
  if (!fd.valid()) return errno == ESRCH;
  return wait_for_pidfd(fd.get(), timeout);
}

}  // namespace softib
