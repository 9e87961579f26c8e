#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "base/counters.hpp"

namespace softib {
namespace {

enum class Drop : uint8_t { kBadCrc, kNoQp, kCount };
std::string_view to_string(Drop d) { return d == Drop::kBadCrc ? "bad_crc" : "no_qp"; }

TEST(Counters, CountAndReport) {
  CounterSet<Drop> c;
  c.inc(Drop::kBadCrc);
  c.inc(Drop::kBadCrc, 4);
  c.inc(Drop::kNoQp);
  EXPECT_EQ(c.get(Drop::kBadCrc), 5u);
  EXPECT_EQ(c.total(), 6u);
  std::map<std::string, uint64_t> seen;
  c.for_each([&](std::string_view name, uint64_t v) { seen[std::string(name)] = v; });
  EXPECT_EQ(seen["bad_crc"], 5u);
  EXPECT_EQ(seen["no_qp"], 1u);
  c.reset();
  EXPECT_EQ(c.total(), 0u);
}

TEST(Counters, ReaderOnAnotherThreadSeesWrites) {
  Counter c;
  std::thread writer([&] {
    for (int i = 0; i < 100000; ++i) c.add();
  });
  writer.join();
  EXPECT_EQ(c.get(), 100000u);
}

}  // namespace
}  // namespace softib
