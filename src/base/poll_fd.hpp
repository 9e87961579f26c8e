// Waiting for one file descriptor to become ready, with a deadline kept across signals.
#pragma once

#include <optional>

#include "base/clock.hpp"
#include "base/result.hpp"

namespace softib {

// poll(2) on `fd` for `events` (POLLIN, POLLOUT, ...) for up to `timeout` (nullopt: no
// limit). true: ready; false: timed out. An interrupted poll (EINTR) waits on for what is
// left of the timeout, not the whole of it again. A closed or invalid `fd` is ready
// (POLLNVAL), as poll reports it. Errors: poll's own errno (ENOMEM, EINVAL).
Result<bool> wait_fd(int fd, short events, std::optional<Duration> timeout);

}  // namespace softib
