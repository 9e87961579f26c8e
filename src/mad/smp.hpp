// LID-routed subnet management packet, IBA 14.2.1.1 (MgmtClass SubnLid, 256 bytes).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                 common MAD header (mad_header.hpp)            |  0..23
//  +---------------------------------------------------------------+
//  |                             M_Key                             | 24..31
//  +---------------------------------------------------------------+
//  |                       Reserved (32 bytes)                     | 32..63
//  +---------------------------------------------------------------+
//  |                       SMP Data (64 bytes)                     | 64..127
//  +---------------------------------------------------------------+
//  |                       Reserved (128 bytes)                    | 128..255
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "mad/codec.hpp"
#include "mad/mad_header.hpp"

namespace softib::mad {

inline constexpr size_t kSmpDataSize = 64;

struct Smp {
  MadHeader header{kBaseVersion, MgmtClass::kSubnLid, 1, Method::kGet, {}, 0, 0, 0, 0};
  uint64_t m_key = 0;
  std::array<uint8_t, kSmpDataSize> data{};

  friend bool operator==(const Smp&, const Smp&) = default;
};

template <>
struct Layout<Smp> {
  using T = Smp;
  static constexpr std::string_view kName = "SMP";
  static constexpr std::array kRows = concat(
      class_header_rows<&T::header>(Legal::exactly(0x01), Legal::exactly(1)),
      std::array{
          row("M_Key", 192, 64, "MadMkey", Printer::kHex, member<&T::m_key>()),
          reserved<T>(256, 256),
          row("SMPData", 512, 512, "SmpData", Printer::kArray, member<&T::data>()),
          reserved<T>(1024, 1024),
      });
};
static_assert(wire_size<Smp> == kMadSize);

// The attribute ID a layout declares (Layout<A>::kAttributeId) as the header carries it.
template <class A>
constexpr uint16_t attribute_id_of() {
  return static_cast<uint16_t>(Layout<A>::kAttributeId);
}

// A LID-routed SMP carrying `attribute` (an SMP attribute layout).
template <HasLayout A>
Smp make_smp(Method method, const A& attribute, uint32_t modifier = 0, uint64_t transaction_id = 0) {
  static_assert(wire_size<A> <= kSmpDataSize);
  Smp smp;
  smp.header.method = method;
  smp.header.attribute_id = attribute_id_of<A>();
  smp.header.attribute_modifier = modifier;
  smp.header.transaction_id = transaction_id;
  encode(attribute, wire::MutByteSpan(smp.data));
  return smp;
}

}  // namespace softib::mad
