// The extension transport headers that may follow the BTH (IBA 9.3), and HeaderSet: which of
// them a packet carries. Every length and offset here is derived from the wire codecs'
// kLen and from one canonical order; nothing is summed by hand.
//
// Canonical order (IBA 9.2.1 table 38 lists each opcode's headers in this order; no opcode
// carries two headers in any other order):
//
//   BTH | RDETH | DETH | FETH | RETH | AtomicETH | AETH | AtomicAckETH | ImmDt | IETH | payload
//
// (FETH is the IBA 1.5 FLUSH header; the FLUSH packet is BTH | FETH | RETH.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "wire/aeth.hpp"
#include "wire/atomic_ack_eth.hpp"
#include "wire/atomic_eth.hpp"
#include "wire/bth.hpp"
#include "wire/deth.hpp"
#include "wire/feth.hpp"
#include "wire/ieth.hpp"
#include "wire/immdt.hpp"
#include "wire/rdeth.hpp"
#include "wire/reth.hpp"

namespace softib::packet {

// Enumerated in canonical wire order: the order of the enumerators IS the order on the wire.
enum class ExtHeader : uint8_t {
  kRdeth,
  kDeth,
  kFeth,
  kReth,
  kAtomicEth,
  kAeth,
  kAtomicAckEth,
  kImmDt,
  kIeth,
};
inline constexpr size_t kExtHeaderCount = 9;

// The codec of each extension header.
template <ExtHeader H> struct ExtHeaderCodec;
template <> struct ExtHeaderCodec<ExtHeader::kRdeth> { using type = wire::Rdeth; };
template <> struct ExtHeaderCodec<ExtHeader::kDeth> { using type = wire::Deth; };
template <> struct ExtHeaderCodec<ExtHeader::kFeth> { using type = wire::Feth; };
template <> struct ExtHeaderCodec<ExtHeader::kReth> { using type = wire::Reth; };
template <> struct ExtHeaderCodec<ExtHeader::kAtomicEth> { using type = wire::AtomicEth; };
template <> struct ExtHeaderCodec<ExtHeader::kAeth> { using type = wire::Aeth; };
template <> struct ExtHeaderCodec<ExtHeader::kAtomicAckEth> { using type = wire::AtomicAckEth; };
template <> struct ExtHeaderCodec<ExtHeader::kImmDt> { using type = wire::ImmDt; };
template <> struct ExtHeaderCodec<ExtHeader::kIeth> { using type = wire::Ieth; };
template <ExtHeader H> using ExtHeaderType = typename ExtHeaderCodec<H>::type;

// Calls f(std::integral_constant<ExtHeader, h>{}) for every extension header h, in canonical
// order, so that code can reach each header's codec type at compile time.
template <class F>
constexpr void for_each_ext_header(F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<ExtHeader, static_cast<ExtHeader>(I)>{}), ...);
  }(std::make_index_sequence<kExtHeaderCount>{});
}

// Bytes of one extension header (its codec's kLen).
constexpr size_t ext_header_length(ExtHeader h) {
  size_t len = 0;
  for_each_ext_header([&](auto c) {
    if (decltype(c)::value == h) len = ExtHeaderType<decltype(c)::value>::kLen;
  });
  return len;
}

// The IBA's spelling: "RETH", "AtomicETH", "ImmDt" (the codec's kName).
constexpr std::string_view to_string(ExtHeader h) {
  std::string_view name;
  for_each_ext_header([&](auto c) {
    if (decltype(c)::value == h) name = ExtHeaderType<decltype(c)::value>::kName;
  });
  return name;
}

// A set of extension headers. Its offsets are measured from the start of the BTH.
class HeaderSet {
 public:
  constexpr HeaderSet() = default;
  constexpr HeaderSet(ExtHeader h) : bits_(bit(h)) {}  // NOLINT: implicit, so rows read "kReth | kImmDt"

  constexpr bool has(ExtHeader h) const { return (bits_ & bit(h)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint16_t bits() const { return bits_; }

  // Bytes of all extension headers in the set.
  constexpr size_t length() const {
    size_t len = 0;
    for (size_t i = 0; i < kExtHeaderCount; ++i)
      if (has(static_cast<ExtHeader>(i))) len += ext_header_length(static_cast<ExtHeader>(i));
    return len;
  }
  // Offset of header h from the start of the BTH: the BTH and every header of the set that
  // comes before h in canonical order. REQUIRES: has(h)
  constexpr size_t offset(ExtHeader h) const {
    SOFTIB_ASSERT(has(h));
    size_t at = wire::Bth::kLen;
    for (size_t i = 0; i < static_cast<size_t>(h); ++i)
      if (has(static_cast<ExtHeader>(i))) at += ext_header_length(static_cast<ExtHeader>(i));
    return at;
  }
  // BTH plus every extension header: where the payload starts.
  constexpr size_t header_length() const { return wire::Bth::kLen + length(); }

  friend constexpr HeaderSet operator|(HeaderSet a, HeaderSet b) { return from_bits(unsigned{a.bits_} | b.bits_); }
  // The headers of a that are not in b.
  friend constexpr HeaderSet operator-(HeaderSet a, HeaderSet b) { return from_bits(a.bits_ & ~unsigned{b.bits_}); }
  friend constexpr bool operator==(HeaderSet, HeaderSet) = default;

 private:
  static constexpr HeaderSet from_bits(unsigned bits) {
    HeaderSet s;
    s.bits_ = static_cast<uint16_t>(bits);
    return s;
  }
  static constexpr uint16_t bit(ExtHeader h) { return static_cast<uint16_t>(1u << static_cast<unsigned>(h)); }
  uint16_t bits_ = 0;
};

constexpr HeaderSet operator|(ExtHeader a, ExtHeader b) { return HeaderSet(a) | HeaderSet(b); }

// The lengths the IBA gives each header (IBA 9.3.1 - 9.3.8).
static_assert(ext_header_length(ExtHeader::kRdeth) == 4);
static_assert(ext_header_length(ExtHeader::kDeth) == 8);
static_assert(ext_header_length(ExtHeader::kFeth) == 4);
static_assert(ext_header_length(ExtHeader::kReth) == 16);
static_assert(ext_header_length(ExtHeader::kAtomicEth) == 28);
static_assert(ext_header_length(ExtHeader::kAeth) == 4);
static_assert(ext_header_length(ExtHeader::kAtomicAckEth) == 8);
static_assert(ext_header_length(ExtHeader::kImmDt) == 4);
static_assert(ext_header_length(ExtHeader::kIeth) == 4);
static_assert(to_string(ExtHeader::kAtomicEth) == "AtomicETH" && to_string(ExtHeader::kIeth) == "IETH");
static_assert((ExtHeader::kReth | ExtHeader::kImmDt).offset(ExtHeader::kImmDt) == 12 + 16);
static_assert((ExtHeader::kRdeth | ExtHeader::kDeth | ExtHeader::kReth).offset(ExtHeader::kReth) == 24);

}  // namespace softib::packet
