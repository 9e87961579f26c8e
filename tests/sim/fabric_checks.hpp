// Checks of a live fabric that do not trust the SM: they read PortInfo and LFTs straight
// from the fabric and walk packets hop by hop.
#pragma once

#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "base/format.hpp"
#include "fabric/fabric.hpp"

namespace softib::testing {

using fabric::Fabric;
using fabric::NodeIndex;
using fabric::PortRef;

// Every cabled port Active and every end port holding a unique, aligned LID range.
inline std::string check_ports(const Fabric& f) {
  std::set<uint32_t> lids;
  const auto& t = f.topology();
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const NodeIndex n(i);
    const bool sw = t.node(n).type == fabric::NodeType::kSwitch;
    for (uint8_t p = 0; p <= t.node(n).num_ports; ++p) {
      if (p == 0 && !sw) continue;
      const auto& pi = f.port_info({n, p});
      if (p != 0 && !t.port({n, p}).peer.valid()) continue;
      if (p != 0 && pi.port_state != mad::PortState::kActive)
        return fmt::format("{} port {} is {} not Active", t.node(n).id, p, static_cast<int>(pi.port_state));
      const bool end_port = sw ? p == 0 : p != 0;
      if (!end_port) continue;
      if (!pi.lid.is_unicast()) return fmt::format("{} port {} has no LID", t.node(n).id, p);
      for (uint32_t l = pi.lid.value(); l < pi.lid.value() + (1u << pi.lmc); ++l)
        if (!lids.insert(l).second) return fmt::format("LID {} used twice ({} port {})", l, t.node(n).id, p);
      if (pi.lid.value() % (1u << pi.lmc) != 0) return fmt::format("{} port {}: LID not aligned to LMC", t.node(n).id, p);
    }
  }
  return {};
}

// Walks every CA port to every other CA port (every LID of its LMC range) through the
// switches' LFTs. Returns the first failure; hops collects switch-to-switch hop counts.
inline std::string check_routes(const Fabric& f, std::map<std::pair<uint32_t, uint32_t>, int>* hops = nullptr) {
  const auto& t = f.topology();
  std::vector<PortRef> cas;
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const NodeIndex n(i);
    if (t.node(n).type == fabric::NodeType::kSwitch) continue;
    for (uint8_t p = 1; p <= t.node(n).num_ports; ++p)
      if (t.port({n, p}).peer.valid()) cas.push_back({n, p});
  }
  for (size_t a = 0; a < cas.size(); ++a) {
    for (size_t b = 0; b < cas.size(); ++b) {
      if (a == b) continue;
      const auto& dst = f.port_info(cas[b]);
      for (uint32_t off = 0; off < (1u << dst.lmc); ++off) {
        const Lid lid(static_cast<uint16_t>(dst.lid.value() + off));
        PortRef at = t.port(cas[a]).peer;  // first hop: into the neighbour
        int switch_hops = 0;
        for (int guard = 0;; ++guard) {
          if (guard > 64) return fmt::format("loop from {} to LID {}", t.node(cas[a].node).id, lid);
          if (t.node(at.node).type != fabric::NodeType::kSwitch) {
            if (!(at == cas[b])) return fmt::format("LID {} delivered to the wrong port ({})", lid, t.node(at.node).id);
            break;
          }
          const uint8_t out = f.lft_port(at.node, lid);
          if (out == 0xFF || out == 0) return fmt::format("switch {} has no route to LID {}", t.node(at.node).id, lid);
          const PortRef next = t.port({at.node, out}).peer;
          if (!next.valid()) return fmt::format("switch {} routes LID {} to uncabled port {}", t.node(at.node).id, lid, out);
          if (f.port_info({at.node, out}).port_state != mad::PortState::kActive)
            return fmt::format("switch {} routes LID {} to a port that is not Active", t.node(at.node).id, lid);
          if (t.node(next.node).type == fabric::NodeType::kSwitch) ++switch_hops;
          at = next;
        }
        if (hops && off == 0) (*hops)[{static_cast<uint32_t>(a), static_cast<uint32_t>(b)}] = switch_hops;
      }
    }
  }
  return {};
}

}  // namespace softib::testing
