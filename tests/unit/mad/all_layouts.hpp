// Every layout of the mad module, for typed tests (unit and compat).
#pragma once

#include <gtest/gtest.h>

#include "mad/class_port_info.hpp"
#include "mad/dr_smp.hpp"
#include "mad/guid_info.hpp"
#include "mad/inform_info.hpp"
#include "mad/lft_record.hpp"
#include "mad/linear_forwarding_table.hpp"
#include "mad/link_record.hpp"
#include "mad/mad_header.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/multicast_forwarding_table.hpp"
#include "mad/node_description.hpp"
#include "mad/node_info.hpp"
#include "mad/node_record.hpp"
#include "mad/notice.hpp"
#include "mad/path_record.hpp"
#include "mad/pkey_table.hpp"
#include "mad/pkey_table_record.hpp"
#include "mad/pma_mad.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_counters_extended.hpp"
#include "mad/port_info.hpp"
#include "mad/port_info_record.hpp"
#include "mad/rmpp_header.hpp"
#include "mad/sa_mad.hpp"
#include "mad/service_record.hpp"
#include "mad/sl_to_vl_table.hpp"
#include "mad/sm_info.hpp"
#include "mad/smp.hpp"
#include "mad/switch_info.hpp"
#include "mad/switch_info_record.hpp"
#include "mad/sm_info_record.hpp"
#include "mad/guid_info_record.hpp"
#include "mad/sl_to_vl_table_record.hpp"
#include "mad/vl_arbitration_table_record.hpp"
#include "mad/mft_record.hpp"
#include "mad/inform_info_record.hpp"
#include "mad/trap128_details.hpp"
#include "mad/trap144_details.hpp"
#include "mad/trap_gid_details.hpp"
#include "mad/vendor_mad.hpp"
#include "mad/vl_arbitration_table.hpp"

namespace softib::mad::test {

using AllLayouts = ::testing::Types<
    // MADs and headers
    MadHeader, Smp, DrSmp, RmppHeader, SaMad, PmaMad, VendorMad,
    // SMP attributes
    NodeInfo, NodeDescription, PortInfo, SwitchInfo, GUIDInfo, PKeyTable, SLtoVLMappingTable,
    VLArbitrationTable, LinearForwardingTable, MulticastForwardingTable, SMInfo, Notice, SmpNotice,
    TrapGidDetails, Trap128Details, Trap144Details,
    // SA records
    PathRecord, NodeRecord, PortInfoRecord, LinkRecord, SwitchInfoRecord,
    LinearForwardingTableRecord, MCMemberRecord, ServiceRecord, PKeyTableRecord, InformInfo,
    SLtoVLMappingTableRecord, MulticastForwardingTableRecord, SMInfoRecord, GUIDInfoRecord,
    VLArbitrationTableRecord, InformInfoRecord,
    // PMA
    ClassPortInfo, PortCounters, PortCountersExtended>;

// Names typed tests by the layout ("NodeInfo") rather than by index.
struct LayoutName {
  template <class T>
  static std::string GetName(int) {
    std::string s(Layout<T>::kName);
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
  }
};

}  // namespace softib::mad::test
