#include "base/file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace softib {

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now, reporting the error close() can carry (deferred write errors).
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

}  // namespace

Result<std::string> read_file(const std::string& path, std::string_view what) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Status(Code::kNotFound, fmt::format("cannot open {} \"{}\"", what, path));
    return Status::from_errno(errno, fmt::format("cannot open {} \"{}\"", what, path));
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::from_errno(errno, fmt::format("reading {} \"{}\"", what, path));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

Result<void> write_file_atomic(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0) return Status::from_errno(errno, fmt::format("cannot write \"{}\"", tmp));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::unlink(tmp.c_str());
      return Status::from_errno(err, fmt::format("writing \"{}\"", tmp));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0 || fd.close() != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::from_errno(err, fmt::format("flushing \"{}\"", tmp));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::from_errno(err, fmt::format("renaming to \"{}\"", path));
  }
  return {};
}

}  // namespace softib
