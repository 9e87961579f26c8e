#include "base/poll_fd.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace softib {

Result<bool> wait_fd(int fd, short events, std::optional<Duration> timeout) {
  pollfd p{fd, events, 0};
  const auto deadline = timeout ? std::optional(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
  for (;;) {
    int ms = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      ms = static_cast<int>(std::max<int64_t>(left.count(), 0));
    }
    const int n = ::poll(&p, 1, ms);
    if (n >= 0) return n > 0;
    if (errno != EINTR) return Status::from_errno(errno, "poll");
  }
}

}  // namespace softib
