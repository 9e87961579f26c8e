// Helpers for routing tests: LIDs assigned in node order, and a channel-dependency check.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "fabric/topology.hpp"
#include "sm/routing_engine.hpp"
#include "sm/routing_graph.hpp"

namespace softib::sm::testing {

// Gives every switch port 0 and every cabled CA port a LID range, in node order.
inline void assign_lids(fabric::Topology& t, uint8_t lmc = 0) {
  uint32_t next = 1;
  const uint32_t step = 1u << lmc;
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const fabric::NodeIndex n(i);
    const auto& node = t.node(n);
    const auto give = [&](uint8_t p) {
      next = (next + step - 1) / step * step;
      t.port({n, p}).lid = Lid(static_cast<uint16_t>(next));
      t.port({n, p}).lmc = lmc;
      next += step;
    };
    if (node.type == fabric::NodeType::kSwitch) {
      give(0);
    } else {
      for (uint8_t p = 1; p <= node.num_ports; ++p)
        if (t.port({n, p}).peer.valid()) give(p);
    }
  }
}

// CA endpoint indices (into graph.endpoints()) in tree order: switch by switch, port by port.
inline std::vector<uint32_t> ca_endpoints(const RoutingGraph& g) {
  std::vector<uint32_t> out;
  for (uint32_t e = 0; e < g.endpoints().size(); ++e)
    if (g.endpoints()[e].is_ca()) out.push_back(e);
  return out;
}

// True when the channel dependency graph of all CA-to-CA routes is acyclic. A channel is
// (switch, output port, VL); the VL comes from the tables' VL plan (VL 0 without one, or
// when ignore_vl_plan).
inline bool deadlock_free(const RoutingGraph& g, const RoutingTables& tables, bool ignore_vl_plan = false) {
  std::vector<std::array<SwitchIndex, 256>> next(g.switch_count());
  for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
    next[s].fill(kNoSwitch);
    for (const SwitchLink& l : g.links(s)) next[s][l.port] = l.neighbor;
  }
  std::map<uint64_t, std::set<uint64_t>> deps;
  const auto cas = ca_endpoints(g);
  for (uint32_t a : cas)
    for (uint32_t b : cas) {
      if (a == b) continue;
      const Endpoint& src = g.endpoints()[a];
      const Endpoint& dst = g.endpoints()[b];
      const bool plan = tables.vl_plan && !ignore_vl_plan;
      const uint8_t sl = plan ? tables.vl_plan->path_sl(src.base, dst.base) : 0;
      SwitchIndex cur = src.sw;
      uint64_t prev = ~uint64_t{0};
      for (size_t hops = 0; cur != dst.sw && hops <= g.switch_count(); ++hops) {
        const PortNum port = tables.lft[cur][dst.base.value()];
        const uint8_t vl = plan ? tables.vl_plan->sl2vl[cur][port][sl] : 0;
        const uint64_t channel = (uint64_t{cur} * 256 + port) * 16 + vl;
        if (prev != ~uint64_t{0}) deps[prev].insert(channel);
        prev = channel;
        cur = next[cur][port];
        if (cur == kNoSwitch) return false;
      }
    }
  // Cycle detection by iterative DFS.
  std::map<uint64_t, int> color;  // 0 white, 1 grey, 2 black
  for (const auto& [start, _] : deps) {
    if (color[start]) continue;
    std::vector<std::pair<uint64_t, std::set<uint64_t>::const_iterator>> stack;
    color[start] = 1;
    stack.emplace_back(start, deps[start].cbegin());
    while (!stack.empty()) {
      auto& [node, it] = stack.back();
      if (it == deps[node].cend()) {
        color[node] = 2;
        stack.pop_back();
        continue;
      }
      const uint64_t to = *it++;
      if (color[to] == 1) return false;
      if (color[to] == 0) {
        color[to] = 1;
        stack.emplace_back(to, deps[to].cbegin());
      }
    }
  }
  return true;
}

}  // namespace softib::sm::testing
