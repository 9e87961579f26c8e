// Cross-check against libibmad's own field table (rdma-core, <infiniband/mad.h>). For every
// libibmad field of the MAD headers and of the attributes softib implements, an explicit
// mapping names the softib rows that hold the same bits. For each mapping and many seeded
// random values:
//   - libibmad's field lies exactly where our rows lie (found by setting it to all ones);
//   - what our encoder wrote, mad_get_field / mad_get_field64 / mad_get_array read, and what
//     mad_set_field / mad_set_array write is what our encoder writes for that value and what
//     our decoder reads back (an illegal value is rejected naming the row);
//   - our dump label is mad_field_name() and our dump line is mad_dump_field()'s;
// and the mapping covers every libibmad field in the enum ranges of those attributes (a field
// libibmad adds later fails the test). Known differences are listed in the table with the
// reason, and checked to still differ. Whole-attribute dumps: libibmad_dump_test.cpp.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <infiniband/mad.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include "mad/class_port_info.hpp"
#include "mad/dr_smp.hpp"
#include "mad/guid_info.hpp"
#include "mad/linear_forwarding_table.hpp"
#include "mad/mad_header.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/multicast_forwarding_table.hpp"
#include "mad/node_description.hpp"
#include "mad/node_info.hpp"
#include "mad/node_record.hpp"
#include "mad/notice.hpp"
#include "mad/path_record.hpp"
#include "mad/pma_mad.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_counters_extended.hpp"
#include "mad/port_info.hpp"
#include "mad/sa_mad.hpp"
#include "mad/service_record.hpp"
#include "mad/sl_to_vl_table.hpp"
#include "mad/sm_info.hpp"
#include "mad/smp.hpp"
#include "mad/switch_info.hpp"
#include "mad/trap128_details.hpp"
#include "mad/trap144_details.hpp"
#include "mad/vendor_mad.hpp"
#include "mad/vl_arbitration_table.hpp"
#include "subject.hpp"

namespace softib::mad::compat {
namespace {

constexpr size_t kBuf = 512;  // libibmad reads relative to the buffer; room past any layout

// One libibmad field and the softib rows [first, last] holding the same bits, in a layout
// that starts base_bit into the buffer libibmad's field is relative to.
struct Mapping {
  int field;
  const Subject* subject;
  std::string_view first;
  std::string_view last;  // empty: the single row `first`
  uint32_t base_bit = 0;
  std::string_view alias;         // libibmad's second name for the same bits
  std::string_view line_differs;  // why libibmad's dump line is not ours (checked to differ)
  std::string_view reads_instead; // a libibmad defect: the row whose bits it really reads
};

template <class T>
Mapping m(int field, std::string_view first, std::string_view last = {}, uint32_t base_bit = 0) {
  return Mapping{field, &subject<T>(), first, last, base_bit, {}, {}, {}};
}
Mapping alias(Mapping x, std::string_view name) {
  x.alias = name;
  return x;
}
Mapping line_differs(Mapping x, std::string_view why) {
  x.line_differs = why;
  return x;
}

constexpr std::string_view kHexTooWide =
    "libibmad prints fields wider than 8 bytes with mad_dump_hex, which prints nothing";

std::vector<Mapping> mappings() {
  return {
      // Common MAD header (IBA 13.4.2)
      m<MadHeader>(IB_MAD_METHOD_F, "Method"),
      m<MadHeader>(IB_MAD_RESPONSE_F, "R"),
      m<MadHeader>(IB_MAD_CLASSVER_F, "ClassVersion"),
      m<MadHeader>(IB_MAD_MGMTCLASS_F, "MgmtClass"),
      m<MadHeader>(IB_MAD_BASEVER_F, "BaseVersion"),
      m<MadHeader>(IB_MAD_STATUS_F, "Status"),
      m<MadHeader>(IB_MAD_TRID_F, "TransactionID"),
      m<MadHeader>(IB_MAD_ATTRID_F, "AttributeID"),
      m<MadHeader>(IB_MAD_ATTRMOD_F, "AttributeModifier"),
      // SMPs (IBA 14.2.1)
      m<Smp>(IB_MAD_MKEY_F, "M_Key"),
      m<DrSmp>(IB_DRSMP_HOPCNT_F, "HopCount"),
      m<DrSmp>(IB_DRSMP_HOPPTR_F, "HopPointer"),
      m<DrSmp>(IB_DRSMP_STATUS_F, "Status"),
      m<DrSmp>(IB_DRSMP_DIRECTION_F, "D"),
      m<DrSmp>(IB_DRSMP_DRDLID_F, "DrDLID"),
      m<DrSmp>(IB_DRSMP_DRSLID_F, "DrSLID"),
      line_differs(m<DrSmp>(IB_DRSMP_PATH_F, "InitialPath"), kHexTooWide),
      line_differs(m<DrSmp>(IB_DRSMP_RPATH_F, "ReturnPath"), kHexTooWide),
      // SA MAD and its RMPP header (IBA 15.2.1, 13.6.2)
      m<SaMad>(IB_SA_MKEY_F, "SM_Key"),
      m<SaMad>(IB_SA_ATTROFFS_F, "AttributeOffset"),
      m<SaMad>(IB_SA_COMPMASK_F, "ComponentMask"),
      line_differs(m<SaMad>(IB_SA_DATA_F, "SAData"), kHexTooWide),
      m<SaMad>(IB_SA_RMPP_VERS_F, "RMPPVersion"),
      m<SaMad>(IB_SA_RMPP_TYPE_F, "RMPPType"),
      m<SaMad>(IB_SA_RMPP_RESP_F, "RRespTime"),
      m<SaMad>(IB_SA_RMPP_FLAGS_F, "RMPPFlags"),
      m<SaMad>(IB_SA_RMPP_STATUS_F, "RMPPStatus"),
      m<SaMad>(IB_SA_RMPP_D1_F, "Data1"),
      line_differs(alias(m<SaMad>(IB_SA_RMPP_SEGNUM_F, "Data1"), "RmppSegNum"),
                   "libibmad's alias prints Data1 in decimal"),
      m<SaMad>(IB_SA_RMPP_D2_F, "Data2"),
      line_differs(alias(m<SaMad>(IB_SA_RMPP_LEN_F, "Data2"), "RmppPayload"),
                   "libibmad's alias prints Data2 in decimal"),
      line_differs(alias(m<SaMad>(IB_SA_RMPP_NEWWIN_F, "Data2"), "RmppNewWin"),
                   "libibmad's alias prints Data2 in decimal"),
      // PerfMgt GMP (IBA 16.1.1) and vendor range 2 (IBA 13.4.4)
      line_differs(m<PmaMad>(IB_GS_DATA_F, "PMAData"), kHexTooWide),
      line_differs(m<VendorMad>(IB_VEND2_OUI_F, "OUI"),
                   "libibmad prints the host-order bytes of the decoded integer as an array"),
      m<VendorMad>(IB_VEND2_DATA_F, "VendorData"),
      // PortInfo (IBA 14.2.5.6)
      m<PortInfo>(IB_PORT_MKEY_F, "M_Key"),
      m<PortInfo>(IB_PORT_GID_PREFIX_F, "GidPrefix"),
      m<PortInfo>(IB_PORT_LID_F, "LID"),
      m<PortInfo>(IB_PORT_SMLID_F, "MasterSMLID"),
      m<PortInfo>(IB_PORT_CAPMASK_F, "CapabilityMask"),
      m<PortInfo>(IB_PORT_DIAG_F, "DiagCode"),
      m<PortInfo>(IB_PORT_MKEY_LEASE_F, "M_KeyLeasePeriod"),
      m<PortInfo>(IB_PORT_LOCAL_PORT_F, "LocalPortNum"),
      m<PortInfo>(IB_PORT_LINK_WIDTH_ENABLED_F, "LinkWidthEnabled"),
      m<PortInfo>(IB_PORT_LINK_WIDTH_SUPPORTED_F, "LinkWidthSupported"),
      m<PortInfo>(IB_PORT_LINK_WIDTH_ACTIVE_F, "LinkWidthActive"),
      m<PortInfo>(IB_PORT_LINK_SPEED_SUPPORTED_F, "LinkSpeedSupported"),
      m<PortInfo>(IB_PORT_STATE_F, "PortState"),
      m<PortInfo>(IB_PORT_PHYS_STATE_F, "PortPhysicalState"),
      m<PortInfo>(IB_PORT_LINK_DOWN_DEF_F, "LinkDownDefaultState"),
      m<PortInfo>(IB_PORT_MKEY_PROT_BITS_F, "M_KeyProtectBits"),
      m<PortInfo>(IB_PORT_LMC_F, "LMC"),
      m<PortInfo>(IB_PORT_LINK_SPEED_ACTIVE_F, "LinkSpeedActive"),
      m<PortInfo>(IB_PORT_LINK_SPEED_ENABLED_F, "LinkSpeedEnabled"),
      m<PortInfo>(IB_PORT_NEIGHBOR_MTU_F, "NeighborMTU"),
      m<PortInfo>(IB_PORT_SMSL_F, "MasterSMSL"),
      m<PortInfo>(IB_PORT_VL_CAP_F, "VLCap"),
      m<PortInfo>(IB_PORT_INIT_TYPE_F, "InitType"),
      m<PortInfo>(IB_PORT_VL_HIGH_LIMIT_F, "VLHighLimit"),
      m<PortInfo>(IB_PORT_VL_ARBITRATION_HIGH_CAP_F, "VLArbitrationHighCap"),
      m<PortInfo>(IB_PORT_VL_ARBITRATION_LOW_CAP_F, "VLArbitrationLowCap"),
      m<PortInfo>(IB_PORT_INIT_TYPE_REPLY_F, "InitTypeReply"),
      m<PortInfo>(IB_PORT_MTU_CAP_F, "MTUCap"),
      m<PortInfo>(IB_PORT_VL_STALL_COUNT_F, "VLStallCount"),
      m<PortInfo>(IB_PORT_HOQ_LIFE_F, "HOQLife"),
      m<PortInfo>(IB_PORT_OPER_VLS_F, "OperationalVLs"),
      m<PortInfo>(IB_PORT_PART_EN_INB_F, "PartitionEnforcementInbound"),
      m<PortInfo>(IB_PORT_PART_EN_OUTB_F, "PartitionEnforcementOutbound"),
      m<PortInfo>(IB_PORT_FILTER_RAW_INB_F, "FilterRawInbound"),
      m<PortInfo>(IB_PORT_FILTER_RAW_OUTB_F, "FilterRawOutbound"),
      m<PortInfo>(IB_PORT_MKEY_VIOL_F, "M_KeyViolations"),
      m<PortInfo>(IB_PORT_PKEY_VIOL_F, "P_KeyViolations"),
      m<PortInfo>(IB_PORT_QKEY_VIOL_F, "Q_KeyViolations"),
      m<PortInfo>(IB_PORT_GUID_CAP_F, "GUIDCap"),
      m<PortInfo>(IB_PORT_CLIENT_REREG_F, "ClientReregister"),
      m<PortInfo>(IB_PORT_MCAST_PKEY_SUPR_ENAB_F, "MulticastPKeyTrapSuppressionEnabled"),
      m<PortInfo>(IB_PORT_SUBN_TIMEOUT_F, "SubnetTimeOut"),
      m<PortInfo>(IB_PORT_RESP_TIME_VAL_F, "RespTimeValue"),
      m<PortInfo>(IB_PORT_LOCAL_PHYS_ERR_F, "LocalPhyErrors"),
      m<PortInfo>(IB_PORT_OVERRUN_ERR_F, "OverrunErrors"),
      m<PortInfo>(IB_PORT_MAX_CREDIT_HINT_F, "MaxCreditHint"),
      m<PortInfo>(IB_PORT_LINK_ROUND_TRIP_F, "LinkRoundTripLatency"),
      m<PortInfo>(IB_PORT_CAPMASK2_F, "CapabilityMask2"),
      m<PortInfo>(IB_PORT_LINK_SPEED_EXT_ACTIVE_F, "LinkSpeedExtActive"),
      m<PortInfo>(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, "LinkSpeedExtSupported"),
      m<PortInfo>(IB_PORT_LINK_SPEED_EXT_ENABLED_F, "LinkSpeedExtEnabled"),
      // NodeInfo (IBA 14.2.5.3)
      m<NodeInfo>(IB_NODE_BASE_VERS_F, "BaseVersion"),
      m<NodeInfo>(IB_NODE_CLASS_VERS_F, "ClassVersion"),
      m<NodeInfo>(IB_NODE_TYPE_F, "NodeType"),
      m<NodeInfo>(IB_NODE_NPORTS_F, "NumPorts"),
      m<NodeInfo>(IB_NODE_SYSTEM_GUID_F, "SystemImageGUID"),
      m<NodeInfo>(IB_NODE_GUID_F, "NodeGUID"),
      m<NodeInfo>(IB_NODE_PORT_GUID_F, "PortGUID"),
      m<NodeInfo>(IB_NODE_PARTITION_CAP_F, "PartitionCap"),
      m<NodeInfo>(IB_NODE_DEVID_F, "DeviceID"),
      m<NodeInfo>(IB_NODE_REVISION_F, "Revision"),
      m<NodeInfo>(IB_NODE_LOCAL_PORT_F, "LocalPortNum"),
      m<NodeInfo>(IB_NODE_VENDORID_F, "VendorID"),
      // SwitchInfo (IBA 14.2.5.4)
      m<SwitchInfo>(IB_SW_LINEAR_FDB_CAP_F, "LinearFDBCap"),
      m<SwitchInfo>(IB_SW_RANDOM_FDB_CAP_F, "RandomFDBCap"),
      m<SwitchInfo>(IB_SW_MCAST_FDB_CAP_F, "MulticastFDBCap"),
      m<SwitchInfo>(IB_SW_LINEAR_FDB_TOP_F, "LinearFDBTop"),
      m<SwitchInfo>(IB_SW_DEF_PORT_F, "DefaultPort"),
      m<SwitchInfo>(IB_SW_DEF_MCAST_PRIM_F, "DefaultMulticastPrimaryPort"),
      m<SwitchInfo>(IB_SW_DEF_MCAST_NOT_PRIM_F, "DefaultMulticastNotPrimaryPort"),
      m<SwitchInfo>(IB_SW_LIFE_TIME_F, "LifeTimeValue"),
      m<SwitchInfo>(IB_SW_STATE_CHANGE_F, "PortStateChange"),
      m<SwitchInfo>(IB_SW_OPT_SLTOVL_MAPPING_F, "OptimizedSLtoVLMappingProgramming"),
      m<SwitchInfo>(IB_SW_LIDS_PER_PORT_F, "LIDsPerPort"),
      m<SwitchInfo>(IB_SW_PARTITION_ENFORCE_CAP_F, "PartitionEnforcementCap"),
      m<SwitchInfo>(IB_SW_PARTITION_ENF_INB_F, "InboundEnforcementCap"),
      m<SwitchInfo>(IB_SW_PARTITION_ENF_OUTB_F, "OutboundEnforcementCap"),
      m<SwitchInfo>(IB_SW_FILTER_RAW_INB_F, "FilterRawInboundCap"),
      m<SwitchInfo>(IB_SW_FILTER_RAW_OUTB_F, "FilterRawOutboundCap"),
      m<SwitchInfo>(IB_SW_ENHANCED_PORT0_F, "EnhancedPort0"),
      m<SwitchInfo>(IB_SW_MCAST_FDB_TOP_F, "MulticastFDBTop"),
      // Forwarding tables, NodeDescription, SLtoVL, VLArbitration (IBA 14.2.5.2, .8-.12)
      m<LinearForwardingTable>(IB_LINEAR_FORW_TBL_F, "Port[0]", "Port[63]"),
      m<MulticastForwardingTable>(IB_MULTICAST_FORW_TBL_F, "PortMask[0]", "PortMask[31]"),
      m<NodeDescription>(IB_NODE_DESC_F, "NodeString"),
      m<SLtoVLMappingTable>(IB_SLTOVL_MAPPING_TABLE_F, "SL0toVL", "SL15toVL"),
      m<VLArbitrationTable>(IB_VL_ARBITRATION_TABLE_F, "*"),  // from the first reserved nibble
      // Notice (IBA 13.4.8.2) and the trap details (IBA 14.2.5.1), which start at bit 80
      m<Notice>(IB_NOTICE_IS_GENERIC_F, "IsGeneric"),
      m<Notice>(IB_NOTICE_TYPE_F, "Type"),
      m<Notice>(IB_NOTICE_PRODUCER_F, "ProducerType/VendorID"),
      m<Notice>(IB_NOTICE_TRAP_NUMBER_F, "TrapNumber/DeviceID"),
      m<Notice>(IB_NOTICE_ISSUER_LID_F, "IssuerLID"),
      m<Notice>(IB_NOTICE_TOGGLE_F, "NoticeToggle"),
      m<Notice>(IB_NOTICE_COUNT_F, "NoticeCount"),
      m<Notice>(IB_NOTICE_DATA_DETAILS_F, "DataDetails"),
      m<Trap128Details>(IB_NOTICE_DATA_LID_F, "LIDADDR", {}, kNoticeDataDetailsBit),
      m<Trap144Details>(IB_NOTICE_DATA_144_LID_F, "LIDADDR", {}, kNoticeDataDetailsBit),
      m<Trap144Details>(IB_NOTICE_DATA_144_CAPMASK_F, "CAPABILITYMASK", {}, kNoticeDataDetailsBit),
      // PortCounters (IBA 16.1.3.5)
      m<PortCounters>(IB_PC_PORT_SELECT_F, "PortSelect"),
      m<PortCounters>(IB_PC_COUNTER_SELECT_F, "CounterSelect"),
      m<PortCounters>(IB_PC_ERR_SYM_F, "SymbolErrorCounter"),
      m<PortCounters>(IB_PC_LINK_RECOVERS_F, "LinkErrorRecoveryCounter"),
      m<PortCounters>(IB_PC_LINK_DOWNED_F, "LinkDownedCounter"),
      m<PortCounters>(IB_PC_ERR_RCV_F, "PortRcvErrors"),
      m<PortCounters>(IB_PC_ERR_PHYSRCV_F, "PortRcvRemotePhysicalErrors"),
      m<PortCounters>(IB_PC_ERR_SWITCH_REL_F, "PortRcvSwitchRelayErrors"),
      m<PortCounters>(IB_PC_XMT_DISCARDS_F, "PortXmitDiscards"),
      m<PortCounters>(IB_PC_ERR_XMTCONSTR_F, "PortXmitConstraintErrors"),
      m<PortCounters>(IB_PC_ERR_RCVCONSTR_F, "PortRcvConstraintErrors"),
      m<PortCounters>(IB_PC_COUNTER_SELECT2_F, "CounterSelect2"),
      m<PortCounters>(IB_PC_ERR_LOCALINTEG_F, "LocalLinkIntegrityErrors"),
      m<PortCounters>(IB_PC_ERR_EXCESS_OVR_F, "ExcessiveBufferOverrunErrors"),
      m<PortCounters>(IB_PC_VL15_DROPPED_F, "VL15Dropped"),
      m<PortCounters>(IB_PC_XMT_BYTES_F, "PortXmitData"),
      m<PortCounters>(IB_PC_RCV_BYTES_F, "PortRcvData"),
      m<PortCounters>(IB_PC_XMT_PKTS_F, "PortXmitPkts"),
      m<PortCounters>(IB_PC_RCV_PKTS_F, "PortRcvPkts"),
      m<PortCounters>(IB_PC_XMT_WAIT_F, "PortXmitWait"),
      // libibmad's entry is {160, 16} without BITSOFFS: it reads bytes 22-23, VL15Dropped.
      // IBA 16.1.3.5 and OpenSM's ib_port_counters_t put QP1Dropped at bytes 20-21; the
      // OpenSM cross-check covers our row.
      Mapping{IB_PC_QP1_DROP_F, &subject<PortCounters>(), "QP1Dropped", {}, 0, {}, {},
              "VL15Dropped"},
      // PortCountersExtended (IBA 16.1.4.11)
      m<PortCountersExtended>(IB_PC_EXT_PORT_SELECT_F, "PortSelect"),
      m<PortCountersExtended>(IB_PC_EXT_COUNTER_SELECT_F, "CounterSelect"),
      m<PortCountersExtended>(IB_PC_EXT_XMT_BYTES_F, "PortXmitData"),
      m<PortCountersExtended>(IB_PC_EXT_RCV_BYTES_F, "PortRcvData"),
      m<PortCountersExtended>(IB_PC_EXT_XMT_PKTS_F, "PortXmitPkts"),
      m<PortCountersExtended>(IB_PC_EXT_RCV_PKTS_F, "PortRcvPkts"),
      m<PortCountersExtended>(IB_PC_EXT_XMT_UPKTS_F, "PortUnicastXmitPkts"),
      m<PortCountersExtended>(IB_PC_EXT_RCV_UPKTS_F, "PortUnicastRcvPkts"),
      m<PortCountersExtended>(IB_PC_EXT_XMT_MPKTS_F, "PortMulticastXmitPkts"),
      m<PortCountersExtended>(IB_PC_EXT_RCV_MPKTS_F, "PortMulticastRcvPkts"),
      m<PortCountersExtended>(IB_PC_EXT_COUNTER_SELECT2_F, "CounterSelect2"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_SYM_F, "SymbolErrorCounter"),
      m<PortCountersExtended>(IB_PC_EXT_LINK_RECOVERS_F, "LinkErrorRecoveryCounter"),
      m<PortCountersExtended>(IB_PC_EXT_LINK_DOWNED_F, "LinkDownedCounter"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_RCV_F, "PortRcvErrors"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_PHYSRCV_F, "PortRcvRemotePhysicalErrors"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_SWITCH_REL_F, "PortRcvSwitchRelayErrors"),
      m<PortCountersExtended>(IB_PC_EXT_XMT_DISCARDS_F, "PortXmitDiscards"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_XMTCONSTR_F, "PortXmitConstraintErrors"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_RCVCONSTR_F, "PortRcvConstraintErrors"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_LOCALINTEG_F, "LocalLinkIntegrityErrors"),
      m<PortCountersExtended>(IB_PC_EXT_ERR_EXCESS_OVR_F, "ExcessiveBufferOverrunErrors"),
      m<PortCountersExtended>(IB_PC_EXT_VL15_DROPPED_F, "VL15Dropped"),
      m<PortCountersExtended>(IB_PC_EXT_XMT_WAIT_F, "PortXmitWait"),
      m<PortCountersExtended>(IB_PC_EXT_QP1_DROP_F, "QP1Dropped"),
      // SMInfo (IBA 14.2.5.13)
      m<SMInfo>(IB_SMINFO_GUID_F, "GUID"),
      m<SMInfo>(IB_SMINFO_KEY_F, "SM_Key"),
      m<SMInfo>(IB_SMINFO_ACT_F, "ActCount"),
      m<SMInfo>(IB_SMINFO_PRIO_F, "Priority"),
      m<SMInfo>(IB_SMINFO_STATE_F, "SMState"),
      // GUIDInfo (IBA 14.2.5.5); IB_GUID_GUID0_F is libibmad's older name for GUID0
      m<GUIDInfo>(IB_GUID_GUID0_F, "GUID0"),
      m<GUIDInfo>(IB_GI_GUID0_F, "GUID0"),
      m<GUIDInfo>(IB_GI_GUID1_F, "GUID1"),
      m<GUIDInfo>(IB_GI_GUID2_F, "GUID2"),
      m<GUIDInfo>(IB_GI_GUID3_F, "GUID3"),
      m<GUIDInfo>(IB_GI_GUID4_F, "GUID4"),
      m<GUIDInfo>(IB_GI_GUID5_F, "GUID5"),
      m<GUIDInfo>(IB_GI_GUID6_F, "GUID6"),
      m<GUIDInfo>(IB_GI_GUID7_F, "GUID7"),
      // ClassPortInfo (IBA 13.4.8.1)
      m<ClassPortInfo>(IB_CPI_BASEVER_F, "BaseVersion"),
      m<ClassPortInfo>(IB_CPI_CLASSVER_F, "ClassVersion"),
      m<ClassPortInfo>(IB_CPI_CAPMASK_F, "CapabilityMask"),
      m<ClassPortInfo>(IB_CPI_CAPMASK2_F, "CapabilityMask2"),
      m<ClassPortInfo>(IB_CPI_RESP_TIME_VALUE_F, "RespTimeValue"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_GID_F, "RedirectGID"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_TC_F, "RedirectTC"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_SL_F, "RedirectSL"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_FL_F, "RedirectFL"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_LID_F, "RedirectLID"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_PKEY_F, "RedirectP_Key"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_QP_F, "RedirectQP"),
      m<ClassPortInfo>(IB_CPI_REDIRECT_QKEY_F, "RedirectQ_Key"),
      m<ClassPortInfo>(IB_CPI_TRAP_GID_F, "TrapGID"),
      m<ClassPortInfo>(IB_CPI_TRAP_TC_F, "TrapTC"),
      m<ClassPortInfo>(IB_CPI_TRAP_SL_F, "TrapSL"),
      m<ClassPortInfo>(IB_CPI_TRAP_FL_F, "TrapFL"),
      m<ClassPortInfo>(IB_CPI_TRAP_LID_F, "TrapLID"),
      m<ClassPortInfo>(IB_CPI_TRAP_PKEY_F, "TrapP_Key"),
      m<ClassPortInfo>(IB_CPI_TRAP_HL_F, "TrapHL"),
      m<ClassPortInfo>(IB_CPI_TRAP_QP_F, "TrapQP"),
      m<ClassPortInfo>(IB_CPI_TRAP_QKEY_F, "TrapQ_Key"),
      // PathRecord (IBA 15.2.5.16): libibmad knows six of its fields
      m<PathRecord>(IB_SA_PR_DGID_F, "DGID"),
      m<PathRecord>(IB_SA_PR_SGID_F, "SGID"),
      m<PathRecord>(IB_SA_PR_DLID_F, "DLID"),
      m<PathRecord>(IB_SA_PR_SLID_F, "SLID"),
      m<PathRecord>(IB_SA_PR_NPATH_F, "NumbPath"),
      m<PathRecord>(IB_SA_PR_SL_F, "SL"),
      // MCMemberRecord (IBA 15.2.5.17)
      m<MCMemberRecord>(IB_SA_MCM_MGID_F, "MGID"),
      m<MCMemberRecord>(IB_SA_MCM_PORTGID_F, "PortGID"),
      m<MCMemberRecord>(IB_SA_MCM_QKEY_F, "Q_Key"),
      m<MCMemberRecord>(IB_SA_MCM_MLID_F, "MLID"),
      m<MCMemberRecord>(IB_SA_MCM_SL_F, "SL"),
      m<MCMemberRecord>(IB_SA_MCM_MTU_F, "MTU"),
      m<MCMemberRecord>(IB_SA_MCM_RATE_F, "Rate"),
      m<MCMemberRecord>(IB_SA_MCM_TCLASS_F, "TClass"),
      m<MCMemberRecord>(IB_SA_MCM_PKEY_F, "P_Key"),
      m<MCMemberRecord>(IB_SA_MCM_FLOW_LABEL_F, "FlowLabel"),
      m<MCMemberRecord>(IB_SA_MCM_JOIN_STATE_F, "JoinState"),
      m<MCMemberRecord>(IB_SA_MCM_PROXY_JOIN_F, "ProxyJoin"),
      // ServiceRecord (IBA 15.2.5.14)
      m<ServiceRecord>(IB_SA_SR_ID_F, "ServiceID"),
      m<ServiceRecord>(IB_SA_SR_GID_F, "ServiceGID"),
      m<ServiceRecord>(IB_SA_SR_PKEY_F, "ServiceP_Key"),
      m<ServiceRecord>(IB_SA_SR_LEASE_F, "ServiceLease"),
      line_differs(m<ServiceRecord>(IB_SA_SR_KEY_F, "ServiceKey"), kHexTooWide),
      m<ServiceRecord>(IB_SA_SR_NAME_F, "ServiceName"),
      m<ServiceRecord>(IB_SA_SR_DATA_F, "ServiceData8.1", "ServiceData64.2"),
      // NodeRecord (IBA 15.2.5.2)
      m<NodeRecord>(IB_SA_NR_LID_F, "LID"),
      m<NodeRecord>(IB_SA_NR_BASEVER_F, "BaseVersion"),
      m<NodeRecord>(IB_SA_NR_CLASSVER_F, "ClassVersion"),
      m<NodeRecord>(IB_SA_NR_TYPE_F, "NodeType"),
      m<NodeRecord>(IB_SA_NR_NPORTS_F, "NumPorts"),
      m<NodeRecord>(IB_SA_NR_SYSTEM_GUID_F, "SystemImageGUID"),
      m<NodeRecord>(IB_SA_NR_GUID_F, "NodeGUID"),
      m<NodeRecord>(IB_SA_NR_PORT_GUID_F, "PortGUID"),
      m<NodeRecord>(IB_SA_NR_PARTITION_CAP_F, "PartitionCap"),
      m<NodeRecord>(IB_SA_NR_DEVID_F, "DeviceID"),
      m<NodeRecord>(IB_SA_NR_REVISION_F, "Revision"),
      m<NodeRecord>(IB_SA_NR_LOCAL_PORT_F, "LocalPortNum"),
      m<NodeRecord>(IB_SA_NR_VENDORID_F, "VendorID"),
      m<NodeRecord>(IB_SA_NR_NODEDESC_F, "NodeString"),
  };
}

// The enum ranges of libibmad's fields for the headers and attributes softib implements.
// Every field in them must have a mapping.
struct Range {
  int first;
  int end;  // one past the last
};
constexpr Range kCoveredRanges[] = {
    {IB_MAD_METHOD_F, IB_DRSMP_RPATH_F + 1},  // MAD, DR SMP and SA headers, data fields
    {IB_PORT_FIRST_F, IB_PORT_LAST_F},
    {IB_PORT_CAPMASK2_F, IB_PORT_LINK_SPEED_EXT_LAST_F},
    {IB_NODE_FIRST_F, IB_NODE_LAST_F},
    {IB_SW_FIRST_F, IB_SW_LAST_F},
    {IB_LINEAR_FORW_TBL_F, IB_NODE_DESC_F + 1},
    {IB_NOTICE_IS_GENERIC_F, IB_NOTICE_DATA_144_CAPMASK_F + 1},
    {IB_PC_FIRST_F, IB_PC_LAST_F},
    {IB_PC_QP1_DROP_F, IB_PC_QP1_DROP_F + 1},
    {IB_SMINFO_GUID_F, IB_SMINFO_STATE_F + 1},
    {IB_SA_RMPP_VERS_F, IB_SA_RMPP_NEWWIN_F + 1},
    {IB_SA_PR_DGID_F, IB_SA_PR_SL_F + 1},
    {IB_SA_MCM_MGID_F, IB_SA_MCM_PROXY_JOIN_F + 1},
    {IB_SA_SR_ID_F, IB_SA_SR_DATA_F + 1},
    {IB_SLTOVL_MAPPING_TABLE_F, IB_VL_ARBITRATION_TABLE_F + 1},
    {IB_VEND2_OUI_F, IB_VEND2_DATA_F + 1},
    {IB_PC_EXT_FIRST_F, IB_PC_EXT_LAST_F},
    {IB_PC_EXT_COUNTER_SELECT2_F, IB_PC_EXT_ERR_LAST_F},
    {IB_GUID_GUID0_F, IB_GUID_GUID0_F + 1},
    {IB_CPI_BASEVER_F, IB_CPI_TRAP_QKEY_F + 1},
    {IB_GI_GUID0_F, IB_GI_GUID7_F + 1},
    {IB_SA_NR_FIRST_F, IB_SA_NR_LAST_F},
};

// libibmad entries in those ranges that hold no field.
bool is_empty_entry(int f) { return f == IB_SM_DATA_F; }

MAD_FIELDS F(int f) { return static_cast<MAD_FIELDS>(f); }

// The bits libibmad's field occupies, found by writing all ones into zeros.
struct Bits {
  uint32_t lo = 0;
  uint32_t width = 0;
  bool contiguous = false;
};

Bits libibmad_bits(int f, uint32_t width) {
  std::array<uint8_t, kBuf> buf{};
  if (width <= 32) {
    mad_set_field(buf.data(), 0, F(f), static_cast<uint32_t>(mad::detail::low_mask(width)));
  } else if (width == 64) {
    mad_set_field64(buf.data(), 0, F(f), ~uint64_t{0});
  } else {
    std::vector<uint8_t> ones(width / 8, 0xFF);
    mad_set_array(buf.data(), 0, F(f), ones.data());
  }
  Bits b;
  std::vector<uint32_t> set;
  for (uint32_t i = 0; i < kBuf * 8; ++i)
    if (wire::get_bits(buf.data(), i, 1) != 0) set.push_back(i);
  if (set.empty()) return b;
  b.lo = set.front();
  b.width = static_cast<uint32_t>(set.size());
  b.contiguous = set.back() - set.front() + 1 == set.size();
  return b;
}

const RowInfo& row_info(const Subject& s, std::string_view name) {
  for (const RowInfo& r : s.layout.rows)
    if (!r.is_reserved() && r.field.name == name) return r;
  ADD_FAILURE() << s.layout.name << " has no row " << name;
  return s.layout.rows[0];
}

// Our bits for the mapping: from the first row's start to the last row's end; "*" is the
// whole layout, reserved rows included.
Bits our_bits(const Mapping& x) {
  if (x.first == "*") return Bits{x.base_bit, static_cast<uint32_t>(x.subject->layout.size * 8), true};
  const RowInfo& a = row_info(*x.subject, x.first);
  const RowInfo& z = row_info(*x.subject, x.last.empty() ? x.first : x.last);
  return Bits{x.base_bit + a.field.bit_offset,
              z.field.bit_offset + z.field.bit_width - a.field.bit_offset, true};
}

bool single_row(const Mapping& x) { return x.last.empty() && x.first != "*"; }
bool single_integer(const Mapping& x) { return single_row(x) && row_info(*x.subject, x.first).is_integer; }

// RMPP header fields a value alone cannot make legal: IBA 13.6.2 ties them to each other
// (find_rmpp_violation). A value libibmad writes there may be rejected by our decoder.
bool is_cross_field(std::string_view row) {
  return row == "RMPPVersion" || row == "RMPPType" || row == "RMPPFlags" || row == "Data1";
}

// libibmad's reading of a field as bytes (integers big-endian, width rounded up to bytes).
std::vector<uint8_t> libibmad_get(uint8_t* buf, int f, uint32_t width) {
  if (width <= 64) {
    const uint64_t v = width <= 32 ? mad_get_field(buf, 0, F(f)) : mad_get_field64(buf, 0, F(f));
    std::vector<uint8_t> out((width + 7) / 8);
    for (size_t i = 0; i < out.size(); ++i)
      out[out.size() - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
    return out;
  }
  std::vector<uint8_t> out(width / 8);
  mad_get_array(buf, 0, F(f), out.data());
  return out;
}
void libibmad_set(uint8_t* buf, int f, uint32_t width, const std::vector<uint8_t>& be) {
  if (width <= 64) {
    uint64_t v = 0;
    for (uint8_t b : be) v = v << 8 | b;
    if (width <= 32) {
      mad_set_field(buf, 0, F(f), static_cast<uint32_t>(v));
    } else {
      mad_set_field64(buf, 0, F(f), v);
    }
  } else {
    std::vector<uint8_t> copy = be;
    mad_set_array(buf, 0, F(f), copy.data());
  }
}
std::vector<uint8_t> our_get(const std::array<uint8_t, kBuf>& buf, Bits b) {
  if (b.width <= 64) {
    const uint64_t v = wire::get_bits(buf.data(), b.lo, b.width);
    std::vector<uint8_t> out((b.width + 7) / 8);
    for (size_t i = 0; i < out.size(); ++i)
      out[out.size() - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
    return out;
  }
  return std::vector<uint8_t>(buf.begin() + b.lo / 8, buf.begin() + (b.lo + b.width) / 8);
}

// While alive, stderr goes to /dev/null: libibmad warns ("ibwarn: mad_dump_hex: bad int sz")
// on the fields it cannot print, which the tests call on purpose.
class QuietStderr {
 public:
  QuietStderr() : saved_(dup(2)) {
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 2);
      close(null);
    }
  }
  ~QuietStderr() {
    if (saved_ >= 0) {
      dup2(saved_, 2);
      close(saved_);
    }
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_;
};

// libibmad's dump line for field f of buf (mad_decode_field + mad_dump_field).
std::string libibmad_line(uint8_t* buf, int f) {
  std::array<uint8_t, 256> val{};
  mad_decode_field(buf, F(f), val.data());
  std::array<char, 4096> out{};
  mad_dump_field(F(f), out.data(), static_cast<int>(out.size()), val.data());
  return std::string(out.data()) + "\n";
}
std::string our_line(const RowInfo& r, ByteSpan layout_bytes) {
  std::string s;
  if (r.is_bytes) {
    append_dump_line(s, r.label,
                     format_bytes(r.printer, layout_bytes.subspan(r.field.first_byte(), r.field.bit_width / 8)));
  } else {
    append_dump_line(s, r.label, format_integer(r.printer, r.field.bit_width, wire::get(layout_bytes, r.field)));
  }
  return s;
}

std::string field_name(int f) { return mad_field_name(F(f)); }

TEST(MadLibibmadFields, MappingCoversEveryFieldOfTheImplementedAttributes) {
  std::set<int> mapped;
  for (const Mapping& x : mappings()) EXPECT_TRUE(mapped.insert(x.field).second) << field_name(x.field);
  size_t checked = 0;
  for (const Range& r : kCoveredRanges) {
    for (int f = r.first; f < r.end; ++f) {
      if (is_empty_entry(f)) {
        EXPECT_EQ(field_name(f), "") << "libibmad now defines field " << f;
        continue;
      }
      EXPECT_TRUE(mapped.count(f)) << "libibmad field " << f << " (" << field_name(f)
                                   << ") has no softib mapping";
      ++checked;
    }
  }
  EXPECT_EQ(checked, mapped.size());  // and nothing outside the ranges sneaked in
  EXPECT_GT(checked, 230u);
}

TEST(MadLibibmadFields, LieWhereOurRowsLie) {
  for (const Mapping& x : mappings()) {
    SCOPED_TRACE(field_name(x.field));
    const Bits ours = our_bits(x);
    const Bits theirs = libibmad_bits(x.field, ours.width);
    ASSERT_TRUE(theirs.contiguous);
    if (!x.reads_instead.empty()) {
      // A libibmad defect: it reads another row's bits; make sure that is still so.
      Mapping other = x;
      other.first = x.reads_instead;
      const Bits real = our_bits(other);
      EXPECT_EQ(theirs.lo, real.lo);
      EXPECT_EQ(theirs.width, real.width);
      EXPECT_NE(theirs.lo, ours.lo);
      continue;
    }
    EXPECT_EQ(theirs.lo, ours.lo);
    EXPECT_EQ(theirs.width, ours.width);
  }
}

TEST(MadLibibmadFields, LabelsAreLibibmads) {
  for (const Mapping& x : mappings()) {
    if (!single_row(x)) continue;  // a block of rows has no single label
    const RowInfo& r = row_info(*x.subject, x.first);
    EXPECT_EQ(field_name(x.field), x.alias.empty() ? r.label : x.alias) << x.first;
  }
}

TEST(MadLibibmadFields, ReadAndWriteTheSameValues) {
  TestRng rng;
  for (const Mapping& x : mappings()) {
    if (!x.reads_instead.empty()) continue;
    SCOPED_TRACE(field_name(x.field));
    const Subject& s = *x.subject;
    const Bits bits = our_bits(x);
    const uint32_t at = x.base_bit / 8;
    int accepted = 0;
    int rejected = 0;
    for (int i = 0; i < 60; ++i) {
      // Ours -> libibmad: what our encoder wrote, libibmad reads.
      std::array<uint8_t, kBuf> buf{};
      const std::vector<uint8_t> ours = s.random(rng);
      std::copy(ours.begin(), ours.end(), buf.begin() + at);
      ASSERT_EQ(libibmad_get(buf.data(), x.field, bits.width), our_get(buf, bits));
      if (single_integer(x)) {
        const uint64_t theirs = bits.width <= 32 ? mad_get_field(buf.data(), 0, F(x.field))
                                                 : mad_get_field64(buf.data(), 0, F(x.field));
        ASSERT_EQ(theirs, s.typed_get(ours, x.first));
      } else if (single_row(x)) {
        ASSERT_EQ(libibmad_get(buf.data(), x.field, bits.width), s.typed_get_bytes(ours, x.first));
      }

      // libibmad -> ours: what libibmad writes is what our encoder writes for that value,
      // and our decoder reads it back.
      std::vector<uint8_t> v((bits.width + 7) / 8);
      for (uint8_t& b : v) b = static_cast<uint8_t>(rng.next());
      if (bits.width % 8 != 0) v[0] &= static_cast<uint8_t>((1u << (bits.width % 8)) - 1);
      uint64_t iv = 0;
      if (single_integer(x)) {
        const RowInfo& r = row_info(s, x.first);
        for (uint8_t b : v) iv = iv << 8 | b;
        iv = std::clamp(iv, r.legal.min, r.legal.max);
        for (size_t k = 0; k < v.size(); ++k) v[v.size() - 1 - k] = static_cast<uint8_t>(iv >> (8 * k));
      }
      std::array<uint8_t, kBuf> theirs = buf;
      libibmad_set(theirs.data(), x.field, bits.width, v);
      const ByteSpan layout_bytes = ByteSpan(theirs).subspan(at, s.layout.size);
      const std::vector<uint8_t> written(layout_bytes.begin(), layout_bytes.end());
      std::vector<uint8_t> reencoded(s.layout.size);
      const auto err = s.layout.reencode(layout_bytes, reencoded);
      if (single_integer(x) && err && is_cross_field(err->field)) {
        // Our encoder still writes what libibmad wrote; the decoder refuses the header.
        ASSERT_EQ(err->kind, wire::ParseErrorKind::kIllegalValue);
        ASSERT_EQ(written, s.with_value(ours, x.first, iv));
        ++rejected;
        continue;
      }
      ASSERT_FALSE(err.has_value()) << err->to_string();
      ++accepted;
      if (single_integer(x)) {
        ASSERT_EQ(written, s.with_value(ours, x.first, iv));
        ASSERT_EQ(s.typed_get(layout_bytes, x.first), iv);
        ASSERT_EQ(reencoded, written);
      } else if (single_row(x)) {
        ASSERT_EQ(written, s.with_bytes(ours, x.first, v));
        ASSERT_EQ(s.typed_get_bytes(layout_bytes, x.first), v);
        ASSERT_EQ(reencoded, written);
      } else {
        // A block may span reserved bits, which libibmad writes and we clear.
        ASSERT_EQ(reencoded, clear_reserved(s.layout, layout_bytes));
      }
    }
    EXPECT_GT(accepted, 10) << "rejected " << rejected;
    // Values the IBA forbids: libibmad writes them, our decoder names the row.
    if (single_integer(x)) {
      const RowInfo& r = row_info(s, x.first);
      if (r.legal.max < mad::detail::low_mask(r.field.bit_width) || r.legal.min > 0) {
        std::array<uint8_t, kBuf> buf{};
        const std::vector<uint8_t> ours = s.random(rng);
        std::copy(ours.begin(), ours.end(), buf.begin() + at);
        const uint64_t bad = r.legal.max < mad::detail::low_mask(r.field.bit_width) ? r.legal.max + 1 : 0;
        std::vector<uint8_t> be((bits.width + 7) / 8);
        for (size_t k = 0; k < be.size(); ++k) be[be.size() - 1 - k] = static_cast<uint8_t>(bad >> (8 * k));
        libibmad_set(buf.data(), x.field, bits.width, be);
        std::vector<uint8_t> out(s.layout.size);
        auto err = s.layout.reencode(ByteSpan(buf).subspan(at, s.layout.size), out);
        ASSERT_TRUE(err.has_value());
        EXPECT_EQ(err->kind, wire::ParseErrorKind::kIllegalValue);
        EXPECT_EQ(err->field, x.first);
        EXPECT_EQ(err->value, bad);
      }
    }
  }
}

TEST(MadLibibmadFields, DumpLinesAreLibibmads) {
  TestRng rng;
  for (const Mapping& x : mappings()) {
    if (!single_row(x) || !x.reads_instead.empty()) continue;
    SCOPED_TRACE(field_name(x.field));
    const Subject& s = *x.subject;
    const RowInfo& r = row_info(s, x.first);
    for (int i = 0; i < 60; ++i) {
      std::array<uint8_t, kBuf> buf{};
      const std::vector<uint8_t> ours = s.random(rng);
      std::copy(ours.begin(), ours.end(), buf.begin() + x.base_bit / 8);
      const std::string mine = our_line(r, ours);
      if (x.line_differs.empty()) {
        ASSERT_EQ(mine, libibmad_line(buf.data(), x.field));
      } else {
        std::string theirs;
        {
          QuietStderr quiet;
          theirs = libibmad_line(buf.data(), x.field);
        }
        ASSERT_NE(mine, theirs) << "libibmad now prints this field as we do: " << x.line_differs;
      }
    }
  }
}

}  // namespace
}  // namespace softib::mad::compat
