// Performance management MAD, IBA 16.1.1 (MgmtClass PerfMgt, ClassVersion 1, 256 bytes): a
// GMP with the common header, 40 reserved bytes and 192 bytes of attribute data.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                 common MAD header (mad_header.hpp)            |  0..23
//  +---------------------------------------------------------------+
//  |                       Reserved (40 bytes)                     | 24..63
//  +---------------------------------------------------------------+
//  |                      PMA Data (192 bytes)                     | 64..255
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "mad/codec.hpp"
#include "mad/mad_header.hpp"
#include "mad/smp.hpp"

namespace softib::mad {

inline constexpr size_t kPmaDataSize = 192;

struct PmaMad {
  MadHeader header{kBaseVersion, MgmtClass::kPerfMgt, 1, Method::kGet, {}, 0, 0, 0, 0};
  std::array<uint8_t, kPmaDataSize> data{};

  friend bool operator==(const PmaMad&, const PmaMad&) = default;
};

template <>
struct Layout<PmaMad> {
  using T = PmaMad;
  static constexpr std::string_view kName = "PMA MAD";
  static constexpr std::array kRows = concat(
      class_header_rows<&T::header>(Legal::exactly(0x04), Legal::exactly(1)),
      std::array{
          reserved<T>(192, 320),
          row("PMAData", 512, 1536, "GsData", Printer::kArray, member<&T::data>()),
      });
};
static_assert(wire_size<PmaMad> == kMadSize);

// A PerfMgt MAD carrying `attribute` (a PMA attribute layout).
template <HasLayout A>
PmaMad make_pma(Method method, const A& attribute, uint32_t modifier = 0,
                uint64_t transaction_id = 0) {
  static_assert(wire_size<A> <= kPmaDataSize);
  PmaMad mad;
  mad.header.method = method;
  mad.header.attribute_id = attribute_id_of<A>();
  mad.header.attribute_modifier = modifier;
  mad.header.transaction_id = transaction_id;
  encode(attribute, wire::MutByteSpan(mad.data));
  return mad;
}

}  // namespace softib::mad
