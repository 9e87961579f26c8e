// Attribute IDs. They are scoped by management class (0x0011 is NodeInfo to the SMA and
// NodeRecord to the SA), so each class has its own enum: SMP attributes IBA 14.2.5, SA
// attributes IBA 15.2.5, PMA attributes IBA 16.1.2; ClassPortInfo, Notice and InformInfo are
// common to all classes (IBA 13.4.8).
#pragma once

#include <cstdint>
#include <string_view>

#include "mad/mgmt_class.hpp"

namespace softib::mad {

enum class SmpAttr : uint16_t {
  kClassPortInfo = 0x0001,
  kNotice = 0x0002,
  kInformInfo = 0x0003,
  kNodeDescription = 0x0010,
  kNodeInfo = 0x0011,
  kSwitchInfo = 0x0012,
  kGUIDInfo = 0x0014,
  kPortInfo = 0x0015,
  kP_KeyTable = 0x0016,
  kSLtoVLMappingTable = 0x0017,
  kVLArbitrationTable = 0x0018,
  kLinearForwardingTable = 0x0019,
  kRandomForwardingTable = 0x001A,
  kMulticastForwardingTable = 0x001B,
  kSMInfo = 0x0020,
  kVendorDiag = 0x0030,
  kLedInfo = 0x0031,
};

enum class SaAttr : uint16_t {
  kClassPortInfo = 0x0001,
  kNotice = 0x0002,
  kInformInfo = 0x0003,
  kNodeRecord = 0x0011,
  kPortInfoRecord = 0x0012,
  kSLtoVLMappingTableRecord = 0x0013,
  kSwitchInfoRecord = 0x0014,
  kLinearForwardingTableRecord = 0x0015,
  kRandomForwardingTableRecord = 0x0016,
  kMulticastForwardingTableRecord = 0x0017,
  kSMInfoRecord = 0x0018,
  kLinkRecord = 0x0020,
  kGuidInfoRecord = 0x0030,
  kServiceRecord = 0x0031,
  kP_KeyTableRecord = 0x0033,
  kPathRecord = 0x0035,
  kVLArbitrationTableRecord = 0x0036,
  kMCMemberRecord = 0x0038,
  kTraceRecord = 0x0039,
  kMultiPathRecord = 0x003A,
  kServiceAssociationRecord = 0x003B,
  kInformInfoRecord = 0x00F3,
};

enum class PmaAttr : uint16_t {
  kClassPortInfo = 0x0001,
  kPortSamplesControl = 0x0010,
  kPortSamplesResult = 0x0011,
  kPortCounters = 0x0012,
  kPortRcvErrorDetails = 0x0015,
  kPortXmitDiscardDetails = 0x0016,
  kPortCountersExtended = 0x001D,
};

std::string_view to_string(SmpAttr a);  // "NodeInfo"; "" for values the IBA does not name
std::string_view to_string(SaAttr a);
std::string_view to_string(PmaAttr a);

// The attribute's name in the given class ("" when unknown).
std::string_view attribute_name(MgmtClass c, uint16_t attribute_id);

}  // namespace softib::mad
