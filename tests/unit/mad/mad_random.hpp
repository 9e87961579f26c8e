// Seeded random values of any mad layout, generated from its table: every bound row gets a
// value within its width and legal range (the ends of the range more often than chance
// would give them), byte rows random bytes, text rows (NodeString, ServiceName) printable
// text shorter than the field and NUL padded; then the few cross-field rules are restored.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mad/codec.hpp"
#include "mad/rmpp_header.hpp"
#include "support/random.hpp"

namespace softib::mad::test {

inline uint64_t random_in(softib::testing::TestRng& rng, uint64_t lo, uint64_t hi) {
  switch (rng.between(0, 7)) {
    case 0: return lo;
    case 1: return hi;
    default: return rng.between(lo, hi);
  }
}

// An RMPP header that breaks none of the IBA 13.6.2 rules find_rmpp_violation checks.
inline void make_consistent(RmppHeader& h, softib::testing::TestRng& rng) {
  if (rng.coin()) {
    h.flags = 0;  // inactive: the other fields are not interpreted
    return;
  }
  h.version = kRmppVersion;
  h.type = static_cast<RmppType>(rng.between(1, 4));
  h.flags = kRmppActive;
  if (h.type == RmppType::kData) {
    if (rng.coin()) h.flags |= kRmppFirst;
    if (rng.coin()) h.flags |= kRmppLast;
    h.data1 = (h.flags & kRmppFirst) != 0 ? 1 : static_cast<uint32_t>(rng.between(1, 0xFFFFFFFF));
  }
}

template <class T>
T random_value(softib::testing::TestRng& rng) {
  T t{};
  for (const Row<T>& r : Layout<T>::kRows) {
    if (r.access.is_integer()) {
      const uint64_t hi = std::min(r.legal.max, detail::low_mask(r.field.bit_width));
      r.access.set(t, random_in(rng, r.legal.min, hi));
    } else if (r.access.is_bytes()) {
      std::vector<uint8_t> b(r.field.bit_width / 8);
      if (r.printer == Printer::kString) {
        const size_t len = rng.between(0, b.size() - 1);
        for (size_t i = 0; i < len; ++i) b[i] = static_cast<uint8_t>(rng.between(0x20, 0x7E));
      } else {
        for (uint8_t& x : b) x = static_cast<uint8_t>(rng.next());
      }
      r.access.set_bytes(t, b);
    }
  }
  if constexpr (std::is_same_v<T, RmppHeader>) {
    make_consistent(t, rng);
  } else if constexpr (requires { t.rmpp; }) {
    make_consistent(t.rmpp, rng);
  }
  return t;
}

}  // namespace softib::mad::test
