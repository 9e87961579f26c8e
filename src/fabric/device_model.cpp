#include "fabric/device_model.hpp"

namespace softib::fabric {

mad::NodeInfo default_node_info(const TopoNode& node) {
  mad::NodeInfo ni;
  ni.node_type = static_cast<mad::NodeType>(node.type);
  ni.num_ports = node.num_ports;
  ni.system_image_guid = node.system_image_guid;
  ni.node_guid = node.node_guid;
  ni.port_guid = node.node_guid;  // per port at answer time
  ni.partition_cap = node.type == NodeType::kSwitch ? kSwitchPartitionCap : kCaPartitionCap;
  ni.device_id = node.device_id;
  ni.revision = kRevision;
  ni.vendor_id = node.vendor_id;
  return ni;
}

mad::SwitchInfo default_switch_info(const TopoNode& node) {
  mad::SwitchInfo si;
  si.linear_fdb_cap = kLinearFdbCap;
  si.multicast_fdb_cap = kMulticastFdbCap;
  si.partition_enforcement_cap = kSwitchEnforceCap;
  si.filter_raw_inbound_cap = true;
  si.filter_raw_outbound_cap = true;
  si.enhanced_port0 = node.enhanced_port0;
  // One SLtoVLMappingTable Set may cover every input (and output) port (IBA 14.2.5.8), as
  // on current switch silicon; ibsim lacks it. Invisible in OpenSM's dumps.
  si.optimized_sl_to_vl_mapping_programming = 1;
  return si;
}

mad::PortInfo default_port_info(const TopoNode& node, uint8_t port, const TopoPort& tp) {
  const bool is_switch = node.type == NodeType::kSwitch;
  mad::PortInfo pi;
  pi.lid = tp.lid;
  pi.lmc = tp.lmc;
  pi.local_port_num = is_switch ? 0 : port;
  pi.link_width_enabled = tp.caps.width_enabled;
  pi.link_width_supported = width::kAll;  // ibsim: 1x, 2x, 4x, 8x, 12x
  pi.link_width_active = width::k4x;
  pi.link_speed_supported = speed::kAll;
  pi.link_speed_enabled = tp.caps.speed_enabled;
  pi.link_speed_active = speed::kSdr;
  pi.port_state = mad::PortState::kDown;
  pi.port_physical_state = mad::PhysPortState::kPolling;
  pi.link_down_default_state = 2;  // Polling
  pi.vl_cap = 4;                   // VL0-7
  pi.vl_arbitration_high_cap = 8;
  pi.vl_arbitration_low_cap = 8;
  pi.operational_vls = 4;          // VL0-7
  pi.master_sm_sl = 0;
  if (is_switch && port == 0) {
    // The management port: always up (ibsim's "smaport").
    pi.gid_prefix = Gid::kDefaultSubnetPrefix;
    pi.capability_mask = capmask::kIsTrapSupported | capmask::kIsSlMappingSupported |
                         capmask::kIsExtendedSpeedsSupported | capmask::kIsCapabilityMask2Supported;
    pi.m_key_lease_period = 4089;
    pi.port_state = mad::PortState::kActive;
    pi.port_physical_state = mad::PhysPortState::kLinkUp;
    pi.neighbor_mtu = 1;  // 256
    pi.mtu_cap = 3;       // 1024
    pi.guid_cap = 1;
    pi.subnet_timeout = 31;
    pi.resp_time_value = 8;
    pi.capability_mask2 = 0x430;
    return pi;
  }
  pi.neighbor_mtu = 4;  // 2048
  pi.mtu_cap = 4;       // 2048
  pi.vl_stall_count = 7;
  pi.link_speed_ext_enabled = tp.caps.ext_speed_enabled;
  pi.link_speed_ext_supported = tp.caps.ext_speed_enabled ? ext_speed::kAll : 0;
  if (is_switch) return pi;
  // A CA or router port. ibsim reports GidPrefix 0 until an SM sets it; the IBA's default
  // is FE80::/64 (IBA 4.1.1), which softib reports.
  pi.gid_prefix = Gid::kDefaultSubnetPrefix;
  // IsVendorClassSupported: a CA port takes vendor-class agents (ibping's 0x32), as real
  // HCAs advertise and ibsim's CA ports read once OpenSM has run.
  pi.capability_mask = capmask::kIsTrapSupported | capmask::kIsSlMappingSupported |
                       capmask::kIsExtendedSpeedsSupported | capmask::kIsCapabilityMask2Supported |
                       capmask::kIsVendorClassSupported | capmask::kIsCapabilityMaskNoticeSupported;
  pi.m_key_lease_period = 4089;
  pi.guid_cap = 32;
  pi.subnet_timeout = 31;
  pi.capability_mask2 = 0x430;
  return pi;
}

}  // namespace softib::fabric
