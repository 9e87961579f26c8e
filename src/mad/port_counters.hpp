// PortCounters, IBA 16.1.3.5 (44 bytes): a port's error and traffic counters (16 and
// 32-bit, saturating). PortXmitData/PortRcvData count 4-byte words.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+---------------+-------------------------------+
//  |   Reserved    |  PortSelect   |         CounterSelect         |  0
//  +---------------+---------------+---------------+---------------+
//  |      SymbolErrorCounter       |LinkErrRecovery| LinkDowned    |  4
//  +-------------------------------+---------------+---------------+
//  |         PortRcvErrors         |  PortRcvRemotePhysicalErrors  |  8
//  +-------------------------------+-------------------------------+
//  |   PortRcvSwitchRelayErrors    |       PortXmitDiscards        | 12
//  +---------------+---------------+---------------+-------+-------+
//  |XmitConstraint |RcvConstraint  |CounterSelect2 |LLIErr |EBOErr | 16
//  +---------------+---------------+---------------+-------+-------+
//  |          QP1Dropped           |          VL15Dropped          | 20
//  +-------------------------------+-------------------------------+
//  |                         PortXmitData                          | 24
//  |                          PortRcvData                          | 28
//  |                         PortXmitPkts                          | 32
//  |                          PortRcvPkts                          | 36
//  |                         PortXmitWait                          | 40
//  +---------------------------------------------------------------+
// LLIErr: LocalLinkIntegrityErrors; EBOErr: ExcessiveBufferOverrunErrors.
#pragma once

#include <array>
#include <cstdint>

#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PortCounters {
  uint8_t port_select = 0;
  uint16_t counter_select = 0;
  uint16_t symbol_error_counter = 0;
  uint8_t link_error_recovery_counter = 0;
  uint8_t link_downed_counter = 0;
  uint16_t port_rcv_errors = 0;
  uint16_t port_rcv_remote_physical_errors = 0;
  uint16_t port_rcv_switch_relay_errors = 0;
  uint16_t port_xmit_discards = 0;
  uint8_t port_xmit_constraint_errors = 0;
  uint8_t port_rcv_constraint_errors = 0;
  uint8_t counter_select2 = 0;
  uint8_t local_link_integrity_errors = 0;     // 4 bits
  uint8_t excessive_buffer_overrun_errors = 0; // 4 bits
  uint16_t qp1_dropped = 0;
  uint16_t vl15_dropped = 0;
  uint32_t port_xmit_data = 0;
  uint32_t port_rcv_data = 0;
  uint32_t port_xmit_pkts = 0;
  uint32_t port_rcv_pkts = 0;
  uint32_t port_xmit_wait = 0;

  friend bool operator==(const PortCounters&, const PortCounters&) = default;
};

template <>
struct Layout<PortCounters> {
  using T = PortCounters;
  using P = Printer;
  static constexpr std::string_view kName = "PortCounters";
  static constexpr PmaAttr kAttributeId = PmaAttr::kPortCounters;
  static constexpr std::array kRows{
      reserved<T>(0, 8),
      row("PortSelect", 8, 8, "PortSelect", P::kUint, member<&T::port_select>()),
      row("CounterSelect", 16, 16, "CounterSelect", P::kHex, member<&T::counter_select>()),
      row("SymbolErrorCounter", 32, 16, "SymbolErrorCounter", P::kUint,
          member<&T::symbol_error_counter>()),
      row("LinkErrorRecoveryCounter", 48, 8, "LinkErrorRecoveryCounter", P::kUint,
          member<&T::link_error_recovery_counter>()),
      row("LinkDownedCounter", 56, 8, "LinkDownedCounter", P::kUint,
          member<&T::link_downed_counter>()),
      row("PortRcvErrors", 64, 16, "PortRcvErrors", P::kUint, member<&T::port_rcv_errors>()),
      row("PortRcvRemotePhysicalErrors", 80, 16, "PortRcvRemotePhysicalErrors", P::kUint,
          member<&T::port_rcv_remote_physical_errors>()),
      row("PortRcvSwitchRelayErrors", 96, 16, "PortRcvSwitchRelayErrors", P::kUint,
          member<&T::port_rcv_switch_relay_errors>()),
      row("PortXmitDiscards", 112, 16, "PortXmitDiscards", P::kUint,
          member<&T::port_xmit_discards>()),
      row("PortXmitConstraintErrors", 128, 8, "PortXmitConstraintErrors", P::kUint,
          member<&T::port_xmit_constraint_errors>()),
      row("PortRcvConstraintErrors", 136, 8, "PortRcvConstraintErrors", P::kUint,
          member<&T::port_rcv_constraint_errors>()),
      row("CounterSelect2", 144, 8, "CounterSelect2", P::kHex, member<&T::counter_select2>()),
      row("LocalLinkIntegrityErrors", 152, 4, "LocalLinkIntegrityErrors", P::kUint,
          member<&T::local_link_integrity_errors>()),
      row("ExcessiveBufferOverrunErrors", 156, 4, "ExcessiveBufferOverrunErrors", P::kUint,
          member<&T::excessive_buffer_overrun_errors>()),
      row("QP1Dropped", 160, 16, "QP1Dropped", P::kUint, member<&T::qp1_dropped>()),
      row("VL15Dropped", 176, 16, "VL15Dropped", P::kUint, member<&T::vl15_dropped>()),
      row("PortXmitData", 192, 32, "PortXmitData", P::kUint, member<&T::port_xmit_data>()),
      row("PortRcvData", 224, 32, "PortRcvData", P::kUint, member<&T::port_rcv_data>()),
      row("PortXmitPkts", 256, 32, "PortXmitPkts", P::kUint, member<&T::port_xmit_pkts>()),
      row("PortRcvPkts", 288, 32, "PortRcvPkts", P::kUint, member<&T::port_rcv_pkts>()),
      row("PortXmitWait", 320, 32, "PortXmitWait", P::kUint, member<&T::port_xmit_wait>()),
  };
};
static_assert(wire_size<PortCounters> == 44);

}  // namespace softib::mad
