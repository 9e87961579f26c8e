#include "fabric/link_rate.hpp"

#include <array>
#include <charconv>

namespace softib::fabric {

std::string_view width_name(uint8_t w) {
  switch (w) {
    case width::k1x: return "1x";
    case width::k4x: return "4x";
    case width::k8x: return "8x";
    case width::k12x: return "12x";
    case width::k2x: return "2x";
    default: return "??";
  }
}

std::string_view speed_name(uint8_t s) {
  switch (s) {
    case speed::kSdr: return "SDR";
    case speed::kDdr: return "DDR";
    case speed::kQdr: return "QDR";
    default: return "???";
  }
}

std::string_view ext_speed_name(uint8_t s) {
  switch (s) {
    case ext_speed::kFdr: return "FDR";
    case ext_speed::kEdr: return "EDR";
    case ext_speed::kHdr: return "HDR";
    case ext_speed::kNdr: return "NDR";
    default: return "???";
  }
}

std::string ActiveRate::width_name() const { return std::string(fabric::width_name(width)); }

std::string ActiveRate::speed_name() const {
  if (ext_speed != 0) return std::string(ext_speed_name(ext_speed));
  if (fdr10) return "FDR10";
  return std::string(fabric::speed_name(speed));
}

int ActiveRate::lanes() const {
  switch (width) {
    case width::k1x: return 1;
    case width::k2x: return 2;
    case width::k4x: return 4;
    case width::k8x: return 8;
    case width::k12x: return 12;
    default: return 0;
  }
}

namespace {

template <size_t N>
uint8_t highest(uint8_t common, const std::array<uint8_t, N>& preference) {
  for (uint8_t bit : preference)
    if (common & bit) return bit;
  return 0;
}

}  // namespace

TrainResult train(const LinkCaps& a, const LinkCaps& b) {
  const uint8_t w = highest(a.width_enabled & b.width_enabled,
                            std::array{width::k12x, width::k8x, width::k4x, width::k2x, width::k1x});
  if (w == 0) return {std::nullopt, "no common link width enabled"};
  const uint8_t s = highest(a.speed_enabled & b.speed_enabled,
                            std::array{speed::kQdr, speed::kDdr, speed::kSdr});
  if (s == 0) return {std::nullopt, "no common link speed enabled"};
  ActiveRate r;
  r.width = w;
  r.speed = s;
  r.ext_speed = highest(a.ext_speed_enabled & b.ext_speed_enabled,
                        std::array{ext_speed::kNdr, ext_speed::kHdr, ext_speed::kEdr, ext_speed::kFdr});
  r.fdr10 = r.ext_speed == 0 && a.fdr10_enabled && b.fdr10_enabled;
  return {r, {}};
}

std::optional<LinkCaps> caps_from_annotation(std::string_view token) {
  // "<width>x<speed>", e.g. 4xEDR
  const size_t x = token.find('x');
  if (x == std::string_view::npos || x == 0) return std::nullopt;
  int lanes = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + x, lanes);
  if (ec != std::errc() || end != token.data() + x) return std::nullopt;
  LinkCaps caps;
  switch (lanes) {
    case 1: caps.width_enabled = width::k1x; break;
    case 2: caps.width_enabled = width::k2x; break;
    case 4: caps.width_enabled = width::k1x | width::k4x; break;
    case 8: caps.width_enabled = width::k8x; break;
    case 12: caps.width_enabled = width::k1x | width::k4x | width::k12x; break;
    default: return std::nullopt;
  }
  const std::string_view s = token.substr(x + 1);
  constexpr uint8_t kUpToQdr = speed::kSdr | speed::kDdr | speed::kQdr;
  if (s == "SDR") {
    caps.speed_enabled = speed::kSdr;
  } else if (s == "DDR") {
    caps.speed_enabled = speed::kSdr | speed::kDdr;
  } else if (s == "QDR") {
    caps.speed_enabled = kUpToQdr;
  } else if (s == "FDR10") {
    caps.speed_enabled = kUpToQdr;
    caps.fdr10_enabled = true;
  } else if (s == "FDR" || s == "EDR" || s == "HDR" || s == "NDR") {
    caps.speed_enabled = kUpToQdr;
    caps.fdr10_enabled = true;
    caps.ext_speed_enabled = ext_speed::kFdr;
    if (s != "FDR") caps.ext_speed_enabled |= ext_speed::kEdr;
    if (s == "HDR" || s == "NDR") caps.ext_speed_enabled |= ext_speed::kHdr;
    if (s == "NDR") caps.ext_speed_enabled |= ext_speed::kNdr;
  } else {
    return std::nullopt;
  }
  return caps;
}

}  // namespace softib::fabric
