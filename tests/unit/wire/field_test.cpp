#include <gtest/gtest.h>

#include <vector>

#include "support/random.hpp"
#include "wire/field.hpp"

namespace softib::wire {
namespace {

// Reference: one bit at a time, IBA numbering (bit 0 = MSB of byte 0).
uint64_t naive_get(const std::vector<uint8_t>& buf, uint32_t off, uint32_t width) {
  uint64_t v = 0;
  for (uint32_t b = off; b < off + width; ++b) v = v << 1 | ((buf[b / 8] >> (7 - b % 8)) & 1);
  return v;
}

TEST(Field, GetAndSetMatchBitByBitReference) {
  testing::TestRng rng;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> buf(16);
    for (auto& b : buf) b = static_cast<uint8_t>(rng.next());
    const auto width = static_cast<uint32_t>(rng.between(1, 64));
    const auto max_off = 128 - width;
    auto off = static_cast<uint32_t>(rng.between(0, max_off));
    off = off / 8 * 8 + std::min<uint32_t>(off % 8, 64 - width);  // off % 8 + width <= 64
    ASSERT_EQ(get_bits(buf.data(), off, width), naive_get(buf, off, width)) << off << "/" << width;

    const std::vector<uint8_t> before = buf;
    const uint64_t v = rng.bits(width);
    set_bits(buf.data(), off, width, v);
    ASSERT_EQ(naive_get(buf, off, width), v);
    // Every bit outside the field is untouched.
    for (uint32_t b = 0; b < 128; ++b) {
      if (b >= off && b < off + width) continue;
      ASSERT_EQ((buf[b / 8] >> (7 - b % 8)) & 1, (before[b / 8] >> (7 - b % 8)) & 1) << b;
    }
  }
}

TEST(Field, LayoutHelpers) {
  constexpr Field a{"A", 0, 4}, b{"B", 4, 12}, c{"C", 16, 64};
  constexpr std::array ok{a, b, c};
  static_assert(layout_length(ok) == 10);
  static_assert(layout_is_valid(ok) && layout_is_ordered(ok));
  constexpr std::array overlap{a, Field{"X", 2, 4}};
  static_assert(!layout_is_valid(overlap));
  constexpr std::array unordered{b, a};
  static_assert(!layout_is_ordered(unordered));
  // A 64-bit field that is not byte aligned cannot be read as one integer.
  constexpr std::array misaligned{Field{"M", 4, 64}};
  static_assert(!layout_is_valid(misaligned));
}

TEST(Field, BigEndianLoadsAndStores) {
  uint8_t buf[8];
  store_be64(buf, 0x0102030405060708ULL);
  EXPECT_EQ(buf[0], 1);
  EXPECT_EQ(buf[7], 8);
  EXPECT_EQ(load_be64(buf), 0x0102030405060708ULL);
  EXPECT_EQ(load_be24(buf + 1), 0x020304u);
  store_le32(buf, 0x2a00fd82);
  EXPECT_EQ(buf[0], 0x82);
  EXPECT_EQ(load_le32(buf), 0x2a00fd82u);
}

}  // namespace
}  // namespace softib::wire
