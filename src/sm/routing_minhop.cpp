// minhop (OpenSM's default engine): every LID goes over a shortest switch path, balancing
// LIDs across the equally short output ports. Routes any connected fabric; not deadlock-free
// in general (use updn, ftree or dor for that).
//
// It makes the choices OpenSM 3.3's minhop makes (osm_ucast_mgr.c, osm_switch.c), so that the
// LFTs, ibroute, ibtracert and the SA's LinkRecords agree with OpenSM's on the same fabric:
// - Each switch routes the destinations in OpenSM's port order: first the CA and router ports
//   cabled to switches, switch by switch, the switches with the most such ports first (ties in
//   OpenSM's switch map order: node GUIDs compared in network byte order), each switch's ports
//   in port order; then every other port (the switches' own port 0) in OpenSM's port-GUID map
//   order. With an LMC, all base LIDs come first, then every LID + 1, and so on.
// - For each LID a switch takes, among its shortest-path ports, the one that carries the fewest
//   LIDs so far; ties go to the first in port order, starting after the port that took the
//   previous LID of the same port (LMC > 0).
// - LIDs of switches do not count towards a port's load (OpenSM's port_profile_switch_nodes
//   defaults to off).
// Not reproduced: OpenSM's LMC-aware spreading over remote systems and nodes
// (routing_for_lmc), port shifting and scatter_ports (off by default).
#include <algorithm>

#include "sm/routing_balance.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

namespace {

uint64_t map_key(Guid g) { return __builtin_bswap64(g.value()); }  // OpenSM's cl_qmap order

// OpenSM's port_order_list (ucast_mgr_build_lfts: sort_ports_by_switch_load, then
// add_port_to_order_list), as indices into g.endpoints().
std::vector<uint32_t> opensm_port_order(const RoutingGraph& g) {
  const auto& endpoints = g.endpoints();
  std::vector<SwitchIndex> switches(g.switch_count());
  for (SwitchIndex s = 0; s < g.switch_count(); ++s) switches[s] = s;
  std::stable_sort(switches.begin(), switches.end(),
                   [&](SwitchIndex a, SwitchIndex b) { return map_key(g.guid_of(a)) < map_key(g.guid_of(b)); });
  auto end_ports = [&](SwitchIndex s) {
    size_t n = 0;
    for (uint32_t e : g.endpoints_at(s))
      if (endpoints[e].is_ca()) ++n;
    return n;
  };
  std::stable_sort(switches.begin(), switches.end(), [&](SwitchIndex a, SwitchIndex b) { return end_ports(a) > end_ports(b); });

  std::vector<uint32_t> order;
  order.reserve(endpoints.size());
  std::vector<bool> added(endpoints.size(), false);
  for (SwitchIndex s : switches)
    for (uint32_t e : g.endpoints_at(s))  // in port order
      if (endpoints[e].is_ca() && !added[e]) {
        order.push_back(e);
        added[e] = true;
      }
  std::vector<uint32_t> rest;
  for (uint32_t e = 0; e < endpoints.size(); ++e)
    if (!added[e]) rest.push_back(e);
  std::stable_sort(rest.begin(), rest.end(),
                   [&](uint32_t a, uint32_t b) { return map_key(endpoints[a].guid) < map_key(endpoints[b].guid); });
  order.insert(order.end(), rest.begin(), rest.end());
  return order;
}

class MinHop final : public RoutingEngine {
 public:
  std::string_view name() const override { return "minhop"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    RoutingTables out = empty_tables(g, "minhop");
    PortLoad load(g);
    const auto& endpoints = g.endpoints();
    const std::vector<uint32_t> order = opensm_port_order(g);
    uint32_t lids_per_port = 1;
    for (const Endpoint& ep : endpoints) lids_per_port = std::max(lids_per_port, 1u << ep.lmc);

    CandidatePorts candidates;
    std::vector<uint8_t> dist;
    SwitchIndex toward = kNoSwitch;  // the destination switch `candidates` hold
    for (uint32_t offset = 0; offset < lids_per_port; ++offset) {
      for (uint32_t e : order) {
        const Endpoint& ep = endpoints[e];
        if (offset >= (1u << ep.lmc)) continue;
        const SwitchIndex t = ep.sw;
        if (t != toward) {
          shortest_ports_toward(g, t, dist, candidates);
          toward = t;
        }
        const uint16_t lid = static_cast<uint16_t>(ep.base.value() + offset);
        out.lft[t][lid] = ep.port;
        for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
          if (s == t) continue;
          // Ties: the first in port order, from just after the port the previous LID of this
          // port took (OpenSM's start_from).
          const PortNum start = offset == 0 ? 1 : static_cast<PortNum>(out.lft[s][lid - 1] + 1);
          const PortNum* best = nullptr;
          uint32_t best_load = 0;
          auto consider = [&](const PortNum* p) {
            const uint32_t l = load.at(s, *p);
            if (best == nullptr || l < best_load) {
              best = p;
              best_load = l;
            }
          };
          for (const PortNum* p = candidates.begin(s); p != candidates.end(s); ++p)
            if (*p >= start) consider(p);
          for (const PortNum* p = candidates.begin(s); p != candidates.end(s); ++p)
            if (*p < start) consider(p);
          if (best == nullptr) continue;  // unreachable: kDropPort stays
          out.lft[s][lid] = *best;
          if (ep.is_ca()) ++load.at(s, *best);
        }
      }
    }
    return out;
  }

 private:
  // For every switch, its ports one hop closer to `t`, in port order.
  static void shortest_ports_toward(const RoutingGraph& g, SwitchIndex t, std::vector<uint8_t>& dist,
                                    CandidatePorts& candidates) {
    switch_distances(g, t, dist);
    candidates.reset(g.switch_count());
    for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
      if (s == t || dist[s] == 0xFF) continue;
      for (const SwitchLink& l : g.links(s))  // links are in port order
        if (dist[l.neighbor] + 1 == dist[s]) candidates.add(s, l.port);
    }
    candidates.finish(g.switch_count());
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> make_minhop() { return std::make_unique<MinHop>(); }

}  // namespace softib::sm
