// SA records read off the SM's view of the subnet: NodeRecord, PortInfoRecord, LinkRecord,
// SwitchInfoRecord, LinearForwardingTableRecord and P_KeyTableRecord (IBA 15.2.5). Every
// one is built for each element the subnet has and kept when it matches the query's
// components; a LID component narrows the search to that node first.
#include <algorithm>

#include "mad/lft_record.hpp"
#include "mad/link_record.hpp"
#include "mad/node_record.hpp"
#include "mad/pkey_table_record.hpp"
#include "mad/port_info_record.hpp"
#include "mad/switch_info_record.hpp"
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
  for (uint32_t i = 0; i < r.ctx.subnet().nodes.size(); ++i) out.push_back(NodeIndex(i));
  return out;
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
  Matcher<mad::PortInfoRecord> m(r, cap_any ? cap_bit : 0);
  const bool lid_set = (r.mask() & sa::bit<mad::PortInfoRecord>("EndportLID")) != 0;
  for (NodeIndex n : nodes_to_scan(r, node_of_lid_component(r, lid_set, q->endport_lid))) {
    const Subnet& s = r.ctx.subnet();
    const uint8_t first = s.is_switch(n) ? 0 : 1;
    for (uint8_t p = first; p <= s.topo.node(n).num_ports; ++p) {
      const mad::PortInfo* pi = r.ctx.port_info({n, p});
      if (pi == nullptr) continue;
      if (cap_any && (pi->capability_mask & q->port_info.capability_mask) == 0) continue;
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
        const size_t blocks = std::max<size_t>(1, (keys.size() + kPerBlock - 1) / kPerBlock);
        const size_t cap_blocks = std::max<size_t>(blocks, (cap + kPerBlock - 1) / kPerBlock);
        for (size_t b = 0; b < (block_set ? cap_blocks : blocks); ++b) {
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

}  // namespace softib::sm
