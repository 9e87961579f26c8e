#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "base/result.hpp"

namespace softib {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return Status(Code::kInvalidArgument, "not positive");
  return v;
}

Result<int> doubled(int v) {
  SOFTIB_TRY(parse_positive(v));
  return 2 * v;
}

Result<void> check(bool ok) {
  if (!ok) return Status(Code::kBusy, "in use");
  return {};
}

TEST(Result, ValueOrError) {
  auto ok = parse_positive(3);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  auto bad = parse_positive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(Result, TryPropagates) {
  EXPECT_EQ(*doubled(4), 8);
  EXPECT_EQ(doubled(0).error().code(), Code::kInvalidArgument);
}

TEST(Result, VoidResult) {
  EXPECT_TRUE(check(true).ok());
  EXPECT_EQ(check(false).error().to_errno(), EBUSY);
}

TEST(Result, CustomErrorType) {
  Result<std::string, int> r = Err{42};
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), 42);
  Result<std::string, int> s = std::string("x");
  EXPECT_EQ(*s, "x");
}

TEST(Status, ErrnoMapping) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().to_errno(), 0);
  EXPECT_EQ(Status(Code::kInvalidArgument, "").to_errno(), EINVAL);
  EXPECT_EQ(Status(Code::kUnsupported, "").to_errno(), EOPNOTSUPP);
  EXPECT_EQ(Status(Code::kWouldBlock, "").to_errno(), EAGAIN);
  // from_errno keeps the exact errno even where codes merge several.
  const Status s = Status::from_errno(EOVERFLOW, "resize");
  EXPECT_EQ(s.code(), Code::kOutOfRange);
  EXPECT_EQ(s.to_errno(), EOVERFLOW);
  EXPECT_NE(s.to_string().find("resize"), std::string::npos);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  EXPECT_DEATH({ (void)parse_positive(-1).value(); }, "assertion failed");
}

}  // namespace
}  // namespace softib
