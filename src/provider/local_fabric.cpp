#include "provider/local_fabric.hpp"

#include <fmt/format.h>

#include "mad/port_info.hpp"
#include "verbs/caps.hpp"

namespace softib::provider {

LocalFabric::LocalFabric(uint32_t hcas) : next_block_(hcas, 0) {
  for (uint32_t i = 0; i < hcas; ++i) {
    DeviceInfo d;
    d.name = fmt::format("softib{}", i);
    d.node = i;
    d.node_id = fmt::format("local-{}", i);
    d.description = fmt::format("local-{} HCA-1", i);
    // A locally administered OUI (0x02...), so the GUIDs collide with no vendor's.
    d.node_guid = Guid(0x0200000000000000ULL | (uint64_t{i + 1} << 8));
    d.sys_image_guid = d.node_guid;
    d.num_ports = 1;
    d.vendor_id = verbs::kSoftibVendorId;
    d.device_id = static_cast<uint16_t>(verbs::kSoftibVendorPartId);
    d.port_guids.push_back(Guid(d.node_guid.value() + 1));
    devices_.push_back(std::move(d));
  }
}

link::PortSnapshot LocalFabric::port(uint32_t hca) const {
  link::PortSnapshot s;
  s.hca = hca;
  s.port_num = 1;
  s.state = 4;       // Active
  s.phys_state = 5;  // LinkUp
  s.lid = static_cast<uint16_t>(hca + 1);
  s.sm_lid = 1;
  s.max_mtu = 5;
  s.active_mtu = 5;
  s.active_width = 2;  // 4x
  s.active_speed = 4;  // QDR
  s.num_pkeys = 1;
  s.pkeys[0] = 0xFFFF;
  s.num_gids = 1;
  s.gid_prefix = Gid::kDefaultSubnetPrefix;
  s.port_guid = devices_.at(hca).port_guids[0].value();
  // What softibd's CAs advertise (fabric/device_model.cpp): IsTrapSupported, IsSLMappingSupported,
  // IsExtendedSpeedsSupported, IsCapabilityMask2Supported, IsVendorClassSupported,
  // IsCapabilityMaskNoticeSupported (IBA table 148).
  s.cap_mask = (1u << 3) | (1u << 6) | (1u << 14) | (1u << 15) | (1u << 20) | (1u << 22);
  return s;
}

std::pair<uint32_t, uint32_t> LocalFabric::take_qpn_block(uint32_t hca) {
  std::lock_guard lock(mu_);
  const uint32_t b = next_block_.at(hca)++;
  const uint32_t first = b * link::kQpnBlock + (b == 0 ? link::kFirstQpn : 0);
  return {first, b * link::kQpnBlock + link::kQpnBlock - 1};
}

}  // namespace softib::provider
