#include "base/process.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <string>

#include "base/file.hpp"
#include "base/poll_fd.hpp"
#include "base/unique_fd.hpp"

namespace softib {

namespace {

// The kernel's struct sched_attr (sched_setattr(2)); <linux/sched/types.h> clashes with
// glibc's <sched.h>.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

}  // namespace

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

int thread_count() {
  const Result<std::string> stat = read_file("/proc/self/stat", "/proc/self/stat");
  if (!stat) return 0;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields are
  // counted from the last ')'. num_threads is field 20 (proc(5)), the 18th after comm.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat->substr(close + 1));
  std::string skipped;
  for (int i = 0; i < 17; ++i) fields >> skipped;
  int n = 0;
  return fields >> n && n > 0 ? n : 0;
}

bool request_slice(uint64_t ns) {
  SchedAttr a{};
  a.size = sizeof a;
  a.sched_policy = SCHED_OTHER;
  a.sched_runtime = ns;
  return ::syscall(SYS_sched_setattr, 0, &a, 0) == 0;
}

std::optional<uint64_t> thread_slice_ns(pid_t tid) {
  SchedAttr a{};
  if (::syscall(SYS_sched_getattr, tid, &a, sizeof a, 0) != 0) return std::nullopt;
  return a.sched_runtime;
}

}  // namespace softib
