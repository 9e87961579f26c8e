// Always-on invariant checks. An invariant violation is a bug in softib, never bad input:
// bad input gets a Status or a ParseError instead (docs/invariants.md).
#pragma once

namespace softib {

[[noreturn]] void assert_fail(const char* expr, const char* file, int line, const char* msg);

}  // namespace softib

// In a constant expression a failing SOFTIB_ASSERT is a compile error (assert_fail is not
// constexpr), so table checks in constexpr code fail the build.
#define SOFTIB_ASSERT(cond)                                                  \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::softib::assert_fail(#cond, __FILE__, __LINE__, nullptr);             \
  } while (0)

#define SOFTIB_ASSERT_MSG(cond, msg)                                         \
  do {                                                                       \
    if (!(cond)) [[unlikely]]                                                \
      ::softib::assert_fail(#cond, __FILE__, __LINE__, (msg));               \
  } while (0)
