#include "verbs/event_queue.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace softib::verbs {

Result<EventFd> EventFd::create() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  if (fd < 0) return Status::from_errno(errno, "eventfd");
  return EventFd(fd);
}

EventFd& EventFd::operator=(EventFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

EventFd::~EventFd() {
  if (fd_ >= 0) ::close(fd_);
}

void EventFd::signal() const {
  const uint64_t one = 1;
  // An eventfd write fails only when the counter would overflow 2^64-2: not reachable.
  [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
}

bool EventFd::wait() const {
  uint64_t v = 0;
  return ::read(fd_, &v, sizeof v) == static_cast<ssize_t>(sizeof v);
}

}  // namespace softib::verbs
