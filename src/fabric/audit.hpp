// An audit of a live fabric that trusts no SM: it reads PortInfo and LFTs straight from the
// fabric's nodes and follows every (CA port, destination LID) pair hop by hop through the
// switches, as packets would go. `softib sim` reports it; tests assert on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/fabric.hpp"

namespace softib::fabric {

struct FabricAudit {
  size_t cabled_ports = 0;    // external ports with a cable
  size_t active_ports = 0;    // ... whose PortState is Active
  size_t end_ports = 0;       // Active CA/router ports, switch port 0s: the destinations
  size_t lids = 0;            // unicast LIDs held by end ports (LMC ranges counted whole)
  size_t lid_conflicts = 0;   // LIDs held by two ports, or ranges not LMC-aligned
  size_t end_ports_without_lid = 0;
  uint64_t routes = 0;        // (Active CA port, LID of another end port) pairs followed
  uint64_t delivered = 0;     // ... that reach the port owning the LID
  uint64_t max_switch_hops = 0;
  std::vector<std::string> problems;  // the first few, for the operator

  bool ok() const {
    return active_ports == cabled_ports && lid_conflicts == 0 && end_ports_without_lid == 0 && delivered == routes;
  }
};

// O(LIDs x switches): each destination LID is followed once from every switch (memoized).
FabricAudit audit_fabric(const Fabric& fabric, size_t max_problems = 8);

}  // namespace softib::fabric
