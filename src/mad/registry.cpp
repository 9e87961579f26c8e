#include "mad/registry.hpp"

#include <array>

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

namespace softib::mad {
namespace {

template <class A>
constexpr AttributeEntry entry(MgmtClass c) {
  return AttributeEntry{c, attribute_id_of<A>(), layout_info<A>()};
}

constexpr MgmtClass kSmp = MgmtClass::kSubnLid;
constexpr MgmtClass kSa = MgmtClass::kSubnAdm;
constexpr MgmtClass kPma = MgmtClass::kPerfMgt;

constexpr std::array kAttributes{
    entry<NodeDescription>(kSmp),
    entry<NodeInfo>(kSmp),
    entry<SwitchInfo>(kSmp),
    entry<GUIDInfo>(kSmp),
    entry<PortInfo>(kSmp),
    entry<PKeyTable>(kSmp),
    entry<SLtoVLMappingTable>(kSmp),
    entry<VLArbitrationTable>(kSmp),
    entry<LinearForwardingTable>(kSmp),
    entry<MulticastForwardingTable>(kSmp),
    entry<SMInfo>(kSmp),
    entry<SmpNotice>(kSmp),
    entry<ClassPortInfo>(kSa),
    entry<Notice>(kSa),
    entry<InformInfo>(kSa),
    entry<NodeRecord>(kSa),
    entry<PortInfoRecord>(kSa),
    entry<SwitchInfoRecord>(kSa),
    entry<LinearForwardingTableRecord>(kSa),
    entry<LinkRecord>(kSa),
    entry<ServiceRecord>(kSa),
    entry<PKeyTableRecord>(kSa),
    entry<PathRecord>(kSa),
    entry<MCMemberRecord>(kSa),
    entry<SLtoVLMappingTableRecord>(kSa),
    entry<MulticastForwardingTableRecord>(kSa),
    entry<SMInfoRecord>(kSa),
    entry<GUIDInfoRecord>(kSa),
    entry<VLArbitrationTableRecord>(kSa),
    entry<InformInfoRecord>(kSa),
    entry<ClassPortInfo>(kPma),
    entry<PortCounters>(kPma),
    entry<PortCountersExtended>(kPma),
};

constexpr std::array kMads{
    layout_info<MadHeader>(), layout_info<Smp>(),       layout_info<DrSmp>(),
    layout_info<SaMad>(),     layout_info<PmaMad>(),    layout_info<VendorMad>(),
    layout_info<RmppHeader>(),
};

constexpr std::array kDetails{
    layout_info<TrapGidDetails>(),
    layout_info<Trap128Details>(),
    layout_info<Trap144Details>(),
};

// Where the attribute data starts in a MAD of each class layout.
size_t data_offset(MgmtClass c) {
  switch (c) {
    case MgmtClass::kSubnLid:
    case MgmtClass::kSubnDirected:
      return 64;
    case MgmtClass::kSubnAdm:
      return 56;
    case MgmtClass::kPerfMgt:
      return 64;
    default:
      return is_vendor_range2(c) ? 40 : 24;
  }
}

}  // namespace

std::span<const AttributeEntry> attribute_layouts() { return kAttributes; }
std::span<const LayoutInfo> mad_layouts() { return kMads; }
std::span<const LayoutInfo> detail_layouts() { return kDetails; }

const LayoutInfo* find_attribute(MgmtClass c, uint16_t attribute_id) {
  const MgmtClass key = c == MgmtClass::kSubnDirected ? MgmtClass::kSubnLid : c;
  for (const AttributeEntry& e : kAttributes)
    if (e.mgmt_class == key && e.attribute_id == attribute_id) return &e.layout;
  return nullptr;
}

const LayoutInfo& mad_layout_for(MgmtClass c) {
  switch (c) {
    case MgmtClass::kSubnLid: return kMads[1];
    case MgmtClass::kSubnDirected: return kMads[2];
    case MgmtClass::kSubnAdm: return kMads[3];
    case MgmtClass::kPerfMgt: return kMads[4];
    default: return is_vendor_range2(c) ? kMads[5] : kMads[0];
  }
}

std::string dump_mad(wire::ByteSpan mad) {
  if (mad.size() < kMadSize) return {};
  const auto c = static_cast<MgmtClass>(mad[1]);
  const LayoutInfo& layout = mad_layout_for(c);
  std::array<uint8_t, kMadSize> canonical{};
  if (layout.reencode(mad, canonical)) return {};
  std::string out = layout.dump(mad);
  const uint16_t attribute_id = wire::load_be16(mad.data() + 16);
  if (const LayoutInfo* attr = find_attribute(c, attribute_id)) {
    const wire::ByteSpan data = mad.subspan(data_offset(c));
    if (data.size() >= attr->size) out += attr->dump(data);
  }
  return out;
}

}  // namespace softib::mad
