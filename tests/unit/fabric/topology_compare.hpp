// Structural comparison of two topologies: same node ids, types, descriptions, GUIDs, LIDs,
// link capabilities and cables. Returns the first difference, or an empty string.
#pragma once

#include <string>

#include <fmt/format.h>

#include "base/format.hpp"
#include "fabric/topology.hpp"

namespace softib::fabric::testing {

inline std::string first_difference(const Topology& a, const Topology& b, bool compare_guids = true) {
  if (a.node_count() != b.node_count())
    return fmt::format("node count {} vs {}", a.node_count(), b.node_count());
  if (a.link_count() != b.link_count())
    return fmt::format("link count {} vs {}", a.link_count(), b.link_count());
  for (const TopoNode& na : a.nodes()) {
    auto nb_index = b.find(na.id);
    if (!nb_index) return fmt::format("node \"{}\" missing", na.id);
    const TopoNode& nb = b.node(*nb_index);
    if (na.type != nb.type || na.description != nb.description || na.num_ports != nb.num_ports ||
        na.enhanced_port0 != nb.enhanced_port0)
      return fmt::format("node \"{}\" differs (type/description/ports/port0)", na.id);
    if (compare_guids && (na.node_guid != nb.node_guid || na.system_image_guid != nb.system_image_guid ||
                          na.vendor_id != nb.vendor_id || na.device_id != nb.device_id))
      return fmt::format("node \"{}\" ids differ: {} vs {}", na.id, na.node_guid, nb.node_guid);
    const NodeIndex ia = *a.find(na.id);
    for (uint8_t p = 0; p <= na.num_ports; ++p) {
      const TopoPort& pa = a.port({ia, p});
      const TopoPort& pb = b.port({*nb_index, p});
      if (compare_guids && pa.guid != pb.guid) return fmt::format("\"{}\"[{}] guid {} vs {}", na.id, p, pa.guid, pb.guid);
      if (pa.lid != pb.lid || pa.lmc != pb.lmc) return fmt::format("\"{}\"[{}] lid differs", na.id, p);
      if (pa.peer.valid() != pb.peer.valid()) return fmt::format("\"{}\"[{}] cabled in one only", na.id, p);
      if (pa.peer.valid()) {
        if (pa.caps != pb.caps) return fmt::format("\"{}\"[{}] link caps differ", na.id, p);
        const std::string& ra = a.node(pa.peer.node).id;
        const std::string& rb = b.node(pb.peer.node).id;
        if (ra != rb || pa.peer.port != pb.peer.port)
          return fmt::format("\"{}\"[{}] -> \"{}\"[{}] vs \"{}\"[{}]", na.id, p, ra, pa.peer.port, rb, pb.peer.port);
      }
    }
  }
  return {};
}

}  // namespace softib::fabric::testing
