#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/ids.hpp"
#include "base/log.hpp"

namespace softib {
namespace {

struct CaptureSink : LogSink {
  std::vector<std::string> lines;
  void write(LogLevel level, std::string_view component, std::string_view message) override {
    lines.push_back(fmt::format("{} {} {}", to_string(level), component, message));
  }
};

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = log_level();
    set_log_sink(&sink_);
  }
  void TearDown() override {
    set_log_sink(nullptr);
    set_log_level(saved_);
  }
  CaptureSink sink_;
  LogLevel saved_{};
};

TEST_F(LogTest, FiltersByVolume) {
  set_log_level(LogLevel::kInfo);
  SOFTIB_LOG(kInfo, "sm", "swept {} nodes", 3);
  SOFTIB_LOG(kDebug, "sm", "not shown");
  SOFTIB_LOG(kError, "sm", "qp {} failed", Qpn(0x11));
  ASSERT_EQ(sink_.lines.size(), 2u);
  EXPECT_EQ(sink_.lines[0], "info sm swept 3 nodes");
  EXPECT_EQ(sink_.lines[1], "error sm qp 0x000011 failed");
}

TEST_F(LogTest, DisabledLevelDoesNotFormat) {
  set_log_level(LogLevel::kWarn);
  int evaluated = 0;
  auto side_effect = [&] { return ++evaluated; };
  SOFTIB_LOG(kTrace, "rc", "{}", side_effect());
  EXPECT_EQ(evaluated, 0);
}

TEST_F(LogTest, LinesAreBounded) {
  set_log_level(LogLevel::kWarn);
  log(LogLevel::kWarn, "x", "{}", std::string(10 * kMaxLogLine, 'a'));
  ASSERT_EQ(sink_.lines.size(), 1u);
  EXPECT_LE(sink_.lines[0].size(), kMaxLogLine + 16);
}

TEST(LogLevel, Parse) {
  EXPECT_EQ(parse_log_level("trace"), LogLevel::kTrace);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::kWarn);
  EXPECT_FALSE(parse_log_level("loud").has_value());
}

}  // namespace
}  // namespace softib
