#include "sm/routing_check.hpp"

#include <algorithm>
#include <bit>
#include <map>

#include <fmt/format.h>

#include "base/format.hpp"

namespace softib::sm {

namespace {

// Per switch: for each port, the neighbour switch and the index of the link in links(s).
struct PortMap {
  explicit PortMap(const RoutingGraph& g) : next(g.switch_count()), link(g.switch_count()) {
    for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
      next[s].fill(kNoSwitch);
      link[s].fill(0xFFFF);
      const auto links = g.links(s);
      for (size_t k = 0; k < links.size(); ++k) {
        next[s][links[k].port] = links[k].neighbor;
        link[s][links[k].port] = static_cast<uint16_t>(k);
      }
    }
  }
  std::vector<std::array<SwitchIndex, 256>> next;
  std::vector<std::array<uint16_t, 256>> link;
};

constexpr int32_t kUnknown = -1, kWalking = -2, kDeadEnd = -3, kLoop = -4;

}  // namespace

RouteCheck check_routes(const RoutingGraph& g, const RoutingTables& tables) {
  const size_t n = g.switch_count();
  const PortMap map(g);
  RouteCheck rc;
  std::vector<uint8_t> dist;
  std::vector<int32_t> depth(n);
  std::vector<SwitchIndex> path;
  const auto problem = [&](std::string text) {
    if (rc.first_problem.empty()) rc.first_problem = std::move(text);
  };
  for (SwitchIndex t = 0; t < n; ++t) {
    switch_distances(g, t, dist);
    for (uint32_t e : g.endpoints_at(t)) {
      const Endpoint& ep = g.endpoints()[e];
      for (uint32_t j = 0; j < (1u << ep.lmc); ++j) {
        const uint16_t lid = static_cast<uint16_t>(ep.base.value() + j);
        std::fill(depth.begin(), depth.end(), kUnknown);
        depth[t] = tables.lft[t][lid] == ep.port ? 0 : kDeadEnd;
        if (depth[t] == kDeadEnd) problem(fmt::format("switch {} does not deliver LID {} to port {}", g.guid_of(t), lid, ep.port));
        for (SwitchIndex s = 0; s < n; ++s) {
          if (depth[s] != kUnknown) continue;
          path.clear();
          SwitchIndex cur = s;
          bool dead_end = false;
          while (depth[cur] == kUnknown) {
            depth[cur] = kWalking;
            path.push_back(cur);
            const PortNum port = tables.lft[cur][lid];
            const SwitchIndex next = port == kDropPort ? kNoSwitch : map.next[cur][port];
            if (next == kNoSwitch) {
              dead_end = true;
              problem(fmt::format("LID {} is dropped or misdelivered at switch {} (port {})", lid, g.guid_of(cur), port));
              break;
            }
            cur = next;
          }
          int32_t result = kDeadEnd;
          if (!dead_end) {
            result = depth[cur];  // a known depth, or the failure an earlier walk found
            if (result == kWalking) {
              result = kLoop;
              problem(fmt::format("LID {} loops through switch {}", lid, g.guid_of(cur)));
            }
          }
          for (size_t i = 0; i < path.size(); ++i)
            depth[path[i]] = result >= 0 ? result + static_cast<int32_t>(path.size() - i) : result;
        }
        for (SwitchIndex s = 0; s < n; ++s) {
          ++rc.routes;
          if (depth[s] == kDeadEnd) {
            ++rc.unreachable;
          } else if (depth[s] == kLoop) {
            ++rc.loops;
          } else {
            rc.max_hops = std::max<uint32_t>(rc.max_hops, static_cast<uint32_t>(depth[s]));
            if (dist[s] != 0xFF && depth[s] > dist[s]) ++rc.non_minimal;
          }
        }
      }
    }
  }
  return rc;
}

LinkLoadStats all_to_all_load(const RoutingGraph& g, const RoutingTables& tables) {
  const size_t n = g.switch_count();
  const PortMap map(g);
  LinkLoadStats st;
  st.load.resize(n);
  for (SwitchIndex s = 0; s < n; ++s) st.load[s].assign(g.links(s).size(), 0);
  std::vector<uint64_t> cas_at(n, 0);
  uint64_t total_cas = 0;
  for (const Endpoint& ep : g.endpoints())
    if (ep.is_ca()) {
      ++cas_at[ep.sw];
      ++total_cas;
    }
  std::vector<uint64_t> carry(n);
  std::vector<uint32_t> indegree(n);
  std::vector<SwitchIndex> next(n), ready;
  for (const Endpoint& dst : g.endpoints()) {
    if (!dst.is_ca()) continue;
    const uint16_t lid = dst.base.value();
    std::fill(indegree.begin(), indegree.end(), 0);
    for (SwitchIndex s = 0; s < n; ++s) {
      const PortNum port = tables.lft[s][lid];
      next[s] = s == dst.sw || port == kDropPort ? kNoSwitch : map.next[s][port];
      if (next[s] != kNoSwitch) ++indegree[next[s]];
      carry[s] = cas_at[s] - (s == dst.sw ? 1 : 0);
    }
    ready.clear();
    for (SwitchIndex s = 0; s < n; ++s)
      if (indegree[s] == 0) ready.push_back(s);
    for (size_t head = 0; head < ready.size(); ++head) {
      const SwitchIndex s = ready[head];
      const SwitchIndex to = next[s];
      if (to == kNoSwitch) continue;
      st.load[s][map.link[s][tables.lft[s][lid]]] += carry[s];
      carry[to] += carry[s];
      if (--indegree[to] == 0) ready.push_back(to);
    }
    st.flows += total_cas - 1;
  }
  uint64_t used = 0, sum = 0;
  for (const auto& per_switch : st.load)
    for (uint64_t l : per_switch) {
      st.max_load = std::max(st.max_load, l);
      if (l) {
        ++used;
        sum += l;
      }
    }
  st.mean_load = used ? static_cast<double>(sum) / static_cast<double>(used) : 0;
  return st;
}

uint64_t max_link_load(const RoutingGraph& g, const RoutingTables& tables,
                       const std::vector<std::pair<uint32_t, uint32_t>>& flows) {
  const PortMap map(g);
  std::vector<std::vector<uint32_t>> load(g.switch_count());
  for (SwitchIndex s = 0; s < g.switch_count(); ++s) load[s].assign(g.links(s).size(), 0);
  uint64_t worst = 0;
  for (const auto& [src, dst] : flows) {
    const Endpoint& d = g.endpoints()[dst];
    SwitchIndex cur = g.endpoints()[src].sw;
    for (size_t hops = 0; cur != d.sw && hops <= g.switch_count(); ++hops) {
      const PortNum port = tables.lft[cur][d.base.value()];
      if (port == kDropPort || map.next[cur][port] == kNoSwitch) break;
      worst = std::max<uint64_t>(worst, ++load[cur][map.link[cur][port]]);
      cur = map.next[cur][port];
    }
  }
  return worst;
}

DeadlockCheck check_deadlock(const RoutingGraph& g, const RoutingTables& tables) {
  const size_t n = g.switch_count();
  DeadlockCheck out;
  const RoutingTables::VlPlan* plan = tables.vl_plan ? &*tables.vl_plan : nullptr;
  uint32_t vls = 1;
  if (plan)
    for (const auto& per_switch : plan->sl2vl)
      for (const auto& per_port : per_switch)
        for (uint8_t vl : per_port) vls = std::max<uint32_t>(vls, vl + 1u);
  const PortMap map(g);
  // Channel numbering: switch s owns (ports + 1) * vls channels from base[s].
  std::vector<uint64_t> base(n + 1, 0);
  uint32_t max_ports = 0;
  for (SwitchIndex s = 0; s < n; ++s) {
    base[s + 1] = base[s] + (uint64_t{g.port_count(s)} + 1) * vls;
    max_ports = std::max<uint32_t>(max_ports, g.port_count(s));
  }
  const uint64_t channels = base[n];
  // Dependencies of channel c: a bitset over the next switch's local channels.
  const size_t words = ((uint64_t{max_ports} + 1) * vls + 63) / 64;
  std::vector<uint64_t> adj(channels * words, 0);
  std::vector<uint8_t> used(channels, 0);
  const auto channel = [&](SwitchIndex s, PortNum p, uint32_t vl) { return base[s] + uint64_t{p} * vls + vl; };

  // Sources: CA endpoints grouped by switch; with a plan, also by the SL they use.
  std::vector<uint32_t> cas;
  for (uint32_t e = 0; e < g.endpoints().size(); ++e)
    if (g.endpoints()[e].is_ca()) cas.push_back(e);
  std::vector<uint32_t> done_mark(n * 16, 0);  // [switch * 16 + sl] = destination stamp
  uint32_t stamp = 0;
  for (uint32_t dst_e : cas) {
    const Endpoint& dst = g.endpoints()[dst_e];
    const uint16_t lid = dst.base.value();
    ++stamp;
    for (uint32_t src_e : cas) {
      const Endpoint& src = g.endpoints()[src_e];
      if (src_e == dst_e || src.sw == dst.sw) continue;
      const uint8_t sl = plan ? static_cast<uint8_t>(plan->path_sl(src.base, dst.base) & 15) : 0;
      SwitchIndex cur = src.sw;
      uint64_t prev = ~uint64_t{0};
      for (size_t hops = 0; cur != dst.sw && hops <= n; ++hops) {
        const bool seen = done_mark[cur * 16 + sl] == stamp;
        done_mark[cur * 16 + sl] = stamp;
        const PortNum port = tables.lft[cur][lid];
        if (port == kDropPort || map.next[cur][port] == kNoSwitch) break;  // unroutable: check_routes reports it
        const uint32_t vl = plan ? plan->sl2vl[cur][port][sl] : 0;
        const uint64_t c = channel(cur, port, vl);
        used[c] = 1;
        if (prev != ~uint64_t{0}) {
          const uint64_t local = c - base[cur];
          adj[prev * words + local / 64] |= uint64_t{1} << (local % 64);
        }
        if (seen) break;  // the rest of this path (same SL from here on) is recorded already
        prev = c;
        cur = map.next[cur][port];
      }
    }
  }
  // Iterative depth-first search for a cycle.
  std::vector<uint8_t> color(channels, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<SwitchIndex> owner(channels);
  for (SwitchIndex s = 0; s < n; ++s)
    for (uint64_t c = base[s]; c < base[s + 1]; ++c) owner[c] = s;
  const auto successor_switch = [&](uint64_t c) {
    const SwitchIndex s = owner[c];
    const auto port = static_cast<PortNum>((c - base[s]) / vls);
    return map.next[s][port];
  };
  struct Frame {
    uint64_t c;
    size_t word;
    uint64_t bits;
  };
  std::vector<Frame> stack;
  for (uint64_t c = 0; c < channels; ++c) {
    out.channels += used[c];
    for (size_t w = 0; w < words; ++w) out.dependencies += static_cast<uint64_t>(std::popcount(adj[c * words + w]));
  }
  out.vls = vls;
  for (uint64_t start = 0; start < channels && out.free; ++start) {
    if (!used[start] || color[start]) continue;
    color[start] = 1;
    stack.push_back({start, 0, adj[start * words]});
    while (!stack.empty() && out.free) {
      Frame& f = stack.back();
      while (f.bits == 0 && f.word + 1 < words) f.bits = adj[f.c * words + ++f.word];
      if (f.bits == 0) {
        color[f.c] = 2;
        stack.pop_back();
        continue;
      }
      const auto bit = static_cast<uint64_t>(std::countr_zero(f.bits));
      f.bits &= f.bits - 1;
      const SwitchIndex next = successor_switch(f.c);
      const uint64_t to = base[next] + f.word * 64 + bit;
      if (color[to] == 1) {
        out.free = false;
        std::string text;
        bool in_cycle = false;
        for (const Frame& x : stack) {
          in_cycle = in_cycle || x.c == to;
          if (!in_cycle) continue;
          const SwitchIndex s = owner[x.c];
          fmt::format_to(std::back_inserter(text), "switch {} port {} VL {} -> ", g.guid_of(s),
                         (x.c - base[s]) / vls, (x.c - base[s]) % vls);
        }
        out.cycle = text + "(back to the first)";
      } else if (color[to] == 0) {
        color[to] = 1;
        stack.push_back({to, 0, adj[to * words]});
      }
    }
  }
  return out;
}

std::optional<uint64_t> layered_ideal_max_load(const RoutingGraph& g) {
  const size_t n = g.switch_count();
  std::vector<uint64_t> cas_at(n, 0);
  uint64_t total = 0;
  for (const Endpoint& ep : g.endpoints())
    if (ep.is_ca()) {
      ++cas_at[ep.sw];
      ++total;
    }
  if (total == 0) return std::nullopt;
  // Rank: breadth-first distance from the nearest leaf.
  constexpr uint32_t kUnranked = 0xFFFFFFFF;
  std::vector<uint32_t> rank(n, kUnranked);
  std::vector<SwitchIndex> order;
  std::vector<uint32_t> leaf_bit(n, kUnranked);
  for (SwitchIndex s = 0; s < n; ++s)
    if (cas_at[s]) {
      rank[s] = 0;
      leaf_bit[s] = static_cast<uint32_t>(order.size());
      order.push_back(s);
    }
  const size_t leaves = order.size();
  for (size_t head = 0; head < order.size(); ++head)
    for (const SwitchLink& l : g.links(order[head]))
      if (rank[l.neighbor] == kUnranked) {
        rank[l.neighbor] = rank[order[head]] + 1;
        order.push_back(l.neighbor);
      }
  for (SwitchIndex s = 0; s < n; ++s)
    for (const SwitchLink& l : g.links(s))
      if (rank[l.neighbor] == rank[s]) return std::nullopt;  // not layered
  // Subtree of each switch as a bitset over leaves, built rank by rank (BFS order).
  const size_t words = (leaves + 63) / 64;
  std::vector<uint64_t> below(n * words, 0);
  for (SwitchIndex s : order) {
    uint64_t* mine = &below[s * words];
    if (leaf_bit[s] != kUnranked) mine[leaf_bit[s] / 64] |= uint64_t{1} << (leaf_bit[s] % 64);
    for (const SwitchLink& l : g.links(s))
      if (rank[l.neighbor] + 1 == rank[s]) {
        const uint64_t* child = &below[l.neighbor * words];
        for (size_t w = 0; w < words; ++w) mine[w] |= child[w];
      }
  }
  struct Group {
    uint64_t cas = 0;
    uint64_t uplinks = 0;
  };
  std::map<std::pair<uint32_t, std::vector<uint64_t>>, Group> groups;
  for (SwitchIndex s = 0; s < n; ++s) {
    uint64_t up = 0;
    for (const SwitchLink& l : g.links(s)) up += rank[l.neighbor] == rank[s] + 1;
    if (up == 0) continue;
    std::vector<uint64_t> key(below.begin() + static_cast<ptrdiff_t>(s * words),
                              below.begin() + static_cast<ptrdiff_t>((s + 1) * words));
    Group& grp = groups[{rank[s], std::move(key)}];
    if (grp.uplinks == 0) {
      for (size_t b = 0; b < leaves; ++b)
        if (below[s * words + b / 64] >> (b % 64) & 1) grp.cas += cas_at[order[b]];
    }
    grp.uplinks += up;
  }
  uint64_t ideal = 0;
  for (const auto& [key, grp] : groups) {
    const uint64_t flows = grp.cas * (total - grp.cas);
    ideal = std::max(ideal, (flows + grp.uplinks - 1) / grp.uplinks);
  }
  return ideal;
}

ShiftContention shift_contention(const RoutingGraph& g, const RoutingTables& tables, size_t all_up_to,
                                 size_t samples) {
  std::vector<uint32_t> cas;
  for (uint32_t e = 0; e < g.endpoints().size(); ++e)
    if (g.endpoints()[e].is_ca()) cas.push_back(e);
  ShiftContention out;
  const size_t n = cas.size();
  if (n < 2) return out;
  std::vector<size_t> shifts;
  if (n - 1 <= all_up_to || samples == 0) {
    for (size_t k = 1; k < n; ++k) shifts.push_back(k);
  } else {
    for (size_t i = 0; i < samples; ++i) shifts.push_back(1 + i * (n - 1) / samples);
  }
  std::vector<std::pair<uint32_t, uint32_t>> flows(n);
  for (size_t k : shifts) {
    for (size_t i = 0; i < n; ++i) flows[i] = {cas[i], cas[(i + k) % n]};
    out.worst = std::max(out.worst, max_link_load(g, tables, flows));
    ++out.shifts_tried;
  }
  return out;
}

}  // namespace softib::sm
