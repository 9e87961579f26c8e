// Routing engines behind one interface (OpenSM's design), with a registry and an ordered
// fallback chain that is logged and reported, never silent.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "sm/routing_graph.hpp"

namespace softib::sm {

// What an engine computes: one linear forwarding table per switch, indexed by LID
// (entries 0..max_lid; kDropPort where a LID is not routed).
struct RoutingTables {
  std::string engine;
  std::vector<std::vector<PortNum>> lft;  // by SwitchIndex
  std::vector<std::string> notes;  // what the engine wants the operator to know

  // Engines that need virtual lanes for deadlock freedom (dor on tori) also say which SL
  // each path uses (the SA hands it out in PathRecords) and how switches map SLs to VLs.
  struct VlPlan {
    uint8_t vls = 1;  // data VLs used
    // sl2vl[s][out_port][sl]: the VL a packet of SL leaves switch s on through out_port
    // (the same for every input port).
    std::vector<std::vector<std::array<uint8_t, 16>>> sl2vl;
    std::function<uint8_t(Lid source, Lid destination)> path_sl;
  };
  std::optional<VlPlan> vl_plan;

  PortNum port(SwitchIndex s, Lid lid) const { return lft[s][lid.value()]; }
};

class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual std::string_view name() const = 0;
  // Errors: Unsupported when the topology does not suit this engine (a fallback chain moves
  // on to the next engine); any other code is a routing failure.
  virtual Result<RoutingTables> route(const RoutingGraph& graph) = 0;
};

// Registered names: "minhop", "updn", "ftree", "dor", and "auto" (picks by topology).
std::unique_ptr<RoutingEngine> make_engine(std::string_view name);
std::vector<std::string_view> engine_names();
// OpenSM 3.3.23's engines that softib does not implement (lash, dfsssp, nue, ...): accepted
// in a chain, reported as skipped, never an error.
bool is_opensm_only_engine(std::string_view name);
// Errors: InvalidArgument naming the first name that is neither softib's nor OpenSM's.
Result<void> check_engine_chain(std::span<const std::string> chain);

struct RoutingOutcome {
  RoutingTables tables;
  // One line per engine tried, in order: "ftree: ok", "ftree: not a fat tree (...)".
  std::vector<std::string> attempts;
  bool fell_back() const { return attempts.size() > 1; }
};

// Tries the engines of `chain` in order (OpenSM's "routing_engine ftree,updn" syntax) and
// then minhop as the last resort, which routes any connected fabric. Every fallback is
// logged at warn level and recorded in attempts.
// Errors: InvalidArgument for an unknown engine name; the last engine's error when all fail.
Result<RoutingOutcome> route_with_fallback(const RoutingGraph& graph,
                                           std::span<const std::string> chain);

// Tables with every entry kDropPort, sized for `graph`.
RoutingTables empty_tables(const RoutingGraph& graph, std::string engine);

}  // namespace softib::sm
