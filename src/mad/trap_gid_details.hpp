// Notice DataDetails of traps 64 (GID now in service) and 65 (GID out of service), IBA
// 14.2.5.1 (54 bytes, at Notice byte 10).
//
//  +---------------------------------------------------------------+
//  |                       Reserved (6 bytes)                      |  0
//  +---------------------------------------------------------------+
//  |                       GIDADDR (16 bytes)                      |  6
//  +---------------------------------------------------------------+
//  |                      Reserved (32 bytes)                      | 22..53
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "mad/codec.hpp"
#include "mad/notice.hpp"
#include "mad/row.hpp"

namespace softib::mad {

inline constexpr uint16_t kTrapGidInService = 64;
inline constexpr uint16_t kTrapGidOutOfService = 65;

struct TrapGidDetails {
  Gid gid;
  friend bool operator==(const TrapGidDetails&, const TrapGidDetails&) = default;
};

template <>
struct Layout<TrapGidDetails> {
  using T = TrapGidDetails;
  static constexpr std::string_view kName = "Trap64/65";
  static constexpr std::array kRows{
      reserved<T>(0, 48),
      row("GIDADDR", 48, 128, "GIDADDR", Printer::kArray, member<&T::gid>()),
      reserved<T>(176, 256),
  };
};
static_assert(wire_size<TrapGidDetails> == Notice::kDataDetailsSize);

}  // namespace softib::mad
