// Properties every mad layout must have, checked for all of them from their tables:
// decode(encode(x)) == x for seeded random values, reserved bits written as zero, truncation
// at every byte names the field where the bytes ran out, each row's accessor touches only
// its own bits, get/set by name agree with the typed codec, and the dump has one line per
// field in the table's (or kDumpOrder's) order.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "all_layouts.hpp"
#include "mad_random.hpp"

namespace softib::mad::test {
namespace {

using softib::testing::TestRng;
using wire::ByteSpan;
using wire::Field;
using wire::ParseErrorKind;

template <class T>
class MadLayoutTest : public ::testing::Test {};
TYPED_TEST_SUITE(MadLayoutTest, AllLayouts, LayoutName);

TYPED_TEST(MadLayoutTest, TableIsSound) {
  using T = TypeParam;
  EXPECT_TRUE(layout_is_sound<T>());
  EXPECT_GT(wire_size<T>, 0u);
  // The last row ends exactly at the layout's end: no trailing gap the table forgot.
  size_t end = 0;
  for (const auto& r : Layout<T>::kRows) end = std::max<size_t>(end, r.field.end_byte());
  EXPECT_EQ(end, wire_size<T>);
  // Rows tile the layout: every bit is covered by exactly one row (reserved ones included).
  std::vector<int> covered(wire_size<T> * 8, 0);
  for (const auto& r : Layout<T>::kRows)
    for (uint32_t b = r.field.bit_offset; b < r.field.bit_offset + r.field.bit_width; ++b)
      ++covered[b];
  for (size_t b = 0; b < covered.size(); ++b) ASSERT_EQ(covered[b], 1) << Layout<T>::kName << " bit " << b;
}

TYPED_TEST(MadLayoutTest, RoundTripsRandomValues) {
  using T = TypeParam;
  TestRng rng;
  for (int i = 0; i < 1000; ++i) {
    const T x = random_value<T>(rng);
    const std::vector<uint8_t> bytes = encode(x);
    ASSERT_EQ(bytes.size(), wire_size<T>);
    auto back = decode<T>(bytes);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    ASSERT_TRUE(*back == x) << "sent:\n" << dump(x) << "got:\n" << dump(*back);
    // And the bytes are canonical: encoding what was decoded gives them back.
    ASSERT_EQ(encode(*back), bytes);
  }
}

TYPED_TEST(MadLayoutTest, ReservedBitsAreWrittenAsZero) {
  using T = TypeParam;
  TestRng rng;
  for (int i = 0; i < 200; ++i) {
    const T x = random_value<T>(rng);
    std::vector<uint8_t> buf(wire_size<T> + 3, 0xFF);  // stale bytes in the buffer
    encode(x, wire::MutByteSpan(buf));
    for (const auto& r : Layout<T>::kRows) {
      if (!r.is_reserved()) continue;
      if (r.field.fits_integer()) {
        EXPECT_EQ(wire::get(buf, r.field), 0u) << Layout<T>::kName << "." << r.field.name;
      } else {
        for (uint32_t b = r.field.first_byte(); b < r.field.end_byte(); ++b)
          EXPECT_EQ(buf[b], 0) << Layout<T>::kName << "." << r.field.name << " byte " << b;
      }
    }
    // Bytes past the layout are not the encoder's business.
    for (size_t b = wire_size<T>; b < buf.size(); ++b) EXPECT_EQ(buf[b], 0xFF);
  }
}

TYPED_TEST(MadLayoutTest, DecodeIgnoresReservedBits) {
  using T = TypeParam;
  TestRng rng;
  const T x = random_value<T>(rng);
  std::vector<uint8_t> bytes = encode(x);
  for (const auto& r : Layout<T>::kRows) {
    if (!r.is_reserved()) continue;
    for (uint32_t b = r.field.bit_offset; b < r.field.bit_offset + r.field.bit_width; ++b)
      wire::set_bits(bytes.data(), b, 1, 1);
  }
  auto back = decode<T>(bytes);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_TRUE(*back == x);
  EXPECT_EQ(clear_reserved(layout_info<T>(), bytes), encode(x));
}

TYPED_TEST(MadLayoutTest, TruncationNamesTheFieldWhereBytesRanOut) {
  using T = TypeParam;
  TestRng rng;
  const std::vector<uint8_t> bytes = encode(random_value<T>(rng));
  for (size_t cut = 0; cut < wire_size<T>; ++cut) {
    const Field* expected = nullptr;
    for (const auto& r : Layout<T>::kRows) {
      if (r.field.end_byte() > cut) {
        expected = &r.field;
        break;
      }
    }
    ASSERT_NE(expected, nullptr);
    auto r = decode<T>(ByteSpan(bytes).first(cut));
    ASSERT_FALSE(r.ok()) << "cut " << cut;
    EXPECT_EQ(r.error().kind, ParseErrorKind::kTruncated);
    EXPECT_EQ(r.error().header, Layout<T>::kName);
    EXPECT_EQ(r.error().field, expected->name) << "cut " << cut;
    EXPECT_EQ(r.error().offset, expected->first_byte()) << "cut " << cut;
    EXPECT_EQ(r.error().available, cut);
  }
  // One byte more than the layout is fine: decoders read their prefix.
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0xAB);
  EXPECT_TRUE(decode<T>(longer).ok());
}

// Setting one row of a value changes exactly that row's bits on the wire: no accessor is
// bound to the wrong member or to a member another row also writes.
TYPED_TEST(MadLayoutTest, EachRowOwnsItsBits) {
  using T = TypeParam;
  TestRng rng;
  const T base = random_value<T>(rng);
  const std::vector<uint8_t> before = encode(base);
  for (const auto& r : Layout<T>::kRows) {
    if (r.is_reserved()) continue;
    T changed = base;
    std::vector<uint8_t> want = before;
    if (r.access.is_integer()) {
      const uint64_t v = ~r.access.get(base) & detail::low_mask(r.field.bit_width);
      r.access.set(changed, v);
      EXPECT_EQ(r.access.get(changed), v) << r.field.name;
      wire::set(want, r.field, v);
    } else {
      std::vector<uint8_t> v(r.field.bit_width / 8);
      r.access.get_bytes(base, v);
      for (uint8_t& b : v) b = static_cast<uint8_t>(~b);
      r.access.set_bytes(changed, v);
      std::copy(v.begin(), v.end(), want.begin() + r.field.first_byte());
    }
    EXPECT_EQ(encode(changed), want) << Layout<T>::kName << "." << r.field.name;
  }
}

TYPED_TEST(MadLayoutTest, FieldsByNameAgreeWithTheCodec) {
  using T = TypeParam;
  TestRng rng;
  const T x = random_value<T>(rng);
  std::vector<uint8_t> raw = encode(x);
  for (const auto& r : Layout<T>::kRows) {
    if (r.is_reserved()) continue;
    if (r.access.is_integer()) {
      auto got = get_field<T>(raw, r.field.name);
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      EXPECT_EQ(*got, r.access.get(x)) << r.field.name;
      // The dump label finds the same row.
      if (find_row<T>(r.label) == &r) {
        EXPECT_EQ(*get_field<T>(raw, r.label), *got);
      }
      EXPECT_FALSE(get_field_bytes<T>(raw, r.field.name).ok());
    } else {
      auto got = get_field_bytes<T>(raw, r.field.name);
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      std::vector<uint8_t> want(r.field.bit_width / 8);
      r.access.get_bytes(x, want);
      EXPECT_EQ(*got, want) << r.field.name;
      EXPECT_FALSE(get_field<T>(raw, r.field.name).ok());
    }
  }
  // set_field writes what decode then reads back in the typed value.
  for (int i = 0; i < 50; ++i) {
    const T y = random_value<T>(rng);
    for (const auto& r : Layout<T>::kRows) {
      if (!r.access.is_integer()) continue;
      ASSERT_TRUE(set_field<T>(raw, r.field.name, r.access.get(y)).ok()) << r.field.name;
    }
    for (const auto& r : Layout<T>::kRows) {
      if (!r.access.is_bytes()) continue;
      std::vector<uint8_t> v(r.field.bit_width / 8);
      r.access.get_bytes(y, v);
      ASSERT_TRUE(set_field_bytes<T>(raw, r.field.name, v).ok()) << r.field.name;
    }
    auto back = decode<T>(raw);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_TRUE(*back == y);
  }
  EXPECT_EQ(get_field<T>(raw, "NoSuchField").error().code(), Code::kNotFound);
  EXPECT_EQ(set_field<T>(raw, "NoSuchField", 0).code(), Code::kNotFound);
  for (const auto& r : Layout<T>::kRows) {
    if (!r.access.is_integer()) continue;
    if (r.field.bit_width < 64) {
      EXPECT_EQ(set_field<T>(raw, r.field.name, detail::low_mask(r.field.bit_width) + 1).code(),
                Code::kOutOfRange)
          << r.field.name;
    }
    EXPECT_EQ(get_field<T>(ByteSpan(raw).first(r.field.first_byte()), r.field.name).error().code(),
              Code::kOutOfRange);
  }
}

TYPED_TEST(MadLayoutTest, DumpFollowsTheTable) {
  using T = TypeParam;
  TestRng rng;
  const T x = random_value<T>(rng);
  const std::string text = dump(x);
  EXPECT_FALSE(text.empty());
  if constexpr (dump_style<T>() == DumpStyle::kFieldLines) {
    // One "Label:...." line per bound row (cap masks add tab-indented lines), labels in
    // dump order, values starting at column 33 when the label is shorter than 32.
    std::vector<std::string> labels;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.starts_with("\t")) continue;
      const size_t colon = line.find(':');
      ASSERT_NE(colon, std::string::npos) << line;
      labels.push_back(line.substr(0, colon));
      if (colon < 32) {
        EXPECT_EQ(line.find_first_not_of('.', colon + 1), 33u) << line;
      }
    }
    std::vector<std::string> want;
    for (size_t i : detail::kDumpIndices<T>) want.emplace_back(Layout<T>::kRows[i].label);
    EXPECT_EQ(labels, want);
  }
  // The raw and typed dumps agree.
  const std::vector<uint8_t> raw = encode(x);
  EXPECT_EQ(dump<T>(ByteSpan(raw)), text);
  EXPECT_EQ(layout_info<T>().dump(raw), text);
}

TYPED_TEST(MadLayoutTest, ErasedLayoutMatchesTheTable) {
  using T = TypeParam;
  const LayoutInfo info = layout_info<T>();
  EXPECT_EQ(info.name, Layout<T>::kName);
  EXPECT_EQ(info.size, wire_size<T>);
  ASSERT_EQ(info.rows.size(), Layout<T>::kRows.size());
  TestRng rng;
  const std::vector<uint8_t> raw = encode(random_value<T>(rng));
  std::vector<uint8_t> out(info.size, 0xEE);
  EXPECT_FALSE(info.reencode(raw, out).has_value());
  EXPECT_EQ(out, raw);
  auto err = info.reencode(ByteSpan(raw).first(info.size - 1), out);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->kind, ParseErrorKind::kTruncated);
  std::set<std::string_view> names;
  for (const RowInfo& r : info.rows)
    if (!r.is_reserved()) {
      EXPECT_TRUE(names.insert(r.field.name).second) << r.field.name;
    }
}

}  // namespace
}  // namespace softib::mad::test
