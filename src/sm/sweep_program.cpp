// The configuration passes of a heavy sweep, each sending only what differs from what the
// SM read or programmed before: LIDs (lid_manager), routing, SwitchInfo and LFT blocks,
// end-port PortInfo (LID, LMC, SM LID, subnet prefix, MTU, VLs), then Arm and Activate.
#include <algorithm>
#include <chrono>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "mad/linear_forwarding_table.hpp"
#include "sm/lid_manager.hpp"
#include "sm/routing_graph.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

namespace {

constexpr uint64_t kUnknown = 0;  // no block hash: never programmed by this SM

// A 64-bit hash of one 64-entry LFT block (entries past the table read as 0xFF), eight
// entries per step: a re-sweep compares it with what the switch was last sent.
uint64_t block_hash(const std::vector<PortNum>& lft, size_t block) {
  std::array<uint8_t, 64> b;
  const size_t first = block * 64;
  if (first + 64 <= lft.size()) {
    std::memcpy(b.data(), lft.data() + first, 64);
  } else {
    b.fill(0xFF);
    if (first < lft.size()) std::memcpy(b.data(), lft.data() + first, lft.size() - first);
  }
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (size_t i = 0; i < 64; i += 8) {
    uint64_t w;
    std::memcpy(&w, b.data() + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 29;
  }
  return h | 1;  // never kUnknown
}


}  // namespace


bool SubnetManager::assign_lids_and_route() {
  Subnet& s = *subnet_;
  // End ports that answered get LIDs; cables to ports that never answered are not routable.
  std::vector<LidRequest> requests;
  std::vector<PortRef> owners;
  for (uint32_t i = 0; i < s.nodes.size(); ++i) {
    const NodeIndex n(i);
    SmNode& node = s.nodes[i];
    if (s.is_switch(n)) {
      const bool esp0 = node.sw.enhanced_port0;
      requests.push_back({node.info.port_guid, node.ports[0].lid, esp0 && config_.lmc_esp0 ? config_.lmc : uint8_t{0}});
      owners.push_back({n, 0});
      continue;
    }
    for (uint8_t p = 1; p <= node.info.num_ports; ++p) {
      const PortRef ref{n, p};
      if (!node.port_read[p]) {
        if (s.topo.port(ref).peer.valid()) {
          report_.problems.push_back(fmt::format("{} port {} never answered; left out", s.topo.node(n).id, p));
          s.topo.disconnect(ref);
        }
        continue;
      }
      requests.push_back({s.topo.port(ref).guid, node.ports[p].lid, config_.lmc});
      owners.push_back(ref);
    }
  }
  // OpenSM's order: the SM's own port first, then its port-GUID map order (GUIDs compared as
  // network-order bytes read on a little-endian host), so that fresh LIDs fall where
  // OpenSM puts them on the same fabric.
  {
    std::vector<size_t> order(requests.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const PortRef self{s.self, s.self_port};
    const auto key = [&](size_t i) {
      const bool mine = s.self.valid() && owners[i].node == self.node &&
                        (s.is_switch(self.node) || owners[i].port == self.port);
      return std::pair{mine ? 0 : 1, __builtin_bswap64(requests[i].port_guid.value())};
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    std::vector<LidRequest> sorted_requests;
    std::vector<PortRef> sorted_owners;
    sorted_requests.reserve(order.size());
    sorted_owners.reserve(order.size());
    for (size_t i : order) {
      sorted_requests.push_back(requests[i]);
      sorted_owners.push_back(owners[i]);
    }
    requests = std::move(sorted_requests);
    owners = std::move(sorted_owners);
  }
  auto lids = assign_lids(requests, guid2lid_, config_.reassign_lids);
  if (!lids) {
    report_.problems.push_back(lids.error().to_string());
    return false;
  }
  for (size_t i = 0; i < owners.size(); ++i) {
    s.topo.port(owners[i]).lid = lids->ranges[i].min;
    s.topo.port(owners[i]).lmc = static_cast<uint8_t>(std::countr_zero(uint32_t{lids->ranges[i].max.value()} - lids->ranges[i].min.value() + 1u));
  }
  report_.end_ports = owners.size();
  if (s.self.valid()) sm_lid_ = s.topo.port({s.self, s.self_port}).lid;

  // Compute time is measured on the host's clock (a report, not a decision): routing is the
  // one long computation of a sweep.
  const auto compute_start = std::chrono::steady_clock::now();
  auto graph = RoutingGraph::build(s.topo);
  if (!graph) {
    report_.problems.push_back(fmt::format("cannot route: {}", graph.error().message()));
    return false;
  }
  auto outcome = route_with_fallback(*graph, config_.routing_engine);
  if (!outcome) {
    report_.problems.push_back(fmt::format("routing failed: {}", outcome.error().message()));
    return false;
  }
  report_.routing_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - compute_start).count();
  report_.routing_engine = outcome->tables.engine;
  report_.routing_attempts = outcome->attempts;
  tables_ = std::move(outcome->tables);
  graph_ = std::make_unique<RoutingGraph>(std::move(*graph));
  return true;
}

// Each pass below is a Transactions source: a cursor that sends the next request the window
// has room for, so a pass over millions of LFT blocks never queues them all.

void SubnetManager::program_switches() {
  const size_t blocks = size_t{graph_->max_lid()} / mad::LinearForwardingTable::kLidsPerBlock + 1;
  struct Cursor {
    SwitchIndex sw = 0;
    size_t block = 0;
    bool header_done = false;
    std::vector<uint64_t>* hashes = nullptr;
  };
  transactions_.add_source([this, blocks, c = Cursor{}]() mutable {
    Subnet& s = *subnet_;
    const RoutingGraph& g = *graph_;
    for (; c.sw < g.switch_count(); ++c.sw, c.block = 0, c.header_done = false) {
      const NodeIndex n = g.node_of(c.sw);
      SmNode& node = s.nodes[n.value()];
      if (!c.header_done) {
        c.header_done = true;
        c.hashes = &programmed_[node.info.node_guid.value()];
        // A switch whose LinearFDBTop is not what this SM set was reset (or programmed by
        // someone else): what it holds is unknown.
        if (node.sw.linear_fdb_top != g.max_lid()) c.hashes->assign(blocks, kUnknown);
        c.hashes->resize(blocks, kUnknown);
        // SwitchInfo: the LFT's top, and clear PortStateChange (write 1) so changes trap again.
        if (node.sw.linear_fdb_top != g.max_lid() || node.sw.port_state_change) {
          mad::SwitchInfo si_set = node.sw;
          si_set.linear_fdb_top = g.max_lid();
          si_set.port_state_change = true;
          set_dr(node.path, si_set, 0, {kSetSwitchInfo, n.value(), 0, 0});
          return true;
        }
      }
      const std::vector<PortNum>& lft = tables_->lft[c.sw];
      while (c.block < blocks) {
        const size_t b = c.block++;
        if ((*c.hashes)[b] == block_hash(lft, b)) continue;
        mad::LinearForwardingTable block;
        for (size_t i = 0; i < block.ports.size(); ++i) {
          const size_t lid = b * 64 + i;
          block.ports[i] = lid < lft.size() ? lft[lid] : uint8_t{0xFF};
        }
        set_dr(node.path, block, static_cast<uint32_t>(b), {kSetLft, n.value(), static_cast<uint16_t>(b), c.sw});
        ++report_.lft_blocks_set;
        return true;
      }
    }
    return false;
  });
}


void SubnetManager::configure_ports() {
  port_pass([this](NodeIndex n, uint8_t p) {
    Subnet& s = *subnet_;
    SmNode& node = s.nodes[n.value()];
    if (!node.port_read[p]) return false;
    const PortRef ref{n, p};
    const fabric::TopoPort& tp = s.topo.port(ref);
    if (p != 0 && !tp.peer.valid()) return false;
    const mad::PortInfo& cur = node.ports[p];
    mad::PortInfo want = cur;
    if (s.is_end_port(ref)) {
      want.lid = tp.lid;
      want.lmc = tp.lmc;
      want.master_sm_lid = sm_lid_;
      want.master_sm_sl = 0;
      want.gid_prefix = config_.subnet_prefix;
      want.m_key = config_.m_key;
      want.subnet_timeout = config_.subnet_timeout;
    }
    if (p != 0) {
      const SmNode& peer = s.nodes[tp.peer.node.value()];
      const mad::PortInfo& other = peer.ports[tp.peer.port];
      if (peer.port_read[tp.peer.port]) {
        want.neighbor_mtu = std::min(cur.mtu_cap, other.mtu_cap);
        want.operational_vls = std::min({cur.vl_cap, other.vl_cap, config_.max_op_vls});
      }
      if (s.is_switch(n)) {  // switch ports facing CAs enforce partitions (OpenSM's default)
        const bool enforce = !config_.no_partition_enforcement && !s.is_switch(tp.peer.node) &&
                             node.sw.partition_enforcement_cap > 0;
        want.partition_enforcement_inbound = want.partition_enforcement_outbound = enforce;
      }
    }
    const bool same = want.lid == cur.lid && want.lmc == cur.lmc && want.master_sm_lid == cur.master_sm_lid &&
                      want.gid_prefix == cur.gid_prefix && want.m_key == cur.m_key &&
                      want.subnet_timeout == cur.subnet_timeout && want.neighbor_mtu == cur.neighbor_mtu &&
                      want.operational_vls == cur.operational_vls &&
                      want.partition_enforcement_inbound == cur.partition_enforcement_inbound &&
                      want.partition_enforcement_outbound == cur.partition_enforcement_outbound;
    if (same) return false;
    want.port_state = mad::PortState::kNoChange;
    want.port_physical_state = mad::PhysPortState::kNoChange;
    want.link_width_enabled = 0;
    want.link_speed_enabled = 0;
    want.link_speed_ext_enabled = 0;
    set_dr(s.path_to(ref), want, s.is_switch(n) ? p : 0, {kSetPortInfo, n.value(), p, 0});
    ++report_.port_infos_set;
    return true;
  });
}

void SubnetManager::set_port_states(mad::PortState from, mad::PortState to, Op op) {
  port_pass([this, from, to, op](NodeIndex n, uint8_t p) {
    Subnet& s = *subnet_;
    SmNode& node = s.nodes[n.value()];
    const PortRef ref{n, p};
    if (p == 0 || !node.port_read[p] || !s.topo.port(ref).peer.valid()) return false;
    if (node.ports[p].port_state != from) return false;
    mad::PortInfo want = node.ports[p];
    want.port_state = to;
    want.port_physical_state = mad::PhysPortState::kNoChange;
    want.link_width_enabled = 0;
    want.link_speed_enabled = 0;
    want.link_speed_ext_enabled = 0;
    set_dr(s.path_to(ref), want, s.is_switch(n) ? p : 0, {static_cast<uint8_t>(op), n.value(), p, 0});
    return true;
  });
}

void SubnetManager::configured(const Transactions::Context& c, const mad::DrSmp& smp) {
  Subnet& s = *subnet_;
  if (c.node >= s.nodes.size()) return;
  const NodeIndex n(c.node);
  if (!smp.status.ok()) {
    report_.problems.push_back(fmt::format("{} on {} port {} refused: {}", c.op, s.topo.node(n).id, c.port,
                                           smp.status.to_string()));
    return;
  }
  SmNode& node = s.nodes[c.node];
  switch (static_cast<Op>(c.op)) {
    case kSetSwitchInfo:
      if (auto si = mad::decode<mad::SwitchInfo>(smp.data)) node.sw = *si;
      return;
    case kSetLft:
      programmed_[node.info.node_guid.value()][c.port] = block_hash(tables_->lft[c.extra], c.port);
      return;
    case kSetPKeys:
    case kSetSl2Vl:
    case kSetMft:
      table_programmed(c);
      return;
    case kSetPortInfo:
    case kArmPort:
    case kActivatePort:
      if (auto pi = mad::decode<mad::PortInfo>(smp.data)) node.ports[c.port] = *pi;
      return;
    default:
      return;
  }
}

}  // namespace softib::sm
