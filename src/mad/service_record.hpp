// ServiceRecord, IBA 15.2.5.14 (176 bytes): a service registered with the SA, with 64 bytes
// of service data that is one SA component per element (ServiceData8.1 .. ServiceData64.2).
//
//   0               1               2               3
//  +---------------------------------------------------------------+
//  |                      ServiceID (8 bytes)                      |  0
//  +---------------------------------------------------------------+
//  |                     ServiceGID (16 bytes)                     |  8
//  +-------------------------------+-------------------------------+
//  |         ServiceP_Key          |           Reserved            | 24
//  +-------------------------------+-------------------------------+
//  |                         ServiceLease                          | 28
//  +---------------------------------------------------------------+
//  |                     ServiceKey (16 bytes)                     | 32
//  +---------------------------------------------------------------+
//  |                    ServiceName (64 bytes)                     | 48
//  +---------------------------------------------------------------+
//  |          ServiceData8.1 .. ServiceData8.16 (16 x 1 byte)      | 112
//  |          ServiceData16.1 .. ServiceData16.8 (8 x 2 bytes)     | 128
//  |          ServiceData32.1 .. ServiceData32.4 (4 x 4 bytes)     | 144
//  |          ServiceData64.1 .. ServiceData64.2 (2 x 8 bytes)     | 160..175
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct ServiceRecord {
  uint64_t service_id = 0;
  Gid service_gid;
  PKey service_pkey;
  uint32_t service_lease = 0;
  std::array<uint8_t, 16> service_key{};
  std::array<uint8_t, 64> service_name{};  // UTF-8, NUL padded
  std::array<uint8_t, 16> service_data8{};
  std::array<uint16_t, 8> service_data16{};
  std::array<uint32_t, 4> service_data32{};
  std::array<uint64_t, 2> service_data64{};

  friend bool operator==(const ServiceRecord&, const ServiceRecord&) = default;
};

namespace detail {
inline constexpr auto kServiceData8Names = indexed_names<16>("ServiceData8.", "", 1);
inline constexpr auto kServiceData16Names = indexed_names<8>("ServiceData16.", "", 1);
inline constexpr auto kServiceData32Names = indexed_names<4>("ServiceData32.", "", 1);
inline constexpr auto kServiceData64Names = indexed_names<2>("ServiceData64.", "", 1);
}  // namespace detail

template <>
struct Layout<ServiceRecord> {
  using T = ServiceRecord;
  using P = Printer;
  static constexpr std::string_view kName = "ServiceRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kServiceRecord;
  static constexpr std::array kRows = concat(
      std::array{
          row("ServiceID", 0, 64, "ServRecID", P::kHex, member<&T::service_id>()),
          row("ServiceGID", 64, 128, "ServRecGid", P::kArray, member<&T::service_gid>()),
          row("ServiceP_Key", 192, 16, "ServRecPkey", P::kHex, member<&T::service_pkey>()),
          reserved<T>(208, 16),
          row("ServiceLease", 224, 32, "ServRecLease", P::kHex, member<&T::service_lease>()),
          row("ServiceKey", 256, 128, "ServRecKey", P::kArray, member<&T::service_key>()),
          row("ServiceName", 384, 512, "ServRecName", P::kString, member<&T::service_name>()),
      },
      repeat<&T::service_data8>(detail::kServiceData8Names, detail::kServiceData8Names, 896, 8, 8,
                                P::kHex),
      repeat<&T::service_data16>(detail::kServiceData16Names, detail::kServiceData16Names, 1024,
                                 16, 16, P::kHex),
      repeat<&T::service_data32>(detail::kServiceData32Names, detail::kServiceData32Names, 1152,
                                 32, 32, P::kHex),
      repeat<&T::service_data64>(detail::kServiceData64Names, detail::kServiceData64Names, 1280,
                                 64, 64, P::kHex));
};
static_assert(wire_size<ServiceRecord> == 176);

}  // namespace softib::mad
