// NodeDescription, IBA 14.2.5.2 (64 bytes): NodeString, UTF-8 text padded with NULs (not
// necessarily NUL terminated when all 64 bytes are used).
//
//   0               1               2               3
//  +---------------------------------------------------------------+
//  |                    NodeString (64 bytes)                      |  0..63
//  +---------------------------------------------------------------+
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct NodeDescription {
  static constexpr size_t kSize = 64;
  std::array<uint8_t, kSize> node_string{};

  // The text cut to 64 bytes and NUL padded.
  static NodeDescription from(std::string_view text) {
    NodeDescription d;
    for (size_t i = 0; i < text.size() && i < kSize; ++i) d.node_string[i] = static_cast<uint8_t>(text[i]);
    return d;
  }
  // The text up to the first NUL.
  std::string text() const {
    std::string s;
    for (uint8_t b : node_string) {
      if (b == 0) break;
      s += static_cast<char>(b);
    }
    return s;
  }

  friend bool operator==(const NodeDescription&, const NodeDescription&) = default;
};

template <>
struct Layout<NodeDescription> {
  using T = NodeDescription;
  static constexpr std::string_view kName = "NodeDescription";
  static constexpr SmpAttr kAttributeId = SmpAttr::kNodeDescription;
  static constexpr DumpStyle kDumpStyle = DumpStyle::kText;
  static constexpr std::array kRows{
      row("NodeString", 0, 512, "NodeDesc", Printer::kString, member<&T::node_string>()),
  };
};
static_assert(wire_size<NodeDescription> == 64);

}  // namespace softib::mad
