// Field: one named field of a big-endian structure, located the way the IBA tables locate
// it: bit 0 is the most significant bit of byte 0, and a field occupies bit_width bits from
// bit_offset. Header codecs and MAD attribute tables are lists of Fields; lengths, offsets
// and truncation errors are derived from those lists rather than typed by hand.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "base/assert.hpp"
#include "wire/bytes.hpp"

namespace softib::wire {

struct Field {
  std::string_view name;  // the IBA's spelling: "DestQP", "P_Key", "LinkWidthEnabled"
  uint32_t bit_offset = 0;
  uint32_t bit_width = 0;

  constexpr uint32_t first_byte() const { return bit_offset / 8; }
  // One past the last byte the field touches.
  constexpr uint32_t end_byte() const { return (bit_offset + bit_width + 7) / 8; }
  constexpr bool byte_aligned() const { return bit_offset % 8 == 0 && bit_width % 8 == 0; }
  // Integer fields are read with get_bits: at most 64 bits spread over at most 8 bytes.
  constexpr bool fits_integer() const { return bit_width >= 1 && bit_offset % 8 + bit_width <= 64; }
};

// Length in bytes of a structure described by `fields`: one past the last byte any field
// touches.
constexpr size_t layout_length(std::span<const Field> fields) {
  uint32_t end = 0;
  for (const Field& f : fields) end = std::max(end, f.end_byte());
  return end;
}

// True when no two fields overlap and every field is readable as an integer or as whole
// bytes. Used in static_asserts next to every table.
constexpr bool layout_is_valid(std::span<const Field> fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& a = fields[i];
    if (a.bit_width == 0) return false;
    if (!a.fits_integer() && !a.byte_aligned()) return false;
    for (size_t j = i + 1; j < fields.size(); ++j) {
      const Field& b = fields[j];
      if (a.bit_offset < b.bit_offset + b.bit_width && b.bit_offset < a.bit_offset + a.bit_width)
        return false;
    }
  }
  return true;
}

// True when the fields are listed in wire order (each starts at or after the previous end):
// this is what makes "the first field that does not fit" the field where bytes ran out.
constexpr bool layout_is_ordered(std::span<const Field> fields) {
  for (size_t i = 1; i < fields.size(); ++i)
    if (fields[i].bit_offset < fields[i - 1].bit_offset + fields[i - 1].bit_width) return false;
  return true;
}

// Reads bit_width bits at bit_offset. REQUIRES: f.fits_integer(), p holds f.end_byte() bytes.
constexpr uint64_t get_bits(const uint8_t* p, uint32_t bit_offset, uint32_t bit_width) {
  const uint32_t first = bit_offset / 8;
  const uint32_t last = (bit_offset + bit_width - 1) / 8;
  uint64_t acc = 0;
  for (uint32_t i = first; i <= last; ++i) acc = acc << 8 | p[i];
  const uint32_t shift = (last - first + 1) * 8 - bit_offset % 8 - bit_width;
  acc >>= shift;
  return bit_width >= 64 ? acc : acc & ((uint64_t{1} << bit_width) - 1);
}

// Writes the low bit_width bits of v at bit_offset, leaving every other bit untouched.
// REQUIRES: as get_bits, and v fits in bit_width bits.
constexpr void set_bits(uint8_t* p, uint32_t bit_offset, uint32_t bit_width, uint64_t v) {
  SOFTIB_ASSERT(bit_width >= 64 || (v >> bit_width) == 0);
  const uint32_t first = bit_offset / 8;
  const uint32_t last = (bit_offset + bit_width - 1) / 8;
  const uint32_t shift = (last - first + 1) * 8 - bit_offset % 8 - bit_width;
  const uint64_t mask = (bit_width >= 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1) << shift;
  uint64_t acc = 0;
  for (uint32_t i = first; i <= last; ++i) acc = acc << 8 | p[i];
  acc = (acc & ~mask) | (v << shift);
  for (uint32_t i = last + 1; i-- > first;) {
    p[i] = static_cast<uint8_t>(acc);
    acc >>= 8;
  }
}

constexpr uint64_t get(ByteSpan in, const Field& f) {
  return get_bits(in.data(), f.bit_offset, f.bit_width);
}
constexpr void set(MutByteSpan out, const Field& f, uint64_t v) {
  set_bits(out.data(), f.bit_offset, f.bit_width, v);
}

// Typed shorthands for narrow fields; the width check makes the cast lossless.
constexpr uint8_t get_u8(ByteSpan in, const Field& f) {
  SOFTIB_ASSERT(f.bit_width <= 8);
  return static_cast<uint8_t>(get(in, f));
}
constexpr uint16_t get_u16(ByteSpan in, const Field& f) {
  SOFTIB_ASSERT(f.bit_width <= 16);
  return static_cast<uint16_t>(get(in, f));
}
constexpr uint32_t get_u32(ByteSpan in, const Field& f) {
  SOFTIB_ASSERT(f.bit_width <= 32);
  return static_cast<uint32_t>(get(in, f));
}
constexpr bool get_flag(ByteSpan in, const Field& f) {
  SOFTIB_ASSERT(f.bit_width == 1);
  return get(in, f) != 0;
}

// A byte-aligned field of 8, 16, 24, 32 or 64 bits as one big-endian load or store: the
// extension headers every data packet carries (RETH, AETH, ImmDt, ...) are read and written
// with these. get_bits/set_bits loop over the bytes, and left out of line (a profile-guided
// build judged the WRITE path cold) they cost ~110 instructions a field: callgrind of 64-byte
// RDMA WRITEs, Reth::encode 338 instructions a packet, Reth::decode ~130. The field is a
// template argument so that its layout is checked where it is used, and its value comes and
// goes in the narrowest integer that holds it (no cast at the caller).
constexpr bool loads_whole(const Field& f) {
  return f.bit_offset % 8 == 0 &&
         (f.bit_width == 8 || f.bit_width == 16 || f.bit_width == 24 || f.bit_width == 32 || f.bit_width == 64);
}
template <const Field& F>
using AlignedValue = std::conditional_t<F.bit_width <= 8, uint8_t,
                                        std::conditional_t<F.bit_width <= 16, uint16_t,
                                                           std::conditional_t<F.bit_width <= 32, uint32_t, uint64_t>>>;
template <const Field& F>
constexpr AlignedValue<F> get_aligned(ByteSpan in) {
  static_assert(loads_whole(F));
  SOFTIB_ASSERT(in.size() >= F.end_byte());
  const uint8_t* p = in.data() + F.first_byte();
  if constexpr (F.bit_width == 8) return p[0];
  else if constexpr (F.bit_width == 16) return load_be16(p);
  else if constexpr (F.bit_width == 24) return load_be24(p);
  else if constexpr (F.bit_width == 32) return load_be32(p);
  else return load_be64(p);
}
// REQUIRES: v fits in the field.
template <const Field& F>
constexpr void set_aligned(MutByteSpan out, AlignedValue<F> v) {
  static_assert(loads_whole(F));
  if constexpr (F.bit_width == 24) SOFTIB_ASSERT((v >> 24) == 0);
  SOFTIB_ASSERT(out.size() >= F.end_byte());
  uint8_t* p = out.data() + F.first_byte();
  if constexpr (F.bit_width == 8) p[0] = v;
  else if constexpr (F.bit_width == 16) store_be16(p, v);
  else if constexpr (F.bit_width == 24) store_be24(p, v);
  else if constexpr (F.bit_width == 32) store_be32(p, v);
  else store_be64(p, v);
}

// Byte-aligned fields wider than 64 bits (GIDs, NodeDescription, table blocks).
inline void get_bytes(ByteSpan in, const Field& f, MutByteSpan out) {
  SOFTIB_ASSERT(f.byte_aligned() && out.size() == f.bit_width / 8);
  std::copy_n(in.begin() + f.first_byte(), out.size(), out.begin());
}
inline void set_bytes(MutByteSpan out, const Field& f, ByteSpan v) {
  SOFTIB_ASSERT(f.byte_aligned() && v.size() == f.bit_width / 8);
  std::copy(v.begin(), v.end(), out.begin() + f.first_byte());
}

}  // namespace softib::wire
