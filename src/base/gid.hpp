// Global Identifier, IBA 4.1.1: a 128-bit IPv6-format address. A port's default GID is the
// subnet prefix followed by its port GUID; RoCE v2 GIDs are IPv4-mapped (::ffff:a.b.c.d) or
// IPv6 addresses.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/ids.hpp"

namespace softib {

class Gid {
 public:
  static constexpr uint64_t kDefaultSubnetPrefix = 0xFE80000000000000ULL;

  constexpr Gid() = default;
  constexpr explicit Gid(const std::array<uint8_t, 16>& raw) : raw_(raw) {}
  constexpr Gid(uint64_t subnet_prefix, Guid interface_id) {
    for (int i = 0; i < 8; ++i) {
      raw_[static_cast<size_t>(i)] = static_cast<uint8_t>(subnet_prefix >> (56 - 8 * i));
      raw_[static_cast<size_t>(8 + i)] = static_cast<uint8_t>(interface_id.value() >> (56 - 8 * i));
    }
  }
  // ::ffff:a.b.c.d for an IPv4 address given in host order.
  static constexpr Gid from_ipv4(uint32_t addr) {
    std::array<uint8_t, 16> raw{};
    raw[10] = 0xFF;
    raw[11] = 0xFF;
    for (int i = 0; i < 4; ++i) raw[static_cast<size_t>(12 + i)] = static_cast<uint8_t>(addr >> (24 - 8 * i));
    return Gid(raw);
  }
  // Parses the IPv6 text form ("fe80::2:c9ff:fe00:2", "::ffff:127.0.0.1").
  static std::optional<Gid> parse(std::string_view text);

  constexpr const std::array<uint8_t, 16>& raw() const { return raw_; }
  constexpr uint64_t subnet_prefix() const { return load64(0); }
  constexpr Guid interface_id() const { return Guid(load64(8)); }
  constexpr bool is_multicast() const { return raw_[0] == 0xFF; }
  constexpr bool is_ipv4_mapped() const {
    for (size_t i = 0; i < 10; ++i)
      if (raw_[i] != 0) return false;
    return raw_[10] == 0xFF && raw_[11] == 0xFF;
  }
  // REQUIRES: is_ipv4_mapped()
  constexpr uint32_t ipv4() const {
    return static_cast<uint32_t>(raw_[12]) << 24 | static_cast<uint32_t>(raw_[13]) << 16 |
           static_cast<uint32_t>(raw_[14]) << 8 | raw_[15];
  }
  constexpr bool is_zero() const { return raw_ == std::array<uint8_t, 16>{}; }

  std::string to_string() const;  // IPv6 text form

  friend constexpr bool operator==(const Gid&, const Gid&) = default;
  friend constexpr auto operator<=>(const Gid&, const Gid&) = default;

 private:
  constexpr uint64_t load64(size_t at) const {
    uint64_t v = 0;
    for (size_t i = 0; i < 8; ++i) v = v << 8 | raw_[at + i];
    return v;
  }
  std::array<uint8_t, 16> raw_{};
};

}  // namespace softib

template <>
struct std::hash<softib::Gid> {
  size_t operator()(const softib::Gid& g) const noexcept {
    return std::hash<uint64_t>{}(g.subnet_prefix() * 0x9E3779B97F4A7C15ULL ^ g.interface_id().value());
  }
};
