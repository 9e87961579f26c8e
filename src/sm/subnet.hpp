// Subnet: what the SM learned about the fabric in its last sweep — the structure as a
// fabric::Topology (nodes named by GUID, cables, the LIDs the SM assigned) plus, per node,
// what it read: NodeInfo, SwitchInfo, every PortInfo, and the directed route to reach it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/topology.hpp"
#include "mad/dr_route.hpp"
#include "mad/node_info.hpp"
#include "mad/port_info.hpp"
#include "mad/switch_info.hpp"

namespace softib::sm {

using fabric::NodeIndex;
using fabric::PortRef;

struct SmNode {
  mad::NodeInfo info;
  mad::SwitchInfo sw;                 // switches
  mad::DrPath path;                   // how the SM reaches the node (a switch, or a CA's first port)
  std::vector<mad::DrPath> port_path; // multi-port CAs: the route to each port (empty: use path)
  std::vector<mad::PortInfo> ports;   // 0..num_ports, as last read (and as set since)
  std::vector<uint8_t> port_read;     // 1 when ports[p] holds a read value
};

class Subnet {
 public:
  fabric::Topology topo;
  std::vector<SmNode> nodes;  // parallel to topo's nodes
  NodeIndex self = NodeIndex::none();
  uint8_t self_port = 0;

  // A node of this GUID, created if new (then `fresh` is true).
  NodeIndex node_for(const mad::NodeInfo& info, bool& fresh);
  std::optional<NodeIndex> find(Guid node_guid) const;
  bool is_switch(NodeIndex n) const { return nodes[n.value()].info.node_type == mad::NodeType::kSwitch; }
  // The route to a port: a switch's route (any port), or a CA port's own route.
  const mad::DrPath& path_to(PortRef p) const;
  // An end port: a CA/router port, or a switch's port 0.
  bool is_end_port(PortRef p) const { return is_switch(p.node) ? p.port == 0 : p.port != 0; }

 private:
  std::unordered_map<uint64_t, NodeIndex> by_guid_;
};

}  // namespace softib::sm
