// Where a fabric's daemon lives: every fabric has a name (SOFTIB_FABRIC, default "default"),
// a runtime directory holding its socket and pid file, and a state directory holding what
// survives restarts (guid2lid, the SM's state).
//
//   runtime: $SOFTIB_RUNTIME_DIR, else /run/softib (root), else $XDG_RUNTIME_DIR/softib,
//            else /tmp/softib-<uid>                                       + /<fabric>
//   state:   $SOFTIB_STATE_DIR, else /var/lib/softib (root), else $XDG_STATE_HOME/softib,
//            else ~/.local/state/softib                                   + /<fabric>
// Tests set SOFTIB_RUNTIME_DIR and SOFTIB_STATE_DIR to private directories.
#pragma once

#include <string>
#include <string_view>

#include "base/result.hpp"

namespace softib::ipc {

// The fabric name to use: `explicit_name` if not empty, else SOFTIB_FABRIC, else "default".
// Errors: InvalidArgument for names that are not [A-Za-z0-9._-]{1,64}.
Result<std::string> fabric_name(std::string_view explicit_name = {});

std::string runtime_dir(std::string_view fabric);
std::string state_dir(std::string_view fabric);
std::string socket_path(std::string_view fabric);
std::string pid_path(std::string_view fabric);

// mkdir -p with mode 0755. Errors: errno-mapped, naming the directory.
Result<void> make_dirs(const std::string& dir);

}  // namespace softib::ipc
