// Link width and speed as PortInfo encodes them (IBA 14.2.5.6), and the rule that a link
// trains to the highest width and speed both ends enable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace softib::fabric {

// LinkWidth bits (LinkWidthEnabled/Supported/Active).
namespace width {
inline constexpr uint8_t k1x = 1, k4x = 2, k8x = 4, k12x = 8, k2x = 16;
inline constexpr uint8_t kAll = k1x | k2x | k4x | k8x | k12x;
}  // namespace width

// LinkSpeed bits (LinkSpeedEnabled/Supported/Active).
namespace speed {
inline constexpr uint8_t kSdr = 1, kDdr = 2, kQdr = 4;
inline constexpr uint8_t kAll = kSdr | kDdr | kQdr;
}  // namespace speed

// LinkSpeedExt bits (LinkSpeedExtEnabled/Supported/Active), valid when the port's
// CapabilityMask has IsExtendedSpeedsSupported.
namespace ext_speed {
inline constexpr uint8_t kFdr = 1, kEdr = 2, kHdr = 4, kNdr = 8;
inline constexpr uint8_t kAll = kFdr | kEdr | kHdr | kNdr;
}  // namespace ext_speed

// What one port of a cable enables. fdr10 is Mellanox's extended PortInfo speed.
struct LinkCaps {
  uint8_t width_enabled = width::k4x;  // ibsim's default: 4x only
  uint8_t speed_enabled = speed::kSdr;
  uint8_t ext_speed_enabled = 0;
  bool fdr10_enabled = false;

  friend bool operator==(const LinkCaps&, const LinkCaps&) = default;
};

// The width and speed a trained link runs at.
struct ActiveRate {
  uint8_t width = 0;      // one LinkWidth bit
  uint8_t speed = 0;      // one LinkSpeed bit
  uint8_t ext_speed = 0;  // one LinkSpeedExt bit, or 0
  bool fdr10 = false;

  // ibnetdiscover's spelling: "4x", "12x"; "EDR", "QDR", "FDR10".
  std::string width_name() const;
  std::string speed_name() const;
  int lanes() const;

  friend bool operator==(const ActiveRate&, const ActiveRate&) = default;
};

// Highest common width and speed of two ends, IBA 5.6: nullopt and a reason when the ends
// share no width or no speed (the link then stays down).
struct TrainResult {
  std::optional<ActiveRate> rate;
  std::string_view reason;  // set when !rate
};
TrainResult train(const LinkCaps& a, const LinkCaps& b);

// Parses the width/speed token of an ibnetdiscover annotation ("4xEDR", "12xQDR", "1xSDR",
// "4xFDR10") into the enabled sets ibsim derives from it (net-format.md §2.3).
std::optional<LinkCaps> caps_from_annotation(std::string_view token);

// Strings for one active width/speed bit, as ibnetdiscover prints them ("??"/"???" if not one
// known bit).
std::string_view width_name(uint8_t one_width_bit);
std::string_view speed_name(uint8_t one_speed_bit);
std::string_view ext_speed_name(uint8_t one_ext_speed_bit);

}  // namespace softib::fabric
