// fmt support for every softib type with a to_string() member, so that
// fmt::format("{} {}", lid, qpn) prints "7 0x000011".
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace softib {

template <class T>
concept HasToString = requires(const T& t) {
  { t.to_string() } -> std::convertible_to<std::string>;
};

}  // namespace softib

template <softib::HasToString T>
struct fmt::formatter<T, char> : fmt::formatter<std::string_view, char> {
  template <class Ctx>
  auto format(const T& value, Ctx& ctx) const {
    return fmt::formatter<std::string_view, char>::format(value.to_string(), ctx);
  }
};
