// ftree: fat-tree routing. Switches are ranked by distance from the CA-bearing ("leaf")
// switches; in a fat tree every cable joins adjacent ranks. Destinations are numbered in
// tree order (leaf by leaf, port by port) and routed D-mod-k style (Zahavi, "D-mod-K
// routing providing non-blocking traffic for shift permutations on real life fat trees"):
// going up, a switch of rank r takes up-link number (d / B_r) mod U_r of its up-links in a
// fixed order, where B_r is the product of the up-degrees below rank r. Every route to d
// therefore climbs to the same top switch and descends on one path: all-to-all traffic
// loads every link with exactly its share, and every cyclic shift is contention-free.
//
// Failed links: a switch only climbs towards neighbours that can still reach the
// destination, so the engine routes around cables that are missing from a fat tree.
// Anything that is not layered like a fat tree is Unsupported (the fallback chain takes
// over).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "base/format.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

namespace {

class FatTreeRouting final : public RoutingEngine {
 public:
  std::string_view name() const override { return "ftree"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    const size_t n = g.switch_count();
    RoutingTables out = empty_tables(g, "ftree");
    if (n == 0) return out;
    SOFTIB_TRY(rank_switches(g));
    order_links(g);

    // Destinations in tree order: CA endpoints of the leaves in switch order (their index
    // drives the D-mod-k choices); a switch's own LIDs use its switch index.
    uint64_t ca_index = 0;
    ca_total_ = 0;
    for (const Endpoint& ep : g.endpoints()) ca_total_ += ep.is_ca() ? 1u : 0u;
    fallback_routes_ = 0;
    for (SwitchIndex t = 0; t < n; ++t) {
      mark_ancestors(g, t);
      for (uint32_t e : g.endpoints_at(t)) {
        const bool ca = g.endpoints()[e].is_ca();
        route_endpoint(g, t, e, ca ? ca_index++ : t, out);
      }
    }
    if (fallback_routes_)
      out.notes.push_back(fmt::format("ftree: {} routes (to switches, or around failures) use shortest "
                                      "paths outside the tree pattern", fallback_routes_));
    out.notes.push_back(fmt::format("ftree: {} levels, {} leaf switches, up-degrees {}", levels_,
                                    leaves_, fmt::join(up_degree_, "/")));
    return out;
  }

 private:
  Result<void> rank_switches(const RoutingGraph& g) {
    const size_t n = g.switch_count();
    rank_.assign(n, 0xFF);
    std::vector<SwitchIndex> queue;
    for (SwitchIndex s = 0; s < n; ++s)
      for (uint32_t e : g.endpoints_at(s))
        if (g.endpoints()[e].is_ca()) {
          rank_[s] = 0;
          queue.push_back(s);
          break;
        }
    leaves_ = queue.size();
    if (queue.empty()) return Status(Code::kUnsupported, "no CA-bearing switches: not a fat tree");
    for (size_t head = 0; head < queue.size(); ++head) {
      const SwitchIndex s = queue[head];
      for (const SwitchLink& l : g.links(s))
        if (rank_[l.neighbor] == 0xFF) {
          rank_[l.neighbor] = static_cast<uint8_t>(rank_[s] + 1);
          queue.push_back(l.neighbor);
        }
    }
    levels_ = 0;
    for (SwitchIndex s = 0; s < n; ++s) {
      if (rank_[s] == 0xFF)
        return Status(Code::kUnsupported, fmt::format("switch {} is unreachable from the leaves", g.guid_of(s)));
      levels_ = std::max<int>(levels_, rank_[s] + 1);
      for (const SwitchLink& l : g.links(s)) {
        const int diff = rank_[l.neighbor] - rank_[s];
        if (diff != 1 && diff != -1)
          return Status(Code::kUnsupported,
                        fmt::format("switches {} and {} are cabled within level {}: not a fat tree",
                                    g.guid_of(s), g.guid_of(l.neighbor), rank_[s]));
      }
    }
    return {};
  }

  // Up-links of every switch in a fixed order: by the neighbour's position in its level,
  // then by port. The typical up-degree of each level gives the D-mod-k divisors.
  void order_links(const RoutingGraph& g) {
    const size_t n = g.switch_count();
    std::vector<uint32_t> position(n);
    std::vector<uint32_t> count(static_cast<size_t>(levels_), 0);
    by_rank_.assign(static_cast<size_t>(levels_), {});
    for (SwitchIndex s = 0; s < n; ++s) {
      position[s] = count[rank_[s]]++;
      by_rank_[rank_[s]].push_back(s);
    }
    up_.assign(n, {});
    for (SwitchIndex s = 0; s < n; ++s) {
      for (const SwitchLink& l : g.links(s))
        if (rank_[l.neighbor] > rank_[s]) up_[s].push_back(l);
      std::sort(up_[s].begin(), up_[s].end(), [&](const SwitchLink& a, const SwitchLink& b) {
        if (position[a.neighbor] != position[b.neighbor]) return position[a.neighbor] < position[b.neighbor];
        return a.port < b.port;
      });
    }
    up_degree_.assign(static_cast<size_t>(levels_), 0);
    divisor_.assign(static_cast<size_t>(levels_), 1);
    for (int r = 0; r + 1 < levels_; ++r) {
      std::map<size_t, size_t> histogram;
      for (SwitchIndex s = 0; s < n; ++s)
        if (rank_[s] == r) ++histogram[up_[s].size()];
      up_degree_[static_cast<size_t>(r)] =
          std::max_element(histogram.begin(), histogram.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
      divisor_[static_cast<size_t>(r + 1)] = divisor_[static_cast<size_t>(r)] * std::max<size_t>(1, up_degree_[static_cast<size_t>(r)]);
    }
  }

  size_t up_choice(SwitchIndex s, uint64_t index, size_t options) const {
    return (index / divisor_[rank_[s]]) % options;
  }

  // Marks the ancestors of t (switches from which t is reached going down only) and the
  // switches that can climb to one of them.
  void mark_ancestors(const RoutingGraph& g, SwitchIndex t) {
    const size_t n = g.switch_count();
    ancestor_.assign(n, 0);
    ancestor_[t] = 1;
    std::vector<SwitchIndex>& stack = scratch_;
    stack.assign(1, t);
    while (!stack.empty()) {
      const SwitchIndex s = stack.back();
      stack.pop_back();
      for (const SwitchLink& l : up_[s])
        if (!ancestor_[l.neighbor]) {
          ancestor_[l.neighbor] = 1;
          stack.push_back(l.neighbor);
        }
    }
    reach_.assign(n, 0);
    for (int r = levels_ - 1; r >= 0; --r)
      for (SwitchIndex s : by_rank_[static_cast<size_t>(r)]) {
        bool ok = ancestor_[s] != 0;
        for (size_t k = 0; !ok && k < up_[s].size(); ++k) ok = reach_[up_[s][k].neighbor] != 0;
        reach_[s] = ok;
      }
    all_up_reach_.assign(n, 1);
    for (SwitchIndex s = 0; s < n; ++s)
      for (const SwitchLink& l : up_[s])
        if (!reach_[l.neighbor]) {
          all_up_reach_[s] = 0;
          break;
        }
  }

  // Routes every LID of endpoint e, which hangs off (or is) switch t; `index` is its place in
  // tree order. REQUIRES: mark_ancestors(g, t).
  void route_endpoint(const RoutingGraph& g, SwitchIndex t, uint32_t e, uint64_t index, RoutingTables& out) {
    const size_t n = g.switch_count();
    const Endpoint& ep = g.endpoints()[e];
    const uint32_t lids = 1u << ep.lmc;
    // Switches the tree pattern gives no route to t (one top switch to another, or cut off
    // by failures) take a plain shortest-path hop. Tree routes only pass through switches
    // that have one, and each such hop shortens the plain distance: no loops.
    bool any_without = false;
    for (SwitchIndex s = 0; s < n; ++s) any_without = any_without || (s != t && !ancestor_[s] && !reach_[s]);
    if (any_without) switch_distances(g, t, plain_);
    for (uint32_t j = 0; j < lids; ++j) {
      const uint16_t lid = static_cast<uint16_t>(ep.base.value() + j);
      // LMC: each LID of a port climbs a different way (offsets of N+1 keep the base LIDs'
      // pattern and move the others by one up-link at every level).
      const uint64_t d = index + j * (ca_total_ + 1);
      for (SwitchIndex s = 0; s < n; ++s) {
        PortNum port = kDropPort;
        if (s == t) {
          port = ep.port;
        } else if (ancestor_[s]) {
          port = down_port(g, s, d);
        } else if (reach_[s]) {
          port = climb_port(s, d);
        } else if (plain_[s] != 0xFF) {
          for (const SwitchLink& l : g.links(s))
            if (plain_[l.neighbor] + 1 == plain_[s]) {
              port = l.port;
              break;
            }
          ++fallback_routes_;
        }
        out.lft[s][lid] = port;
      }
    }
  }

  // Going up from s: the D-mod-k choice among the up-links whose far end can still reach
  // the target (all of them in an intact tree).
  PortNum climb_port(SwitchIndex s, uint64_t d) {
    const auto& up = up_[s];
    if (all_up_reach_[s]) return up[up_choice(s, d, up.size())].port;
    filtered_.clear();
    for (const SwitchLink& l : up)
      if (reach_[l.neighbor]) filtered_.push_back(l.port);
    return filtered_[up_choice(s, d, filtered_.size())];
  }

  // Going down from ancestor s towards the target: take the cable on which the child below
  // would have climbed for d (so up and down paths mirror each other and parallel cables
  // share the load); any cable to an ancestor-or-target child otherwise.
  PortNum down_port(const RoutingGraph& g, SwitchIndex s, uint64_t d) {
    PortNum fallback = kDropPort;
    for (const SwitchLink& l : g.links(s)) {
      const SwitchIndex child = l.neighbor;
      if (rank_[child] >= rank_[s] || !ancestor_[child]) continue;
      const auto& child_up = up_[child];
      if (!child_up.empty()) {
        const SwitchLink& mirror = child_up[up_choice(child, d, child_up.size())];
        if (mirror.neighbor == s && mirror.neighbor_port == l.port) return l.port;
      }
      if (fallback == kDropPort) fallback = l.port;
    }
    return fallback;
  }

  std::vector<uint8_t> rank_;
  std::vector<std::vector<SwitchLink>> up_;
  std::vector<std::vector<SwitchIndex>> by_rank_;
  std::vector<size_t> up_degree_;
  std::vector<uint64_t> divisor_;
  std::vector<uint8_t> ancestor_, reach_, all_up_reach_;
  uint64_t ca_total_ = 0;
  std::vector<SwitchIndex> scratch_;
  std::vector<PortNum> filtered_;
  std::vector<uint8_t> plain_;
  uint64_t fallback_routes_ = 0;
  int levels_ = 0;
  size_t leaves_ = 0;
};

}  // namespace

std::unique_ptr<RoutingEngine> make_ftree() { return std::make_unique<FatTreeRouting>(); }

}  // namespace softib::sm
