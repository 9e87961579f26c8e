#include "link/doorbell.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace softib::link {

Result<Doorbell> Doorbell::create() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return Status::from_errno(errno, "eventfd");
  return Doorbell(UniqueFd(fd));
}

void Doorbell::ring() const {
  const uint64_t one = 1;
  // Fails only when the counter would overflow (2^64 - 2 rings unread): the engine is awake
  // by then in any case.
  [[maybe_unused]] const ssize_t n = ::write(fd_.get(), &one, sizeof one);
}

void Doorbell::drain() const {
  uint64_t v;
  [[maybe_unused]] const ssize_t n = ::read(fd_.get(), &v, sizeof v);
}

}  // namespace softib::link
