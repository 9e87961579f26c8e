// RoutingGraph: the compact view of a subnet that routing engines work on — switches as
// dense indices with their inter-switch links, and every LID's attachment point. Built from
// a Topology whose ports carry the LIDs the SM assigned.
//
// Thread: immutable after build(); engines may read it from several threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"
#include "fabric/topology.hpp"

namespace softib::sm {

using SwitchIndex = uint32_t;  // dense 0..switch_count()-1
inline constexpr SwitchIndex kNoSwitch = 0xFFFFFFFF;

// An LFT entry: the output port for a LID. 0 means "this switch" (its management port).
using PortNum = uint8_t;
inline constexpr PortNum kDropPort = 0xFF;  // IBA: unassigned entries drop the packet

struct SwitchLink {
  PortNum port;          // on this switch
  SwitchIndex neighbor;  // the switch at the other end
  PortNum neighbor_port;
};

// Where a LID range ends: at a switch port (a CA or router port cabled to it) or at the
// switch itself (its port-0 LIDs).
struct Endpoint {
  Lid base;
  uint8_t lmc = 0;
  SwitchIndex sw = kNoSwitch;  // the switch the endpoint hangs off (or is)
  PortNum port = 0;            // 0: the switch itself
  fabric::PortRef owner;       // the CA/router port, or the switch's port 0
  Guid guid{};                 // owner's port GUID
  bool is_ca() const { return port != 0; }
};

class RoutingGraph {
 public:
  // Errors: InvalidArgument when an endpoint has no LID, LIDs overlap, or a CA port is cabled
  // to another CA (no switch to program).
  static Result<RoutingGraph> build(const fabric::Topology& topology);

  size_t switch_count() const { return switch_nodes_.size(); }
  fabric::NodeIndex node_of(SwitchIndex s) const { return switch_nodes_[s]; }
  Guid guid_of(SwitchIndex s) const { return switch_guids_[s]; }
  std::span<const SwitchLink> links(SwitchIndex s) const {
    return {link_store_.data() + link_begin_[s], link_begin_[s + 1] - link_begin_[s]};
  }
  uint8_t port_count(SwitchIndex s) const { return port_counts_[s]; }
  const std::vector<Endpoint>& endpoints() const { return endpoints_; }
  // Endpoints attached to (or being) switch s, as indices into endpoints().
  std::span<const uint32_t> endpoints_at(SwitchIndex s) const {
    return {endpoint_store_.data() + endpoint_begin_[s], endpoint_begin_[s + 1] - endpoint_begin_[s]};
  }
  uint16_t max_lid() const { return max_lid_; }
  SwitchIndex switch_of(fabric::NodeIndex n) const;

 private:
  std::vector<fabric::NodeIndex> switch_nodes_;
  std::vector<Guid> switch_guids_;
  std::vector<uint8_t> port_counts_;
  std::vector<uint32_t> link_begin_;  // CSR adjacency
  std::vector<SwitchLink> link_store_;
  std::vector<Endpoint> endpoints_;
  std::vector<uint32_t> endpoint_begin_;
  std::vector<uint32_t> endpoint_store_;
  std::vector<SwitchIndex> switch_of_node_;  // by NodeIndex, kNoSwitch for CAs
  uint16_t max_lid_ = 0;
};

// Hop distances between switches by breadth-first search from `from`; unreachable = 0xFF.
void switch_distances(const RoutingGraph& g, SwitchIndex from, std::vector<uint8_t>& out);

}  // namespace softib::sm
