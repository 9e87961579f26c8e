#include "fabric/topology.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace softib::fabric {

std::string_view to_string(NodeType type) {
  switch (type) {
    case NodeType::kCa: return "Channel Adapter";
    case NodeType::kSwitch: return "Switch";
    case NodeType::kRouter: return "Router";
  }
  return "Unknown";
}

std::string NodeIndex::to_string() const { return fmt::format("node#{}", v_); }

Result<NodeIndex> Topology::add_node(NodeType type, std::string id, std::string description,
                                     Guid node_guid, uint8_t num_ports) {
  if (num_ports < 1 || num_ports > kMaxPorts)
    return Status(Code::kInvalidArgument, fmt::format("node \"{}\": {} ports (want 1..{})", id,
                                                      num_ports, kMaxPorts));
  if (by_id_.contains(id))
    return Status(Code::kAlreadyExists, fmt::format("node id \"{}\" already exists", id));
  const NodeIndex index(static_cast<uint32_t>(nodes_.size()));
  TopoNode node;
  node.type = type;
  node.description = description.empty() ? id : std::move(description);
  node.id = std::move(id);
  node.node_guid = node_guid;
  node.system_image_guid = node_guid;
  node.num_ports = num_ports;
  node.first_port = static_cast<uint32_t>(ports_.size());
  for (uint32_t p = 0; p <= num_ports; ++p) {
    TopoPort port;
    port.guid = type == NodeType::kSwitch ? node_guid : Guid(node_guid.value() + p);
    ports_.push_back(port);
  }
  by_id_.emplace(node.id, index);
  by_guid_.try_emplace(node_guid.value(), index);
  nodes_.push_back(std::move(node));
  return index;
}

size_t Topology::port_slot(PortRef p) const {
  const TopoNode& n = nodes_.at(p.node.value());
  SOFTIB_ASSERT(p.port <= n.num_ports);
  return n.first_port + p.port;
}

Result<void> Topology::connect(PortRef a, PortRef b) {
  for (PortRef end : {a, b}) {
    if (!end.valid() || end.node.value() >= nodes_.size())
      return Status(Code::kInvalidArgument, "no such node");
    const TopoNode& n = nodes_[end.node.value()];
    if (end.port == 0 || end.port > n.num_ports)
      return Status(Code::kInvalidArgument,
                    fmt::format("\"{}\" has no port {} (ports 1..{})", n.id, end.port, n.num_ports));
    const TopoPort& tp = port(end);
    if (tp.peer.valid()) {
      const TopoNode& other = nodes_[tp.peer.node.value()];
      return Status(Code::kInvalidArgument,
                    fmt::format("\"{}\"[{}] is already cabled to \"{}\"[{}]", n.id, end.port,
                                other.id, tp.peer.port));
    }
  }
  if (a == b) return Status(Code::kInvalidArgument, "a port cannot be cabled to itself");
  port(a).peer = b;
  port(b).peer = a;
  ++links_;
  return {};
}

void Topology::disconnect(PortRef a) {
  TopoPort& here = port(a);
  if (!here.peer.valid()) return;
  port(here.peer).peer = PortRef{};
  here.peer = PortRef{};
  --links_;
}

std::optional<NodeIndex> Topology::find(std::string_view id) const {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeIndex> Topology::find_by_guid(Guid node_guid) const {
  auto it = by_guid_.find(node_guid.value());
  if (it == by_guid_.end()) return std::nullopt;
  return it->second;
}

size_t Topology::count(NodeType type) const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [&](const TopoNode& n) { return n.type == type; }));
}

}  // namespace softib::fabric
