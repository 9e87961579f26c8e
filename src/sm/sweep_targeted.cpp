// Targeted sweeps: what a trap 128 (a switch's port changed state) costs on a healthy subnet.
// OpenSM answers such a trap with a heavy sweep, rediscovering the whole subnet; here the SM
// reads only the trapping switches' PortInfo, removes the cables that went down from its
// model, recomputes directed routes from the model, and re-routes and reprograms — sending
// only the LFT blocks that changed. A new link, a node cut off from the SM or a request that
// goes unanswered mean the model cannot be trusted: a heavy sweep follows.
#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

std::optional<NodeIndex> SubnetManager::switch_with_lid(Lid lid) const {
  const Subnet& s = *subnet_;
  for (uint32_t i = 0; i < s.nodes.size(); ++i) {
    const NodeIndex n(i);
    if (s.is_switch(n) && s.topo.port({n, 0}).lid == lid) return n;
  }
  return std::nullopt;
}

void SubnetManager::mark_dirty(NodeIndex sw) {
  if (std::find(dirty_.begin(), dirty_.end(), sw.value()) == dirty_.end()) dirty_.push_back(sw.value());
  targeted_wanted_ = true;
}

void SubnetManager::begin_targeted_sweep() {
  targeted_wanted_ = false;
  report_ = SweepReport{};
  report_.targeted = true;
  report_.started = clock_.now();
  mads_at_start_ = transactions_.sent();
  timeouts_at_start_ = transactions_.timed_out();
  unclean_ = false;
  model_changed_ = false;
  phase_ = Phase::kTargeted;
  const std::vector<uint32_t> dirty = std::move(dirty_);
  dirty_.clear();
  log(LogLevel::kInfo, "sm", "targeted sweep of {} switch(es)", dirty.size());
  for (uint32_t i : dirty) {
    SmNode& node = subnet_->nodes[i];
    node.sw.port_state_change = true;  // program_switches() clears it on the switch
    for (uint8_t p = 1; p <= node.info.num_ports; ++p)
      send_dr(node.path, mad::Method::kGet, static_cast<uint16_t>(mad::SmpAttr::kPortInfo), p, nullptr,
              {kTrapPortInfo, i, p, 0});
  }
}

bool SubnetManager::path_crosses(NodeIndex n, PortRef a) const {
  const Subnet& s = *subnet_;
  const PortRef b = s.topo.port(a).peer;
  const mad::DrPath& path = s.path_to({n, s.is_switch(n) ? uint8_t{0} : uint8_t{1}});
  NodeIndex cur = s.self;
  for (uint8_t hop = 1; hop <= path.hop_count(); ++hop) {
    const PortRef out{cur, path.port(hop)};
    if (out == a || out == b) return true;
    const PortRef next = s.topo.port(out).peer;
    if (!next.valid()) return false;
    cur = next.node;
  }
  return false;
}

void SubnetManager::targeted_port_info(const Transactions::Context& c, const mad::DrSmp& smp) {
  Subnet& s = *subnet_;
  if (!smp.status.ok() || c.node >= s.nodes.size()) {
    request_sweep(true);
    return;
  }
  auto pi = mad::decode<mad::PortInfo>(smp.data);
  if (!pi) {
    request_sweep(true);
    return;
  }
  const NodeIndex n(c.node);
  const auto p = static_cast<uint8_t>(c.port);
  SmNode& node = s.nodes[c.node];
  node.ports[p] = *pi;
  node.port_read[p] = 1;
  const PortRef here{n, p};
  const PortRef peer = s.topo.port(here).peer;
  const bool up = pi->port_physical_state == mad::PhysPortState::kLinkUp;
  if (peer.valid() && !up) {
    report_.link_changes.push_back(fmt::format("'{}' port {}: down (to '{}' port {})", s.topo.node(n).description, p,
                                               s.topo.node(peer.node).description, peer.port));
    // Requests to the far end that travel over this cable will never arrive; what they
    // would tell (its port is down too) is known.
    if (s.is_switch(peer.node) && path_crosses(peer.node, here)) {
      transactions_.cancel_if([&](const Transactions::Context& x) {
        return x.op == kTrapPortInfo && x.node == peer.node.value();
      });
    }
    SmNode& far = s.nodes[peer.node.value()];
    far.ports[peer.port].port_state = mad::PortState::kDown;
    far.ports[peer.port].port_physical_state = mad::PhysPortState::kPolling;
    s.topo.disconnect(here);
    model_changed_ = true;
  } else if (!peer.valid() && up) {
    report_.link_changes.push_back(
        fmt::format("'{}' port {}: up (new link, rediscovering)", s.topo.node(n).description, p));
    request_sweep(true);
  }
}

bool SubnetManager::targeted_apply() {
  if (!model_changed_) return true;  // nothing moved: only PortStateChange to clear
  if (!recompute_paths()) {
    report_.problems.push_back("a node is cut off from the SM; rediscovering");
    return false;
  }
  return assign_lids_and_route();
}

bool SubnetManager::recompute_paths() {
  Subnet& s = *subnet_;
  const size_t n = s.nodes.size();
  std::vector<uint8_t> seen(n, 0);
  std::vector<NodeIndex> queue{s.self};
  seen[s.self.value()] = 1;
  s.nodes[s.self.value()].path = mad::DrPath();
  if (!s.nodes[s.self.value()].port_path.empty()) s.nodes[s.self.value()].port_path[s.self_port] = mad::DrPath();
  for (size_t head = 0; head < queue.size(); ++head) {
    const NodeIndex u = queue[head];
    const SmNode& un = s.nodes[u.value()];
    const bool sw = s.is_switch(u);
    for (uint8_t p = 1; p <= un.info.num_ports; ++p) {
      if (!sw && !(u == s.self && p == s.self_port)) continue;  // CA ports do not forward
      const PortRef v = s.topo.port({u, p}).peer;
      if (!v.valid()) continue;
      const mad::DrPath& from = s.nodes[u.value()].path;
      if (from.hop_count() >= mad::kMaxHopCount) continue;
      SmNode& vn = s.nodes[v.node.value()];
      // Each CA port has one cable, so it is reached once, from its neighbour.
      if (!vn.port_path.empty()) vn.port_path[v.port] = from.then(p);
      if (seen[v.node.value()]) continue;
      seen[v.node.value()] = 1;
      vn.path = from.then(p);
      queue.push_back(v.node);
    }
  }
  return queue.size() == n;
}

}  // namespace softib::sm
