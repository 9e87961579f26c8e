// Starting and stopping softibd: what `softib up` and `softib down` do, and what tests use to
// run a private fabric.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/result.hpp"

namespace softib::tools {

struct UpOptions {
  std::string fabric;                  // empty: SOFTIB_FABRIC or "default"
  std::string topology;                // empty: softibd's default (switch:hosts=2)
  bool sm = true;                      // run the embedded SM
  std::vector<std::string> extra;      // more softibd arguments (-p 5, -R ftree, ...)
  std::string runtime_dir, state_dir;  // empty: the usual places (ipc/paths.hpp)
  std::string softibd;                 // empty: next to this program, else on PATH
  bool foreground_child = false;       // stay in our session (tests); else setsid
  Duration ready_timeout = std::chrono::seconds(120);
};

struct DaemonProcess {
  pid_t pid = -1;
  std::string fabric, socket, log;
};

// Starts softibd and returns once it serves (with the SM: once the subnet is up). Its output
// goes to <runtime dir>/softibd.log. Errors: AlreadyExists when the fabric already runs; the
// daemon's own error (its log's last lines) when it exits instead; Timeout.
Result<DaemonProcess> up(const UpOptions& options);

// Asks the fabric's softibd to stop and waits (up to `timeout`) until its socket is gone.
// Errors: Unavailable when none runs; Timeout.
Result<void> down(const std::string& fabric, Duration timeout = std::chrono::seconds(10),
                  const std::string& runtime_dir = {});

// The softibd binary next to the running program (/proc/self/exe), else "softibd".
std::string softibd_path();

}  // namespace softib::tools
