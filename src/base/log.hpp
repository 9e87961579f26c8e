// Logging by volume (UCX's rule): each level is defined by how often it may fire.
//   error  something failed that an operator must see
//   warn   something unexpected that softib handled
//   info   once per object lifecycle (a QP created, an SM sweep done)
//   debug  per control operation (a MAD, a state transition)
//   trace  per packet
// The level comes from SOFTIB_LOG (error|warn|info|debug|trace), default warn. Lines are
// bounded (kMaxLine): peer data never produces an unbounded log line.
//
// Thread: every function here may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "base/format.hpp"

namespace softib {

enum class LogLevel : uint8_t { kError, kWarn, kInfo, kDebug, kTrace };

std::string_view to_string(LogLevel level);
std::optional<LogLevel> parse_log_level(std::string_view text);

inline constexpr size_t kMaxLogLine = 1024;

class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void write(LogLevel level, std::string_view component, std::string_view message) = 0;
};

void set_log_level(LogLevel level);
LogLevel log_level();
bool log_enabled(LogLevel level);
// nullptr restores the default sink (stderr). The sink must outlive its installation.
void set_log_sink(LogSink* sink);

void log_write(LogLevel level, std::string_view component, std::string_view message);

template <class... Args>
void log(LogLevel level, std::string_view component, fmt::format_string<Args...> format,
         Args&&... args) {
  if (!log_enabled(level)) return;
  log_write(level, component, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace softib

// Formats nothing unless the level is enabled.
#define SOFTIB_LOG(level, component, ...)                                        \
  do {                                                                           \
    if (::softib::log_enabled(::softib::LogLevel::level))                        \
      ::softib::log_write(::softib::LogLevel::level, component, fmt::format(__VA_ARGS__)); \
  } while (0)
