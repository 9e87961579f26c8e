#include "fabric/audit.hpp"

#include <fmt/format.h>

#include "base/format.hpp"

namespace softib::fabric {

namespace {

// Outcome of following a LID from a switch, memoized per destination.
enum : int32_t { kUnknown = -1, kWalking = -2, kFailed = -3 };

}  // namespace

FabricAudit audit_fabric(const Fabric& f, size_t max_problems) {
  const Topology& t = f.topology();
  FabricAudit a;
  const auto problem = [&](std::string text) {
    if (a.problems.size() < max_problems) a.problems.push_back(std::move(text));
  };
  const auto is_switch = [&](NodeIndex n) { return t.node(n).type == NodeType::kSwitch; };

  // Ports, states and LIDs.
  std::vector<PortRef> owner(size_t{Lid::kMaxUnicast} + 1);
  std::vector<PortRef> sources;
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const NodeIndex n(i);
    const bool sw = is_switch(n);
    for (uint8_t p = 0; p <= t.node(n).num_ports; ++p) {
      const PortRef here{n, p};
      const bool cabled = p != 0 && t.port(here).peer.valid();
      if (p == 0 && !sw) continue;
      const mad::PortInfo& pi = f.port_info(here);
      if (cabled) {
        ++a.cabled_ports;
        if (pi.port_state == mad::PortState::kActive) {
          ++a.active_ports;
          if (!sw) sources.push_back(here);
        } else {
          problem(fmt::format("{} port {} is not Active", t.node(n).id, p));
        }
      }
      // Destinations: switch port 0 and Active CA ports (a host whose link is down keeps its
      // LID but cannot be reached; its port is already counted as not Active).
      if (!(sw ? p == 0 : cabled && pi.port_state == mad::PortState::kActive)) continue;
      ++a.end_ports;
      if (!pi.lid.is_unicast()) {
        ++a.end_ports_without_lid;
        problem(fmt::format("{} port {} has no LID", t.node(n).id, p));
        continue;
      }
      const uint32_t count = 1u << pi.lmc;
      if (pi.lid.value() % count != 0) {
        ++a.lid_conflicts;
        problem(fmt::format("{} port {}: LID {} is not aligned to LMC {}", t.node(n).id, p, pi.lid, pi.lmc));
      }
      for (uint32_t l = pi.lid.value(); l < pi.lid.value() + count && l <= Lid::kMaxUnicast; ++l) {
        ++a.lids;
        if (owner[l].valid()) {
          ++a.lid_conflicts;
          problem(fmt::format("LID {} is held by {} port {} and {} port {}", l, t.node(owner[l].node).id,
                              owner[l].port, t.node(n).id, p));
        } else {
          owner[l] = here;
        }
      }
    }
  }

  // Routes: depth[s] = switch hops from switch s to the destination, or kFailed.
  std::vector<int32_t> depth(t.node_count());
  std::vector<uint32_t> path;
  for (uint32_t l = 1; l <= Lid::kMaxUnicast; ++l) {
    const PortRef dest = owner[l];
    if (!dest.valid()) continue;
    const Lid lid(static_cast<uint16_t>(l));
    std::fill(depth.begin(), depth.end(), kUnknown);
    // Follows the LID from switch `start`, filling depth for every switch on the way.
    const auto walk = [&](NodeIndex start) -> int32_t {
      path.clear();
      NodeIndex cur = start;
      int32_t result = kFailed;
      for (;;) {
        const int32_t known = depth[cur.value()];
        if (known == kWalking) {
          problem(fmt::format("LID {} loops through {}", lid, t.node(cur).id));
          break;
        }
        if (known != kUnknown) {
          result = known;
          break;
        }
        depth[cur.value()] = kWalking;
        path.push_back(cur.value());
        const uint8_t out = f.lft_port(cur, lid);
        if (out == 0) {
          if (dest == PortRef{cur, 0}) result = 0;
          else problem(fmt::format("{} takes LID {} for itself", t.node(cur).id, lid));
          path.pop_back();  // `cur` is the end of the walk: its depth is result
          depth[cur.value()] = result;
          break;
        }
        if (out > t.node(cur).num_ports || !t.port({cur, out}).peer.valid()) {
          problem(fmt::format("{} has no route to LID {} (LFT entry {})", t.node(cur).id, lid, out));
          path.pop_back();
          depth[cur.value()] = kFailed;
          break;
        }
        if (f.port_info({cur, out}).port_state != mad::PortState::kActive) {
          problem(fmt::format("{} routes LID {} out of port {}, which is not Active", t.node(cur).id, lid, out));
          path.pop_back();
          depth[cur.value()] = kFailed;
          break;
        }
        const PortRef next = t.port({cur, out}).peer;
        if (!is_switch(next.node)) {
          if (next == dest) {
            result = 0;
          } else {
            problem(fmt::format("LID {} is delivered to {} port {}, which does not own it", lid,
                                t.node(next.node).id, next.port));
          }
          path.pop_back();
          depth[cur.value()] = result;
          break;
        }
        cur = next.node;
      }
      // Everything on the path is one hop further than its successor.
      for (size_t i = path.size(); i-- > 0;) {
        if (result >= 0) ++result;
        depth[path[i]] = result;
      }
      return depth[start.value()];
    };
    for (const PortRef src : sources) {
      if (src == dest) continue;
      ++a.routes;
      const PortRef first = t.port(src).peer;
      int32_t hops = kFailed;
      if (!is_switch(first.node)) {
        hops = first == dest ? 0 : kFailed;  // back to back
      } else {
        hops = walk(first.node);  // switch-to-switch hops
      }
      if (hops >= 0) {
        ++a.delivered;
        a.max_switch_hops = std::max<uint64_t>(a.max_switch_hops, static_cast<uint64_t>(hops));
      }
    }
  }
  return a;
}

}  // namespace softib::fabric
