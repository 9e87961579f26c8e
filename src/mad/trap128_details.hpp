// Notice DataDetails of trap 128 (link state change on a switch port), IBA 14.2.5.1 (54
// bytes, at Notice byte 10).
//
//   0               1               2               3
//  +-------------------------------+-------------------------------+
//  |            LIDADDR            |                               |  0
//  +-------------------------------+                               +
//  |                      Reserved (52 bytes)                      | ..53
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/codec.hpp"
#include "mad/notice.hpp"
#include "mad/row.hpp"

namespace softib::mad {

inline constexpr uint16_t kTrapLinkStateChange = 128;

struct Trap128Details {
  Lid lid;  // the switch whose port changed state
  friend bool operator==(const Trap128Details&, const Trap128Details&) = default;
};

template <>
struct Layout<Trap128Details> {
  using T = Trap128Details;
  static constexpr std::string_view kName = "Trap128";
  static constexpr std::array kRows{
      row("LIDADDR", 0, 16, "NoticeDataLID", Printer::kUint, member<&T::lid>()),
      reserved<T>(16, 416),
  };
};
static_assert(wire_size<Trap128Details> == Notice::kDataDetailsSize);

}  // namespace softib::mad
