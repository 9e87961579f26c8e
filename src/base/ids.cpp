#include "base/ids.hpp"

#include <arpa/inet.h>

#include <fmt/format.h>

#include "base/gid.hpp"

namespace softib {

std::string Lid::to_string() const { return fmt::format("{}", v_); }
std::string Qpn::to_string() const { return fmt::format("0x{:06x}", v_); }
std::string Psn::to_string() const { return fmt::format("0x{:06x}", v_); }
std::string Guid::to_string() const { return fmt::format("0x{:016x}", v_); }
std::string PKey::to_string() const { return fmt::format("0x{:04x}", v_); }
std::string QKey::to_string() const { return fmt::format("0x{:08x}", v_); }
std::string LKey::to_string() const { return fmt::format("0x{:08x}", v_); }
std::string RKey::to_string() const { return fmt::format("0x{:08x}", v_); }

std::string Gid::to_string() const {
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, raw_.data(), text, sizeof text) == nullptr) return "?";
  return text;
}

std::optional<Gid> Gid::parse(std::string_view text) {
  if (text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  char buf[INET6_ADDRSTRLEN] = {};
  text.copy(buf, text.size());
  std::array<uint8_t, 16> raw{};
  if (inet_pton(AF_INET6, buf, raw.data()) != 1) return std::nullopt;
  return Gid(raw);
}

}  // namespace softib
