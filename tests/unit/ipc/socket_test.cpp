// SIB1 over real unix sockets: a listener in a private directory, a multi-fragment message
// across it, timeouts that return instead of hanging, a closed peer, a stale socket file.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <string>

#include "ipc/socket.hpp"

namespace softib::ipc {
namespace {

class SocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/softib-ipc-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/s.sock";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_, path_;
};

TEST_F(SocketTest, ConnectWithoutListenerIsUnavailable) {
  auto c = Socket::connect(path_);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), Code::kUnavailable);
}

TEST_F(SocketTest, LargeMessageCrossesAsFragmentsAndTimeoutsReturn) {
  auto l = Socket::listen(path_);
  ASSERT_TRUE(l.ok()) << l.error().to_string();
  auto c = Socket::connect(path_);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(l->wait_readable(std::chrono::seconds(5)).value());
  auto s = l->accept();
  ASSERT_TRUE(s.ok());

  Assembler a;
  auto none = recv_message(*s, a, std::chrono::milliseconds(10));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "nothing was sent: the wait must time out";

  std::vector<uint8_t> payload(200 * 1024);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  // Sent from a second thread's worth of buffer: the receiver drains while we send.
  std::thread sender([&] { ASSERT_TRUE(send_message(*c, MsgType::kRecvMads, 77, payload).ok()); });
  std::optional<Message> got;
  while (!got) {
    auto m = recv_message(*s, a, std::chrono::seconds(5));
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    ASSERT_TRUE(m->has_value()) << "timed out waiting for the fragments";
    got = std::move(*m);
  }
  sender.join();
  EXPECT_EQ(got->type, MsgType::kRecvMads);
  EXPECT_EQ(got->seq, 77u);
  EXPECT_EQ(got->payload, payload);

  *c = Socket();  // the peer goes away
  auto gone = recv_message(*s, a, std::chrono::seconds(5));
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code(), Code::kUnavailable);
}

TEST_F(SocketTest, StaleSocketFileIsReplacedButALiveListenerIsNot) {
  {
    auto l = Socket::listen(path_);
    ASSERT_TRUE(l.ok());
    auto again = Socket::listen(path_);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code(), Code::kAlreadyExists);
  }
  // The first listener is closed but its file remains: a crashed daemon's leftover.
  ASSERT_TRUE(std::filesystem::exists(path_));
  auto l = Socket::listen(path_);
  EXPECT_TRUE(l.ok()) << l.error().to_string();
}

}  // namespace
}  // namespace softib::ipc
