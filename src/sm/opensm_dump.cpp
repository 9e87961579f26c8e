#include "sm/opensm_dump.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include <fmt/format.h>

#include "base/file.hpp"

namespace softib::sm {

namespace {

// OpenSM keys its node and switch maps by GUID in network byte order and cl_qmap compares
// keys as host integers: on x86 the order is that of the byte-swapped GUID.
std::vector<NodeIndex> opensm_order(const Subnet& s, bool switches_only) {
  std::vector<NodeIndex> order;
  for (uint32_t n = 0; n < s.nodes.size(); ++n)
    if (!switches_only || s.is_switch(NodeIndex(n))) order.emplace_back(n);
  std::sort(order.begin(), order.end(), [&](NodeIndex a, NodeIndex b) {
    return __builtin_bswap64(s.nodes[a.value()].info.node_guid.value()) <
           __builtin_bswap64(s.nodes[b.value()].info.node_guid.value());
  });
  return order;
}

std::string_view node_type_name(mad::NodeType t) {
  switch (t) {
    case mad::NodeType::kChannelAdapter: return "Channel Adapter";
    case mad::NodeType::kSwitch: return "Switch";
    case mad::NodeType::kRouter: return "Router";
    default: return "UNKNOWN";
  }
}

std::string_view short_type(mad::NodeType t) {
  switch (t) {
    case mad::NodeType::kChannelAdapter: return "CA";
    case mad::NodeType::kSwitch: return "SW";
    case mad::NodeType::kRouter: return "Rt";
    default: return "**";
  }
}

// The port whose PortInfo holds a node's LID: port 0 of a switch, the port itself otherwise.
const mad::PortInfo& default_port(const Subnet& s, PortRef p) {
  const SmNode& node = s.nodes[p.node.value()];
  return node.ports[s.is_switch(p.node) ? 0 : p.port];
}

std::string_view width_name(const mad::PortInfo& self, const mad::PortInfo& peer_default) {
  switch (self.link_width_active) {
    case 1: return "1x";
    case 2: return "4x";
    case 4: return "8x";
    case 8: return "12x";
    case 16:
      if (peer_default.capability_mask2 & 0x0010) return "2x";
      return "??";
    default: return "??";
  }
}

std::string_view speed_name(const mad::PortInfo& self, const mad::PortInfo& peer_default) {
  std::string_view name = "??";
  switch (self.link_speed_active) {
    case 1: name = "2.5"; break;
    case 2: name = "5"; break;
    case 4: name = "10"; break;
    default: break;
  }
  if (peer_default.capability_mask & 0x4000) {  // IsExtendedSpeedsSupported
    switch (self.link_speed_ext_active) {
      case 0: break;
      case 1: name = "14"; break;
      case 2: name = "25"; break;
      case 4: name = "50"; break;
      default: name = "??"; break;
    }
  }
  return name;
}

std::string_view state_name(mad::PortState st) {
  switch (st) {
    case mad::PortState::kActive: return "ACT";
    case mad::PortState::kArmed: return "ARM";
    case mad::PortState::kInitialize: return "INI";
    default: return "DWN";
  }
}

}  // namespace

std::string format_lfts_dump(const Subnet& s, const RoutingGraph& g, const RoutingTables& tables) {
  // LID -> owning end port, as osm_get_port_by_lid_ho answers (every LID of an LMC range).
  std::vector<PortRef> owner(size_t{g.max_lid()} + 1);
  for (const Endpoint& ep : g.endpoints())
    for (uint32_t j = 0; j < (1u << ep.lmc) && ep.base.value() + j < owner.size(); ++j)
      owner[ep.base.value() + j] = ep.owner;
  std::string out;
  for (NodeIndex n : opensm_order(s, true)) {
    const SwitchIndex sw = g.switch_of(n);
    if (sw == kNoSwitch) continue;  // not routed (unreachable in the last sweep)
    const SmNode& node = s.nodes[n.value()];
    const fabric::TopoNode& tn = s.topo.node(n);
    const unsigned max_lid = g.max_lid();
    const unsigned max_port = node.info.num_ports + 1u;
    fmt::format_to(std::back_inserter(out), "Unicast lids [0-{}] of switch Lid {} guid 0x{:016x} ('{}'):\n", max_lid,
                   node.ports[0].lid.value(), node.info.node_guid.value(), tn.description);
    const auto& lft = tables.lft[sw];
    for (unsigned lid = 0; lid <= max_lid; ++lid) {
      const unsigned port = lid < lft.size() ? lft[lid] : kDropPort;
      if (port >= max_port) continue;
      fmt::format_to(std::back_inserter(out), "0x{:04x} {:03} # ", lid, port);
      const PortRef o = lid < owner.size() ? owner[lid] : PortRef{};
      if (o.valid()) {
        const SmNode& on = s.nodes[o.node.value()];
        fmt::format_to(std::back_inserter(out), "{} portguid 0x{:016x}: '{}'", node_type_name(on.info.node_type),
                       s.topo.port(o).guid.value(), s.topo.node(o.node).description);
      } else {
        out += "unknown node and type";
      }
      out += '\n';
    }
    fmt::format_to(std::back_inserter(out), "{} lids dumped\n", max_lid);
  }
  return out;
}

std::string format_subnet_lst(const Subnet& s) {
  std::string out;
  for (NodeIndex n : opensm_order(s, false)) {
    const SmNode& node = s.nodes[n.value()];
    for (uint8_t p = 1; p <= node.info.num_ports && p < node.ports.size(); ++p) {
      const PortRef here{n, p};
      const PortRef peer = s.topo.port(here).peer;
      if (!peer.valid()) continue;
      const SmNode& nb = s.nodes[peer.node.value()];
      const mad::PortInfo& mine = default_port(s, here);
      const mad::PortInfo& theirs = default_port(s, peer);
      fmt::format_to(std::back_inserter(out),
                     "{{ {}{} Ports:{:02X} SystemGUID:{:016x} NodeGUID:{:016x} PortGUID:{:016x} VenID:{:06X} "
                     "DevID:{:04X} Rev:{:08X} {{{}}} LID:{:04X} PN:{:02X} }} ",
                     short_type(node.info.node_type), mine.lid == mine.master_sm_lid ? "-SM" : "",
                     node.info.num_ports, node.info.system_image_guid.value(), node.info.node_guid.value(),
                     s.topo.port(here).guid.value(), node.info.vendor_id, node.info.device_id, node.info.revision,
                     s.topo.node(n).description, mine.lid.value(), p);
      // OpenSM prints the far end's 16-bit DevID through a 32-bit byte swap: d << 16.
      fmt::format_to(std::back_inserter(out),
                     "{{ {}{} Ports:{:02X} SystemGUID:{:016x} NodeGUID:{:016x} PortGUID:{:016x} VenID:{:08X} "
                     "DevID:{:04X} Rev:{:08X} {{{}}} LID:{:04X} PN:{:02X} }} ",
                     short_type(nb.info.node_type), theirs.lid == theirs.master_sm_lid ? "-SM" : "",
                     nb.info.num_ports, nb.info.system_image_guid.value(), nb.info.node_guid.value(),
                     s.topo.port(peer).guid.value(), nb.info.vendor_id, uint32_t{nb.info.device_id} << 16,
                     nb.info.revision, s.topo.node(peer.node).description, theirs.lid.value(), peer.port);
      // As in OpenSM, the capability checks read the far end's default port.
      const mad::PortInfo& pi = node.ports[p];
      fmt::format_to(std::back_inserter(out), "PHY={} LOG={} SPD={}\n", width_name(pi, theirs),
                     state_name(pi.port_state), speed_name(pi, theirs));
    }
  }
  return out;
}

Result<RoutingTables> read_lfts_dump(std::string_view text, std::string_view name, const RoutingGraph& graph) {
  RoutingTables tables = empty_tables(graph, "from " + std::string(name));
  std::unordered_map<uint64_t, SwitchIndex> by_guid;
  for (SwitchIndex s = 0; s < graph.switch_count(); ++s) by_guid.emplace(graph.guid_of(s).value(), s);
  SwitchIndex current = kNoSwitch;
  int line_no = 0;
  const auto error = [&](std::string_view why) {
    return Status(Code::kParseError, fmt::format("{}:{}: {}", name, line_no, why));
  };
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    if (line.starts_with("Unicast lids [")) {
      const size_t at = line.find(" guid 0x");
      if (at == std::string_view::npos) return error("switch header without a GUID");
      uint64_t guid = 0;
      const auto digits = line.substr(at + 8, 16);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), guid, 16);
      if (ec != std::errc() || end != digits.data() + digits.size()) return error("bad switch GUID");
      auto it = by_guid.find(guid);
      if (it == by_guid.end()) return error(fmt::format("switch 0x{:016x} is not in this fabric", guid));
      current = it->second;
      continue;
    }
    if (line.ends_with(" lids dumped")) {
      current = kNoSwitch;
      continue;
    }
    // "0x0001 001 # ..."
    if (!line.starts_with("0x") || line.size() < 10 || line[6] != ' ') return error("expected \"0xLLLL PPP # ...\"");
    if (current == kNoSwitch) return error("an LFT entry outside any switch");
    unsigned lid = 0, port = 0;
    const auto [e1, ec1] = std::from_chars(line.data() + 2, line.data() + 6, lid, 16);
    const auto [e2, ec2] = std::from_chars(line.data() + 7, line.data() + std::min<size_t>(line.size(), 10), port, 10);
    if (ec1 != std::errc() || e1 != line.data() + 6 || ec2 != std::errc() || e2 != line.data() + 10)
      return error("expected \"0xLLLL PPP # ...\"");
    if (lid > graph.max_lid()) return error(fmt::format("LID {} is beyond the fabric's highest LID {}", lid, graph.max_lid()));
    if (port > graph.port_count(current)) return error(fmt::format("port {} does not exist on this switch", port));
    tables.lft[current][lid] = static_cast<PortNum>(port);
  }
  return tables;
}

Result<void> write_opensm_dumps(const std::string& dir, const Subnet& subnet, const RoutingGraph& graph,
                                const RoutingTables& tables) {
  SOFTIB_TRY(write_file_atomic(dir + "/opensm-lfts.dump", format_lfts_dump(subnet, graph, tables)));
  return write_file_atomic(dir + "/opensm-subnet.lst", format_subnet_lst(subnet));
}

}  // namespace softib::sm
