#include "mad/printer.hpp"

#include <array>

#include <fmt/format.h>

#include "base/assert.hpp"

namespace softib::mad {
namespace {

// A named bit of a mask, in the order the dump lists them.
struct NamedBit {
  uint32_t bit;
  std::string_view name;
};

// PortInfo:CapabilityMask, IBA 14.2.5.6 (spelled as libibmad prints them).
constexpr std::array kCapMaskBits{
    NamedBit{1, "IsSM"},
    NamedBit{2, "IsNoticeSupported"},
    NamedBit{3, "IsTrapSupported"},
    NamedBit{4, "IsOptionalIPDSupported"},
    NamedBit{5, "IsAutomaticMigrationSupported"},
    NamedBit{6, "IsSLMappingSupported"},
    NamedBit{7, "IsMKeyNVRAM"},
    NamedBit{8, "IsPKeyNVRAM"},
    NamedBit{9, "IsLedInfoSupported"},
    NamedBit{10, "IsSMdisabled"},
    NamedBit{11, "IsSystemImageGUIDsupported"},
    NamedBit{12, "IsPkeySwitchExternalPortTrapSupported"},
    NamedBit{14, "IsExtendedSpeedsSupported"},
    NamedBit{15, "IsCapabilityMask2Supported"},
    NamedBit{16, "IsCommunicatonManagementSupported"},  // sic: libibmad's spelling
    NamedBit{17, "IsSNMPTunnelingSupported"},
    NamedBit{18, "IsReinitSupported"},
    NamedBit{19, "IsDeviceManagementSupported"},
    NamedBit{20, "IsVendorClassSupported"},
    NamedBit{21, "IsDRNoticeSupported"},
    NamedBit{22, "IsCapabilityMaskNoticeSupported"},
    NamedBit{23, "IsBootManagementSupported"},
    NamedBit{24, "IsLinkRoundTripLatencySupported"},
    NamedBit{25, "IsClientRegistrationSupported"},
    NamedBit{26, "IsOtherLocalChangesNoticeSupported"},
    NamedBit{27, "IsLinkSpeedWidthPairsTableSupported"},
    NamedBit{28, "IsVendorSpecificMadsTableSupported"},
    NamedBit{29, "IsMcastPkeyTrapSuppressionSupported"},
    NamedBit{30, "IsMulticastFDBTopSupported"},
    NamedBit{31, "IsHierarchyInfoSupported"},
};

// PortInfo:CapabilityMask2, IBA 14.2.5.6.
constexpr std::array kCapMask2Bits{
    NamedBit{0, "IsSetNodeDescriptionSupported"},
    NamedBit{1, "IsPortInfoExtendedSupported"},
    NamedBit{2, "IsVirtualizationSupported"},
    NamedBit{3, "IsSwitchPortStateTableSupported"},
    NamedBit{4, "IsLinkWidth2xSupported"},
    NamedBit{5, "IsLinkSpeedHDRSupported"},
    NamedBit{6, "IsMKeyProtectBitsExtSupported"},
    NamedBit{7, "IsEnhancedTrap128Supported"},
    NamedBit{8, "IsPartitionTopSupported"},
    NamedBit{9, "IsEnhancedQoSArbiterSupported"},
    NamedBit{10, "IsLinkSpeedNDRSupported"},
};

template <size_t N>
std::string mask_lines(uint64_t v, const std::array<NamedBit, N>& bits) {
  std::string s = fmt::format("{:#x}", v);
  for (const NamedBit& b : bits) {
    if ((v >> b.bit) & 1) {
      s += "\n\t\t\t\t";
      s += b.name;
    }
  }
  return s;
}

// A value from a short list of names, or the fallback with the number in it.
std::string pick(uint64_t v, std::initializer_list<std::pair<uint64_t, std::string_view>> names,
                 std::string_view fallback_fmt) {
  for (const auto& [value, name] : names)
    if (value == v) return std::string(name);
  return fmt::format(fmt::runtime(fallback_fmt), v);
}

// LinkWidthEnabled/Supported: the widths present, joined by " or " (IBA 14.2.5.6).
std::string width_set(uint64_t w) {
  static constexpr std::array<std::pair<uint64_t, std::string_view>, 5> kWidths{
      {{0x1, "1X"}, {0x2, "4X"}, {0x4, "8X"}, {0x8, "12X"}, {0x10, "2X"}}};
  std::string s;
  for (const auto& [bit, name] : kWidths)
    if (w & bit) s += fmt::format("{} or ", name);
  if (w == 0 || (w >> 5) != 0) return s + fmt::format("undefined ({})", w);
  s.resize(s.size() - 4);
  return s;
}

std::string speed_set(uint64_t sp) {
  static constexpr std::array<std::pair<uint64_t, std::string_view>, 3> kSpeeds{
      {{0x1, "2.5 Gbps"}, {0x2, "5.0 Gbps"}, {0x4, "10.0 Gbps"}}};
  std::string s;
  for (const auto& [bit, name] : kSpeeds)
    if (sp & bit) s += fmt::format("{} or ", name);
  if (sp == 0 || (sp >> 3) != 0) {
    s += fmt::format("undefined ({})", sp);
  } else {
    s.resize(s.size() - 4);
  }
  // IBA 1.0 defined only SDR: any other set is an extension.
  const bool iba_1_0 = sp == 1 || sp == 3 || sp == 5 || sp == 7;
  if (!iba_1_0 && (sp >> 3) == 0) s += " (IBA extension)";
  return s;
}

std::string speed_ext_set(uint64_t sp) {
  static constexpr std::array<std::pair<uint64_t, std::string_view>, 4> kSpeeds{
      {{0x1, "14.0625 Gbps"}, {0x2, "25.78125 Gbps"}, {0x4, "53.125 Gbps"}, {0x8, "106.25 Gbps"}}};
  if (sp == 0) return "0";
  std::string s;
  for (const auto& [bit, name] : kSpeeds)
    if (sp & bit) s += fmt::format("{} or ", name);
  if ((sp >> 4) != 0) return s + fmt::format("undefined ({})", sp);
  s.resize(s.size() - 4);
  return s;
}

uint32_t byte_width(uint32_t width_bits) { return (width_bits + 7) / 8; }

}  // namespace

std::string format_integer(Printer printer, uint32_t width_bits, uint64_t v) {
  switch (printer) {
    case Printer::kUint:
      return fmt::format("{}", v);
    case Printer::kHex:
      return fmt::format("0x{:0{}x}", v, 2 * byte_width(width_bits));
    case Printer::kNodeType:
      return pick(v, {{1, "Channel Adapter"}, {2, "Switch"}, {3, "Router"}}, "?({})?");
    case Printer::kLinkWidth:
      return pick(v, {{1, "1X"}, {2, "4X"}, {4, "8X"}, {8, "12X"}, {16, "2X"}}, "undefined ({})");
    case Printer::kLinkWidthSupported: {
      std::string s = width_set(v);
      const bool iba_1_0 = v == 1 || v == 3 || v == 7 || v == 11 || v == 15 || v == 17 ||
                           v == 19 || v == 23 || v == 27 || v == 31;
      if (!iba_1_0 && (v >> 5) == 0) s += " (IBA extension)";
      return s;
    }
    case Printer::kLinkWidthEnabled:
      return width_set(v);
    case Printer::kLinkSpeed:
      return pick(v, {{0, "Extended speed"}, {1, "2.5 Gbps"}, {2, "5.0 Gbps"}, {4, "10.0 Gbps"}},
                  "undefined ({})");
    case Printer::kLinkSpeedSupported:
    case Printer::kLinkSpeedEnabled:
      return speed_set(v);
    case Printer::kLinkSpeedExt:
      return pick(v,
                  {{0, "No Extended Speed"},
                   {1, "14.0625 Gbps"},
                   {2, "25.78125 Gbps"},
                   {4, "53.125 Gbps"},
                   {8, "106.25 Gbps"}},
                  "undefined ({})");
    case Printer::kLinkSpeedExtSupported:
      return speed_ext_set(v);
    case Printer::kLinkSpeedExtEnabled:
      return v == 30 ? std::string("Extended link speeds disabled") : speed_ext_set(v);
    case Printer::kPortState:
      return pick(v, {{0, "NoChange"}, {1, "Down"}, {2, "Initialize"}, {3, "Armed"}, {4, "Active"}},
                  "?({})");
    case Printer::kPhysPortState:
      return pick(v,
                  {{0, "NoChange"},
                   {1, "Sleep"},
                   {2, "Polling"},
                   {3, "Disabled"},
                   {4, "PortConfigurationTraining"},
                   {5, "LinkUp"},
                   {6, "LinkErrorRecovery"},
                   {7, "PhyTest"}},
                  "?({})");
    case Printer::kLinkDownDefState:
      return pick(v, {{0, "NoChange"}, {1, "Sleep"}, {2, "Polling"}}, "?({})");
    case Printer::kMtu:
      return pick(v, {{1, "256"}, {2, "512"}, {3, "1024"}, {4, "2048"}, {5, "4096"}}, "?({})");
    case Printer::kVlCap:
      return pick(v, {{1, "VL0"}, {2, "VL0-1"}, {3, "VL0-3"}, {4, "VL0-7"}, {5, "VL0-14"}}, "?({})");
    case Printer::kOperVls:
      return pick(v,
                  {{0, "No change"},
                   {1, "VL0"},
                   {2, "VL0-1"},
                   {3, "VL0-3"},
                   {4, "VL0-7"},
                   {5, "VL0-14"}},
                  "?({})");
    case Printer::kPortCapMask:
      return mask_lines(v, kCapMaskBits);
    case Printer::kPortCapMask2:
      return mask_lines(v, kCapMask2Bits);
    case Printer::kNone:
    case Printer::kArray:
    case Printer::kString:
      break;
  }
  SOFTIB_ASSERT_MSG(false, "format_integer: not an integer printer");
  return {};
}

std::string format_bytes(Printer printer, wire::ByteSpan bytes) {
  std::string s;
  switch (printer) {
    case Printer::kArray:
      for (uint8_t b : bytes) s += fmt::format("{:02x}", b);
      return s;
    case Printer::kString: {
      // libibmad: snprintf(buf, valsz, "'%s'", val), so the quoted text is cut to valsz - 1.
      s += '\'';
      for (uint8_t b : bytes) {
        if (b == 0) break;
        s += static_cast<char>(b);
      }
      s += '\'';
      if (!bytes.empty() && s.size() > bytes.size() - 1) s.resize(bytes.size() - 1);
      return s;
    }
    default:
      break;
  }
  SOFTIB_ASSERT_MSG(false, "format_bytes: not a byte printer");
  return s;
}

void append_dump_line(std::string& out, std::string_view label, std::string_view value) {
  out += label;
  out += ':';
  if (label.size() < 32) out.append(32 - label.size(), '.');
  out += value;
  out += '\n';
}

}  // namespace softib::mad
