// The memory region table: what reg() hands out stays valid until dereg, however many
// regions are registered after it (the drop-in ibv_mr and the native MemoryRegion keep it).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "verbs/mr.hpp"
#include "verbs/qp_attr.hpp"

namespace softib::verbs {
namespace {

TEST(VerbsMrTable, RegionsStayPutWhileOthersAreRegistered) {
  MrTable table;
  Pd pd(1);
  std::vector<uint8_t> buf(4096);
  auto first = table.reg(&pd, buf.data(), buf.size(), reinterpret_cast<uintptr_t>(buf.data()),
                         access::kLocalWrite | access::kRemoteWrite);
  ASSERT_TRUE(first.ok());
  const Mr* mr = *first;
  const LKey lkey = mr->lkey;
  const RKey rkey = mr->rkey;
  // Enough registrations to grow any contiguous storage several times over.
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(table.reg(&pd, buf.data() + i, 1, 0, 0).ok());
  EXPECT_EQ(table.find_lkey(lkey), mr) << "the first region moved: its holders now point at freed memory";
  EXPECT_EQ(mr->lkey, lkey);
  EXPECT_EQ(mr->rkey, rkey);
  EXPECT_EQ(mr->addr, buf.data());
  EXPECT_EQ(mr->length, buf.size());
  EXPECT_TRUE(table.dereg(mr->lkey).ok());
  EXPECT_EQ(table.find_lkey(lkey), nullptr);
}

}  // namespace
}  // namespace softib::verbs
