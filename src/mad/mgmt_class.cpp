#include "mad/mgmt_class.hpp"

#include <fmt/format.h>

namespace softib::mad {

std::string to_string(MgmtClass c) {
  switch (c) {
    case MgmtClass::kSubnLid: return "SubnLid";
    case MgmtClass::kSubnAdm: return "SubnAdm";
    case MgmtClass::kPerfMgt: return "PerfMgt";
    case MgmtClass::kBM: return "BM";
    case MgmtClass::kDevMgt: return "DevMgt";
    case MgmtClass::kComMgt: return "ComMgt";
    case MgmtClass::kSNMP: return "SNMP";
    case MgmtClass::kCongestionMgt: return "CongestionMgt";
    case MgmtClass::kSubnDirected: return "SubnDirected";
  }
  const auto v = static_cast<uint8_t>(c);
  if (is_vendor_range1(v)) return fmt::format("VendorRange1({:#04x})", v);
  if (is_vendor_range2(v)) return fmt::format("VendorRange2({:#04x})", v);
  return fmt::format("{:#04x}", v);
}

}  // namespace softib::mad
