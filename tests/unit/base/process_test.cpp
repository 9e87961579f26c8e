// base/process.hpp: waiting for a process to end on its pidfd. The child's end is a handshake
// (it exits when the test closes its pipe), never a timed guess.
#include "base/process.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "base/unique_fd.hpp"

namespace softib {
namespace {

TEST(Process, WaitForExitReturnsWhenTheProcessEndsAndNotBefore) {
  int hold[2];
  ASSERT_EQ(::pipe(hold), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(hold[1]);
    char c;
    ::_exit(::read(hold[0], &c, 1) == 0 ? 0 : 1);  // until the parent closes its end
  }
  ::close(hold[0]);
  const UniqueFd pidfd(open_pidfd(child));
  ASSERT_TRUE(pidfd.valid());
  EXPECT_FALSE(wait_for_exit(child, std::chrono::milliseconds(20))) << "it still waits on the pipe";
  EXPECT_FALSE(wait_for_pidfd(pidfd.get(), std::chrono::milliseconds(0)));
  ::close(hold[1]);
  EXPECT_TRUE(wait_for_pidfd(pidfd.get(), std::chrono::seconds(10)));
  EXPECT_TRUE(wait_for_exit(child, std::chrono::seconds(10))) << "a zombie has ended";
  int status = -1;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(wait_for_exit(child, std::chrono::milliseconds(0))) << "reaped: no such process";
}

TEST(Process, ThreadCountFollowsTheThreadsRunning) {
  const int before = thread_count();
  ASSERT_GE(before, 1);
  std::atomic<bool> started{false}, stop{false};
  std::thread t([&] {
    started = true;
    while (!stop) std::this_thread::yield();
  });
  while (!started) std::this_thread::yield();
  EXPECT_EQ(thread_count(), before + 1);
  stop = true;
  t.join();
}

}  // namespace
}  // namespace softib
