// Cross-check against OpenSM's packed structs and accessors (<iba/ib_types.h>, libopensm-dev),
// the independent oracle for what libibmad has no field for: P_KeyTable, the records, trap
// details, InformInfo, most of PathRecord and MCMemberRecord, the MAD structures, and SA
// ComponentMask bits. Both directions, member by member:
//   ours -> theirs: a random value encoded by softib, read through OpenSM's struct
//   theirs -> ours: random bytes in OpenSM's struct, decoded by softib
// ib_types.h compiles cleanly from C++ as a system header (-isystem), so no C shim is needed.
#include <gtest/gtest.h>

#include <iba/ib_types.h>

#include <cstring>
#include <vector>

#include "mad/class_port_info.hpp"
#include "mad/dr_smp.hpp"
#include "mad/guid_info.hpp"
#include "mad/inform_info.hpp"
#include "mad/lft_record.hpp"
#include "mad/link_record.hpp"
#include "mad/mad_header.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/multicast_forwarding_table.hpp"
#include "mad/node_record.hpp"
#include "mad/notice.hpp"
#include "mad/path_record.hpp"
#include "mad/pkey_table_record.hpp"
#include "mad/pma_mad.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_counters_extended.hpp"
#include "mad/port_info_record.hpp"
#include "mad/rmpp_header.hpp"
#include "mad/sa_mad.hpp"
#include "mad/service_record.hpp"
#include "mad/sl_to_vl_table.hpp"
#include "mad/sm_info.hpp"
#include "mad/smp.hpp"
#include "mad/switch_info_record.hpp"
#include "mad/trap128_details.hpp"
#include "mad/trap144_details.hpp"
#include "mad/trap_gid_details.hpp"
#include "mad/vl_arbitration_table.hpp"
#include "subject.hpp"

namespace softib::mad::compat {
namespace {

constexpr int kIterations = 300;

template <class S>
S as(const std::vector<uint8_t>& bytes) {
  S s;
  std::memset(&s, 0, sizeof s);
  std::memcpy(&s, bytes.data(), std::min(sizeof s, bytes.size()));
  return s;
}

uint16_t h16(ib_net16_t v) { return cl_ntoh16(v); }
uint32_t h32(ib_net32_t v) { return cl_ntoh32(v); }
uint64_t h64(ib_net64_t v) { return cl_ntoh64(v); }

Gid gid_of(const ib_gid_t& g) {
  std::array<uint8_t, 16> raw{};
  std::memcpy(raw.data(), g.raw, 16);
  return Gid(raw);
}

// Runs compare(ours, theirs) for random softib values encoded, and for random bytes decoded.
template <class T, class S, class Compare>
void cross_check(Compare compare, bool random_bytes_decode = true) {
  TestRng rng;
  static_assert(sizeof(S) >= wire_size<T>);
  for (int i = 0; i < kIterations; ++i) {
    const T x = mad::test::random_value<T>(rng);
    const std::vector<uint8_t> bytes = encode(x);
    compare(x, as<S>(bytes));
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return;
  }
  if (!random_bytes_decode) return;
  for (int i = 0; i < kIterations; ++i) {
    std::vector<uint8_t> bytes(sizeof(S));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng.next());
    auto x = decode<T>(bytes);
    ASSERT_TRUE(x.ok()) << x.error().to_string();
    compare(*x, as<S>(bytes));
    if (::testing::Test::HasNonfatalFailure()) return;
  }
}

// ---- SMP attributes -------------------------------------------------------------------------

void compare_node_info(const NodeInfo& a, const ib_node_info_t& b) {
  EXPECT_EQ(a.base_version, b.base_version);
  EXPECT_EQ(a.class_version, b.class_version);
  EXPECT_EQ(static_cast<uint8_t>(a.node_type), b.node_type);
  EXPECT_EQ(a.num_ports, b.num_ports);
  EXPECT_EQ(a.system_image_guid.value(), h64(b.sys_guid));
  EXPECT_EQ(a.node_guid.value(), h64(b.node_guid));
  EXPECT_EQ(a.port_guid.value(), h64(b.port_guid));
  EXPECT_EQ(a.partition_cap, h16(b.partition_cap));
  EXPECT_EQ(a.device_id, h16(b.device_id));
  EXPECT_EQ(a.revision, h32(b.revision));
  EXPECT_EQ(a.local_port_num, ib_node_info_get_local_port_num(&b));
  EXPECT_EQ(a.vendor_id, h32(ib_node_info_get_vendor_id(&b)));
}

void compare_node_description(const NodeDescription& a, const ib_node_desc_t& b) {
  EXPECT_EQ(0, std::memcmp(a.node_string.data(), b.description, 64));
}

void compare_port_info(const PortInfo& a, const ib_port_info_t& b) {
  EXPECT_EQ(a.m_key, h64(b.m_key));
  EXPECT_EQ(a.gid_prefix, h64(b.subnet_prefix));
  EXPECT_EQ(a.lid.value(), h16(b.base_lid));
  EXPECT_EQ(a.master_sm_lid.value(), h16(b.master_sm_base_lid));
  EXPECT_EQ(a.capability_mask, h32(b.capability_mask));
  EXPECT_EQ(a.diag_code, h16(b.diag_code));
  EXPECT_EQ(a.m_key_lease_period, h16(b.m_key_lease_period));
  EXPECT_EQ(a.local_port_num, b.local_port_num);
  EXPECT_EQ(a.link_width_enabled, b.link_width_enabled);
  EXPECT_EQ(a.link_width_supported, b.link_width_supported);
  EXPECT_EQ(a.link_width_active, b.link_width_active);
  EXPECT_EQ(a.link_speed_supported, ib_port_info_get_link_speed_sup(&b));
  EXPECT_EQ(static_cast<uint8_t>(a.port_state), ib_port_info_get_port_state(&b));
  EXPECT_EQ(static_cast<uint8_t>(a.port_physical_state), ib_port_info_get_port_phys_state(&b));
  EXPECT_EQ(a.link_down_default_state, ib_port_info_get_link_down_def_state(&b));
  EXPECT_EQ(a.m_key_protect_bits, ib_port_info_get_mpb(&b));
  EXPECT_EQ(a.lmc, ib_port_info_get_lmc(&b));
  EXPECT_EQ(a.link_speed_active, ib_port_info_get_link_speed_active(&b));
  EXPECT_EQ(a.link_speed_enabled, ib_port_info_get_link_speed_enabled(&b));
  EXPECT_EQ(a.neighbor_mtu, ib_port_info_get_neighbor_mtu(&b));
  EXPECT_EQ(a.master_sm_sl, ib_port_info_get_master_smsl(&b));
  EXPECT_EQ(a.vl_cap, ib_port_info_get_vl_cap(&b));
  EXPECT_EQ(a.init_type, ib_port_info_get_init_type(&b));
  EXPECT_EQ(a.vl_high_limit, b.vl_high_limit);
  EXPECT_EQ(a.vl_arbitration_high_cap, b.vl_arb_high_cap);
  EXPECT_EQ(a.vl_arbitration_low_cap, b.vl_arb_low_cap);
  EXPECT_EQ(a.init_type_reply, b.mtu_cap >> 4);
  EXPECT_EQ(a.mtu_cap, ib_port_info_get_mtu_cap(&b));
  EXPECT_EQ(a.vl_stall_count, ib_port_info_get_vl_stall_count(&b));
  EXPECT_EQ(a.hoq_life, ib_port_info_get_hoq_lifetime(&b));
  EXPECT_EQ(a.operational_vls, ib_port_info_get_op_vls(&b));
  EXPECT_EQ(a.partition_enforcement_inbound, (b.vl_enforce & 0x08) != 0);
  EXPECT_EQ(a.partition_enforcement_outbound, (b.vl_enforce & 0x04) != 0);
  EXPECT_EQ(a.filter_raw_inbound, (b.vl_enforce & 0x02) != 0);
  EXPECT_EQ(a.filter_raw_outbound, (b.vl_enforce & 0x01) != 0);
  EXPECT_EQ(a.m_key_violations, h16(b.m_key_violations));
  EXPECT_EQ(a.p_key_violations, h16(b.p_key_violations));
  EXPECT_EQ(a.q_key_violations, h16(b.q_key_violations));
  EXPECT_EQ(a.guid_cap, b.guid_cap);
  EXPECT_EQ(a.client_reregister, ib_port_info_get_client_rereg(&b) != 0);
  EXPECT_EQ(a.multicast_pkey_trap_suppression_enabled, ib_port_info_get_mcast_pkey_trap_suppress(&b));
  EXPECT_EQ(a.subnet_timeout, ib_port_info_get_timeout(&b));
  EXPECT_EQ(a.resp_time_value, ib_port_info_get_resp_time_value(&b));
  EXPECT_EQ(a.local_phy_errors, ib_port_info_get_local_phy_err_thd(&b));
  EXPECT_EQ(a.overrun_errors, ib_port_info_get_overrun_err_thd(&b));
  EXPECT_EQ(a.max_credit_hint, h16(b.max_credit_hint));
  EXPECT_EQ(a.link_round_trip_latency, h32(b.link_rt_latency) & 0xFFFFFF);
  EXPECT_EQ(a.capability_mask2, h16(b.capability_mask2));
  EXPECT_EQ(a.link_speed_ext_active, ib_port_info_get_link_speed_ext_active(&b));
  EXPECT_EQ(a.link_speed_ext_supported, ib_port_info_get_link_speed_ext_sup(&b));
  EXPECT_EQ(a.link_speed_ext_enabled, ib_port_info_get_link_speed_ext_enabled(&b));
}

void compare_switch_info(const SwitchInfo& a, const ib_switch_info_t& b) {
  EXPECT_EQ(a.linear_fdb_cap, h16(b.lin_cap));
  EXPECT_EQ(a.random_fdb_cap, h16(b.rand_cap));
  EXPECT_EQ(a.multicast_fdb_cap, h16(b.mcast_cap));
  EXPECT_EQ(a.linear_fdb_top, h16(b.lin_top));
  EXPECT_EQ(a.default_port, b.def_port);
  EXPECT_EQ(a.default_multicast_primary_port, b.def_mcast_pri_port);
  EXPECT_EQ(a.default_multicast_not_primary_port, b.def_mcast_not_port);
  EXPECT_EQ(a.life_time_value, b.life_state >> 3);
  EXPECT_EQ(a.port_state_change, ib_switch_info_get_state_change(&b) != 0);
  EXPECT_EQ(a.optimized_sl_to_vl_mapping_programming & 1, ib_switch_info_get_opt_sl2vlmapping(&b) ? 1 : 0);
  EXPECT_EQ(a.optimized_sl_to_vl_mapping_programming, b.life_state & 0x3);
  EXPECT_EQ(a.lids_per_port, h16(b.lids_per_port));
  EXPECT_EQ(a.partition_enforcement_cap, h16(b.enforce_cap));
  EXPECT_EQ(a.inbound_enforcement_cap, (b.flags & 0x80) != 0);
  EXPECT_EQ(a.outbound_enforcement_cap, (b.flags & 0x40) != 0);
  EXPECT_EQ(a.filter_raw_inbound_cap, (b.flags & 0x20) != 0);
  EXPECT_EQ(a.filter_raw_outbound_cap, (b.flags & 0x10) != 0);
  EXPECT_EQ(a.enhanced_port0, (b.flags & 0x08) != 0);
  EXPECT_EQ(a.multicast_fdb_top, h16(b.mcast_top));
}

void compare_sm_info(const SMInfo& a, const ib_sm_info_t& b) {
  EXPECT_EQ(a.guid.value(), h64(b.guid));
  EXPECT_EQ(a.sm_key, h64(b.sm_key));
  EXPECT_EQ(a.act_count, h32(b.act_count));
  EXPECT_EQ(a.priority, ib_sminfo_get_priority(&b));
  EXPECT_EQ(static_cast<uint8_t>(a.sm_state), ib_sminfo_get_state(&b));
}

TEST(MadOpenSm, NodeInfo) { cross_check<NodeInfo, ib_node_info_t>(compare_node_info); }
TEST(MadOpenSm, NodeDescription) { cross_check<NodeDescription, ib_node_desc_t>(compare_node_description); }
TEST(MadOpenSm, PortInfo) { cross_check<PortInfo, ib_port_info_t>(compare_port_info); }
TEST(MadOpenSm, SwitchInfo) { cross_check<SwitchInfo, ib_switch_info_t>(compare_switch_info); }
TEST(MadOpenSm, SMInfo) { cross_check<SMInfo, ib_sm_info_t>(compare_sm_info); }

TEST(MadOpenSm, GUIDInfo) {
  cross_check<GUIDInfo, ib_guid_info_t>([](const GUIDInfo& a, const ib_guid_info_t& b) {
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(a.guids[i].value(), h64(b.guid[i])) << i;
  });
}

TEST(MadOpenSm, PKeyTable) {
  cross_check<PKeyTable, ib_pkey_table_t>([](const PKeyTable& a, const ib_pkey_table_t& b) {
    for (size_t i = 0; i < 32; ++i) EXPECT_EQ(a.pkeys[i].value(), h16(b.pkey_entry[i])) << i;
  });
}

TEST(MadOpenSm, SLtoVLMappingTable) {
  cross_check<SLtoVLMappingTable, ib_slvl_table_t>([](const SLtoVLMappingTable& a, const ib_slvl_table_t& b) {
    for (uint8_t sl = 0; sl < 16; ++sl) EXPECT_EQ(a.vl_for_sl[sl], ib_slvl_table_get(&b, sl)) << int{sl};
  });
}

TEST(MadOpenSm, VLArbitrationTable) {
  cross_check<VLArbitrationTable, ib_vl_arb_table_t>([](const VLArbitrationTable& a, const ib_vl_arb_table_t& b) {
    for (size_t i = 0; i < 32; ++i) {
      EXPECT_EQ(a.entries[i].vl, b.vl_entry[i].vl & 0x0F) << i;
      EXPECT_EQ(a.entries[i].weight, b.vl_entry[i].weight) << i;
    }
  });
}

TEST(MadOpenSm, LinearForwardingTable) {
  // OpenSM has no LFT attribute struct; the block is the lft[] of its LFT record.
  cross_check<LinearForwardingTableRecord, ib_lft_record_t>(
      [](const LinearForwardingTableRecord& a, const ib_lft_record_t& b) {
        EXPECT_EQ(a.lid.value(), h16(b.lid));
        EXPECT_EQ(a.block_num, h16(b.block_num));
        EXPECT_EQ(0, std::memcmp(a.lft.ports.data(), b.lft, 64));
      });
}

TEST(MadOpenSm, MulticastForwardingTable) {
  // The MFT block is the mft[] of OpenSM's MFT record, which starts 8 bytes in.
  TestRng rng;
  for (int i = 0; i < kIterations; ++i) {
    const auto a = mad::test::random_value<MulticastForwardingTable>(rng);
    std::vector<uint8_t> rec(8);
    const auto block = encode(a);
    rec.insert(rec.end(), block.begin(), block.end());
    const auto b = as<ib_mft_record_t>(rec);
    for (size_t k = 0; k < 32; ++k) ASSERT_EQ(a.port_masks[k], h16(b.mft[k])) << k;
  }
}

// ---- Notice and trap details ------------------------------------------------------------------

void compare_notice(const Notice& a, const ib_mad_notice_attr_t& b) {
  EXPECT_EQ(a.is_generic, ib_notice_is_generic(&b) != 0);
  EXPECT_EQ(a.type, ib_notice_get_type(&b));
  EXPECT_EQ(a.producer_type_or_vendor_id, h32(ib_notice_get_prod_type(&b)));
  EXPECT_EQ(a.producer_type_or_vendor_id, h32(ib_notice_get_vend_id(&b)));
  EXPECT_EQ(a.trap_number_or_device_id, h16(b.g_or_v.generic.trap_num));
  EXPECT_EQ(a.issuer_lid.value(), h16(b.issuer_lid));
  EXPECT_EQ(a.notice_toggle, (h16(b.toggle_count) & 0x8000) != 0);
  EXPECT_EQ(a.notice_count, h16(b.toggle_count) & 0x7FFF);
  EXPECT_EQ(0, std::memcmp(a.data_details.data(), b.data_details.raw_data.details, 54));
  EXPECT_EQ(a.issuer_gid, gid_of(b.issuer_gid));

  // The trap-specific views of the same DataDetails.
  const auto g = a.details<TrapGidDetails>();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->gid, gid_of(b.data_details.ntc_64_67.gid));
  const auto t128 = a.details<Trap128Details>();
  ASSERT_TRUE(t128.ok());
  EXPECT_EQ(t128->lid.value(), h16(b.data_details.ntc_128.sw_lid));
  const auto t144 = a.details<Trap144Details>();
  ASSERT_TRUE(t144.ok());
  const auto& n = b.data_details.ntc_144;
  EXPECT_EQ(t144->lid.value(), h16(n.lid));
  EXPECT_EQ(t144->other_local_changes, (n.local_changes & TRAP_144_MASK_OTHER_LOCAL_CHANGES) != 0);
  EXPECT_EQ(t144->capability_mask, h32(n.new_cap_mask));
  EXPECT_EQ(t144->capability_mask2_change, (n.change_flgs & TRAP_144_MASK_CAPABILITY_MASK2_CHANGE) != 0);
  EXPECT_EQ(t144->hierarchy_info_change, (n.change_flgs & TRAP_144_MASK_HIERARCHY_INFO_CHANGE) != 0);
  EXPECT_EQ(t144->sm_priority_change, (n.change_flgs & TRAP_144_MASK_SM_PRIORITY_CHANGE) != 0);
  EXPECT_EQ(t144->link_speed_enabled_change,
            (n.change_flgs & TRAP_144_MASK_LINK_SPEED_ENABLE_CHANGE) != 0);
  EXPECT_EQ(t144->link_width_enabled_change,
            (n.change_flgs & TRAP_144_MASK_LINK_WIDTH_ENABLE_CHANGE) != 0);
  EXPECT_EQ(t144->node_description_change,
            (n.change_flgs & TRAP_144_MASK_NODE_DESCRIPTION_CHANGE) != 0);
  EXPECT_EQ(t144->capability_mask2, h16(n.cap_mask2));
}

TEST(MadOpenSm, NoticeAndTrapDetails) { cross_check<Notice, ib_mad_notice_attr_t>(compare_notice); }

TEST(MadOpenSm, TrapDetailsWrittenBySoftib) {
  // Trap details encoded by softib, read by OpenSM (the Notice test reads them the other way).
  TestRng rng;
  for (int i = 0; i < kIterations; ++i) {
    Notice n = mad::test::random_value<Notice>(rng);
    const auto t144 = mad::test::random_value<Trap144Details>(rng);
    n.set_details(t144);
    auto b = as<ib_mad_notice_attr_t>(encode(n));
    EXPECT_EQ(t144.lid.value(), h16(b.data_details.ntc_144.lid));
    EXPECT_EQ(t144.capability_mask, h32(b.data_details.ntc_144.new_cap_mask));
    EXPECT_EQ(t144.capability_mask2, h16(b.data_details.ntc_144.cap_mask2));
    const auto t128 = mad::test::random_value<Trap128Details>(rng);
    n.set_details(t128);
    b = as<ib_mad_notice_attr_t>(encode(n));
    EXPECT_EQ(t128.lid.value(), h16(b.data_details.ntc_128.sw_lid));
    const auto g = mad::test::random_value<TrapGidDetails>(rng);
    n.set_details(g);
    b = as<ib_mad_notice_attr_t>(encode(n));
    EXPECT_EQ(g.gid, gid_of(b.data_details.ntc_64_67.gid));
  }
}

// ---- SA records --------------------------------------------------------------------------------

void compare_path_record(const PathRecord& a, const ib_path_rec_t& b) {
  EXPECT_EQ(a.service_id, h64(b.service_id));
  EXPECT_EQ(a.dgid, gid_of(b.dgid));
  EXPECT_EQ(a.sgid, gid_of(b.sgid));
  EXPECT_EQ(a.dlid.value(), h16(b.dlid));
  EXPECT_EQ(a.slid.value(), h16(b.slid));
  EXPECT_EQ(a.raw_traffic, (h32(b.hop_flow_raw) >> 31) != 0);
  EXPECT_EQ(a.flow_label, ib_path_rec_flow_lbl(&b));
  EXPECT_EQ(a.hop_limit, ib_path_rec_hop_limit(&b));
  EXPECT_EQ(a.tclass, b.tclass);
  EXPECT_EQ(a.reversible, (b.num_path & 0x80) != 0);
  EXPECT_EQ(a.numb_path, ib_path_rec_num_path(&b));
  EXPECT_EQ(a.pkey.value(), h16(b.pkey));
  EXPECT_EQ(a.qos_class, ib_path_rec_qos_class(&b));
  EXPECT_EQ(a.sl, ib_path_rec_sl(&b));
  EXPECT_EQ(a.mtu_selector, ib_path_rec_mtu_sel(&b));
  EXPECT_EQ(a.mtu, ib_path_rec_mtu(&b));
  EXPECT_EQ(a.rate_selector, ib_path_rec_rate_sel(&b));
  EXPECT_EQ(a.rate, ib_path_rec_rate(&b));
  EXPECT_EQ(a.packet_life_time_selector, ib_path_rec_pkt_life_sel(&b));
  EXPECT_EQ(a.packet_life_time, ib_path_rec_pkt_life(&b));
  EXPECT_EQ(a.preference, b.preference);
}

TEST(MadOpenSm, PathRecord) { cross_check<PathRecord, ib_path_rec_t>(compare_path_record); }

TEST(MadOpenSm, NodeRecord) {
  cross_check<NodeRecord, ib_node_record_t>([](const NodeRecord& a, const ib_node_record_t& b) {
    EXPECT_EQ(a.lid.value(), h16(b.lid));
    compare_node_info(a.node_info, b.node_info);
    compare_node_description(a.node_description, b.node_desc);
  });
}

TEST(MadOpenSm, PortInfoRecord) {
  cross_check<PortInfoRecord, ib_portinfo_record_t>(
      [](const PortInfoRecord& a, const ib_portinfo_record_t& b) {
        EXPECT_EQ(a.endport_lid.value(), h16(b.lid));
        EXPECT_EQ(a.port_num, b.port_num);
        EXPECT_EQ(a.options, b.options);
        compare_port_info(a.port_info, b.port_info);
      });
}

TEST(MadOpenSm, LinkRecord) {
  cross_check<LinkRecord, ib_link_record_t>([](const LinkRecord& a, const ib_link_record_t& b) {
    EXPECT_EQ(a.from_lid.value(), h16(b.from_lid));
    EXPECT_EQ(a.from_port, b.from_port_num);
    EXPECT_EQ(a.to_port, b.to_port_num);
    EXPECT_EQ(a.to_lid.value(), h16(b.to_lid));
  });
}

TEST(MadOpenSm, SwitchInfoRecord) {
  cross_check<SwitchInfoRecord, ib_switch_info_record_t>(
      [](const SwitchInfoRecord& a, const ib_switch_info_record_t& b) {
        EXPECT_EQ(a.lid.value(), h16(b.lid));
        compare_switch_info(a.switch_info, b.switch_info);
      });
}

TEST(MadOpenSm, PKeyTableRecord) {
  cross_check<PKeyTableRecord, ib_pkey_table_record_t>(
      [](const PKeyTableRecord& a, const ib_pkey_table_record_t& b) {
        EXPECT_EQ(a.lid.value(), h16(b.lid));
        EXPECT_EQ(a.block_num, h16(b.block_num));
        EXPECT_EQ(a.port_num, b.port_num);
        for (size_t i = 0; i < 32; ++i) EXPECT_EQ(a.pkey_table.pkeys[i].value(), h16(b.pkey_tbl.pkey_entry[i]));
      });
}

TEST(MadOpenSm, MCMemberRecord) {
  cross_check<MCMemberRecord, ib_member_rec_t>([](const MCMemberRecord& a, const ib_member_rec_t& b) {
    EXPECT_EQ(a.mgid, gid_of(b.mgid));
    EXPECT_EQ(a.port_gid, gid_of(b.port_gid));
    EXPECT_EQ(a.q_key.value(), h32(b.qkey));
    EXPECT_EQ(a.mlid.value(), h16(b.mlid));
    EXPECT_EQ(a.mtu_selector, b.mtu >> 6);
    EXPECT_EQ(a.mtu, b.mtu & 0x3F);
    EXPECT_EQ(a.tclass, b.tclass);
    EXPECT_EQ(a.pkey.value(), h16(b.pkey));
    EXPECT_EQ(a.rate_selector, b.rate >> 6);
    EXPECT_EQ(a.rate, b.rate & 0x3F);
    EXPECT_EQ(a.packet_life_time_selector, b.pkt_life >> 6);
    EXPECT_EQ(a.packet_life_time, b.pkt_life & 0x3F);
    uint8_t sl = 0, hop = 0, scope = 0, state = 0;
    uint32_t flow = 0;
    ib_member_get_sl_flow_hop(b.sl_flow_hop, &sl, &flow, &hop);
    ib_member_get_scope_state(b.scope_state, &scope, &state);
    EXPECT_EQ(a.sl, sl);
    EXPECT_EQ(a.flow_label, flow);
    EXPECT_EQ(a.hop_limit, hop);
    EXPECT_EQ(a.scope, scope);
    EXPECT_EQ(a.join_state, state);
    // ProxyJoin is OpenSM's C bitfield `proxy_join:1`, host bit order (the LSB of byte 49 on
    // x86) where the IBA has the MSB; libibmad's IB_SA_MCM_PROXY_JOIN_F checks our row.
  });
}

TEST(MadOpenSm, ServiceRecord) {
  cross_check<ServiceRecord, ib_service_record_t>([](const ServiceRecord& a, const ib_service_record_t& b) {
    EXPECT_EQ(a.service_id, h64(b.service_id));
    EXPECT_EQ(a.service_gid, gid_of(b.service_gid));
    EXPECT_EQ(a.service_pkey.value(), h16(b.service_pkey));
    EXPECT_EQ(a.service_lease, h32(b.service_lease));
    EXPECT_EQ(0, std::memcmp(a.service_key.data(), b.service_key, 16));
    EXPECT_EQ(0, std::memcmp(a.service_name.data(), b.service_name, 64));
    EXPECT_EQ(0, std::memcmp(a.service_data8.data(), b.service_data8, 16));
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(a.service_data16[i], h16(b.service_data16[i]));
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.service_data32[i], h32(b.service_data32[i]));
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(a.service_data64[i], h64(b.service_data64[i]));
  });
}

TEST(MadOpenSm, InformInfo) {
  cross_check<InformInfo, ib_inform_info_t>([](const InformInfo& a, const ib_inform_info_t& b) {
    EXPECT_EQ(a.gid, gid_of(b.gid));
    EXPECT_EQ(a.lid_range_begin.value(), h16(b.lid_range_begin));
    EXPECT_EQ(a.lid_range_end.value(), h16(b.lid_range_end));
    EXPECT_EQ(a.is_generic, b.is_generic);
    EXPECT_EQ(a.subscribe, b.subscribe);
    EXPECT_EQ(a.type, h16(b.trap_type));
    EXPECT_EQ(a.trap_number_or_device_id, h16(b.g_or_v.generic.trap_num));
    ib_net32_t qpn = 0;
    uint8_t resp = 0;
    ib_inform_info_get_qpn_resp_time(b.g_or_v.generic.qpn_resp_time_val, &qpn, &resp);
    EXPECT_EQ(a.qpn.value(), h32(qpn));
    EXPECT_EQ(a.resp_time_value, resp);
    EXPECT_EQ(a.producer_type_or_vendor_id, h32(ib_inform_info_get_prod_type(&b)));
    EXPECT_EQ(a.producer_type_or_vendor_id, h32(ib_inform_info_get_vend_id(&b)));
  });
}

// ---- PMA --------------------------------------------------------------------------------------

TEST(MadOpenSm, ClassPortInfo) {
  cross_check<ClassPortInfo, ib_class_port_info_t>([](const ClassPortInfo& a, const ib_class_port_info_t& b) {
    auto bb = b;
    EXPECT_EQ(a.base_version, b.base_ver);
    EXPECT_EQ(a.class_version, b.class_ver);
    EXPECT_EQ(a.capability_mask, h16(b.cap_mask));
    EXPECT_EQ(a.capability_mask2, h32(b.cap_mask2_resp_time) >> 5);
    EXPECT_EQ(a.resp_time_value, ib_class_resp_time_val(&bb));
    EXPECT_EQ(a.redirect_gid, gid_of(b.redir_gid));
    EXPECT_EQ(a.redirect_tc, h32(b.redir_tc_sl_fl) >> 24);
    EXPECT_EQ(a.redirect_sl, (h32(b.redir_tc_sl_fl) >> 20) & 0xF);
    EXPECT_EQ(a.redirect_fl, h32(b.redir_tc_sl_fl) & 0xFFFFF);
    EXPECT_EQ(a.redirect_lid.value(), h16(b.redir_lid));
    EXPECT_EQ(a.redirect_pkey.value(), h16(b.redir_pkey));
    EXPECT_EQ(a.redirect_qp.value(), h32(b.redir_qp) & 0xFFFFFF);
    EXPECT_EQ(a.redirect_qkey.value(), h32(b.redir_qkey));
    EXPECT_EQ(a.trap_gid, gid_of(b.trap_gid));
    EXPECT_EQ(a.trap_tc, h32(b.trap_tc_sl_fl) >> 24);
    EXPECT_EQ(a.trap_sl, (h32(b.trap_tc_sl_fl) >> 20) & 0xF);
    EXPECT_EQ(a.trap_fl, h32(b.trap_tc_sl_fl) & 0xFFFFF);
    EXPECT_EQ(a.trap_lid.value(), h16(b.trap_lid));
    EXPECT_EQ(a.trap_pkey.value(), h16(b.trap_pkey));
    EXPECT_EQ(a.trap_hl, h32(b.trap_hop_qp) >> 24);
    EXPECT_EQ(a.trap_qp.value(), h32(b.trap_hop_qp) & 0xFFFFFF);
    EXPECT_EQ(a.trap_qkey.value(), h32(b.trap_qkey));
  });
}

TEST(MadOpenSm, PortCounters) {
  cross_check<PortCounters, ib_port_counters_t>([](const PortCounters& a, const ib_port_counters_t& b) {
    EXPECT_EQ(a.port_select, b.port_select);
    EXPECT_EQ(a.counter_select, h16(b.counter_select));
    EXPECT_EQ(a.symbol_error_counter, h16(b.symbol_err_cnt));
    EXPECT_EQ(a.link_error_recovery_counter, b.link_err_recover);
    EXPECT_EQ(a.link_downed_counter, b.link_downed);
    EXPECT_EQ(a.port_rcv_errors, h16(b.rcv_err));
    EXPECT_EQ(a.port_rcv_remote_physical_errors, h16(b.rcv_rem_phys_err));
    EXPECT_EQ(a.port_rcv_switch_relay_errors, h16(b.rcv_switch_relay_err));
    EXPECT_EQ(a.port_xmit_discards, h16(b.xmit_discards));
    EXPECT_EQ(a.port_xmit_constraint_errors, b.xmit_constraint_err);
    EXPECT_EQ(a.port_rcv_constraint_errors, b.rcv_constraint_err);
    EXPECT_EQ(a.counter_select2, b.counter_select2);
    EXPECT_EQ(a.local_link_integrity_errors, PC_LINK_INT(b.link_int_buffer_overrun));
    EXPECT_EQ(a.excessive_buffer_overrun_errors, PC_BUF_OVERRUN(b.link_int_buffer_overrun));
    EXPECT_EQ(a.qp1_dropped, h16(b.qp1_dropped));
    EXPECT_EQ(a.vl15_dropped, h16(b.vl15_dropped));
    EXPECT_EQ(a.port_xmit_data, h32(b.xmit_data));
    EXPECT_EQ(a.port_rcv_data, h32(b.rcv_data));
    EXPECT_EQ(a.port_xmit_pkts, h32(b.xmit_pkts));
    EXPECT_EQ(a.port_rcv_pkts, h32(b.rcv_pkts));
    EXPECT_EQ(a.port_xmit_wait, h32(b.xmit_wait));
  });
}

TEST(MadOpenSm, PortCountersExtended) {
  cross_check<PortCountersExtended, ib_port_counters_ext_t>(
      [](const PortCountersExtended& a, const ib_port_counters_ext_t& b) {
        EXPECT_EQ(a.port_select, b.port_select);
        EXPECT_EQ(a.counter_select, h16(b.counter_select));
        EXPECT_EQ(a.counter_select2, h32(b.counter_select2));
        EXPECT_EQ(a.port_xmit_data, h64(b.xmit_data));
        EXPECT_EQ(a.port_rcv_data, h64(b.rcv_data));
        EXPECT_EQ(a.port_xmit_pkts, h64(b.xmit_pkts));
        EXPECT_EQ(a.port_rcv_pkts, h64(b.rcv_pkts));
        EXPECT_EQ(a.port_unicast_xmit_pkts, h64(b.unicast_xmit_pkts));
        EXPECT_EQ(a.port_unicast_rcv_pkts, h64(b.unicast_rcv_pkts));
        EXPECT_EQ(a.port_multicast_xmit_pkts, h64(b.multicast_xmit_pkts));
        EXPECT_EQ(a.port_multicast_rcv_pkts, h64(b.multicast_rcv_pkts));
        EXPECT_EQ(a.symbol_error_counter, h64(b.symbol_err_cnt));
        EXPECT_EQ(a.link_error_recovery_counter, h64(b.link_err_recover));
        EXPECT_EQ(a.link_downed_counter, h64(b.link_downed));
        EXPECT_EQ(a.port_rcv_errors, h64(b.rcv_err));
        EXPECT_EQ(a.port_rcv_remote_physical_errors, h64(b.rcv_rem_phys_err));
        EXPECT_EQ(a.port_rcv_switch_relay_errors, h64(b.rcv_switch_relay_err));
        EXPECT_EQ(a.port_xmit_discards, h64(b.xmit_discards));
        EXPECT_EQ(a.port_xmit_constraint_errors, h64(b.xmit_constraint_err));
        EXPECT_EQ(a.port_rcv_constraint_errors, h64(b.rcv_constraint_err));
        EXPECT_EQ(a.local_link_integrity_errors, h64(b.link_integrity_err));
        EXPECT_EQ(a.excessive_buffer_overrun_errors, h64(b.buffer_overrun));
        EXPECT_EQ(a.vl15_dropped, h64(b.vl15_dropped));
        EXPECT_EQ(a.port_xmit_wait, h64(b.xmit_wait));
        EXPECT_EQ(a.qp1_dropped, h64(b.qp1_dropped));
      });
}

// ---- MADs --------------------------------------------------------------------------------------

void compare_header(const MadHeader& a, const ib_mad_t& b) {
  EXPECT_EQ(a.base_version, b.base_ver);
  EXPECT_EQ(static_cast<uint8_t>(a.mgmt_class), b.mgmt_class);
  EXPECT_EQ(a.class_version, b.class_ver);
  EXPECT_EQ(static_cast<uint8_t>(a.method), b.method);
  EXPECT_EQ(is_response(a.method), ib_mad_is_response(&b) != 0);
  EXPECT_EQ(a.status.value(), h16(b.status));
  EXPECT_EQ(a.class_specific, h16(b.class_spec));
  EXPECT_EQ(a.transaction_id, h64(b.trans_id));
  EXPECT_EQ(a.attribute_id, h16(b.attr_id));
  EXPECT_EQ(a.attribute_modifier, h32(b.attr_mod));
}

void compare_rmpp(const RmppHeader& a, const ib_rmpp_mad_t& b) {
  EXPECT_EQ(a.version, b.rmpp_version);
  EXPECT_EQ(static_cast<uint8_t>(a.type), b.rmpp_type);
  EXPECT_EQ(a.resp_time, ib_rmpp_get_resp_time(&b));
  EXPECT_EQ(a.active(), ib_rmpp_is_flag_set(&b, IB_RMPP_FLAG_ACTIVE) != 0);
  EXPECT_EQ(a.first(), ib_rmpp_is_flag_set(&b, IB_RMPP_FLAG_FIRST) != 0);
  EXPECT_EQ(a.last(), ib_rmpp_is_flag_set(&b, IB_RMPP_FLAG_LAST) != 0);
  EXPECT_EQ(static_cast<uint8_t>(a.status), b.rmpp_status);
  EXPECT_EQ(a.segment_number(), h32(b.seg_num));
  EXPECT_EQ(a.payload_length(), h32(b.paylen_newwin));
}

TEST(MadOpenSm, MadHeader) { cross_check<MadHeader, ib_mad_t>(compare_header, false); }

TEST(MadOpenSm, LidRoutedSmp) {
  cross_check<Smp, ib_smp_t>(
      [](const Smp& a, const ib_smp_t& b) {
        EXPECT_EQ(a.header.status.value(), h16(b.status));
        EXPECT_EQ(a.header.class_specific, (b.hop_ptr << 8) | b.hop_count);
        EXPECT_EQ(a.header.transaction_id, h64(b.trans_id));
        EXPECT_EQ(a.m_key, h64(b.m_key));
        EXPECT_EQ(0, std::memcmp(a.data.data(), b.data, 64));
      },
      false);
}

TEST(MadOpenSm, DirectedRouteSmp) {
  cross_check<DrSmp, ib_smp_t>(
      [](const DrSmp& a, const ib_smp_t& b) {
        EXPECT_EQ(a.base_version, b.base_ver);
        EXPECT_EQ(static_cast<uint8_t>(a.mgmt_class), b.mgmt_class);
        EXPECT_EQ(a.class_version, b.class_ver);
        EXPECT_EQ(static_cast<uint8_t>(a.method), b.method);
        EXPECT_EQ(a.direction, ib_smp_is_d(&b) != 0);
        EXPECT_EQ(a.status.value(), h16(ib_smp_get_status(&b)));
        EXPECT_EQ(a.hop_pointer, b.hop_ptr);
        EXPECT_EQ(a.hop_count, b.hop_count);
        EXPECT_EQ(a.transaction_id, h64(b.trans_id));
        EXPECT_EQ(a.attribute_id, h16(b.attr_id));
        EXPECT_EQ(a.attribute_modifier, h32(b.attr_mod));
        EXPECT_EQ(a.m_key, h64(b.m_key));
        EXPECT_EQ(a.dr_slid.value(), h16(b.dr_slid));
        EXPECT_EQ(a.dr_dlid.value(), h16(b.dr_dlid));
        EXPECT_EQ(0, std::memcmp(a.data.data(), b.data, 64));
        EXPECT_EQ(0, std::memcmp(a.initial_path.data(), b.initial_path, 64));
        EXPECT_EQ(0, std::memcmp(a.return_path.data(), b.return_path, 64));
      },
      false);
}

TEST(MadOpenSm, SaMad) {
  cross_check<SaMad, ib_sa_mad_t>(
      [](const SaMad& a, const ib_sa_mad_t& b) {
        compare_header(a.header, as<ib_mad_t>(encode(a)));
        compare_rmpp(a.rmpp, as<ib_rmpp_mad_t>(encode(a)));
        EXPECT_EQ(a.rmpp.version, b.rmpp_version);
        EXPECT_EQ(a.rmpp.data1, h32(b.seg_num));
        EXPECT_EQ(a.sm_key, h64(b.sm_key));
        EXPECT_EQ(a.attribute_offset, h16(b.attr_offset));
        EXPECT_EQ(a.component_mask, h64(b.comp_mask));
        EXPECT_EQ(0, std::memcmp(a.data.data(), b.data, IB_SA_DATA_SIZE));
        // OpenSM's record size from AttributeOffset.
        EXPECT_EQ(ib_get_attr_size(b.attr_offset), a.attribute_offset * 8u);
      },
      false);
}

TEST(MadOpenSm, PmaMad) {
  cross_check<PmaMad, ib_perfmgt_mad_t>(
      [](const PmaMad& a, const ib_perfmgt_mad_t& b) {
        compare_header(a.header, b.header);
        EXPECT_EQ(0, std::memcmp(a.data.data(), b.data, IB_PM_DATA_SIZE));
      },
      false);
}

// ---- SA ComponentMask bits (IBA 15.2.4.1) ------------------------------------------------------

uint64_t osm(ib_net64_t mask) { return cl_ntoh64(mask); }

TEST(MadOpenSm, ComponentMaskBits) {
  EXPECT_EQ(component_mask<PathRecord>({"ServiceID.MSB"}), osm(IB_PR_COMPMASK_SERVICEID_MSB));
  EXPECT_EQ(component_mask<PathRecord>({"ServiceID.LSB"}), osm(IB_PR_COMPMASK_SERVICEID_LSB));
  EXPECT_EQ(component_mask<PathRecord>({"DGID"}), osm(IB_PR_COMPMASK_DGID));
  EXPECT_EQ(component_mask<PathRecord>({"SGID"}), osm(IB_PR_COMPMASK_SGID));
  EXPECT_EQ(component_mask<PathRecord>({"DLID"}), osm(IB_PR_COMPMASK_DLID));
  EXPECT_EQ(component_mask<PathRecord>({"SLID"}), osm(IB_PR_COMPMASK_SLID));
  EXPECT_EQ(component_mask<PathRecord>({"RawTraffic"}), osm(IB_PR_COMPMASK_RAWTRAFFIC));
  EXPECT_EQ(component_mask<PathRecord>({"FlowLabel"}), osm(IB_PR_COMPMASK_FLOWLABEL));
  EXPECT_EQ(component_mask<PathRecord>({"HopLimit"}), osm(IB_PR_COMPMASK_HOPLIMIT));
  EXPECT_EQ(component_mask<PathRecord>({"TClass"}), osm(IB_PR_COMPMASK_TCLASS));
  EXPECT_EQ(component_mask<PathRecord>({"Reversible"}), osm(IB_PR_COMPMASK_REVERSIBLE));
  EXPECT_EQ(component_mask<PathRecord>({"NumbPath"}), osm(IB_PR_COMPMASK_NUMBPATH));
  EXPECT_EQ(component_mask<PathRecord>({"P_Key"}), osm(IB_PR_COMPMASK_PKEY));
  EXPECT_EQ(component_mask<PathRecord>({"QoSClass"}), osm(IB_PR_COMPMASK_QOS_CLASS));
  EXPECT_EQ(component_mask<PathRecord>({"SL"}), osm(IB_PR_COMPMASK_SL));
  EXPECT_EQ(component_mask<PathRecord>({"MTUSelector"}), osm(IB_PR_COMPMASK_MTUSELEC));
  EXPECT_EQ(component_mask<PathRecord>({"MTU"}), osm(IB_PR_COMPMASK_MTU));
  EXPECT_EQ(component_mask<PathRecord>({"RateSelector"}), osm(IB_PR_COMPMASK_RATESELEC));
  EXPECT_EQ(component_mask<PathRecord>({"Rate"}), osm(IB_PR_COMPMASK_RATE));
  EXPECT_EQ(component_mask<PathRecord>({"PacketLifeTimeSelector"}), osm(IB_PR_COMPMASK_PKTLIFETIMESELEC));
  EXPECT_EQ(component_mask<PathRecord>({"PacketLifeTime"}), osm(IB_PR_COMPMASK_PKTLIFETIME));

  EXPECT_EQ(component_mask<NodeRecord>({"LID"}), osm(IB_NR_COMPMASK_LID));
  EXPECT_EQ(component_mask<NodeRecord>({"BaseVersion"}), osm(IB_NR_COMPMASK_BASEVERSION));
  EXPECT_EQ(component_mask<NodeRecord>({"ClassVersion"}), osm(IB_NR_COMPMASK_CLASSVERSION));
  EXPECT_EQ(component_mask<NodeRecord>({"NodeType"}), osm(IB_NR_COMPMASK_NODETYPE));
  EXPECT_EQ(component_mask<NodeRecord>({"NumPorts"}), osm(IB_NR_COMPMASK_NUMPORTS));
  EXPECT_EQ(component_mask<NodeRecord>({"SystemImageGUID"}), osm(IB_NR_COMPMASK_SYSIMAGEGUID));
  EXPECT_EQ(component_mask<NodeRecord>({"NodeGUID"}), osm(IB_NR_COMPMASK_NODEGUID));
  EXPECT_EQ(component_mask<NodeRecord>({"PortGUID"}), osm(IB_NR_COMPMASK_PORTGUID));
  EXPECT_EQ(component_mask<NodeRecord>({"PartitionCap"}), osm(IB_NR_COMPMASK_PARTCAP));
  EXPECT_EQ(component_mask<NodeRecord>({"DeviceID"}), osm(IB_NR_COMPMASK_DEVID));
  EXPECT_EQ(component_mask<NodeRecord>({"Revision"}), osm(IB_NR_COMPMASK_REV));
  EXPECT_EQ(component_mask<NodeRecord>({"LocalPortNum"}), osm(IB_NR_COMPMASK_PORTNUM));
  EXPECT_EQ(component_mask<NodeRecord>({"VendorID"}), osm(IB_NR_COMPMASK_VENDID));
  EXPECT_EQ(component_mask<NodeRecord>({"NodeString"}), osm(IB_NR_COMPMASK_NODEDESC));

  EXPECT_EQ(component_mask<PortInfoRecord>({"EndportLID"}), osm(IB_PIR_COMPMASK_LID));
  EXPECT_EQ(component_mask<PortInfoRecord>({"PortNum"}), osm(IB_PIR_COMPMASK_PORTNUM));
  EXPECT_EQ(component_mask<PortInfoRecord>({"Options"}), osm(IB_PIR_COMPMASK_OPTIONS));
  EXPECT_EQ(component_mask<PortInfoRecord>({"M_Key"}), osm(IB_PIR_COMPMASK_MKEY));
  EXPECT_EQ(component_mask<PortInfoRecord>({"LID"}), osm(IB_PIR_COMPMASK_BASELID));
  EXPECT_EQ(component_mask<PortInfoRecord>({"CapabilityMask"}), osm(IB_PIR_COMPMASK_CAPMASK));
  EXPECT_EQ(component_mask<PortInfoRecord>({"PortState"}), osm(IB_PIR_COMPMASK_PORTSTATE));
  EXPECT_EQ(component_mask<PortInfoRecord>({"M_KeyProtectBits"}), osm(IB_PIR_COMPMASK_MKEYPROTBITS));
  EXPECT_EQ(component_mask<PortInfoRecord>({"LMC"}), osm(IB_PIR_COMPMASK_LMC));
  EXPECT_EQ(component_mask<PortInfoRecord>({"NeighborMTU"}), osm(IB_PIR_COMPMASK_NEIGHBORMTU));
  EXPECT_EQ(component_mask<PortInfoRecord>({"MTUCap"}), osm(IB_PIR_COMPMASK_MTUCAP));
  EXPECT_EQ(component_mask<PortInfoRecord>({"VLStallCount"}), osm(IB_PIR_COMPMASK_VLSTALLCNT));
  EXPECT_EQ(component_mask<PortInfoRecord>({"ClientReregister"}), osm(IB_PIR_COMPMASK_CLIENTREREG));
  EXPECT_EQ(component_mask<PortInfoRecord>({"SubnetTimeOut"}), osm(IB_PIR_COMPMASK_SUBNTO));
  EXPECT_EQ(component_mask<PortInfoRecord>({"RespTimeValue"}), osm(IB_PIR_COMPMASK_RESPTIME));
  EXPECT_EQ(component_mask<PortInfoRecord>({"MaxCreditHint"}), osm(IB_PIR_COMPMASK_MAXCREDHINT));
  EXPECT_EQ(component_mask<PortInfoRecord>({"LinkRoundTripLatency"}), osm(IB_PIR_COMPMASK_LINKRTLAT));
  EXPECT_EQ(component_mask<PortInfoRecord>({"CapabilityMask2"}), osm(IB_PIR_COMPMASK_CAPMASK2));
  EXPECT_EQ(component_mask<PortInfoRecord>({"LinkSpeedExtActive"}), osm(IB_PIR_COMPMASK_LINKSPDEXTACT));
  EXPECT_EQ(component_mask<PortInfoRecord>({"LinkSpeedExtSupported"}), osm(IB_PIR_COMPMASK_LINKSPDEXTSUPP));
  EXPECT_EQ(component_mask<PortInfoRecord>({"LinkSpeedExtEnabled"}), osm(IB_PIR_COMPMASK_LINKSPDEXTENAB));

  EXPECT_EQ(component_mask<MCMemberRecord>({"MGID"}), osm(IB_MCR_COMPMASK_MGID));
  EXPECT_EQ(component_mask<MCMemberRecord>({"PortGID"}), osm(IB_MCR_COMPMASK_PORT_GID));
  EXPECT_EQ(component_mask<MCMemberRecord>({"Q_Key"}), osm(IB_MCR_COMPMASK_QKEY));
  EXPECT_EQ(component_mask<MCMemberRecord>({"MLID"}), osm(IB_MCR_COMPMASK_MLID));
  EXPECT_EQ(component_mask<MCMemberRecord>({"MTUSelector"}), osm(IB_MCR_COMPMASK_MTU_SEL));
  EXPECT_EQ(component_mask<MCMemberRecord>({"MTU"}), osm(IB_MCR_COMPMASK_MTU));
  EXPECT_EQ(component_mask<MCMemberRecord>({"TClass"}), osm(IB_MCR_COMPMASK_TCLASS));
  EXPECT_EQ(component_mask<MCMemberRecord>({"P_Key"}), osm(IB_MCR_COMPMASK_PKEY));
  EXPECT_EQ(component_mask<MCMemberRecord>({"RateSelector"}), osm(IB_MCR_COMPMASK_RATE_SEL));
  EXPECT_EQ(component_mask<MCMemberRecord>({"Rate"}), osm(IB_MCR_COMPMASK_RATE));
  EXPECT_EQ(component_mask<MCMemberRecord>({"PacketLifeTimeSelector"}), osm(IB_MCR_COMPMASK_LIFE_SEL));
  EXPECT_EQ(component_mask<MCMemberRecord>({"PacketLifeTime"}), osm(IB_MCR_COMPMASK_LIFE));
  EXPECT_EQ(component_mask<MCMemberRecord>({"SL"}), osm(IB_MCR_COMPMASK_SL));
  EXPECT_EQ(component_mask<MCMemberRecord>({"FlowLabel"}), osm(IB_MCR_COMPMASK_FLOW));
  EXPECT_EQ(component_mask<MCMemberRecord>({"HopLimit"}), osm(IB_MCR_COMPMASK_HOP));
  EXPECT_EQ(component_mask<MCMemberRecord>({"Scope"}), osm(IB_MCR_COMPMASK_SCOPE));
  EXPECT_EQ(component_mask<MCMemberRecord>({"JoinState"}), osm(IB_MCR_COMPMASK_JOIN_STATE));
  EXPECT_EQ(component_mask<MCMemberRecord>({"ProxyJoin"}), osm(IB_MCR_COMPMASK_PROXY));

  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceID"}), osm(IB_SR_COMPMASK_SID));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceGID"}), osm(IB_SR_COMPMASK_SGID));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceP_Key"}), osm(IB_SR_COMPMASK_SPKEY));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceLease"}), osm(IB_SR_COMPMASK_SLEASE));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceKey"}), osm(IB_SR_COMPMASK_SKEY));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceName"}), osm(IB_SR_COMPMASK_SNAME));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData8.1"}), osm(IB_SR_COMPMASK_SDATA8_0));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData8.16"}), osm(IB_SR_COMPMASK_SDATA8_15));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData16.1"}), osm(IB_SR_COMPMASK_SDATA16_0));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData16.8"}), osm(IB_SR_COMPMASK_SDATA16_7));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData32.1"}), osm(IB_SR_COMPMASK_SDATA32_0));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData32.4"}), osm(IB_SR_COMPMASK_SDATA32_3));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData64.1"}), osm(IB_SR_COMPMASK_SDATA64_0));
  EXPECT_EQ(component_mask<ServiceRecord>({"ServiceData64.2"}), osm(IB_SR_COMPMASK_SDATA64_1));

  EXPECT_EQ(component_mask<LinkRecord>({"FromLID"}), osm(IB_LR_COMPMASK_FROM_LID));
  EXPECT_EQ(component_mask<LinkRecord>({"FromPort"}), osm(IB_LR_COMPMASK_FROM_PORT));
  EXPECT_EQ(component_mask<LinkRecord>({"ToPort"}), osm(IB_LR_COMPMASK_TO_PORT));
  EXPECT_EQ(component_mask<LinkRecord>({"ToLID"}), osm(IB_LR_COMPMASK_TO_LID));
  EXPECT_EQ(component_mask<PKeyTableRecord>({"LID"}), osm(IB_PKEY_COMPMASK_LID));
  EXPECT_EQ(component_mask<PKeyTableRecord>({"BlockNum"}), osm(IB_PKEY_COMPMASK_BLOCK));
  EXPECT_EQ(component_mask<PKeyTableRecord>({"PortNum"}), osm(IB_PKEY_COMPMASK_PORT));
  EXPECT_EQ(component_mask<SwitchInfoRecord>({"LID"}), osm(IB_SWIR_COMPMASK_LID));
  EXPECT_EQ(component_bit<SwitchInfoRecord>("Reserved"), 1);  // IB_SWIR_COMPMASK_RESERVED1
  EXPECT_EQ(uint64_t{1} << 1, osm(IB_SWIR_COMPMASK_RESERVED1));
  EXPECT_EQ(component_mask<LinearForwardingTableRecord>({"LID"}), osm(IB_LFTR_COMPMASK_LID));
  EXPECT_EQ(component_mask<LinearForwardingTableRecord>({"BlockNum"}), osm(IB_LFTR_COMPMASK_BLOCK));
}

}  // namespace
}  // namespace softib::mad::compat
