// Writes a Topology in the net format exactly as ibnetdiscover prints it (infiniband-diags
// ibnetdiscover.c, default options): a header comment, then every switch, every CA and every
// router, each as its id lines (vendid, devid, sysimgguid, switchguid/caguid/rtguid) and a
// record with one line per cabled port, annotated with LIDs and the link's active width and
// speed. The output reads back (net_reader) with identical GUIDs, LIDs and cables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "fabric/topology.hpp"

namespace softib::fabric {

struct NetWriteOptions {
  // ibnetdiscover names nodes "S-<guid>"/"H-<guid>"/"R-<guid>"; false keeps the topology's
  // own ids (what `softib topo gen` wants: "S-L0001", "H-00001").
  bool guid_names = true;
  // GUIDs: the vendid/devid/sysimgguid/...guid= lines before each node and the "(guid)"
  // annotations on port lines. Without them a reader assigns GUIDs from its counters.
  bool guids = true;
  // The "# Topology file: generated on ..." comment block.
  bool header = true;
  // Switches, then CAs, then routers (ibnetdiscover); false: one pass in node order.
  bool group_by_type = true;
  // "# Initiated from node <guid> port <guid>"; omitted when unset.
  std::optional<PortRef> initiated_from;
  // The "generated on" text (ctime format, e.g. "Sat Nov 21 08:58:01 2026"); empty: now.
  std::string generated_on;
  // Node order within each type; empty: topology order. ibnetdiscover lists nodes in reverse
  // discovery order.
  std::vector<NodeIndex> order;
};

std::string write_net(const Topology& topology, const NetWriteOptions& options = {});
Result<void> write_net_file(const std::string& path, const Topology& topology,
                            const NetWriteOptions& options = {});

}  // namespace softib::fabric
