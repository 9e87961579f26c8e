// PortInfo, IBA 14.2.5.6 (64 bytes): the state and configuration of one port. Bit offsets
// below are those of the IBA table; a row per field, reserved gaps included (so the SA
// component bits of PortInfoRecord line up, IBA 15.2.5.3).
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                         M_Key (8 bytes)                       |  0
//  +---------------------------------------------------------------+
//  |                       GidPrefix (8 bytes)                     |  8
//  +-------------------------------+-------------------------------+
//  |              LID              |          MasterSMLID          | 16
//  +-------------------------------+-------------------------------+
//  |                        CapabilityMask                         | 20
//  +-------------------------------+-------------------------------+
//  |           DiagCode            |        M_KeyLeasePeriod       | 24
//  +---------------+---------------+---------------+---------------+
//  | LocalPortNum  |LinkWidthEnabl.|LinkWidthSuppt.|LinkWidthActive| 28
//  +-------+-------+-------+-------+---+-----+-----+-------+-------+
//  |LSpSup | PState|PhyStat|LDDefSt|MKP|Resv | LMC |LSpAct |LSpEn  | 32
//  +-------+-------+-------+-------+---+-----+-----+-------+-------+
//  |NbrMTU |MSM_SL | VLCap |InitTyp|  VLHighLimit  |VLArbHighCap   | 36
//  +-------+-------+-------+-------+-----+---------+-------+-+-+-+-+
//  |  VLArbLowCap  |InitRep|MTUCap |VLSC | HOQLife |OperVLs|P|P|F|F| 40
//  +---------------+-------+-------+-----+---------+-------+-+-+-+-+
//  |        M_KeyViolations        |        P_KeyViolations        | 44
//  +-------------------------------+---------------+-+---+---------+
//  |        Q_KeyViolations        |    GUIDCap    |C|MPT|SubnetTO | 48
//  +-----+---------+-------+-------+---------------+-+---+---------+
//  |Resv |RespTime |LPhyErr|Overrun|         MaxCreditHint         | 52
//  +-----+---------+-------+-------+-------------------------------+
//  |   Reserved    |             LinkRoundTripLatency              | 56
//  +---------------+---------------+-------+-------+-----+---------+
//  |        CapabilityMask2        |LSExtAc|LSExtSu|Resv |LSExtEn  | 60
//  +-------------------------------+-------+-------+-----+---------+
// P/P/F/F: PartitionEnforcementInbound/Outbound, FilterRawInbound/Outbound; C:
// ClientReregister; MPT: MulticastPKeyTrapSuppressionEnabled.
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/port_state.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PortInfo {
  uint64_t m_key = 0;
  uint64_t gid_prefix = 0;
  Lid lid;
  Lid master_sm_lid;
  uint32_t capability_mask = 0;
  uint16_t diag_code = 0;
  uint16_t m_key_lease_period = 0;
  uint8_t local_port_num = 0;
  uint8_t link_width_enabled = 0;
  uint8_t link_width_supported = 0;
  uint8_t link_width_active = 0;
  uint8_t link_speed_supported = 0;  // 4 bits
  PortState port_state = PortState::kNoChange;
  PhysPortState port_physical_state = PhysPortState::kNoChange;
  uint8_t link_down_default_state = 0;  // 4 bits
  uint8_t m_key_protect_bits = 0;       // 2 bits
  uint8_t lmc = 0;                      // 3 bits
  uint8_t link_speed_active = 0;        // 4 bits
  uint8_t link_speed_enabled = 0;       // 4 bits
  uint8_t neighbor_mtu = 0;             // 4 bits, MTU code (1 = 256 .. 5 = 4096)
  uint8_t master_sm_sl = 0;             // 4 bits
  uint8_t vl_cap = 0;                   // 4 bits
  uint8_t init_type = 0;                // 4 bits
  uint8_t vl_high_limit = 0;
  uint8_t vl_arbitration_high_cap = 0;
  uint8_t vl_arbitration_low_cap = 0;
  uint8_t init_type_reply = 0;  // 4 bits
  uint8_t mtu_cap = 0;          // 4 bits
  uint8_t vl_stall_count = 0;   // 3 bits
  uint8_t hoq_life = 0;         // 5 bits
  uint8_t operational_vls = 0;  // 4 bits
  bool partition_enforcement_inbound = false;
  bool partition_enforcement_outbound = false;
  bool filter_raw_inbound = false;
  bool filter_raw_outbound = false;
  uint16_t m_key_violations = 0;
  uint16_t p_key_violations = 0;
  uint16_t q_key_violations = 0;
  uint8_t guid_cap = 0;
  bool client_reregister = false;
  uint8_t multicast_pkey_trap_suppression_enabled = 0;  // 2 bits
  uint8_t subnet_timeout = 0;                           // 5 bits
  uint8_t resp_time_value = 0;                          // 5 bits
  uint8_t local_phy_errors = 0;                         // 4 bits
  uint8_t overrun_errors = 0;                           // 4 bits
  uint16_t max_credit_hint = 0;
  uint32_t link_round_trip_latency = 0;  // 24 bits
  uint16_t capability_mask2 = 0;
  uint8_t link_speed_ext_active = 0;     // 4 bits
  uint8_t link_speed_ext_supported = 0;  // 4 bits
  uint8_t link_speed_ext_enabled = 0;    // 5 bits

  friend bool operator==(const PortInfo&, const PortInfo&) = default;
};

template <>
struct Layout<PortInfo> {
  using T = PortInfo;
  using P = Printer;
  static constexpr std::string_view kName = "PortInfo";
  static constexpr SmpAttr kAttributeId = SmpAttr::kPortInfo;
  static constexpr std::array kRows{
      row("M_Key", 0, 64, "Mkey", P::kHex, member<&T::m_key>()),
      row("GidPrefix", 64, 64, "GidPrefix", P::kHex, member<&T::gid_prefix>()),
      row("LID", 128, 16, "Lid", P::kUint, member<&T::lid>()),
      row("MasterSMLID", 144, 16, "SMLid", P::kUint, member<&T::master_sm_lid>()),
      row("CapabilityMask", 160, 32, "CapMask", P::kPortCapMask, member<&T::capability_mask>()),
      row("DiagCode", 192, 16, "DiagCode", P::kHex, member<&T::diag_code>()),
      row("M_KeyLeasePeriod", 208, 16, "MkeyLeasePeriod", P::kUint,
          member<&T::m_key_lease_period>()),
      row("LocalPortNum", 224, 8, "LocalPort", P::kUint, member<&T::local_port_num>()),
      row("LinkWidthEnabled", 232, 8, "LinkWidthEnabled", P::kLinkWidthEnabled,
          member<&T::link_width_enabled>()),
      row("LinkWidthSupported", 240, 8, "LinkWidthSupported", P::kLinkWidthSupported,
          member<&T::link_width_supported>()),
      row("LinkWidthActive", 248, 8, "LinkWidthActive", P::kLinkWidth,
          member<&T::link_width_active>()),
      row("LinkSpeedSupported", 256, 4, "LinkSpeedSupported", P::kLinkSpeedSupported,
          member<&T::link_speed_supported>()),
      row("PortState", 260, 4, "LinkState", P::kPortState, member<&T::port_state>()),
      row("PortPhysicalState", 264, 4, "PhysLinkState", P::kPhysPortState,
          member<&T::port_physical_state>()),
      row("LinkDownDefaultState", 268, 4, "LinkDownDefState", P::kLinkDownDefState,
          member<&T::link_down_default_state>()),
      row("M_KeyProtectBits", 272, 2, "ProtectBits", P::kUint, member<&T::m_key_protect_bits>()),
      reserved<T>(274, 3),
      row("LMC", 277, 3, "LMC", P::kUint, member<&T::lmc>()),
      row("LinkSpeedActive", 280, 4, "LinkSpeedActive", P::kLinkSpeed,
          member<&T::link_speed_active>()),
      row("LinkSpeedEnabled", 284, 4, "LinkSpeedEnabled", P::kLinkSpeedEnabled,
          member<&T::link_speed_enabled>()),
      row("NeighborMTU", 288, 4, "NeighborMTU", P::kMtu, member<&T::neighbor_mtu>()),
      row("MasterSMSL", 292, 4, "SMSL", P::kUint, member<&T::master_sm_sl>()),
      row("VLCap", 296, 4, "VLCap", P::kVlCap, member<&T::vl_cap>()),
      row("InitType", 300, 4, "InitType", P::kHex, member<&T::init_type>()),
      row("VLHighLimit", 304, 8, "VLHighLimit", P::kUint, member<&T::vl_high_limit>()),
      row("VLArbitrationHighCap", 312, 8, "VLArbHighCap", P::kUint,
          member<&T::vl_arbitration_high_cap>()),
      row("VLArbitrationLowCap", 320, 8, "VLArbLowCap", P::kUint,
          member<&T::vl_arbitration_low_cap>()),
      row("InitTypeReply", 328, 4, "InitReply", P::kHex, member<&T::init_type_reply>()),
      row("MTUCap", 332, 4, "MtuCap", P::kMtu, member<&T::mtu_cap>()),
      row("VLStallCount", 336, 3, "VLStallCount", P::kUint, member<&T::vl_stall_count>()),
      row("HOQLife", 339, 5, "HoqLife", P::kUint, member<&T::hoq_life>()),
      row("OperationalVLs", 344, 4, "OperVLs", P::kOperVls, member<&T::operational_vls>()),
      row("PartitionEnforcementInbound", 348, 1, "PartEnforceInb", P::kUint,
          member<&T::partition_enforcement_inbound>()),
      row("PartitionEnforcementOutbound", 349, 1, "PartEnforceOutb", P::kUint,
          member<&T::partition_enforcement_outbound>()),
      row("FilterRawInbound", 350, 1, "FilterRawInb", P::kUint, member<&T::filter_raw_inbound>()),
      row("FilterRawOutbound", 351, 1, "FilterRawOutb", P::kUint,
          member<&T::filter_raw_outbound>()),
      row("M_KeyViolations", 352, 16, "MkeyViolations", P::kUint, member<&T::m_key_violations>()),
      row("P_KeyViolations", 368, 16, "PkeyViolations", P::kUint, member<&T::p_key_violations>()),
      row("Q_KeyViolations", 384, 16, "QkeyViolations", P::kUint, member<&T::q_key_violations>()),
      row("GUIDCap", 400, 8, "GuidCap", P::kUint, member<&T::guid_cap>()),
      row("ClientReregister", 408, 1, "ClientReregister", P::kUint,
          member<&T::client_reregister>()),
      row("MulticastPKeyTrapSuppressionEnabled", 409, 2, "McastPkeyTrapSuppressionEnabled",
          P::kUint, member<&T::multicast_pkey_trap_suppression_enabled>()),
      row("SubnetTimeOut", 411, 5, "SubnetTimeout", P::kUint, member<&T::subnet_timeout>()),
      reserved<T>(416, 3),
      row("RespTimeValue", 419, 5, "RespTimeVal", P::kUint, member<&T::resp_time_value>()),
      row("LocalPhyErrors", 424, 4, "LocalPhysErr", P::kUint, member<&T::local_phy_errors>()),
      row("OverrunErrors", 428, 4, "OverrunErr", P::kUint, member<&T::overrun_errors>()),
      row("MaxCreditHint", 432, 16, "MaxCreditHint", P::kUint, member<&T::max_credit_hint>()),
      reserved<T>(448, 8),
      row("LinkRoundTripLatency", 456, 24, "RoundTrip", P::kUint,
          member<&T::link_round_trip_latency>()),
      row("CapabilityMask2", 480, 16, "CapabilityMask2", P::kPortCapMask2,
          member<&T::capability_mask2>()),
      row("LinkSpeedExtActive", 496, 4, "LinkSpeedExtActive", P::kLinkSpeedExt,
          member<&T::link_speed_ext_active>()),
      row("LinkSpeedExtSupported", 500, 4, "LinkSpeedExtSupported", P::kLinkSpeedExtSupported,
          member<&T::link_speed_ext_supported>()),
      reserved<T>(504, 3),
      row("LinkSpeedExtEnabled", 507, 5, "LinkSpeedExtEnabled", P::kLinkSpeedExtEnabled,
          member<&T::link_speed_ext_enabled>()),
  };
};
static_assert(wire_size<PortInfo> == 64);
static_assert(Layout<PortInfo>::kRows.size() == 55);

}  // namespace softib::mad
