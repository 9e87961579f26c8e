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
// Switches the pattern gives no route to a target (one top switch to another) take a plain
// shortest-path hop. Anything not layered like a fat tree is Unsupported.
//
// Cost: ancestors and reach of every target switch, 64 targets per pass over the switch
// graph (O((S + E) S / 64) bit operations); then each switch's LFT row is filled in one
// sequential pass, deciding per (switch, target) pair once and per LID only the D-mod-k
// index.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "base/format.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

namespace {

class BitRows {
 public:
  void reset(size_t rows, size_t cols) {
    words_ = (cols + 63) / 64;
    bits_.assign(rows * words_, 0);
  }
  void set_word(size_t r, size_t word, uint64_t bits) { bits_[r * words_ + word] = bits; }
  bool test(size_t r, size_t c) const { return (bits_[r * words_ + c / 64] >> (c % 64)) & 1; }

 private:
  size_t words_ = 0;
  std::vector<uint64_t> bits_;
};

class FatTreeRouting final : public RoutingEngine {
 public:
  std::string_view name() const override { return "ftree"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    const size_t n = g.switch_count();
    RoutingTables out = empty_tables(g, "ftree");
    if (n == 0) return out;
    SOFTIB_TRY(rank_switches(g));
    order_links(g);
    index_endpoints(g);
    mark_all_targets(g);
    uint64_t fallback_routes = 0;
    for (SwitchIndex s = 0; s < n; ++s) fill_row(g, s, out.lft[s], fallback_routes);
    out.notes.push_back(fmt::format("ftree: {} levels, {} leaf switches, up-degrees {}", levels_, leaves_,
                                    fmt::join(up_degree_, "/")));
    if (fallback_routes)
      out.notes.push_back(fmt::format("ftree: {} routes (to switches, or around failures) use shortest paths "
                                      "outside the tree pattern", fallback_routes));
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
    down_.assign(n, {});
    for (SwitchIndex s = 0; s < n; ++s) {
      for (const SwitchLink& l : g.links(s)) (rank_[l.neighbor] > rank_[s] ? up_[s] : down_[s]).push_back(l);
      std::sort(up_[s].begin(), up_[s].end(), [&](const SwitchLink& a, const SwitchLink& b) {
        if (position[a.neighbor] != position[b.neighbor]) return position[a.neighbor] < position[b.neighbor];
        return a.port < b.port;
      });
    }
    up_degree_.assign(static_cast<size_t>(levels_), 0);
    divisor_.assign(static_cast<size_t>(levels_), 1);
    for (int r = 0; r + 1 < levels_; ++r) {
      std::map<size_t, size_t> histogram;
      for (SwitchIndex s : by_rank_[static_cast<size_t>(r)]) ++histogram[up_[s].size()];
      up_degree_[static_cast<size_t>(r)] =
          std::max_element(histogram.begin(), histogram.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
      divisor_[static_cast<size_t>(r + 1)] =
          divisor_[static_cast<size_t>(r)] * std::max<size_t>(1, up_degree_[static_cast<size_t>(r)]);
    }
  }

  // Tree order: the CA endpoints of the leaves, switch by switch (their index drives the
  // D-mod-k choices); a switch's own LIDs use its switch index. An LMC range's extra LIDs
  // move by N+1 so that each climbs a different way.
  void index_endpoints(const RoutingGraph& g) {
    uint64_t cas = 0;
    for (const Endpoint& ep : g.endpoints()) cas += ep.is_ca() ? 1u : 0u;
    index_.assign(g.endpoints().size(), 0);
    uint64_t next = 0;
    for (SwitchIndex t = 0; t < g.switch_count(); ++t)
      for (uint32_t e : g.endpoints_at(t)) index_[e] = g.endpoints()[e].is_ca() ? next++ : t;
    lmc_stride_ = cas + 1;
    // Every LID of every target, flat and in fill order, so that filling a row streams
    // through one array instead of chasing endpoints.
    target_begin_.assign(g.switch_count() + 1, 0);
    target_lids_.clear();
    for (SwitchIndex t = 0; t < g.switch_count(); ++t) {
      target_begin_[t] = static_cast<uint32_t>(target_lids_.size());
      for (uint32_t e : g.endpoints_at(t)) {
        const Endpoint& ep = g.endpoints()[e];
        for (uint32_t j = 0; j < (1u << ep.lmc); ++j)
          target_lids_.push_back({index_[e] + j * lmc_stride_, static_cast<uint16_t>(ep.base.value() + j), ep.port});
      }
    }
    target_begin_[g.switch_count()] = static_cast<uint32_t>(target_lids_.size());
  }

  // For every target switch t: ancestors (t is reached from them going down only), reach
  // (able to climb to an ancestor), and a plain shortest-path hop for switches that can do
  // neither. Only switch LIDs (and damaged trees) need the latter.
  //
  // Bit-parallel over targets: one pass over the switches handles 64 targets at once, a word
  // per switch whose bit j says "ancestor of (reaches) target t0 + j". Ancestors flow up rank
  // by rank, reach flows down: O((S + E) * S / 64) instead of O((S + E) * S).
  void mark_all_targets(const RoutingGraph& g) {
    const size_t n = g.switch_count();
    ancestor_.reset(n, n);
    reach_.reset(n, n);
    all_reach_.assign(n, 0);
    fallback_.assign(n, {});
    std::vector<uint64_t> anc(n), reach(n);
    for (SwitchIndex t0 = 0; t0 < n; t0 += 64) {
      const size_t block = t0 / 64;
      std::fill(anc.begin(), anc.end(), 0);
      for (SwitchIndex t = t0; t < n && t < t0 + 64; ++t) anc[t] |= uint64_t{1} << (t - t0);
      for (int r = 0; r < levels_; ++r)
        for (SwitchIndex s : by_rank_[static_cast<size_t>(r)])
          if (anc[s])
            for (const SwitchLink& l : up_[s]) anc[l.neighbor] |= anc[s];
      uint64_t all = ~uint64_t{0};
      for (int r = levels_ - 1; r >= 0; --r)
        for (SwitchIndex s : by_rank_[static_cast<size_t>(r)]) {
          uint64_t bits = anc[s];
          for (const SwitchLink& l : up_[s]) bits |= reach[l.neighbor];
          reach[s] = bits;
          all &= bits;
        }
      for (SwitchIndex s = 0; s < n; ++s) {
        ancestor_.set_word(s, block, anc[s]);
        reach_.set_word(s, block, reach[s]);
      }
      for (SwitchIndex t = t0; t < n && t < t0 + 64; ++t) all_reach_[t] = (all >> (t - t0)) & 1;
    }
    std::vector<uint8_t> dist;
    for (SwitchIndex t = 0; t < n; ++t) {
      if (all_reach_[t]) continue;
      // Switches the pattern leaves without a route to t (one top switch to another, or
      // cut off by failures) take a plain shortest-path hop. Pattern routes never pass
      // through such a switch, and each of these hops shortens the distance: no loops.
      switch_distances(g, t, dist);
      auto& fb = fallback_[t];
      fb.assign(n, kDropPort);
      for (SwitchIndex s = 0; s < n; ++s) {
        if (reach_.test(s, t) || s == t || dist[s] == 0xFF) continue;
        for (const SwitchLink& l : g.links(s))
          if (dist[l.neighbor] + 1 == dist[s]) {
            fb[s] = l.port;
            break;
          }
      }
    }
  }

  size_t choice(SwitchIndex s, uint64_t d, size_t options) const { return (d / divisor_[rank_[s]]) % options; }

  void fill_row(const RoutingGraph& g, SwitchIndex s, std::vector<PortNum>& row, uint64_t& fallback_routes) {
    const auto& up = up_[s];
    // (d / B) mod U for the full up-link list, advanced one d at a time: CA indices run in
    // the order this row is filled, so the division happens once per row, not per LID.
    const uint64_t divisor = divisor_[rank_[s]];
    uint64_t next_d = 0, remainder = 0, up_index = 0;
    const auto full_choice = [&](uint64_t d) -> size_t {
      if (d != next_d) {
        remainder = d % divisor;
        up_index = up.empty() ? 0 : (d / divisor) % up.size();
      }
      const size_t c = up_index;
      next_d = d + 1;
      if (++remainder == divisor) {
        remainder = 0;
        if (!up.empty() && ++up_index == up.size()) up_index = 0;
      }
      return c;
    };
    std::vector<const SwitchLink*> down_candidates;
    std::vector<PortNum> filtered;
    for (SwitchIndex t = 0; t < g.switch_count(); ++t) {
      if (target_begin_[t] == target_begin_[t + 1]) continue;  // no endpoint here
      enum { kSelf, kDown, kClimb, kClimbFiltered, kFallback, kNone } how;
      if (s == t) {
        how = kSelf;
      } else if (ancestor_.test(s, t)) {
        how = kDown;
        // Cables to children that are t or its ancestors; the one the child would climb
        // on for d mirrors the up path, so parallel cables share the load.
        down_candidates.clear();
        for (const SwitchLink& l : down_[s])
          if (ancestor_.test(l.neighbor, t)) down_candidates.push_back(&l);
      } else if (reach_.test(s, t)) {
        how = kClimb;
        if (!all_reach_[t]) {  // some up-links may lead nowhere: climb only where t is reached
          filtered.clear();
          for (const SwitchLink& l : up)
            if (reach_.test(l.neighbor, t)) filtered.push_back(l.port);
          if (filtered.size() != up.size()) how = kClimbFiltered;
        }
      } else if (!fallback_[t].empty() && fallback_[t][s] != kDropPort) {
        how = kFallback;
      } else {
        how = kNone;
      }
      const TargetLid* const first = target_lids_.data() + target_begin_[t];
      const TargetLid* const last = target_lids_.data() + target_begin_[t + 1];
      switch (how) {
        case kSelf:
          for (const TargetLid* x = first; x != last; ++x) row[x->lid] = x->own_port;
          break;
        case kDown:
          if (down_candidates.size() == 1) {
            for (const TargetLid* x = first; x != last; ++x) row[x->lid] = down_candidates.front()->port;
          } else {
            for (const TargetLid* x = first; x != last; ++x) row[x->lid] = down_port(down_candidates, s, x->d);
          }
          break;
        case kClimb:
          for (const TargetLid* x = first; x != last; ++x) row[x->lid] = up[full_choice(x->d)].port;
          break;
        case kClimbFiltered:
          for (const TargetLid* x = first; x != last; ++x) row[x->lid] = filtered[choice(s, x->d, filtered.size())];
          break;
        case kFallback:
          for (const TargetLid* x = first; x != last; ++x) row[x->lid] = fallback_[t][s];
          fallback_routes += static_cast<uint64_t>(last - first);
          break;
        case kNone:
          break;
      }
    }
  }

  // Going down from s: the cable on which the child below would have climbed for d, else
  // the first cable to a suitable child.
  PortNum down_port(const std::vector<const SwitchLink*>& candidates, SwitchIndex s, uint64_t d) const {
    for (const SwitchLink* l : candidates) {
      const auto& child_up = up_[l->neighbor];
      if (child_up.empty()) continue;
      const SwitchLink& mirror = child_up[choice(l->neighbor, d, child_up.size())];
      if (mirror.neighbor == s && mirror.neighbor_port == l->port) return l->port;
    }
    return candidates.empty() ? kDropPort : candidates.front()->port;
  }

  std::vector<uint8_t> rank_;
  std::vector<std::vector<SwitchLink>> up_, down_;
  std::vector<std::vector<SwitchIndex>> by_rank_;
  std::vector<size_t> up_degree_;
  std::vector<uint64_t> divisor_;
  std::vector<uint64_t> index_;
  struct TargetLid {
    uint64_t d;        // D-mod-k index
    uint16_t lid;
    PortNum own_port;  // at the target switch: the endpoint's port (0 for the switch)
  };
  std::vector<TargetLid> target_lids_;   // by target switch, in fill order
  std::vector<uint32_t> target_begin_;   // target t's LIDs: [begin[t], begin[t + 1])
  uint64_t lmc_stride_ = 1;
  BitRows ancestor_, reach_;  // [switch][target]: is an ancestor of / can climb to target
  std::vector<uint8_t> all_reach_;              // by target: every switch can climb to it
  std::vector<std::vector<PortNum>> fallback_;  // by target, when not all_reach_: shortest-path hops
  int levels_ = 0;
  size_t leaves_ = 0;
};

}  // namespace

std::unique_ptr<RoutingEngine> make_ftree() { return std::make_unique<FatTreeRouting>(); }

}  // namespace softib::sm
