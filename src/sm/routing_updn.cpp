// updn: Up*/Down* routing (Schroeder et al., as in OpenSM's updn engine). Switches are ranked
// by hop distance from the root switches; a move towards a lower (rank, GUID) is "up". A
// legal route is zero or more up moves followed by zero or more down moves, which makes
// the channel dependencies acyclic: deadlock-free on any topology. Among legal routes the
// shortest are used, balanced like minhop.
//
// Root detection (no root list given): the switches whose farthest CA-bearing switch is
// closest — the spines of a fat tree, the centre of anything else.
#include <algorithm>

#include <fmt/format.h>

#include "sm/routing_balance.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

namespace {

struct Key {
  uint8_t rank;
  uint64_t guid;
  uint32_t index;  // duplicate GUIDs still need a strict order
  friend bool operator<(const Key& a, const Key& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.guid != b.guid) return a.guid < b.guid;
    return a.index < b.index;
  }
};

std::vector<SwitchIndex> detect_roots(const RoutingGraph& g) {
  std::vector<SwitchIndex> leaves;
  for (SwitchIndex s = 0; s < g.switch_count(); ++s)
    for (uint32_t e : g.endpoints_at(s))
      if (g.endpoints()[e].is_ca()) {
        leaves.push_back(s);
        break;
      }
  if (leaves.empty())
    for (SwitchIndex s = 0; s < g.switch_count(); ++s) leaves.push_back(s);
  // Eccentricity of every switch with respect to the leaves.
  std::vector<uint8_t> ecc(g.switch_count(), 0), dist;
  for (SwitchIndex leaf : leaves) {
    switch_distances(g, leaf, dist);
    for (SwitchIndex s = 0; s < g.switch_count(); ++s) ecc[s] = std::max(ecc[s], dist[s]);
  }
  const uint8_t best = *std::min_element(ecc.begin(), ecc.end());
  std::vector<SwitchIndex> roots;
  for (SwitchIndex s = 0; s < g.switch_count(); ++s)
    if (ecc[s] == best) roots.push_back(s);
  return roots;
}

class UpDown final : public RoutingEngine {
 public:
  std::string_view name() const override { return "updn"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    if (g.switch_count() == 0) return empty_tables(g, "updn");
    // Several equally central roots balance a fat tree, but between arbitrary roots there
    // may be no legal route (root to root is down then up); one root always has one (up
    // the BFS tree to it, down the tree from it).
    std::vector<SwitchIndex> roots = detect_roots(g);
    auto tables = route_with_roots(g, roots);
    if (tables.ok() || roots.size() == 1) return tables;
    const std::string why = tables.error().message();
    roots.resize(1);
    tables = route_with_roots(g, roots);
    if (tables.ok()) tables->notes.push_back(fmt::format("updn: one root, because with all central roots {}", why));
    return tables;
  }

 private:
  Result<RoutingTables> route_with_roots(const RoutingGraph& g, const std::vector<SwitchIndex>& roots) {
    const size_t n = g.switch_count();
    RoutingTables out = empty_tables(g, "updn");
    // Ranks: BFS from all roots at once.
    std::vector<uint8_t> rank(n, 0xFF);
    std::vector<SwitchIndex> queue(roots.begin(), roots.end());
    for (SwitchIndex r : roots) rank[r] = 0;
    for (size_t head = 0; head < queue.size(); ++head) {
      const SwitchIndex s = queue[head];
      for (const SwitchLink& l : g.links(s))
        if (rank[l.neighbor] == 0xFF) {
          rank[l.neighbor] = static_cast<uint8_t>(rank[s] + 1);
          queue.push_back(l.neighbor);
        }
    }
    std::vector<Key> key(n);
    for (SwitchIndex s = 0; s < n; ++s) key[s] = Key{rank[s], g.guid_of(s).value(), s};
    const auto is_up = [&](SwitchIndex from, SwitchIndex to) { return key[to] < key[from]; };

    enum : uint8_t { kUnseen, kDown, kUp };  // kDown: routes down only; kUp: may go up first
    std::vector<uint8_t> state(n), dist(n);
    std::vector<SwitchIndex> layer, next;
    PortLoad load(g);
    CandidatePorts candidates;
    std::vector<uint8_t> plain;
    std::vector<uint8_t> has_cas(n, 0);
    for (const Endpoint& ep : g.endpoints())
      if (ep.is_ca()) has_cas[ep.sw] = 1;
    uint64_t ca_pairs_without_route = 0, minhop_pairs = 0;
    for (SwitchIndex t = 0; t < n; ++t) {
      // Reverse BFS from t over legal routes, one hop layer at a time so that a switch
      // reachable both ways at the same distance takes the down-only state.
      std::fill(state.begin(), state.end(), kUnseen);
      state[t] = kDown;
      dist[t] = 0;
      layer.assign(1, t);
      for (uint8_t d = 1; !layer.empty(); ++d) {
        next.clear();
        for (SwitchIndex v : layer) {
          for (const SwitchLink& l : g.links(v)) {
            const SwitchIndex u = l.neighbor;  // forward move u -> v
            const bool down_move = !is_up(u, v);
            if (state[v] == kUp && down_move) continue;  // an up route cannot follow a down move
            const uint8_t want = down_move ? kDown : kUp;
            if (state[u] == kUnseen) {
              state[u] = want;
              dist[u] = d;
              next.push_back(u);
            } else if (dist[u] == d && want == kDown && state[u] == kUp) {
              state[u] = kDown;
            }
          }
        }
        layer.swap(next);
      }
      // A switch with no legal route to t (two roots: down then up) still needs an entry
      // for t's own LIDs. It takes a plain shortest-path hop: that traffic is management
      // traffic to a switch, and the hop cannot loop — a legal route never passes through
      // a switch without one, and each such hop strictly shortens the plain distance.
      bool any_unseen = false;
      for (SwitchIndex s = 0; s < n; ++s) any_unseen = any_unseen || state[s] == kUnseen;
      if (any_unseen) switch_distances(g, t, plain);
      candidates.reset(n);
      for (SwitchIndex s = 0; s < n; ++s) {
        if (s == t) continue;
        if (state[s] == kUnseen) {
          if (has_cas[s] && has_cas[t]) ++ca_pairs_without_route;
          if (plain[s] == 0xFF) continue;
          ++minhop_pairs;
          for (const SwitchLink& l : g.links(s))
            if (plain[l.neighbor] + 1 == plain[s]) candidates.add(s, l.port);
          continue;
        }
        for (const SwitchLink& l : g.links(s)) {
          const SwitchIndex v = l.neighbor;
          if (state[v] == kUnseen || dist[v] + 1 != dist[s]) continue;
          const bool up = is_up(s, v);
          if (state[s] == kDown ? (!up && state[v] == kDown) : up) candidates.add(s, l.port);
        }
      }
      candidates.finish(n);
      route_destination(g, t, candidates, load, out);
    }
    if (ca_pairs_without_route)
      return Status(Code::kUnsupported,
                    fmt::format("{} pairs of CA-bearing switches have no up*/down* route", ca_pairs_without_route));
    if (minhop_pairs)
      out.notes.push_back(fmt::format("updn: {} switch-to-switch routes have no up*/down* path and use "
                                      "shortest paths (management traffic only)", minhop_pairs));
    out.notes.push_back(fmt::format("updn: {} root switch(es)", roots.size()));
    return out;
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> make_updn() { return std::make_unique<UpDown>(); }

}  // namespace softib::sm
