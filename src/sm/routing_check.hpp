// Checks and measures a set of forwarding tables: every LID reachable from every switch,
// no loops, hop counts, and the link loads of all-to-all and permutation traffic. Used by
// tests, by `softib sim` and by the routing benchmark.
#pragma once

#include <cstdint>
#include <optional>
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

// Deadlock freedom of CA-to-CA traffic (IBA credit loops): the channel dependency graph —
// channels are (switch, output port, VL), and a route that leaves switch s on channel a and
// the next switch on channel b makes b depend on a — must be acyclic. VLs come from the
// tables' VL plan (SL from path_sl, VL from sl2vl), VL 0 without one.
// O(destination LIDs x switches x SLs in use) plus the graph search.
struct DeadlockCheck {
  bool free = true;
  uint32_t vls = 1;             // data VLs the routes use
  uint64_t channels = 0;        // channels some route uses
  uint64_t dependencies = 0;    // distinct channel-to-channel dependencies
  std::string cycle;            // one cycle, when not free: "switch 0x.. port 3 VL 0 -> ..."
};
DeadlockCheck check_deadlock(const RoutingGraph& graph, const RoutingTables& tables);

// The least possible all-to-all load of the busiest link on a layered fabric (a fat tree):
// switches ranked by distance from the leaves (switches with CAs); at each rank, switches
// whose subtrees hold the same CAs form a group, and the D x (N - D) flows between the
// group's D CAs and the rest must cross the group's uplinks, so some link carries at least
// ceil(D (N - D) / uplinks) in each direction. The maximum over groups is what an ideal
// router reaches. nullopt when the fabric is not layered (a link joins switches of equal
// rank, as in tori) or has no CA.
std::optional<uint64_t> layered_ideal_max_load(const RoutingGraph& graph);

// Cyclic shifts among CA endpoints (in endpoint order): flows i -> (i + k) mod N. Returns
// the worst max_link_load over the shifts tried: all N-1 when N <= all_up_to, else `samples`
// shifts spread evenly. 1 means every shift tried is contention-free.
struct ShiftContention {
  uint64_t worst = 0;
  uint32_t shifts_tried = 0;
};
ShiftContention shift_contention(const RoutingGraph& graph, const RoutingTables& tables,
                                 size_t all_up_to = 2048, size_t samples = 64);

}  // namespace softib::sm
