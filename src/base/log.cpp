#include "base/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace softib {

namespace {

LogLevel initial_level() {
  if (const char* env = std::getenv("SOFTIB_LOG")) {
    if (auto level = parse_log_level(env)) return *level;
    std::fprintf(stderr, "softib: ignoring SOFTIB_LOG=%s (want error|warn|info|debug|trace)\n", env);
  }
  return LogLevel::kWarn;
}

std::atomic<uint8_t>& level_slot() {
  static std::atomic<uint8_t> level{static_cast<uint8_t>(initial_level())};
  return level;
}

std::atomic<LogSink*> g_sink{nullptr};
std::mutex g_stderr_mutex;

}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kTrace: return "trace";
  }
  return "?";
}

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (auto level : {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug,
                     LogLevel::kTrace}) {
    if (text == to_string(level)) return level;
  }
  return std::nullopt;
}

void set_log_level(LogLevel level) {
  level_slot().store(static_cast<uint8_t>(level), std::memory_order_relaxed);
}

LogLevel log_level() { return static_cast<LogLevel>(level_slot().load(std::memory_order_relaxed)); }

bool log_enabled(LogLevel level) {
  return static_cast<uint8_t>(level) <= level_slot().load(std::memory_order_relaxed);
}

void set_log_sink(LogSink* sink) { g_sink.store(sink, std::memory_order_release); }

void log_write(LogLevel level, std::string_view component, std::string_view message) {
  if (message.size() > kMaxLogLine) message = message.substr(0, kMaxLogLine);
  if (LogSink* sink = g_sink.load(std::memory_order_acquire)) {
    sink->write(level, component, message);
    return;
  }
  std::lock_guard lock(g_stderr_mutex);
  std::fprintf(stderr, "softib %s [%.*s] %.*s\n", to_string(level).data(),
               static_cast<int>(component.size()), component.data(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace softib
