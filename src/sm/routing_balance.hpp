// The shared core of the shortest-path engines (minhop, updn): for one destination switch,
// each switch has a list of equally good output ports ("candidates"); every LID of every
// endpoint at the destination is routed over the least-loaded candidate (ties: lowest
// port), and the per-port load persists across destinations so the whole table balances.
// Private to sm.
#pragma once

#include <vector>

#include "sm/routing_engine.hpp"

namespace softib::sm {

class CandidatePorts {
 public:
  void reset(size_t switches) {
    begin_.assign(switches + 1, 0);
    ports_.clear();
    filled_ = 0;
  }
  // Candidates must be added switch by switch in increasing SwitchIndex order.
  void add(SwitchIndex s, PortNum p) {
    while (filled_ < s) begin_[++filled_] = static_cast<uint32_t>(ports_.size());
    ports_.push_back(p);
    begin_[s + 1] = static_cast<uint32_t>(ports_.size());
  }
  void finish(size_t switches) {
    while (filled_ < switches) begin_[++filled_] = static_cast<uint32_t>(ports_.size());
  }
  const PortNum* begin(SwitchIndex s) const { return ports_.data() + begin_[s]; }
  const PortNum* end(SwitchIndex s) const { return ports_.data() + begin_[s + 1]; }

 private:
  std::vector<uint32_t> begin_;
  std::vector<PortNum> ports_;
  size_t filled_ = 0;
};

// Per switch, per port: LIDs routed over it so far.
class PortLoad {
 public:
  explicit PortLoad(const RoutingGraph& g) : load_(g.switch_count(), std::vector<uint32_t>(256, 0)) {}
  uint32_t& at(SwitchIndex s, PortNum p) { return load_[s][p]; }

 private:
  std::vector<std::vector<uint32_t>> load_;
};

// Routes the LIDs of every endpoint at `dest`: at `dest` itself over the endpoint's port
// (0 for the switch's own LIDs); elsewhere over the least-loaded candidate. Switches with
// no candidate (unreachable) keep kDropPort.
void route_destination(const RoutingGraph& g, SwitchIndex dest, const CandidatePorts& candidates,
                       PortLoad& load, RoutingTables& out);

}  // namespace softib::sm
