// base/poll_fd.hpp: one descriptor's readiness, with the deadline kept across signals.
#include "base/poll_fd.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>

namespace softib {
namespace {

TEST(PollFd, APipeIsReadableOnceWrittenToAndNotBefore) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  auto r = wait_fd(p[0], POLLIN, std::chrono::milliseconds(0));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_TRUE(*wait_fd(p[1], POLLOUT, std::nullopt)) << "an empty pipe takes a write";
  ASSERT_EQ(::write(p[1], "x", 1), 1);
  r = wait_fd(p[0], POLLIN, std::nullopt);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  ::close(p[0]);
  ::close(p[1]);
}

void on_alarm(int) {}

TEST(PollFd, ASignalDoesNotEndTheWaitEarlyNorStartItAgain) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  struct sigaction sa {};
  sa.sa_handler = on_alarm;  // no SA_RESTART: poll returns EINTR
  struct sigaction old {};
  ASSERT_EQ(::sigaction(SIGALRM, &sa, &old), 0);
  itimerval every_20ms{{0, 20'000}, {0, 20'000}};
  ASSERT_EQ(::setitimer(ITIMER_REAL, &every_20ms, nullptr), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = wait_fd(p[0], POLLIN, std::chrono::milliseconds(200));
  const auto waited = std::chrono::steady_clock::now() - t0;
  itimerval off{};
  ::setitimer(ITIMER_REAL, &off, nullptr);
  ::sigaction(SIGALRM, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_FALSE(*r);
  EXPECT_GE(waited, std::chrono::milliseconds(195)) << "ended at the first signal";
  // Restarting the whole timeout at each signal (every 20 ms) would never end.
  EXPECT_LT(waited, std::chrono::seconds(5));
  ::close(p[0]);
  ::close(p[1]);
}

TEST(PollFd, AClosedDescriptorIsReportedReadyNotAnError) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ::close(p[0]);
  ::close(p[1]);
  // poll reports a closed descriptor as POLLNVAL (ready), not an error of the call.
  const auto r = wait_fd(p[0], POLLIN, std::chrono::milliseconds(0));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
}

}  // namespace
}  // namespace softib
