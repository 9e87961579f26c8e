#include "base/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace softib {

void assert_fail(const char* expr, const char* file, int line, const char* msg) {
  std::fprintf(stderr, "softib: assertion failed at %s:%d: %s%s%s\n", file, line, expr,
               msg ? ": " : "", msg ? msg : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace softib
