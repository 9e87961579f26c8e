#include "sm/routing_graph.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/format.hpp"

namespace softib::sm {

using fabric::NodeIndex;
using fabric::NodeType;
using fabric::PortRef;

SwitchIndex RoutingGraph::switch_of(NodeIndex n) const {
  return n.value() < switch_of_node_.size() ? switch_of_node_[n.value()] : kNoSwitch;
}

Result<RoutingGraph> RoutingGraph::build(const fabric::Topology& t) {
  RoutingGraph g;
  g.switch_of_node_.assign(t.node_count(), kNoSwitch);
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    if (t.node(NodeIndex(i)).type != NodeType::kSwitch) continue;
    g.switch_of_node_[i] = static_cast<SwitchIndex>(g.switch_nodes_.size());
    g.switch_nodes_.push_back(NodeIndex(i));
    g.switch_guids_.push_back(t.node(NodeIndex(i)).node_guid);
    g.port_counts_.push_back(t.node(NodeIndex(i)).num_ports);
  }
  const size_t switches = g.switch_nodes_.size();

  // Adjacency (switch-to-switch cables) and endpoints, in CSR form.
  g.link_begin_.assign(switches + 1, 0);
  std::vector<std::vector<uint32_t>> at_switch(switches);
  std::vector<uint8_t> lid_used(0x10000, 0);
  const auto claim = [&](Lid base, uint8_t lmc, PortRef owner) -> Result<void> {
    const auto& node = t.node(owner.node);
    if (base.value() == 0)
      return Status(Code::kInvalidArgument, fmt::format("\"{}\" port {} has no LID", node.id, owner.port));
    const uint32_t count = 1u << lmc;
    if (base.value() + count - 1 > Lid::kMaxUnicast || base.value() % count != 0)
      return Status(Code::kInvalidArgument,
                    fmt::format("\"{}\" port {}: LID {} with LMC {} is not an aligned unicast range",
                                node.id, owner.port, base, lmc));
    for (uint32_t l = base.value(); l < base.value() + count; ++l) {
      if (lid_used[l])
        return Status(Code::kInvalidArgument, fmt::format("LID {} assigned twice (\"{}\" port {})", l, node.id, owner.port));
      lid_used[l] = 1;
    }
    g.max_lid_ = std::max<uint16_t>(g.max_lid_, static_cast<uint16_t>(base.value() + count - 1));
    return {};
  };

  for (SwitchIndex s = 0; s < switches; ++s) {
    const NodeIndex n = g.switch_nodes_[s];
    const fabric::TopoNode& node = t.node(n);
    const fabric::TopoPort& p0 = t.port({n, 0});
    SOFTIB_TRY(claim(p0.lid, p0.lmc, {n, 0}));
    at_switch[s].push_back(static_cast<uint32_t>(g.endpoints_.size()));
    g.endpoints_.push_back(Endpoint{p0.lid, p0.lmc, s, 0, {n, 0}, p0.guid});
    for (uint8_t p = 1; p <= node.num_ports; ++p) {
      const PortRef peer = t.port({n, p}).peer;
      if (!peer.valid()) continue;
      const SwitchIndex other = g.switch_of_node_[peer.node.value()];
      if (other != kNoSwitch) {
        g.link_store_.push_back(SwitchLink{p, other, peer.port});
        continue;
      }
      const fabric::TopoPort& ca = t.port(peer);
      SOFTIB_TRY(claim(ca.lid, ca.lmc, peer));
      at_switch[s].push_back(static_cast<uint32_t>(g.endpoints_.size()));
      g.endpoints_.push_back(Endpoint{ca.lid, ca.lmc, s, p, peer, ca.guid});
    }
    g.link_begin_[s + 1] = static_cast<uint32_t>(g.link_store_.size());
  }
  // CA-to-CA cables need no routing, but both ends still need distinct LIDs.
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const fabric::TopoNode& node = t.node(NodeIndex(i));
    if (node.type == NodeType::kSwitch) continue;
    for (uint8_t p = 1; p <= node.num_ports; ++p) {
      const fabric::TopoPort& port = t.port({NodeIndex(i), p});
      if (!port.peer.valid() || t.node(port.peer.node).type == NodeType::kSwitch) continue;
      SOFTIB_TRY(claim(port.lid, port.lmc, {NodeIndex(i), p}));
    }
  }
  g.endpoint_begin_.assign(switches + 1, 0);
  for (SwitchIndex s = 0; s < switches; ++s) {
    g.endpoint_store_.insert(g.endpoint_store_.end(), at_switch[s].begin(), at_switch[s].end());
    g.endpoint_begin_[s + 1] = static_cast<uint32_t>(g.endpoint_store_.size());
  }
  return g;
}

void switch_distances(const RoutingGraph& g, SwitchIndex from, std::vector<uint8_t>& out) {
  out.assign(g.switch_count(), 0xFF);
  std::vector<SwitchIndex> queue;
  queue.reserve(g.switch_count());
  out[from] = 0;
  queue.push_back(from);
  for (size_t head = 0; head < queue.size(); ++head) {
    const SwitchIndex s = queue[head];
    const uint8_t next = static_cast<uint8_t>(out[s] + 1);
    for (const SwitchLink& l : g.links(s)) {
      if (out[l.neighbor] != 0xFF) continue;
      out[l.neighbor] = next;
      queue.push_back(l.neighbor);
    }
  }
}

}  // namespace softib::sm
