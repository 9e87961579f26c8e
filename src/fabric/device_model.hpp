// softib's default device model: the NodeInfo, SwitchInfo and PortInfo values a node starts
// with before any SM touches it. They mirror what ibsim 0.10 answers (its sim_net.c templates
// as its update_portinfo() leaves them), so that unmodified diagnostic tools print the same
// for the same net file on either simulator; where ibsim's value contradicts the IBA (a CA's
// GID prefix before an SM ran), the IBA wins and the deviation is noted here.
#pragma once

#include "fabric/topology.hpp"
#include "mad/node_info.hpp"
#include "mad/port_info.hpp"
#include "mad/switch_info.hpp"

namespace softib::fabric {

// CapabilityMask bits used below (IBA 14.2.5.6 table 148).
namespace capmask {
inline constexpr uint32_t kIsSm = 1u << 1;
inline constexpr uint32_t kIsTrapSupported = 1u << 3;
inline constexpr uint32_t kIsSlMappingSupported = 1u << 6;
inline constexpr uint32_t kIsExtendedSpeedsSupported = 1u << 14;
inline constexpr uint32_t kIsCapabilityMask2Supported = 1u << 15;
inline constexpr uint32_t kIsVendorClassSupported = 1u << 20;
inline constexpr uint32_t kIsCapabilityMaskNoticeSupported = 1u << 22;
}  // namespace capmask

inline constexpr uint16_t kLinearFdbCap = 49152;  // ibsim: every LID a switch can hold
inline constexpr uint16_t kMulticastFdbCap = 1024;
inline constexpr uint16_t kSwitchPartitionCap = 8;   // P_Keys per switch port (NodeInfo)
inline constexpr uint16_t kSwitchEnforceCap = 64;    // SwitchInfo.PartitionEnforcementCap
inline constexpr uint16_t kCaPartitionCap = 64;
inline constexpr size_t kMaxPKeyCapacity = 64;  // the largest of the above
static_assert(kMaxPKeyCapacity >= kSwitchPartitionCap && kMaxPKeyCapacity >= kSwitchEnforceCap &&
              kMaxPKeyCapacity >= kCaPartitionCap);
inline constexpr uint32_t kRevision = 0xA1;

mad::NodeInfo default_node_info(const TopoNode& node);
mad::SwitchInfo default_switch_info(const TopoNode& node);
// A port of `node` before training: Down/Polling, LID and LMC as the topology preset them.
mad::PortInfo default_port_info(const TopoNode& node, uint8_t port, const TopoPort& topo_port);

}  // namespace softib::fabric
