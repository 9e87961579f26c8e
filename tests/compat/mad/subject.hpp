// A mad layout seen through function pointers, so that a table of cross-checks can name
// any layout: random valid values encoded, and the typed decoder and encoder per row.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "mad/codec.hpp"
#include "support/random.hpp"
#include "unit/mad/mad_random.hpp"

namespace softib::mad::compat {

using softib::testing::TestRng;
using wire::ByteSpan;

struct Subject {
  LayoutInfo layout;
  std::vector<uint8_t> (*random)(TestRng&);
  // decode<T>, then row's accessor.
  uint64_t (*typed_get)(ByteSpan raw, std::string_view row);
  std::vector<uint8_t> (*typed_get_bytes)(ByteSpan raw, std::string_view row);
  // decode<T>, set the row through its accessor, encode<T>.
  std::vector<uint8_t> (*with_value)(ByteSpan raw, std::string_view row, uint64_t v);
  std::vector<uint8_t> (*with_bytes)(ByteSpan raw, std::string_view row, ByteSpan v);
};

namespace detail {

template <class T>
const Row<T>& row_of(std::string_view name) {
  const Row<T>* r = find_row<T>(name);
  SOFTIB_ASSERT_MSG(r != nullptr, "no such row");
  return *r;
}

template <class T>
T must_decode(ByteSpan raw) {
  auto t = decode<T>(raw);
  SOFTIB_ASSERT_MSG(t.ok(), "subject bytes do not decode");
  return *t;
}

template <class T>
std::vector<uint8_t> random_encoded(TestRng& rng) {
  return encode(mad::test::random_value<T>(rng));
}
template <class T>
uint64_t typed_get(ByteSpan raw, std::string_view row) {
  return row_of<T>(row).access.get(must_decode<T>(raw));
}
template <class T>
std::vector<uint8_t> typed_get_bytes(ByteSpan raw, std::string_view row) {
  const Row<T>& r = row_of<T>(row);
  std::vector<uint8_t> out(r.field.bit_width / 8);
  r.access.get_bytes(must_decode<T>(raw), out);
  return out;
}
template <class T>
std::vector<uint8_t> with_value(ByteSpan raw, std::string_view row, uint64_t v) {
  T t = must_decode<T>(raw);
  row_of<T>(row).access.set(t, v);
  return encode(t);
}
template <class T>
std::vector<uint8_t> with_bytes(ByteSpan raw, std::string_view row, ByteSpan v) {
  T t = must_decode<T>(raw);
  row_of<T>(row).access.set_bytes(t, v);
  return encode(t);
}

}  // namespace detail

template <class T>
const Subject& subject() {
  static const Subject s{layout_info<T>(),          &detail::random_encoded<T>,
                         &detail::typed_get<T>,     &detail::typed_get_bytes<T>,
                         &detail::with_value<T>,    &detail::with_bytes<T>};
  return s;
}

}  // namespace softib::mad::compat
