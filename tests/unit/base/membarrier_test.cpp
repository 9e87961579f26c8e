// membarrier(2) registration (base/membarrier.hpp), made on a thread of its own: it finishes,
// says so, and starts over in a forked child, which does not inherit it.
#include "base/membarrier.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace softib {
namespace {

TEST(Membarrier, TheRegistrationFinishesInTheBackground) {
  std::thread registering(register_membarriers);
  register_membarriers();  // once per process: this call or the thread's returns at once
  EXPECT_TRUE(membarrier_registration_started());
  wait_for_membarrier_registration();
  registering.join();
  EXPECT_EQ(global_membarrier_registered(), global_membarrier_available());
  if (private_membarrier_available()) private_membarrier();  // registered: no second try
}

TEST(Membarrier, AForkedChildRegistersAgain) {
  wait_for_membarrier_registration();
  if (!global_membarrier_available()) GTEST_SKIP() << "this kernel lacks MEMBARRIER_CMD_GLOBAL_EXPEDITED";
  ASSERT_TRUE(global_membarrier_registered());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The parent's flags do not hold here: its publishes must fence until its own registration ends.
    if (global_membarrier_registered() || membarrier_registration_started()) ::_exit(2);
    std::thread(register_membarriers).detach();
    wait_for_membarrier_registration();
    ::_exit(global_membarrier_registered() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child saw the parent's registration; 3: its own did not finish";
  EXPECT_TRUE(global_membarrier_registered()) << "the parent's stays";
}

}  // namespace
}  // namespace softib
