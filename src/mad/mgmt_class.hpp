// Management classes, IBA 13.4.4 (and the CongestionMgt class of IBA annex A10).
// Vendor classes are ranges; libibmad and the kernel treat them alike, so they are predicates
// rather than enumerators.
#pragma once

#include <cstdint>
#include <string>

namespace softib::mad {

enum class MgmtClass : uint8_t {
  kSubnLid = 0x01,       // subnet management, LID routed (IBA 14.2.1.1)
  kSubnAdm = 0x03,       // subnet administration (IBA 15)
  kPerfMgt = 0x04,       // performance management (IBA 16.1)
  kBM = 0x05,            // baseboard management (IBA 16.2)
  kDevMgt = 0x06,        // device management (IBA 16.3)
  kComMgt = 0x07,        // communication management (IBA 12)
  kSNMP = 0x08,          // SNMP tunneling (IBA 16.4)
  kCongestionMgt = 0x21, // congestion control (IBA A10.4)
  kSubnDirected = 0x81,  // subnet management, directed route (IBA 14.2.1.2)
};

inline constexpr uint8_t kVendorRange1First = 0x09;
inline constexpr uint8_t kVendorRange1Last = 0x0F;
inline constexpr uint8_t kVendorRange2First = 0x30;
inline constexpr uint8_t kVendorRange2Last = 0x4F;

// The class ibping answers (libibmad IB_VENDOR_OPENIB_PING_CLASS) and the OpenIB OUI it uses.
inline constexpr uint8_t kOpenIbPingClass = 0x32;
inline constexpr uint32_t kOpenIbOui = 0x001405;

constexpr bool is_vendor_range1(uint8_t c) { return c >= kVendorRange1First && c <= kVendorRange1Last; }
constexpr bool is_vendor_range2(uint8_t c) { return c >= kVendorRange2First && c <= kVendorRange2Last; }
constexpr bool is_vendor_range1(MgmtClass c) { return is_vendor_range1(static_cast<uint8_t>(c)); }
constexpr bool is_vendor_range2(MgmtClass c) { return is_vendor_range2(static_cast<uint8_t>(c)); }
constexpr bool is_subn(MgmtClass c) { return c == MgmtClass::kSubnLid || c == MgmtClass::kSubnDirected; }

// "SubnLid", "SubnAdm", "VendorRange2(0x32)", "0x7f".
std::string to_string(MgmtClass c);

}  // namespace softib::mad
