// Checks and measures a set of forwarding tables: every LID reachable from every switch,
// no loops, hop counts, and the link loads of all-to-all and permutation traffic. Used by
// tests, by `softib sim` and by the routing benchmark.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sm/routing_engine.hpp"
#include "sm/routing_graph.hpp"

namespace softib::sm {

struct RouteCheck {
  uint64_t routes = 0;       // (source switch, destination LID) pairs walked
  uint64_t unreachable = 0;  // walks that hit a drop entry or a dead end
  uint64_t loops = 0;        // walks that never arrive
  uint64_t non_minimal = 0;  // longer than the shortest switch path
  uint32_t max_hops = 0;     // switch-to-switch hops on the longest route
  std::string first_problem;
  bool ok() const { return unreachable == 0 && loops == 0; }
};

// Walks every (switch, LID) pair through the tables in O(switches x LIDs).
RouteCheck check_routes(const RoutingGraph& graph, const RoutingTables& tables);

struct LinkLoadStats {
  uint64_t flows = 0;     // CA-to-CA flows routed
  uint64_t max_load = 0;  // flows on the busiest directed switch-to-switch link
  double mean_load = 0;   // over directed switch-to-switch links carrying any flow
  // load[s][k]: flows leaving switch s over its k-th link (RoutingGraph::links(s) order).
  std::vector<std::vector<uint64_t>> load;
};

// All-to-all among CA endpoints (their base LIDs): each CA sends one flow to every other.
// O(CAs x switches).
LinkLoadStats all_to_all_load(const RoutingGraph& graph, const RoutingTables& tables);

// A set of flows (source endpoint index, destination endpoint index into graph.endpoints()),
// e.g. one cyclic shift. Returns the largest number of flows sharing a directed link.
uint64_t max_link_load(const RoutingGraph& graph, const RoutingTables& tables,
                       const std::vector<std::pair<uint32_t, uint32_t>>& flows);

}  // namespace softib::sm
