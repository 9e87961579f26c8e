#include "ipc/paths.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

namespace softib::ipc {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

Result<std::string> fabric_name(std::string_view explicit_name) {
  std::string name(explicit_name);
  if (name.empty()) name = env("SOFTIB_FABRIC");
  if (name.empty()) name = "default";
  const bool ok = name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  }) && name != "." && name != "..";
  if (!ok) return Status(Code::kInvalidArgument, fmt::format("bad fabric name \"{}\": use letters, digits, . _ -", name));
  return name;
}

std::string runtime_dir(std::string_view fabric) {
  std::string base = env("SOFTIB_RUNTIME_DIR");
  if (base.empty()) {
    if (::geteuid() == 0) base = "/run/softib";
    else if (const std::string xdg = env("XDG_RUNTIME_DIR"); !xdg.empty()) base = xdg + "/softib";
    else base = fmt::format("/tmp/softib-{}", ::geteuid());
  }
  return base + "/" + std::string(fabric);
}

std::string state_dir(std::string_view fabric) {
  std::string base = env("SOFTIB_STATE_DIR");
  if (base.empty()) {
    if (::geteuid() == 0) base = "/var/lib/softib";
    else if (const std::string xdg = env("XDG_STATE_HOME"); !xdg.empty()) base = xdg + "/softib";
    else base = env("HOME") + "/.local/state/softib";
  }
  return base + "/" + std::string(fabric);
}

std::string socket_path(std::string_view fabric) { return runtime_dir(fabric) + "/softibd.sock"; }
std::string pid_path(std::string_view fabric) { return runtime_dir(fabric) + "/softibd.pid"; }

Result<void> make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Code::kPermissionDenied, fmt::format("cannot create {}: {}", dir, ec.message()));
  return {};
}

}  // namespace softib::ipc
