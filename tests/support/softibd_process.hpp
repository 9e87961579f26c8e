// A private softibd for a C++ test or benchmark: a fabric of its own (unique name, runtime
// and state directories under a fresh temporary directory), started with --ready-fd so the
// caller waits for "ready" rather than sleeping, and killed (SIGTERM, then SIGKILL) when the
// object goes. The binary is `softibd` (tests: CMake passes $<TARGET_FILE:softibd> as
// SOFTIB_SOFTIBD, the default).
//
// A caller that dies without running the destructor (a signal: SIGPIPE when a benchmark's
// reader goes away, SIGKILL, an abort) takes the daemon with it: the daemon is asked for
// SIGTERM when the thread that started it ends (PR_SET_PDEATHSIG). Before, each such death
// left a softibd running (20 at once after one broken benchmark loop). So: create the object
// on a thread that outlives it (a test's or a benchmark's main thread).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/process.hpp"

namespace softib::testing {

class SoftibdProcess {
 public:
  // `topology`: a net file or generator spec; `sm`: run the embedded SM (ports go Active).
#ifdef SOFTIB_SOFTIBD
  // `extra`: more softibd arguments (--roce).
  explicit SoftibdProcess(const std::string& topology = "switch:hosts=2", bool sm = true,
                          const std::vector<std::string>& extra = {})
      : SoftibdProcess(SOFTIB_SOFTIBD, topology, sm, extra) {}
#endif
  SoftibdProcess(const std::string& binary, const std::string& topology, bool sm,
                 const std::vector<std::string>& extra = {}) {
    std::random_device rd;
    name_ = "t" + std::to_string(rd() % 1000000000u);
    char tmpl[] = "/tmp/softib-test-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (made == nullptr) return;  // not ready(): the caller's test fails on that
    dir_ = made;
    const std::string run = dir_ + "/run", state = dir_ + "/state";
    socket_ = run + "/softibd.sock";
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) return;
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // Dies with its starter; if the starter is already gone, at once (the request is only
      // heard for deaths after it).
      if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) ::_exit(126);
      ::dup2(ready[1], 3);  // --ready-fd 3 (dup2 clears CLOEXEC)
      std::vector<std::string> args = {binary, "--fabric", name_, "--topology", topology,
                                       "--runtime-dir", run, "--state-dir", state, "--ready-fd", "3"};
      if (sm) args.push_back("--sm");
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(ready[1]);
    char buf[16] = {};
    // Blocks until softibd says ready (or exits: read returns 0).
    ready_ = ::read(ready[0], buf, sizeof buf) > 0;
    ::close(ready[0]);
  }
  ~SoftibdProcess() { stop(); }
  SoftibdProcess(const SoftibdProcess&) = delete;
  SoftibdProcess& operator=(const SoftibdProcess&) = delete;

  bool ready() const { return ready_; }
  const std::string& name() const { return name_; }
  const std::string& socket() const { return socket_; }
  const std::string& dir() const { return dir_; }  // the temporary directory it runs under
  pid_t pid() const { return pid_; }

  void stop() {
    if (pid_ <= 0) {
      remove_dir();  // never started (no pipe, no fork): the directory is all there is
      return;
    }
    ::kill(pid_, SIGTERM);
    // Our unreaped child: its pid cannot be reused, so the pidfd opened now is its own.
    if (!wait_for_exit(pid_, std::chrono::seconds(5))) ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = 0;
    remove_dir();
  }

 private:
  void remove_dir() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    dir_.clear();
  }

  std::string name_, dir_, socket_;
  pid_t pid_ = 0;
  bool ready_ = false;
};

}  // namespace softib::testing
