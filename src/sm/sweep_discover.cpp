// Discovery by directed-route SMPs (IBA 14.2.2): breadth first from the SM's own port. Each
// new node is asked for NodeDescription, SwitchInfo and PortInfo; every switch port that is
// physically up and not yet cabled in the model is explored with a NodeInfo one hop further.
// Nodes are identified by GUID, so loops and parallel cables are recognised; a CA is
// reached once per cabled port (its ports do not forward).
#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "mad/node_description.hpp"
#include "fabric/device_model.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

namespace {

constexpr uint32_t kNoNode = 0xFFFFFFFF;

mad::DrPath path_of(const mad::DrSmp& smp) {
  mad::DrPath p;
  for (uint8_t hop = 1; hop <= smp.hop_count; ++hop) p = p.then(smp.initial_path[hop]);
  return p;
}

uint16_t attr(mad::SmpAttr a) { return static_cast<uint16_t>(a); }

}  // namespace

void SubnetManager::discover(const Transactions::Context& c, const mad::DrSmp& smp) {
  if (!smp.status.ok()) {
    report_.problems.push_back(fmt::format("discovery step {} at {}: {}", c.op, path_of(smp).to_string(), smp.status.to_string()));
    return;
  }
  Subnet& s = *subnet_;
  switch (static_cast<Op>(c.op)) {
    case kNodeInfo: {
      auto ni = mad::decode<mad::NodeInfo>(smp.data);
      if (!ni) {
        report_.problems.push_back(fmt::format("bad NodeInfo at {}: {}", path_of(smp).to_string(), ni.error().to_string()));
        return;
      }
      const mad::DrPath path = path_of(smp);
      bool fresh = false;
      const NodeIndex n = s.node_for(*ni, fresh);
      SmNode& node = s.nodes[n.value()];
      const bool sw = s.is_switch(n);
      const uint8_t in = ni->local_port_num;
      if (!sw && (in == 0 || in > node.info.num_ports)) {
        report_.problems.push_back(fmt::format("{} answered through port {}", s.topo.node(n).id, in));
        return;
      }
      if (c.node == kNoNode) {
        s.self = n;
        s.self_port = sw ? 0 : in;
      }
      if (!sw) {
        if (!node.port_path.empty()) node.port_path[in] = path;
        s.topo.port({n, in}).guid = ni->port_guid;
      } else if (fresh) {
        for (uint8_t p = 0; p <= node.info.num_ports; ++p) s.topo.port({n, p}).guid = ni->port_guid;
      }
      if (fresh) {
        node.path = path;
        send_dr(path, mad::Method::kGet, attr(mad::SmpAttr::kNodeDescription), 0, nullptr,
                {kNodeDescription, n.value(), 0, 0});
        if (sw) {
          send_dr(path, mad::Method::kGet, attr(mad::SmpAttr::kSwitchInfo), 0, nullptr, {kSwitchInfo, n.value(), 0, 0});
          for (uint8_t p = 0; p <= node.info.num_ports; ++p)
            send_dr(path, mad::Method::kGet, attr(mad::SmpAttr::kPortInfo), p, nullptr, {kPortInfo, n.value(), p, 0});
        }
      }
      if (!sw && !node.port_read[in])
        send_dr(path, mad::Method::kGet, attr(mad::SmpAttr::kPortInfo), 0, nullptr, {kPortInfo, n.value(), in, 0});
      if (c.node != kNoNode) {
        const PortRef parent{NodeIndex(c.node), static_cast<uint8_t>(c.port)};
        const PortRef here{n, sw ? in : in};
        const PortRef known = s.topo.port(parent).peer;
        if (!known.valid() && !s.topo.port(here).peer.valid()) {
          (void)s.topo.connect(parent, here);
        } else if (!(known == here)) {
          report_.problems.push_back(fmt::format("{} port {} and {} port {} disagree about their cable",
                                                 s.topo.node(parent.node).id, parent.port, s.topo.node(n).id, in));
        }
      }
      return;
    }
    case kNodeDescription: {
      auto d = mad::decode<mad::NodeDescription>(smp.data);
      if (d) s.topo.node(NodeIndex(c.node)).description = d->text();
      return;
    }
    case kSwitchInfo: {
      auto si = mad::decode<mad::SwitchInfo>(smp.data);
      if (si) {
        s.nodes[c.node].sw = *si;
        s.topo.node(NodeIndex(c.node)).enhanced_port0 = si->enhanced_port0;
      }
      return;
    }
    case kPortInfo: {
      auto pi = mad::decode<mad::PortInfo>(smp.data);
      if (!pi) return;
      const NodeIndex n(c.node);
      const auto p = static_cast<uint8_t>(c.port);
      SmNode& node = s.nodes[c.node];
      node.ports[p] = *pi;
      node.port_read[p] = 1;
      fabric::TopoPort& tp = s.topo.port({n, p});
      tp.caps.width_enabled = pi->link_width_enabled;
      tp.caps.speed_enabled = pi->link_speed_enabled;
      tp.caps.ext_speed_enabled = pi->link_speed_ext_enabled;
      const bool up = pi->port_physical_state == mad::PhysPortState::kLinkUp;
      const bool explorable = (s.is_switch(n) && p > 0) || (n == s.self && p == s.self_port && !s.is_switch(n));
      if (explorable && up && !tp.peer.valid()) explore(n, p);
      // Another SM's port (IsSM): ask for its SMInfo (IBA 14.4.1).
      const bool self = n == s.self && (s.is_switch(n) || p == s.self_port);
      if (!self && s.is_end_port({n, p}) && (pi->capability_mask & fabric::capmask::kIsSm)) query_sm(n, p);
      return;
    }
    default:
      return;
  }
}

void SubnetManager::explore(NodeIndex n, uint8_t port) {
  const mad::DrPath& from = subnet_->path_to({n, port});
  if (from.hop_count() >= mad::kMaxHopCount) {
    report_.problems.push_back(fmt::format("{} port {} is more than {} hops away; not explored",
                                           subnet_->topo.node(n).id, port, mad::kMaxHopCount));
    return;
  }
  send_dr(from.then(port), mad::Method::kGet, attr(mad::SmpAttr::kNodeInfo), 0, nullptr,
          {kNodeInfo, n.value(), port, 0});
}

}  // namespace softib::sm
