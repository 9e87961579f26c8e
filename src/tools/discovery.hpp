// Fabric discovery by directed-route SMPs from the local port, as libibnetdisc does it for
// ibnetdiscover, iblinkinfo, ibhosts/ibswitches/ibnodes and ibdiagnet: NodeInfo through
// every LinkUp port, NodeDescription, SwitchInfo and PortInfo of every port of a switch
// (port 0 first) and of the CA ports reached.
//
// The queries form one FIFO queue and their answers are handled in queue order, whatever
// order they come back in, while up to `window` are in flight. libibnetdisc does the same
// with two in flight against a simulator that answers in order, so nodes are created in the
// same order, and the tools list them in the same (reverse creation) order.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "mad/node_info.hpp"
#include "mad/port_info.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

struct DiscoveredPort {
  uint8_t num = 0;
  uint64_t guid = 0;
  mad::PortInfo info;  // as read (default until read)
  bool have_info = false;
  uint16_t base_lid = 0;  // switches: port 0's
  uint8_t lmc = 0;
  int remote_node = -1;  // index into DiscoveredFabric::nodes
  uint8_t remote_port = 0;
};

struct DiscoveredNode {
  uint64_t guid = 0;
  uint8_t type = 0;  // 1 CA, 2 switch, 3 router
  uint8_t num_ports = 0;
  mad::NodeInfo info;
  std::string description;
  std::vector<uint8_t> path;  // the DR path it was first reached by
  uint16_t sma_lid = 0;       // switches: port 0's LID
  uint8_t sma_lmc = 0;
  bool enhanced_port0 = false;
  std::array<uint8_t, 64> switch_info{};
  std::vector<std::optional<DiscoveredPort>> ports;  // 0..num_ports

  uint16_t lid_of(uint8_t port) const;  // the LID a tool prints for the port
};

struct DiscoveredFabric {
  std::vector<DiscoveredNode> nodes;  // creation order (the tools print the reverse)
  int from_node = -1;
  uint8_t from_port = 0;
  uint32_t mads = 0;
  unsigned max_hops = 0;

  int find_guid(uint64_t node_guid) const;
  // Node indices in the order libibnetdisc's lists give them (newest first), all or of a type.
  std::vector<int> listing(uint8_t type = 0) const;
};

struct DiscoverOptions {
  size_t window = 256;  // SMPs in flight
  unsigned max_hops = 0;  // 0: no limit
};

// Errors: the RPC's (no daemon, no port); the first NodeInfo timing out is "discover failed".
Result<DiscoveredFabric> discover(MadRpc& rpc, const DiscoverOptions& options = {});

}  // namespace softib::tools
