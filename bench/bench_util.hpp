// Small helpers shared by the benchmarks: timing, JSON lines, running an anchor program.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace softib::bench {

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Peak resident set of this process so far, in MiB.
inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// Runs argv with `env` added, reads its stdout+stderr line by line, and returns the time
// from spawn until a line containing `ready` appeared; then kills it. nullopt when the
// program is missing, exits first, or the timeout passes.
inline std::optional<double> time_until_line(std::vector<std::string> argv, const std::vector<std::string>& env,
                                             const std::string& ready, double timeout_ms) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : envs) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  pid_t pid = 0;
  const double start = now_ms();
  const int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return std::nullopt;
  }
  std::optional<double> result;
  std::string buffer;
  char chunk[4096];
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  while (now_ms() - start < timeout_ms) {
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      if (buffer.find(ready) != std::string::npos) {
        result = now_ms() - start;
        break;
      }
    } else if (n == 0) {
      break;  // exited
    } else {
      usleep(200);  // an external program: poll its pipe
    }
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(fds[0]);
  return result;
}

}  // namespace softib::bench
