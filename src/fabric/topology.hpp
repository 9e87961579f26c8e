// Topology: the static description of a fabric — its nodes, their ports and the cables
// between them — as a net file, a generator or a discovery sweep describes it. It is the
// common currency of topology I/O: net_reader produces it, generators produce it, the net
// writer and `topo diff` consume it, and the fabric model is built from it.
//
// Nodes are addressed by NodeIndex (dense, in declaration order); ports by PortRef
// {node, port number}. Every node has ports 0..num_ports; port 0 is the switch management
// port (a CA's port 0 exists in the arrays but is never used).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"
#include "fabric/link_rate.hpp"

namespace softib::fabric {

// NodeInfo.NodeType, IBA 14.2.5.3.
enum class NodeType : uint8_t { kCa = 1, kSwitch = 2, kRouter = 3 };
std::string_view to_string(NodeType type);  // "Channel Adapter", "Switch", "Router"

class NodeIndex : public StrongValue<struct NodeIndexTag, uint32_t, true> {
 public:
  using StrongValue::StrongValue;
  static constexpr NodeIndex none() { return NodeIndex(0xFFFFFFFF); }
  constexpr bool valid() const { return v_ != 0xFFFFFFFF; }
  std::string to_string() const;
};

struct PortRef {
  NodeIndex node = NodeIndex::none();
  uint8_t port = 0;
  constexpr bool valid() const { return node.valid(); }
  friend constexpr bool operator==(PortRef, PortRef) = default;
};

// The largest port count NodeInfo.NumPorts can carry on a node that also has port 0.
inline constexpr int kMaxPorts = 254;

struct TopoPort {
  Guid guid;                  // a switch's ports all carry its port-0 GUID
  LinkCaps caps;              // what this end enables
  Lid lid;                    // a preset LID (0: none); CA ports and switch port 0
  uint8_t lmc = 0;
  PortRef peer;               // the other end of the cable; invalid when unconnected
};

struct TopoNode {
  NodeType type = NodeType::kCa;
  std::string id;             // unique name in the net file, e.g. "S-0000000000200001"
  std::string description;    // NodeDescription (at most 64 bytes on the wire)
  Guid node_guid;
  Guid system_image_guid;
  uint32_t vendor_id = 0;     // 24 bits
  uint16_t device_id = 0;
  uint8_t num_ports = 0;      // external ports 1..num_ports
  bool enhanced_port0 = false;  // switches: SwitchInfo.EnhancedPort0 (ibsim default: base)
  uint32_t first_port = 0;    // index of port 0 in Topology's port array
};

class Topology {
 public:
  // Adds a node with ports 0..num_ports, unconnected. Port GUIDs default to the node GUID
  // (switches) or node GUID + port number (CAs and routers), as ibsim assigns them.
  // Errors: InvalidArgument for num_ports outside 1..kMaxPorts; AlreadyExists for a
  // duplicate id (duplicate GUIDs are allowed: a fabric can have them, and diagnostics report
  // them).
  Result<NodeIndex> add_node(NodeType type, std::string id, std::string description,
                             Guid node_guid, uint8_t num_ports);

  // Cables a and b together. Errors: InvalidArgument for a port out of range, port 0, or a
  // port already cabled.
  Result<void> connect(PortRef a, PortRef b);
  // Removes the cable at a (and its other end). No-op when a is unconnected.
  void disconnect(PortRef a);

  size_t node_count() const { return nodes_.size(); }
  size_t link_count() const { return links_; }
  std::span<const TopoNode> nodes() const { return nodes_; }
  const TopoNode& node(NodeIndex n) const { return nodes_.at(n.value()); }
  TopoNode& node(NodeIndex n) { return nodes_.at(n.value()); }
  // REQUIRES: p.port <= node(p.node).num_ports
  const TopoPort& port(PortRef p) const { return ports_.at(port_slot(p)); }
  TopoPort& port(PortRef p) { return ports_.at(port_slot(p)); }

  std::optional<NodeIndex> find(std::string_view id) const;
  // The first node with this node GUID.
  std::optional<NodeIndex> find_by_guid(Guid node_guid) const;
  size_t count(NodeType type) const;

  // Every cable once, as (lower end, higher end) in node/port order.
  template <class F>
  void for_each_link(F&& f) const {
    for (uint32_t n = 0; n < nodes_.size(); ++n) {
      const TopoNode& node = nodes_[n];
      for (uint8_t p = 1; p <= node.num_ports; ++p) {
        const PortRef here{NodeIndex(n), p};
        const TopoPort& tp = ports_[node.first_port + p];
        if (!tp.peer.valid()) continue;
        if (tp.peer.node.value() < n || (tp.peer.node.value() == n && tp.peer.port < p)) continue;
        f(here, tp.peer);
      }
    }
  }

 private:
  size_t port_slot(PortRef p) const;

  // Heterogeneous lookup: find(string_view) without building a std::string.
  struct IdHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<TopoNode> nodes_;
  std::vector<TopoPort> ports_;
  std::unordered_map<std::string, NodeIndex, IdHash, std::equal_to<>> by_id_;
  std::unordered_map<uint64_t, NodeIndex> by_guid_;
  size_t links_ = 0;
};

}  // namespace softib::fabric
