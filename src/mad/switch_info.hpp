// SwitchInfo, IBA 14.2.5.4 (20 bytes): forwarding table sizes and switch-wide settings.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-------------------------------+-------------------------------+
//  |         LinearFDBCap          |         RandomFDBCap          |  0
//  +-------------------------------+-------------------------------+
//  |        MulticastFDBCap        |         LinearFDBTop          |  4
//  +---------------+---------------+---------------+---------+-+---+
//  |  DefaultPort  |DefMcastPrimPrt|DefMcastNotPrim|LifeTime |S|OSV|  8
//  +---------------+---------------+---------------+---------+-+---+
//  |          LIDsPerPort          |    PartitionEnforcementCap    | 12
//  +-+-+-+-+-+---------------------+-------------------------------+
//  |I|O|R|r|E|      Reserved       |        MulticastFDBTop        | 16
//  +-+-+-+-+-+---------------------+-------------------------------+
// S: PortStateChange; OSV: OptimizedSLtoVLMappingProgramming; I/O: Inbound/Outbound
// EnforcementCap; R/r: FilterRawInbound/OutboundCap; E: EnhancedPort0.
#pragma once

#include <array>
#include <cstdint>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct SwitchInfo {
  uint16_t linear_fdb_cap = 0;
  uint16_t random_fdb_cap = 0;
  uint16_t multicast_fdb_cap = 0;
  uint16_t linear_fdb_top = 0;
  uint8_t default_port = 0;
  uint8_t default_multicast_primary_port = 0;
  uint8_t default_multicast_not_primary_port = 0;
  uint8_t life_time_value = 0;  // 5 bits
  bool port_state_change = false;
  uint8_t optimized_sl_to_vl_mapping_programming = 0;  // 2 bits
  uint16_t lids_per_port = 0;
  uint16_t partition_enforcement_cap = 0;
  bool inbound_enforcement_cap = false;
  bool outbound_enforcement_cap = false;
  bool filter_raw_inbound_cap = false;
  bool filter_raw_outbound_cap = false;
  bool enhanced_port0 = false;
  uint16_t multicast_fdb_top = 0;

  friend bool operator==(const SwitchInfo&, const SwitchInfo&) = default;
};

template <>
struct Layout<SwitchInfo> {
  using T = SwitchInfo;
  using P = Printer;
  static constexpr std::string_view kName = "SwitchInfo";
  static constexpr SmpAttr kAttributeId = SmpAttr::kSwitchInfo;
  static constexpr std::array kRows{
      row("LinearFDBCap", 0, 16, "LinearFdbCap", P::kUint, member<&T::linear_fdb_cap>()),
      row("RandomFDBCap", 16, 16, "RandomFdbCap", P::kUint, member<&T::random_fdb_cap>()),
      row("MulticastFDBCap", 32, 16, "McastFdbCap", P::kUint, member<&T::multicast_fdb_cap>()),
      row("LinearFDBTop", 48, 16, "LinearFdbTop", P::kUint, member<&T::linear_fdb_top>()),
      row("DefaultPort", 64, 8, "DefPort", P::kUint, member<&T::default_port>()),
      row("DefaultMulticastPrimaryPort", 72, 8, "DefMcastPrimPort", P::kUint,
          member<&T::default_multicast_primary_port>()),
      row("DefaultMulticastNotPrimaryPort", 80, 8, "DefMcastNotPrimPort", P::kUint,
          member<&T::default_multicast_not_primary_port>()),
      row("LifeTimeValue", 88, 5, "LifeTime", P::kUint, member<&T::life_time_value>()),
      row("PortStateChange", 93, 1, "StateChange", P::kUint, member<&T::port_state_change>()),
      row("OptimizedSLtoVLMappingProgramming", 94, 2, "OptSLtoVLMapping", P::kUint,
          member<&T::optimized_sl_to_vl_mapping_programming>()),
      row("LIDsPerPort", 96, 16, "LidsPerPort", P::kUint, member<&T::lids_per_port>()),
      row("PartitionEnforcementCap", 112, 16, "PartEnforceCap", P::kUint,
          member<&T::partition_enforcement_cap>()),
      row("InboundEnforcementCap", 128, 1, "InboundPartEnf", P::kUint,
          member<&T::inbound_enforcement_cap>()),
      row("OutboundEnforcementCap", 129, 1, "OutboundPartEnf", P::kUint,
          member<&T::outbound_enforcement_cap>()),
      row("FilterRawInboundCap", 130, 1, "FilterRawInbound", P::kUint,
          member<&T::filter_raw_inbound_cap>()),
      row("FilterRawOutboundCap", 131, 1, "FilterRawOutbound", P::kUint,
          member<&T::filter_raw_outbound_cap>()),
      row("EnhancedPort0", 132, 1, "EnhancedPort0", P::kUint, member<&T::enhanced_port0>()),
      reserved<T>(133, 11),
      row("MulticastFDBTop", 144, 16, "MulticastFDBTop", P::kHex, member<&T::multicast_fdb_top>()),
  };
};
static_assert(wire_size<SwitchInfo> == 20);

}  // namespace softib::mad
