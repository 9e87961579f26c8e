// Vendor-specific MAD of class range 2 (0x30-0x4F, IBA 13.4.4): common header, RMPP header,
// one reserved byte, the vendor's 24-bit OUI and 216 data bytes. ibping uses class 0x32
// with the OpenIB OUI 0x001405 (libibmad IB_VENDOR_OPENIB_PING_CLASS, IB_VEND2_OUI_F,
// IB_VEND2_DATA_F).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                 common MAD header (mad_header.hpp)            |  0..23
//  +---------------------------------------------------------------+
//  |                   RMPP header (rmpp_header.hpp)               | 24..35
//  +---------------+-----------------------------------------------+
//  |   Reserved    |                      OUI                      | 36
//  +---------------+-----------------------------------------------+
//  |                     Vendor Data (216 bytes)                   | 40..255
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "mad/codec.hpp"
#include "mad/mad_header.hpp"
#include "mad/rmpp.hpp"
#include "mad/rmpp_header.hpp"

namespace softib::mad {

inline constexpr size_t kVendorDataSize = 216;
// Bytes after the RMPP header every segment repeats: the reserved byte and the OUI.
inline constexpr RmppLayout kVendorRmppLayout{4, kVendorDataSize};

struct VendorMad {
  MadHeader header{kBaseVersion, static_cast<MgmtClass>(kOpenIbPingClass), 1, Method::kGet, {}, 0, 0, 0, 0};
  RmppHeader rmpp;
  uint32_t oui = kOpenIbOui;  // 24 bits
  std::array<uint8_t, kVendorDataSize> data{};

  friend bool operator==(const VendorMad&, const VendorMad&) = default;
};

template <>
struct Layout<VendorMad> {
  using T = VendorMad;
  static constexpr std::string_view kName = "Vendor MAD";
  static constexpr std::array kRows = concat(
      class_header_rows<&T::header>(Legal{kVendorRange2First, kVendorRange2Last}),
      embed<&T::rmpp, Layout<RmppHeader>::kRows>(192),
      std::array{
          reserved<T>(288, 8),
          row("OUI", 296, 24, "OUI", Printer::kHex, member<&T::oui>()),
          row("VendorData", 320, 1728, "Vendor2Data", Printer::kArray, member<&T::data>()),
      });
  static std::optional<wire::ParseError> check(const VendorMad& m) {
    return check_embedded_rmpp<VendorMad, &VendorMad::rmpp>(m);
  }
};
static_assert(wire_size<VendorMad> == kMadSize);

}  // namespace softib::mad
