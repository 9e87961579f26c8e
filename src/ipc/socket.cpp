#include "ipc/socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "base/poll_fd.hpp"

namespace softib::ipc {

namespace {

Result<sockaddr_un> address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    return Status(Code::kInvalidArgument, fmt::format("socket path too long ({} bytes): {}", path.size(), path));
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

}  // namespace

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Result<Socket> Socket::listen(const std::string& path) {
  auto a = address(path);
  if (!a) return Err{a.error()};
  if (auto probe = connect(path); probe.ok())
    return Status(Code::kAlreadyExists, fmt::format("a daemon already listens at {}", path));
  ::unlink(path.c_str());  // stale: nobody answered
  Socket s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::from_errno(errno, "socket");
  if (::bind(s.fd(), reinterpret_cast<const sockaddr*>(&*a), sizeof *a) != 0)
    return Status::from_errno(errno, fmt::format("bind {}", path));
  if (::listen(s.fd(), 128) != 0) return Status::from_errno(errno, fmt::format("listen {}", path));
  return s;
}

Result<Socket> Socket::connect(const std::string& path) {
  auto a = address(path);
  if (!a) return Err{a.error()};
  Socket s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!s.valid()) return Status::from_errno(errno, "socket");
  if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&*a), sizeof *a) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ECONNREFUSED)
      return Status(Code::kUnavailable, fmt::format("no softibd listens at {}", path));
    return Status::from_errno(err, fmt::format("connect {}", path));
  }
  return s;
}

Result<Socket> Socket::accept() const {
  const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) {
    if (errno == EAGAIN) return Status(Code::kWouldBlock, "no pending connection");
    return Status::from_errno(errno, "accept");
  }
  return Socket(fd);
}

Result<void> Socket::set_nonblocking(bool on) const {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) != 0)
    return Status::from_errno(errno, "fcntl O_NONBLOCK");
  return {};
}

Result<void> Socket::send(wire::ByteSpan datagram, std::span<const int> fds) const {
  SOFTIB_ASSERT(fds.size() <= kMaxFds);
  iovec iov{const_cast<uint8_t*>(datagram.data()), datagram.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  // Zeroed: CMSG_SPACE pads past the fds, and the kernel is handed those bytes too (valgrind's
  // memcheck reported them uninitialised in every program that attaches).
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n >= 0) return {};
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return Status(Code::kWouldBlock, "socket buffer full");
    if (errno == EPIPE || errno == ECONNRESET) return Status(Code::kUnavailable, "peer closed the connection");
    return Status::from_errno(errno, "send");
  }
}

Result<size_t> Socket::recv(std::span<uint8_t> buf, std::vector<UniqueFd>* fds) const {
  iovec iov{buf.data(), buf.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  for (;;) {
    const ssize_t n = ::recvmsg(fd_, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC);
    if (n >= 0) {
      // Take ownership of every descriptor that came, whatever happens next.
      std::vector<UniqueFd> got;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
          int fd;
          std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
          got.emplace_back(fd);
        }
      }
      if (msg.msg_flags & MSG_CTRUNC)
        return Status(Code::kParseError, fmt::format("a message came with more than {} file descriptors", kMaxFds));
      if (static_cast<size_t>(n) > buf.size())
        return Status(Code::kParseError, fmt::format("a {}-byte message does not fit {} bytes", n, buf.size()));
      if (fds != nullptr)
        for (auto& f : got) fds->push_back(std::move(f));
      return static_cast<size_t>(n);
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return Status(Code::kWouldBlock, "nothing to read");
    if (errno == ECONNRESET) return size_t{0};
    return Status::from_errno(errno, "recv");
  }
}

Result<bool> Socket::wait_readable(std::optional<Duration> timeout) const { return wait_fd(fd_, POLLIN, timeout); }
Result<bool> Socket::wait_writable(std::optional<Duration> timeout) const { return wait_fd(fd_, POLLOUT, timeout); }

Result<void> send_message(const Socket& s, MsgType type, uint32_t seq, wire::ByteSpan payload,
                          std::span<const int> fds) {
  for (const auto& f : fragments(type, seq, payload)) {
    for (;;) {
      auto r = s.send(f, fds);
      if (r.ok()) break;
      if (r.error().code() != Code::kWouldBlock) return r;
      SOFTIB_TRY(s.wait_writable(std::chrono::seconds(1)));  // a full buffer drains
    }
    fds = {};  // sent with the first fragment
  }
  return {};
}

Result<std::optional<Message>> recv_message(const Socket& s, Assembler& assembler, std::optional<Duration> timeout) {
  std::vector<uint8_t> buf(kHeaderSize + kMaxFragment);
  const auto deadline = timeout ? std::optional(std::chrono::steady_clock::now() + *timeout) : std::nullopt;
  for (;;) {
    std::optional<Duration> left;
    if (deadline) left = std::max(Duration::zero(), std::chrono::duration_cast<Duration>(*deadline - std::chrono::steady_clock::now()));
    auto ready = s.wait_readable(left);
    if (!ready) return Err{ready.error()};
    if (!*ready) return std::optional<Message>{};
    std::vector<UniqueFd> fds;
    auto n = s.recv(buf, &fds);
    if (!n) {
      if (n.error().code() == Code::kWouldBlock) continue;
      return Err{n.error()};
    }
    if (*n == 0) return Status(Code::kUnavailable, "softibd closed the connection");
    auto m = assembler.feed(wire::ByteSpan(buf.data(), *n), std::move(fds));
    if (!m) return Err{m.error()};
    if (*m) return std::move(*m);
  }
}

}  // namespace softib::ipc
