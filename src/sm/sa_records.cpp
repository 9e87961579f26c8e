// SA records read off the SM's view of the subnet: NodeRecord, PortInfoRecord, LinkRecord,
// SwitchInfoRecord, LinearForwardingTableRecord, P_KeyTableRecord, SMInfoRecord,
// GUIDInfoRecord, SLtoVLMappingTableRecord, VLArbitrationTableRecord,
// MulticastForwardingTableRecord and InformInfoRecord (IBA 15.2.5). Every one is built for
// each element the subnet has and kept when it matches the query's components; a LID
// component narrows the search to that node first.
#include <algorithm>

#include "mad/guid_info_record.hpp"
#include "mad/inform_info_record.hpp"
#include "mad/lft_record.hpp"
#include "mad/link_record.hpp"
#include "mad/node_record.hpp"
#include "mad/pkey_table_record.hpp"
#include "mad/mft_record.hpp"
#include "mad/port_info_record.hpp"
#include "mad/sl_to_vl_table_record.hpp"
#include "mad/sm_info_record.hpp"
#include "mad/switch_info_record.hpp"
#include "mad/vl_arbitration_table_record.hpp"
#include "sm/sa_internal.hpp"

namespace softib::sm {

using mad::Method;
using sa::Request;

namespace {

// Collects the records of type R that match a request's components, encoded.
template <class R>
class Matcher {
 public:
  using Record = R;
  explicit Matcher(const Request& r, uint64_t ignore = 0)
      : query_(r.sa.data.data(), mad::wire_size<R>), mask_(r.mask() & ~ignore), get_(r.method() == Method::kGet) {}

  void offer(const R& record) {
    if (get_ && count_ > 1) return;  // a Get answers ERR_TOO_MANY_RECORDS already
    std::array<uint8_t, mad::wire_size<R>> bytes{};
    mad::encode(record, wire::MutByteSpan(bytes));
    if (!sa::components_match(mad::layout_info<R>(), query_, wire::ByteSpan(bytes), mask_)) return;
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    ++count_;
  }
  wire::ByteSpan bytes() const { return wire::ByteSpan(out_); }
  size_t count() const { return count_; }

 private:
  wire::ByteSpan query_;
  uint64_t mask_;
  bool get_;
  std::vector<uint8_t> out_;
  size_t count_ = 0;
};

// The node a LID component names: nullopt for any node, NodeIndex::none() for a LID
// nobody has.
std::optional<NodeIndex> node_of_lid_component(const Request& r, bool lid_set, Lid lid) {
  if (!lid_set) return std::nullopt;
  if (!r.ctx.ready()) return NodeIndex::none();
  const auto e = r.ctx.endpoint_by_lid(lid);
  if (!e) return NodeIndex::none();
  return r.ctx.endpoint(*e).owner.node;
}

// The nodes to look at: all, or the one a LID component names (none for an unknown LID).
std::vector<NodeIndex> nodes_to_scan(const Request& r, std::optional<NodeIndex> only) {
  std::vector<NodeIndex> out;
  if (r.ctx.view().subnet == nullptr || r.ctx.subnet().nodes.size() != r.ctx.subnet().topo.node_count()) return out;
  if (only) {
    if (only->valid()) out.push_back(*only);
    return out;
  }
  // OpenSM's node (and switch) GUID map order: its cl_qmap keys are GUIDs in network byte
  // order compared as host integers, so a GetTable lists records in the order OpenSM does.
  const Subnet& s = r.ctx.subnet();
  for (uint32_t i = 0; i < s.nodes.size(); ++i) out.push_back(NodeIndex(i));
  std::stable_sort(out.begin(), out.end(), [&](NodeIndex a, NodeIndex b) {
    return __builtin_bswap64(s.nodes[a.value()].info.node_guid.value()) <
           __builtin_bswap64(s.nodes[b.value()].info.node_guid.value());
  });
  return out;
}

// False when the requester is known and shares no partition with end port `e` (OpenSM's
// osm_physp_share_pkey check: records of ports the requester may not see are left out).
bool visible(const Request& r, std::optional<uint32_t> e) {
  if (!e || !r.ctx.ready()) return true;
  const auto req = r.requester();
  return !req || r.ctx.share_pkey(*req, *e);
}

}  // namespace

bool SubnetAdministrator::Impl::get_or_table(const Request& r) {
  if (r.method() == Method::kGet || r.method() == Method::kGetTable) return true;
  fail(r, mad::MadStatus::from(mad::InvalidField::kMethodAttributeUnsupported));
  return false;
}

void SubnetAdministrator::Impl::node_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::NodeRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::NodeRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::NodeRecord>("LID")) != 0;
  for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
    const Subnet& s = r.ctx.subnet();
    const SmNode& node = s.nodes[n.value()];
    mad::NodeRecord rec;
    rec.node_info = node.info;
    rec.node_description = mad::NodeDescription::from(s.topo.node(n).description);
    if (s.is_switch(n)) {
      rec.lid = s.topo.port({n, 0}).lid;
      rec.node_info.local_port_num = 0;  // the record is port 0's, whichever port the SM came in by
      m.offer(rec);
      continue;
    }
    // A CA or router: one record per port that has a LID, as that port reports itself.
    for (uint8_t p = 1; p <= s.topo.node(n).num_ports; ++p) {
      const fabric::TopoPort& tp = s.topo.port({n, p});
      if (tp.lid.value() == 0) continue;
      rec.lid = tp.lid;
      rec.node_info.port_guid = tp.guid;
      rec.node_info.local_port_num = p;
      m.offer(rec);
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

void SubnetAdministrator::Impl::port_info_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::PortInfoRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  // OpenSM's reading of a CapabilityMask component with AttributeModifier bit 31 set (what
  // saquery -s sends): any of the query's bits set, not the whole mask equal.
  const uint64_t cap_bit = sa::bit<mad::PortInfoRecord>("CapabilityMask");
  const bool cap_any = (r.sa.header.attribute_modifier & 0x80000000u) != 0 && (r.mask() & cap_bit) != 0;
  // ... and of a CapabilityMask2 component: every bit of the query's set.
  const uint64_t cap2_bit = sa::bit<mad::PortInfoRecord>("CapabilityMask2");
  const bool cap2_all = (r.sa.header.attribute_modifier & 0x80000000u) != 0 && (r.mask() & cap2_bit) != 0;
  Matcher<mad::PortInfoRecord> m(r, (cap_any ? cap_bit : 0) | (cap2_all ? cap2_bit : 0));
  const bool lid_set = (r.mask() & sa::bit<mad::PortInfoRecord>("EndportLID")) != 0;
  for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->endport_lid))) {
    const Subnet& s = r.ctx.subnet();
    const uint8_t first = s.is_switch(n) ? 0 : 1;
    for (uint8_t p = first; p <= s.topo.node(n).num_ports; ++p) {
      const mad::PortInfo* pi = r.ctx.port_info({n, p});
      if (pi == nullptr) continue;
      if (cap_any && (pi->capability_mask & q->port_info.capability_mask) == 0) continue;
      if (cap2_all && (pi->capability_mask2 & q->port_info.capability_mask2) != q->port_info.capability_mask2)
        continue;
      mad::PortInfoRecord rec;
      rec.endport_lid = r.ctx.node_lid({n, p});
      rec.port_num = p;
      rec.port_info = *pi;
      if (!r.trusted) rec.port_info.m_key = 0;  // only a trusted requester sees M_Keys
      m.offer(rec);
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

void SubnetAdministrator::Impl::link_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::LinkRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::LinkRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::LinkRecord>("FromLID")) != 0;
  for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->from_lid))) {
    const Subnet& s = r.ctx.subnet();
    for (uint8_t p = 1; p <= s.topo.node(n).num_ports; ++p) {
      const PortRef from{n, p};
      const PortRef to = s.topo.port(from).peer;
      if (!to.valid()) continue;
      mad::LinkRecord rec;
      rec.from_lid = r.ctx.node_lid(from);
      rec.from_port = p;
      rec.to_port = to.port;
      rec.to_lid = r.ctx.node_lid(to);
      if (rec.from_lid.value() == 0 || rec.to_lid.value() == 0) continue;  // not configured
      m.offer(rec);
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

void SubnetAdministrator::Impl::switch_info_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::SwitchInfoRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::SwitchInfoRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::SwitchInfoRecord>("LID")) != 0;
  for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
    const Subnet& s = r.ctx.subnet();
    if (!s.is_switch(n)) continue;
    m.offer(mad::SwitchInfoRecord{s.topo.port({n, 0}).lid, s.nodes[n.value()].sw});
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

void SubnetAdministrator::Impl::lft_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::LinearForwardingTableRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::LinearForwardingTableRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::LinearForwardingTableRecord>("LID")) != 0;
  const bool block_set = (r.mask() & sa::bit<mad::LinearForwardingTableRecord>("BlockNum")) != 0;
  const SaView& v = r.ctx.view();
  if (r.ctx.ready() && v.tables != nullptr) {
    for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
      const SwitchIndex sw = r.ctx.graph().switch_of(n);
      if (sw == kNoSwitch || sw >= v.tables->lft.size()) continue;
      // What the SM programmed: its routing tables, 64 LIDs a block.
      const std::vector<PortNum>& lft = v.tables->lft[sw];
      constexpr size_t kPerBlock = mad::LinearForwardingTable::kLidsPerBlock;
      const size_t blocks = (lft.size() + kPerBlock - 1) / kPerBlock;
      for (size_t b = 0; b < blocks; ++b) {
        if (block_set && b != q->block_num) continue;
        mad::LinearForwardingTableRecord rec;
        rec.lid = r.ctx.subnet().topo.port({n, 0}).lid;
        rec.block_num = static_cast<uint16_t>(b);
        for (size_t i = 0; i < kPerBlock; ++i) {
          const size_t lid = b * kPerBlock + i;
          rec.lft.ports[i] = lid < lft.size() ? lft[lid] : kDropPort;
        }
        m.offer(rec);
      }
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// P_Key tables as the SM programs them (SaContext::pkeys: the SM's own tables when the view
// has them, else derived from partitions.conf by the SM's rules); a switch port facing a
// CA carries the CA's table, other switch ports the default one (0xFFFF in entry 0).
void SubnetAdministrator::Impl::pkey_table_records(Request& r) {
  if (!get_or_table(r)) return;
  if (!r.trusted) return fail(r, mad::SaStatus::kReqInvalid);  // trusted requesters only (OpenSM)
  const auto q = mad::decode<mad::PKeyTableRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::PKeyTableRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::PKeyTableRecord>("LID")) != 0;
  const bool block_set = (r.mask() & sa::bit<mad::PKeyTableRecord>("BlockNum")) != 0;
  if (r.ctx.ready()) {
    constexpr size_t kPerBlock = mad::PKeyTable::kPKeysPerBlock;
    for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
      const Subnet& s = r.ctx.subnet();
      const bool sw = s.is_switch(n);
      for (uint8_t p = sw ? 0 : 1; p <= s.topo.node(n).num_ports; ++p) {
        const PortRef ref{n, p};
        std::vector<PKey> keys;
        size_t cap = s.nodes[n.value()].info.partition_cap;
        if (s.is_end_port(ref)) {
          const auto e = r.ctx.endpoint_by_guid(s.topo.port(ref).guid);
          if (!e || r.ctx.endpoint(*e).owner != ref) continue;  // not a configured end port
          keys = r.ctx.pkeys(*e);
        } else {
          // A switch port facing a CA enforces the CA's partitions (as the SM programs it);
          // the others keep the default table.
          const PortRef peer = s.topo.port(ref).peer;
          if (!peer.valid()) continue;
          cap = s.nodes[n.value()].sw.partition_enforcement_cap;
          const auto e = s.is_switch(peer.node) || r.ctx.config().no_partition_enforcement
                             ? std::nullopt
                             : r.ctx.endpoint_by_guid(s.topo.port(peer).guid);
          keys = e ? r.ctx.pkeys(*e) : std::vector<PKey>{PKey::default_full()};
          if (cap != 0 && keys.size() > cap) keys.resize(cap);
        }
        // Every block of the port's table (PartitionCap entries, OpenSM's
        // osm_pkey_tbl_get_num_blocks), the ones past the last P_Key empty.
        const size_t blocks = std::max<size_t>(1, (keys.size() + kPerBlock - 1) / kPerBlock);
        const size_t cap_blocks = std::max<size_t>(blocks, (cap + kPerBlock - 1) / kPerBlock);
        for (size_t b = 0; b < cap_blocks; ++b) {
          if (block_set && b != q->block_num) continue;
          mad::PKeyTableRecord rec;
          rec.lid = r.ctx.node_lid(ref);
          rec.block_num = static_cast<uint16_t>(b);
          rec.port_num = p;
          for (size_t i = 0; i < kPerBlock && b * kPerBlock + i < keys.size(); ++i)
            rec.pkey_table.pkeys[i] = keys[b * kPerBlock + i];
          m.offer(rec);
        }
      }
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// SMInfoRecord: this SM first, then the other SMs its sweeps found (OpenSM's order). The
// SM_Key is not shown (OpenSM leaves it 0 in every record); ActCount is the SMPs the SM sent.
void SubnetAdministrator::Impl::sm_info_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::SMInfoRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::SMInfoRecord> m(r);
  const SaView& v = r.ctx.view();
  if (r.ctx.ready() && v.sm_lid.value() != 0 && visible(r, r.ctx.endpoint_by_lid(v.sm_lid))) {
    mad::SMInfoRecord rec{v.sm_lid, v.own_sm_info};
    rec.sm_info.sm_key = 0;
    m.offer(rec);
  }
  for (const auto& [lid, info] : v.other_sms) {
    mad::SMInfoRecord rec{lid, info};
    rec.sm_info.sm_key = 0;
    m.offer(rec);
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// GUIDInfoRecord: the GUIDInfo blocks (GUIDCap / 8, rounded up) of every end port (CA and
// router ports, switch port 0). The SM assigns no alias GUIDs, so entry 0 of block 0 is the
// port GUID and every other entry is 0.
void SubnetAdministrator::Impl::guid_info_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::GUIDInfoRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::GUIDInfoRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::GUIDInfoRecord>("LID")) != 0;
  if (r.ctx.ready()) {
    for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
      const Subnet& s = r.ctx.subnet();
      const bool sw = s.is_switch(n);
      for (uint8_t p = sw ? 0 : 1; p <= (sw ? 0 : s.topo.node(n).num_ports); ++p) {
        const PortRef ref{n, p};
        const mad::PortInfo* pi = r.ctx.port_info(ref);
        if (pi == nullptr || pi->guid_cap == 0) continue;
        const Guid guid = s.topo.port(ref).guid;
        const auto e = r.ctx.endpoint_by_guid(guid);
        if (!e || r.ctx.endpoint(*e).owner != ref || !visible(r, e)) continue;
        const Lid lid = r.ctx.node_lid(ref);
        // A LID names the port when it lies in the port's LMC range.
        if (lid_set && (q->lid.value() < lid.value() || q->lid.value() >= lid.value() + (1u << pi->lmc))) continue;
        const size_t blocks = (size_t{pi->guid_cap} + mad::GUIDInfo::kGuidsPerBlock - 1) / mad::GUIDInfo::kGuidsPerBlock;
        for (size_t b = 0; b < blocks; ++b) {
          mad::GUIDInfoRecord rec;
          rec.lid = lid;
          rec.block_num = static_cast<uint8_t>(b);
          if (b == 0) rec.guid_info.guids[0] = guid;
          m.offer(rec);
        }
      }
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// SLtoVLMappingTableRecord: a CA or router port's table (InputPortNum and OutputPortNum 0),
// and every (output, input) port pair of a switch, as the SM programs them: its routing
// engine's VL plan on switches, VL 0 for every SL elsewhere (the SM programs no other).
void SubnetAdministrator::Impl::sl2vl_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::SLtoVLMappingTableRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::SLtoVLMappingTableRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::SLtoVLMappingTableRecord>("LID")) != 0;
  const bool out_set = (r.mask() & sa::bit<mad::SLtoVLMappingTableRecord>("OutputPortNum")) != 0;
  const bool in_set = (r.mask() & sa::bit<mad::SLtoVLMappingTableRecord>("InputPortNum")) != 0;
  const SaView& v = r.ctx.view();
  if (r.ctx.ready()) {
    for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
      const Subnet& s = r.ctx.subnet();
      const uint8_t ports = s.topo.node(n).num_ports;
      if (!s.is_switch(n)) {
        for (uint8_t p = 1; p <= ports; ++p) {
          const PortRef ref{n, p};
          const auto e = r.ctx.endpoint_by_guid(s.topo.port(ref).guid);
          if (!e || r.ctx.endpoint(*e).owner != ref || !visible(r, e)) continue;
          if (lid_set && r.ctx.node_lid(ref) != q->lid) continue;
          m.offer(mad::SLtoVLMappingTableRecord{r.ctx.node_lid(ref), 0, 0, {}});
        }
        continue;
      }
      const SwitchIndex sw = r.ctx.graph().switch_of(n);
      if (!visible(r, r.ctx.endpoint_by_lid(r.ctx.node_lid({n, 0})))) continue;
      const auto* plan = v.tables != nullptr && v.tables->vl_plan ? &*v.tables->vl_plan : nullptr;
      for (uint8_t out = 0; out <= ports; ++out) {
        if (out_set && out != q->output_port_num) continue;
        mad::SLtoVLMappingTable table;
        if (plan != nullptr && sw < plan->sl2vl.size() && out < plan->sl2vl[sw].size())
          table.vl_for_sl = plan->sl2vl[sw][out];
        for (uint8_t in = 0; in <= ports; ++in) {
          if (in_set && in != q->input_port_num) continue;
          m.offer(mad::SLtoVLMappingTableRecord{r.ctx.node_lid({n, 0}), in, out, table});
        }
      }
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// VLArbitrationTableRecord: blocks 1-4 of a CA or router port, or of every port of a switch.
// The SM programs no VL arbitration tables, so every entry is VL 0 weight 0 (what OpenSM
// reports with QoS off).
void SubnetAdministrator::Impl::vl_arb_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::VLArbitrationTableRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::VLArbitrationTableRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::VLArbitrationTableRecord>("LID")) != 0;
  if (r.ctx.ready()) {
    for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
      const Subnet& s = r.ctx.subnet();
      const bool sw = s.is_switch(n);
      if (sw && !visible(r, r.ctx.endpoint_by_lid(r.ctx.node_lid({n, 0})))) continue;
      for (uint8_t p = sw ? 0 : 1; p <= s.topo.node(n).num_ports; ++p) {
        const PortRef ref{n, p};
        if (!sw) {
          const auto e = r.ctx.endpoint_by_guid(s.topo.port(ref).guid);
          if (!e || r.ctx.endpoint(*e).owner != ref || !visible(r, e)) continue;
          if (lid_set && r.ctx.node_lid(ref) != q->lid) continue;
        }
        for (uint8_t block = 1; block <= 4; ++block)
          m.offer(mad::VLArbitrationTableRecord{r.ctx.node_lid(ref), p, block, {}});
      }
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// MulticastForwardingTableRecord: the MFTs the SM programs (multicast_tables over the SA's
// groups), per switch the blocks up to the last one that forwards anything, each in every
// position (16 ports a position); a switch that forwards no group has none (OpenSM's
// max_block_in_use).
void SubnetAdministrator::Impl::mft_records(Request& r) {
  if (!get_or_table(r)) return;
  const auto q = mad::decode<mad::MulticastForwardingTableRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::MulticastForwardingTableRecord> m(r);
  const bool lid_set = (r.mask() & sa::bit<mad::MulticastForwardingTableRecord>("LID")) != 0;
  if (r.ctx.ready() && !r.ctx.config().disable_multicast) {
    const auto tables = multicast_tables(r.ctx.graph(), r.ctx.subnet(), groups);
    constexpr size_t kPerBlock = mad::MulticastForwardingTable::kLidsPerBlock;
    for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->lid))) {
      const Subnet& s = r.ctx.subnet();
      const SwitchIndex sw = r.ctx.graph().switch_of(n);
      if (sw == kNoSwitch || sw >= tables.size() || s.nodes[n.value()].sw.multicast_fdb_cap == 0) continue;
      if (!visible(r, r.ctx.endpoint_by_lid(r.ctx.node_lid({n, 0})))) continue;
      const auto& per_mlid = tables[sw];
      size_t used = 0;  // MLIDs up to the last one with a port
      for (size_t i = 0; i < per_mlid.size(); ++i)
        if (per_mlid[i] != std::array<uint64_t, 4>{}) used = i + 1;
      const size_t blocks = (used + kPerBlock - 1) / kPerBlock;
      const uint8_t positions = static_cast<uint8_t>(s.topo.node(n).num_ports / 16 + 1);
      for (size_t b = 0; b < blocks; ++b) {
        for (uint8_t pos = 0; pos < positions; ++pos) {
          mad::MulticastForwardingTableRecord rec;
          rec.lid = r.ctx.node_lid({n, 0});
          rec.position = pos;
          rec.block_num = static_cast<uint16_t>(b);
          for (size_t i = 0; i < kPerBlock; ++i) {
            const size_t mlid = b * kPerBlock + i;
            if (mlid < per_mlid.size())
              rec.mft.port_masks[i] = static_cast<uint16_t>(per_mlid[mlid][pos / 4] >> (16 * (pos % 4)));
          }
          m.offer(rec);
        }
      }
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

// InformInfoRecord: the SA's subscriptions, of subscribers that share a partition with the
// requester. The subscriber's QPN is shown to trusted requesters only (C15-0.2-1.16); the
// Enum is 0, as OpenSM numbers them.
void SubnetAdministrator::Impl::inform_info_records(Request& r) {
  if (!get_or_table(r)) return;
  if (!mad::decode<mad::InformInfoRecord>(r.sa.data)) return fail(r, mad::SaStatus::kReqInvalid);
  Matcher<mad::InformInfoRecord> m(r);
  if (r.ctx.ready()) {
    for (const sa::Subscription& sub : subscriptions) {
      const auto e = r.ctx.endpoint_by_gid(sub.subscriber_gid);
      if (!e || !visible(r, e)) continue;
      mad::InformInfoRecord rec{sub.subscriber_gid, 0, sub.info};
      if (!r.trusted) rec.inform_info.qpn = Qpn(0);
      m.offer(rec);
    }
  }
  answer(r, m.bytes(), m.count(), mad::wire_size<decltype(m)::Record>);
}

}  // namespace softib::sm
