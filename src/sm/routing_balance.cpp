#include "sm/routing_balance.hpp"

namespace softib::sm {

void route_destination(const RoutingGraph& g, SwitchIndex dest, const CandidatePorts& candidates,
                       PortLoad& load, RoutingTables& out) {
  const auto& endpoints = g.endpoints();
  for (uint32_t e : g.endpoints_at(dest)) {
    const Endpoint& ep = endpoints[e];
    const uint32_t count = 1u << ep.lmc;
    for (uint32_t i = 0; i < count; ++i) {
      const uint16_t lid = static_cast<uint16_t>(ep.base.value() + i);
      out.lft[dest][lid] = ep.port;
      for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
        if (s == dest) continue;
        const PortNum* best = nullptr;
        uint32_t best_load = 0;
        for (const PortNum* p = candidates.begin(s); p != candidates.end(s); ++p) {
          const uint32_t l = load.at(s, *p);
          if (best == nullptr || l < best_load) {
            best = p;
            best_load = l;
          }
        }
        if (best == nullptr) continue;
        out.lft[s][lid] = *best;
        ++load.at(s, *best);
      }
    }
  }
}

}  // namespace softib::sm
