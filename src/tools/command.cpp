#include "tools/command.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace softib::tools {

int CommandContext::fail(const Status& s) {
  fmt::print(stderr, "softib: {}\n", s.message().empty() ? s.to_string() : s.message());
  exit_code = s.code() == Code::kUnavailable ? 3 : 2;
  return exit_code;
}

}  // namespace softib::tools
