// minhop (OpenSM's default engine): every LID goes over a shortest switch path, balancing
// LIDs across the equally short output ports. Routes any connected fabric; not deadlock-free
// in general (use updn, ftree or dor for that).
#include "sm/routing_balance.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

namespace {

class MinHop final : public RoutingEngine {
 public:
  std::string_view name() const override { return "minhop"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    RoutingTables out = empty_tables(g, "minhop");
    PortLoad load(g);
    CandidatePorts candidates;
    std::vector<uint8_t> dist;
    for (SwitchIndex t = 0; t < g.switch_count(); ++t) {
      switch_distances(g, t, dist);
      candidates.reset(g.switch_count());
      for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
        if (s == t || dist[s] == 0xFF) continue;
        for (const SwitchLink& l : g.links(s))
          if (dist[l.neighbor] + 1 == dist[s]) candidates.add(s, l.port);
      }
      candidates.finish(g.switch_count());
      route_destination(g, t, candidates, load, out);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> make_minhop() { return std::make_unique<MinHop>(); }

}  // namespace softib::sm
