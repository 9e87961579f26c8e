#include "tools/daemon_control.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/poll_fd.hpp"
#include "base/process.hpp"
#include "ipc/client.hpp"
#include "ipc/paths.hpp"

namespace softib::tools {

namespace {

std::string last_lines(const std::string& path, size_t n) {
  auto text = read_file(path);
  if (!text) return {};
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text->size()) {
    const size_t nl = text->find('\n', at);
    lines.emplace_back(text->substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? text->size() : nl + 1;
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return out;
}

}  // namespace

std::string softibd_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto next = self.parent_path() / "softibd";
    if (std::filesystem::exists(next, ec)) return next.string();
  }
  return "softibd";
}

Result<DaemonProcess> up(const UpOptions& o) {
  auto name = ipc::fabric_name(o.fabric);
  if (!name) return Err{name.error()};
  const std::string run_dir = o.runtime_dir.empty() ? ipc::runtime_dir(*name) : o.runtime_dir;
  SOFTIB_TRY(ipc::make_dirs(run_dir));
  DaemonProcess d;
  d.fabric = *name;
  d.socket = run_dir + "/softibd.sock";
  d.log = run_dir + "/softibd.log";
  if (auto probe = ipc::Socket::connect(d.socket); probe.ok())
    return Status(Code::kAlreadyExists, fmt::format("fabric \"{}\" is already up ({})", *name, d.socket));

  std::vector<std::string> args{o.softibd.empty() ? softibd_path() : o.softibd, "--fabric", *name, "--runtime-dir", run_dir};
  if (!o.state_dir.empty()) args.insert(args.end(), {"--state-dir", o.state_dir});
  if (!o.topology.empty()) args.insert(args.end(), {"--topology", o.topology});
  if (o.sm) args.emplace_back("--sm");
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe");
  args.insert(args.end(), {"--ready-fd", std::to_string(ready[1])});
  const int log_fd = ::open(d.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::from_errno(errno, fmt::format("cannot write {}", d.log));

  const pid_t pid = ::fork();
  if (pid < 0) return Status::from_errno(errno, "fork");
  if (pid == 0) {
    if (!o.foreground_child) ::setsid();
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::fcntl(ready[1], F_SETFD, 0);  // the ready fd survives exec
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(ready[1]);
  ::close(log_fd);
  d.pid = pid;
  // Wait for "ready", or the child's exit, or the timeout.
  const auto deadline = std::chrono::steady_clock::now() + o.ready_timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::close(ready[0]);
      ::kill(pid, SIGTERM);
      return Status(Code::kTimeout, fmt::format("softibd was not ready after {} s (log: {})",
                                                std::chrono::duration_cast<std::chrono::seconds>(o.ready_timeout).count(), d.log));
    }
    // A look at the child every 200 ms: it may end while something else holds the pipe open.
    const Result<bool> readable = wait_fd(ready[0], POLLIN, std::min<Duration>(left, std::chrono::milliseconds(200)));
    if (readable && *readable) {
      char buf[16];
      const ssize_t got = ::read(ready[0], buf, sizeof buf);
      ::close(ready[0]);
      if (got > 0) return d;
      // EOF without "ready": the daemon ended.
      int status = 0;
      ::waitpid(pid, &status, 0);
      return Status(WIFEXITED(status) && WEXITSTATUS(status) == 3 ? Code::kAlreadyExists : Code::kInternal,
                    fmt::format("softibd did not start: {}", last_lines(d.log, 3)));
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ::close(ready[0]);
      return Status(Code::kInternal, fmt::format("softibd did not start: {}", last_lines(d.log, 3)));
    }
  }
}

namespace {

// Waits for `pidfd` to turn readable (the process ended).
Result<void> wait_gone(int pidfd, pid_t pid, Duration timeout, const std::string& name) {
  const bool gone = wait_for_pidfd(pidfd, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  ::close(pidfd);
  ::waitpid(pid, nullptr, WNOHANG);  // reap it if it was our child
  if (!gone) return Status(Code::kTimeout, fmt::format("softibd of fabric \"{}\" did not stop", name));
  return {};
}

// A softibd that speaks another protocol version (one from an older or newer softib) is
// stopped the way a service manager would: SIGTERM to the pid in its pid file.
Result<void> down_by_pid_file(const std::string& dir, const std::string& name, Duration timeout) {
  auto text = read_file(dir + "/softibd.pid");
  if (!text) return Err{text.error()};
  const long pid = std::strtol(text->c_str(), nullptr, 10);
  if (pid <= 1) return Status(Code::kInvalidArgument, fmt::format("{}/softibd.pid holds no pid", dir));
  const int pidfd = open_pidfd(static_cast<pid_t>(pid));
  if (pidfd < 0) return {};  // already gone
  if (::kill(static_cast<pid_t>(pid), SIGTERM) != 0) {
    ::close(pidfd);
    return Status::from_errno(errno, fmt::format("kill {}", pid));
  }
  return wait_gone(pidfd, static_cast<pid_t>(pid), timeout, name);
}

// Asks the daemon to stop and waits for it to be gone.
Result<void> stop(const std::string& name, const std::string& dir, Duration timeout) {
  const std::string socket = dir + "/softibd.sock";
  auto c = ipc::Connection::open(name, "softib down", socket);
  if (!c && c.error().code() == Code::kUnsupported) return down_by_pid_file(dir, name, timeout);
  if (!c) return Err{c.error()};
  const uint32_t pid = [&] {
    auto info = c->fabric_info();
    return info ? info->pid : 0u;
  }();
  // A pidfd becomes readable when the process ends: no polling loop, no sleeps.
  const int pidfd = pid ? open_pidfd(static_cast<pid_t>(pid)) : -1;
  SOFTIB_TRY(c->shutdown());
  if (pidfd < 0) return {};  // it was already gone (or we cannot watch it): shutdown was acknowledged
  return wait_gone(pidfd, static_cast<pid_t>(pid), timeout, name);
}

// After a stop, the fabric's runtime directory goes too, unless its log has something to
// say: a softibd that logged nothing leaves only an empty softibd.log, and each fabric name
// ever brought up left a directory behind (bench/dropin.py names one per run). rmdir fails,
// harmlessly, on anything else left there.
void tidy_runtime_dir(const std::string& dir) {
  std::error_code ec;
  const std::string log = dir + "/softibd.log";
  if (std::filesystem::is_regular_file(log, ec) && std::filesystem::file_size(log, ec) == 0 && !ec)
    std::filesystem::remove(log, ec);
  ::rmdir(dir.c_str());
}

}  // namespace

Result<void> down(const std::string& fabric, Duration timeout, const std::string& runtime_dir) {
  auto name = ipc::fabric_name(fabric);
  if (!name) return Err{name.error()};
  const std::string dir = runtime_dir.empty() ? ipc::runtime_dir(*name) : runtime_dir;
  Result<void> stopped = stop(*name, dir, timeout);
  // Only the directory softib chose itself: one given with --runtime-dir is the caller's.
  if (stopped && runtime_dir.empty()) tidy_runtime_dir(dir);
  return stopped;
}

}  // namespace softib::tools
