// A SOCK_SEQPACKET unix socket (one message per send/recv, boundaries kept), and sending and
// receiving whole protocol messages over it.
//
// Thread: a Socket is used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "ipc/protocol.hpp"

namespace softib::ipc {

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  // Binds and listens at `path` (its directory must exist). A stale socket file nobody
  // listens on is replaced. Errors: AlreadyExists when a daemon answers there.
  static Result<Socket> listen(const std::string& path);
  // Errors: Unavailable when nothing listens at `path` (ENOENT, ECONNREFUSED).
  static Result<Socket> connect(const std::string& path);
  // A pending connection, or WouldBlock.
  Result<Socket> accept() const;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }
  Result<void> set_nonblocking(bool on) const;

  // One datagram, with file descriptors attached when `fds` is not empty (SCM_RIGHTS: the
  // peer receives its own copies). Errors: WouldBlock (non-blocking, buffer full),
  // Unavailable (peer gone).
  Result<void> send(wire::ByteSpan datagram, std::span<const int> fds = {}) const;
  // One datagram into `buf`; 0 bytes means the peer closed. File descriptors that came with
  // it are appended to `fds` (closed if `fds` is null; at most kMaxFds per datagram, more
  // makes the datagram malformed). Errors: WouldBlock; ParseError when the datagram or its
  // descriptors did not fit.
  Result<size_t> recv(std::span<uint8_t> buf, std::vector<UniqueFd>* fds = nullptr) const;
  static constexpr size_t kMaxFds = 4;
  // Waits until readable or `timeout` passes (nullopt: forever). False on timeout.
  Result<bool> wait_readable(std::optional<Duration> timeout) const;
  Result<bool> wait_writable(std::optional<Duration> timeout) const;

 private:
  int fd_ = -1;
};

// Sends a message as its fragments (blocking); `fds` travel with the first fragment.
Result<void> send_message(const Socket& s, MsgType type, uint32_t seq, wire::ByteSpan payload,
                          std::span<const int> fds = {});

// Receives the next whole message. nullopt on timeout; Unavailable when the peer closed.
Result<std::optional<Message>> recv_message(const Socket& s, Assembler& assembler, std::optional<Duration> timeout);

}  // namespace softib::ipc
