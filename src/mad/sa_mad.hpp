// Subnet administration MAD, IBA 15.2.1.1 (MgmtClass SubnAdm, ClassVersion 2, 256 bytes):
// the common header, the RMPP header (GetTable responses are multi-segment transfers), and
// the SA header: SM_Key, AttributeOffset (the size of one record in 8-byte words) and
// ComponentMask (which record fields a query matches on, IBA 15.2.4.1).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                 common MAD header (mad_header.hpp)            |  0..23
//  +---------------------------------------------------------------+
//  |                   RMPP header (rmpp_header.hpp)               | 24..35
//  +---------------------------------------------------------------+
//  |                        SM_Key (8 bytes)                       | 36
//  +-------------------------------+-------------------------------+
//  |        AttributeOffset        |           Reserved            | 44
//  +-------------------------------+-------------------------------+
//  |                    ComponentMask (8 bytes)                    | 48
//  +---------------------------------------------------------------+
//  |                      SA Data (200 bytes)                      | 56..255
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "mad/codec.hpp"
#include "mad/mad_header.hpp"
#include "mad/rmpp.hpp"
#include "mad/rmpp_header.hpp"

namespace softib::mad {

inline constexpr size_t kSaDataSize = 200;
inline constexpr uint8_t kSaClassVersion = 2;
// Bytes after the RMPP header that every SA segment repeats: SM_Key..ComponentMask.
inline constexpr RmppLayout kSaRmppLayout{20, kSaDataSize};

struct SaMad {
  MadHeader header{kBaseVersion, MgmtClass::kSubnAdm, kSaClassVersion, Method::kGet, {}, 0, 0, 0, 0};
  RmppHeader rmpp;
  uint64_t sm_key = 0;
  uint16_t attribute_offset = 0;  // in 8-byte words
  uint64_t component_mask = 0;
  std::array<uint8_t, kSaDataSize> data{};

  friend bool operator==(const SaMad&, const SaMad&) = default;
};

template <>
struct Layout<SaMad> {
  using T = SaMad;
  static constexpr std::string_view kName = "SA MAD";
  static constexpr std::array kRows = concat(
      class_header_rows<&T::header>(Legal::exactly(0x03), Legal::exactly(kSaClassVersion)),
      embed<&T::rmpp, Layout<RmppHeader>::kRows>(192),
      std::array{
          row("SM_Key", 288, 64, "SaSMkey", Printer::kHex, member<&T::sm_key>()),
          row("AttributeOffset", 352, 16, "SaAttrOffs", Printer::kUint,
              member<&T::attribute_offset>()),
          reserved<T>(368, 16),
          row("ComponentMask", 384, 64, "SaCompMask", Printer::kHex, member<&T::component_mask>()),
          row("SAData", 448, 1600, "SaData", Printer::kArray, member<&T::data>()),
      });
  static std::optional<wire::ParseError> check(const SaMad& m) {
    return check_embedded_rmpp<SaMad, &SaMad::rmpp>(m);
  }
};
static_assert(wire_size<SaMad> == kMadSize);

// AttributeOffset for records of `record_bytes`: records are padded to 8 bytes (IBA 15.2.1.1).
constexpr uint16_t attribute_offset_for(size_t record_bytes) {
  return static_cast<uint16_t>((record_bytes + 7) / 8);
}

// The MADs of a multi-segment SA transfer carrying `data` (records, each padded to
// AttributeOffset * 8 bytes): copies of `first` (header, SM_Key, AttributeOffset,
// ComponentMask) with the RMPP headers of rmpp_split and 200 data bytes each.
std::vector<SaMad> sa_segments(const SaMad& first, wire::ByteSpan data,
                               uint8_t resp_time = kNoRespTime);

// The data of a complete SA transfer (rmpp_reassemble over the SA layout).
wire::Parsed<std::vector<uint8_t>> sa_reassemble(std::span<const SaMad> segments);

}  // namespace softib::mad
