// PortCountersExtended, IBA 16.1.4.11 (184 bytes): 64-bit traffic counters, and (when
// CounterSelect2 and ClassPortInfo say so) 64-bit copies of the error counters.
//
//   0               1               2               3
//  +---------------+---------------+-------------------------------+
//  |   Reserved    |  PortSelect   |         CounterSelect         |  0
//  +---------------+---------------+-------------------------------+
//  |                        CounterSelect2                         |  4
//  +---------------------------------------------------------------+
//  | PortXmitData, PortRcvData, PortXmitPkts, PortRcvPkts,         |  8
//  | PortUnicastXmitPkts, PortUnicastRcvPkts,                      |
//  | PortMulticastXmitPkts, PortMulticastRcvPkts (8 bytes each)    | ..71
//  +---------------------------------------------------------------+
//  | SymbolErrorCounter .. QP1Dropped: 14 error counters, 8 bytes  | 72..183
//  +---------------------------------------------------------------+
// libibmad (mad_dump_perfcounters_ext) prints CounterSelect2 after the traffic counters;
// kDumpOrder says so.
#pragma once

#include <array>
#include <cstdint>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PortCountersExtended {
  uint8_t port_select = 0;
  uint16_t counter_select = 0;
  uint32_t counter_select2 = 0;
  uint64_t port_xmit_data = 0;
  uint64_t port_rcv_data = 0;
  uint64_t port_xmit_pkts = 0;
  uint64_t port_rcv_pkts = 0;
  uint64_t port_unicast_xmit_pkts = 0;
  uint64_t port_unicast_rcv_pkts = 0;
  uint64_t port_multicast_xmit_pkts = 0;
  uint64_t port_multicast_rcv_pkts = 0;
  uint64_t symbol_error_counter = 0;
  uint64_t link_error_recovery_counter = 0;
  uint64_t link_downed_counter = 0;
  uint64_t port_rcv_errors = 0;
  uint64_t port_rcv_remote_physical_errors = 0;
  uint64_t port_rcv_switch_relay_errors = 0;
  uint64_t port_xmit_discards = 0;
  uint64_t port_xmit_constraint_errors = 0;
  uint64_t port_rcv_constraint_errors = 0;
  uint64_t local_link_integrity_errors = 0;
  uint64_t excessive_buffer_overrun_errors = 0;
  uint64_t vl15_dropped = 0;
  uint64_t port_xmit_wait = 0;
  uint64_t qp1_dropped = 0;

  friend bool operator==(const PortCountersExtended&, const PortCountersExtended&) = default;
};

template <>
struct Layout<PortCountersExtended> {
  using T = PortCountersExtended;
  using P = Printer;
  static constexpr std::string_view kName = "PortCountersExtended";
  static constexpr PmaAttr kAttributeId = PmaAttr::kPortCountersExtended;
  static constexpr std::array kRows{
      reserved<T>(0, 8),
      row("PortSelect", 8, 8, "PortSelect", P::kUint, member<&T::port_select>()),
      row("CounterSelect", 16, 16, "CounterSelect", P::kHex, member<&T::counter_select>()),
      row("CounterSelect2", 32, 32, "CounterSelect2", P::kHex, member<&T::counter_select2>()),
      row("PortXmitData", 64, 64, "PortXmitData", P::kUint, member<&T::port_xmit_data>()),
      row("PortRcvData", 128, 64, "PortRcvData", P::kUint, member<&T::port_rcv_data>()),
      row("PortXmitPkts", 192, 64, "PortXmitPkts", P::kUint, member<&T::port_xmit_pkts>()),
      row("PortRcvPkts", 256, 64, "PortRcvPkts", P::kUint, member<&T::port_rcv_pkts>()),
      row("PortUnicastXmitPkts", 320, 64, "PortUnicastXmitPkts", P::kUint,
          member<&T::port_unicast_xmit_pkts>()),
      row("PortUnicastRcvPkts", 384, 64, "PortUnicastRcvPkts", P::kUint,
          member<&T::port_unicast_rcv_pkts>()),
      row("PortMulticastXmitPkts", 448, 64, "PortMulticastXmitPkts", P::kUint,
          member<&T::port_multicast_xmit_pkts>()),
      row("PortMulticastRcvPkts", 512, 64, "PortMulticastRcvPkts", P::kUint,
          member<&T::port_multicast_rcv_pkts>()),
      row("SymbolErrorCounter", 576, 64, "SymbolErrorCounter", P::kUint,
          member<&T::symbol_error_counter>()),
      row("LinkErrorRecoveryCounter", 640, 64, "LinkErrorRecoveryCounter", P::kUint,
          member<&T::link_error_recovery_counter>()),
      row("LinkDownedCounter", 704, 64, "LinkDownedCounter", P::kUint,
          member<&T::link_downed_counter>()),
      row("PortRcvErrors", 768, 64, "PortRcvErrors", P::kUint, member<&T::port_rcv_errors>()),
      row("PortRcvRemotePhysicalErrors", 832, 64, "PortRcvRemotePhysicalErrors", P::kUint,
          member<&T::port_rcv_remote_physical_errors>()),
      row("PortRcvSwitchRelayErrors", 896, 64, "PortRcvSwitchRelayErrors", P::kUint,
          member<&T::port_rcv_switch_relay_errors>()),
      row("PortXmitDiscards", 960, 64, "PortXmitDiscards", P::kUint,
          member<&T::port_xmit_discards>()),
      row("PortXmitConstraintErrors", 1024, 64, "PortXmitConstraintErrors", P::kUint,
          member<&T::port_xmit_constraint_errors>()),
      row("PortRcvConstraintErrors", 1088, 64, "PortRcvConstraintErrors", P::kUint,
          member<&T::port_rcv_constraint_errors>()),
      row("LocalLinkIntegrityErrors", 1152, 64, "LocalLinkIntegrityErrors", P::kUint,
          member<&T::local_link_integrity_errors>()),
      row("ExcessiveBufferOverrunErrors", 1216, 64, "ExcessiveBufferOverrunErrors", P::kUint,
          member<&T::excessive_buffer_overrun_errors>()),
      row("VL15Dropped", 1280, 64, "VL15Dropped", P::kUint, member<&T::vl15_dropped>()),
      row("PortXmitWait", 1344, 64, "PortXmitWait", P::kUint, member<&T::port_xmit_wait>()),
      row("QP1Dropped", 1408, 64, "QP1Dropped", P::kUint, member<&T::qp1_dropped>()),
  };
  static constexpr std::array<std::string_view, 25> kDumpOrder{
      "PortSelect",
      "CounterSelect",
      "PortXmitData",
      "PortRcvData",
      "PortXmitPkts",
      "PortRcvPkts",
      "PortUnicastXmitPkts",
      "PortUnicastRcvPkts",
      "PortMulticastXmitPkts",
      "PortMulticastRcvPkts",
      "CounterSelect2",
      "SymbolErrorCounter",
      "LinkErrorRecoveryCounter",
      "LinkDownedCounter",
      "PortRcvErrors",
      "PortRcvRemotePhysicalErrors",
      "PortRcvSwitchRelayErrors",
      "PortXmitDiscards",
      "PortXmitConstraintErrors",
      "PortRcvConstraintErrors",
      "LocalLinkIntegrityErrors",
      "ExcessiveBufferOverrunErrors",
      "VL15Dropped",
      "PortXmitWait",
      "QP1Dropped",
  };
};
static_assert(wire_size<PortCountersExtended> == 184);

}  // namespace softib::mad
