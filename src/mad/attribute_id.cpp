#include "mad/attribute_id.hpp"

namespace softib::mad {

std::string_view to_string(SmpAttr a) {
  switch (a) {
    case SmpAttr::kClassPortInfo: return "ClassPortInfo";
    case SmpAttr::kNotice: return "Notice";
    case SmpAttr::kInformInfo: return "InformInfo";
    case SmpAttr::kNodeDescription: return "NodeDescription";
    case SmpAttr::kNodeInfo: return "NodeInfo";
    case SmpAttr::kSwitchInfo: return "SwitchInfo";
    case SmpAttr::kGUIDInfo: return "GUIDInfo";
    case SmpAttr::kPortInfo: return "PortInfo";
    case SmpAttr::kP_KeyTable: return "P_KeyTable";
    case SmpAttr::kSLtoVLMappingTable: return "SLtoVLMappingTable";
    case SmpAttr::kVLArbitrationTable: return "VLArbitrationTable";
    case SmpAttr::kLinearForwardingTable: return "LinearForwardingTable";
    case SmpAttr::kRandomForwardingTable: return "RandomForwardingTable";
    case SmpAttr::kMulticastForwardingTable: return "MulticastForwardingTable";
    case SmpAttr::kSMInfo: return "SMInfo";
    case SmpAttr::kVendorDiag: return "VendorDiag";
    case SmpAttr::kLedInfo: return "LedInfo";
  }
  return "";
}

std::string_view to_string(SaAttr a) {
  switch (a) {
    case SaAttr::kClassPortInfo: return "ClassPortInfo";
    case SaAttr::kNotice: return "Notice";
    case SaAttr::kInformInfo: return "InformInfo";
    case SaAttr::kNodeRecord: return "NodeRecord";
    case SaAttr::kPortInfoRecord: return "PortInfoRecord";
    case SaAttr::kSLtoVLMappingTableRecord: return "SLtoVLMappingTableRecord";
    case SaAttr::kSwitchInfoRecord: return "SwitchInfoRecord";
    case SaAttr::kLinearForwardingTableRecord: return "LinearForwardingTableRecord";
    case SaAttr::kRandomForwardingTableRecord: return "RandomForwardingTableRecord";
    case SaAttr::kMulticastForwardingTableRecord: return "MulticastForwardingTableRecord";
    case SaAttr::kSMInfoRecord: return "SMInfoRecord";
    case SaAttr::kLinkRecord: return "LinkRecord";
    case SaAttr::kGuidInfoRecord: return "GuidInfoRecord";
    case SaAttr::kServiceRecord: return "ServiceRecord";
    case SaAttr::kP_KeyTableRecord: return "P_KeyTableRecord";
    case SaAttr::kPathRecord: return "PathRecord";
    case SaAttr::kVLArbitrationTableRecord: return "VLArbitrationTableRecord";
    case SaAttr::kMCMemberRecord: return "MCMemberRecord";
    case SaAttr::kTraceRecord: return "TraceRecord";
    case SaAttr::kMultiPathRecord: return "MultiPathRecord";
    case SaAttr::kServiceAssociationRecord: return "ServiceAssociationRecord";
    case SaAttr::kInformInfoRecord: return "InformInfoRecord";
  }
  return "";
}

std::string_view to_string(PmaAttr a) {
  switch (a) {
    case PmaAttr::kClassPortInfo: return "ClassPortInfo";
    case PmaAttr::kPortSamplesControl: return "PortSamplesControl";
    case PmaAttr::kPortSamplesResult: return "PortSamplesResult";
    case PmaAttr::kPortCounters: return "PortCounters";
    case PmaAttr::kPortRcvErrorDetails: return "PortRcvErrorDetails";
    case PmaAttr::kPortXmitDiscardDetails: return "PortXmitDiscardDetails";
    case PmaAttr::kPortCountersExtended: return "PortCountersExtended";
  }
  return "";
}

std::string_view attribute_name(MgmtClass c, uint16_t attribute_id) {
  switch (c) {
    case MgmtClass::kSubnLid:
    case MgmtClass::kSubnDirected:
      return to_string(static_cast<SmpAttr>(attribute_id));
    case MgmtClass::kSubnAdm:
      return to_string(static_cast<SaAttr>(attribute_id));
    case MgmtClass::kPerfMgt:
      return to_string(static_cast<PmaAttr>(attribute_id));
    default:
      break;
  }
  // The common attributes mean the same in every class (IBA 13.4.8).
  switch (attribute_id) {
    case 0x0001: return "ClassPortInfo";
    case 0x0002: return "Notice";
    case 0x0003: return "InformInfo";
    default: return "";
  }
}

}  // namespace softib::mad
