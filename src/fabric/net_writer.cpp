#include "fabric/net_writer.hpp"

#include <cctype>
#include <cerrno>
#include <ctime>

#include <fmt/format.h>

#include "base/file.hpp"
namespace softib::fabric {

namespace {

class Writer {
 public:
  Writer(const Topology& t, const NetWriteOptions& o) : topo_(t), opt_(o) {}

  std::string run() {
    std::string when = opt_.generated_on;
    if (when.empty()) {
      const std::time_t now = std::time(nullptr);
      char buf[64];
      when = ctime_r(&now, buf) ? std::string(buf) : std::string("?");
      if (!when.empty() && when.back() == '\n') when.pop_back();
    }
    if (opt_.header) out_ += fmt::format("#\n# Topology file: generated on {}\n#\n", when);
    if (opt_.header && opt_.initiated_from) {
      const TopoNode& n = topo_.node(opt_.initiated_from->node);
      out_ += fmt::format("# Initiated from node {:016x} port {:016x}\n", n.node_guid.value(),
                          topo_.port(*opt_.initiated_from).guid.value());
    }
    if (!opt_.group_by_type) {
      for_each_node(std::nullopt, [&](NodeIndex n) { write_node(n); });
    } else {
      for (NodeType type : {NodeType::kSwitch, NodeType::kCa, NodeType::kRouter})
        for_each_node(type, [&](NodeIndex n) { write_node(n); });
    }
    return std::move(out_);
  }

 private:
  // Calls f for every node of `type` (every node when nullopt) in the requested order.
  template <class F>
  void for_each_node(std::optional<NodeType> type, F&& f) {
    const auto wanted = [&](NodeIndex n) { return !type || topo_.node(n).type == *type; };
    if (opt_.order.empty()) {
      for (uint32_t i = 0; i < topo_.node_count(); ++i)
        if (wanted(NodeIndex(i))) f(NodeIndex(i));
    } else {
      for (NodeIndex n : opt_.order)
        if (wanted(n)) f(n);
    }
  }

  // The quoted node name: ibnetdiscover's "S-<16 hex digits>" or the topology's id.
  std::string name(NodeIndex n) const {
    const TopoNode& node = topo_.node(n);
    if (!opt_.guid_names) return fmt::format("\"{}\"", node.id);
    const char letter = node.type == NodeType::kSwitch ? 'S' : node.type == NodeType::kCa ? 'H' : 'R';
    return fmt::format("\"{}-{:016x}\"", letter, node.node_guid.value());
  }

  // ibdiag's clean_nodedesc: non-printable characters become spaces. A double quote would
  // end the quoted description early and the rest would read as annotations ("lmc 13"):
  // it becomes a single quote, so that what softib writes reads back (found by fuzzing).
  static std::string clean(std::string_view desc) {
    std::string s(desc.substr(0, desc.find('\0')));
    for (char& c : s) {
      if (!std::isprint(static_cast<unsigned char>(c))) c = ' ';
      if (c == '"') c = '\'';
    }
    return s;
  }

  // The LID ibnetdiscover shows for the far end: a switch's port-0 LID, else the port's.
  unsigned remote_lid(PortRef peer) const {
    const TopoNode& rn = topo_.node(peer.node);
    return rn.type == NodeType::kSwitch ? topo_.port({peer.node, 0}).lid.value()
                                        : topo_.port(peer).lid.value();
  }

  std::string rate(PortRef here) const {
    const TopoPort& p = topo_.port(here);
    const TrainResult r = train(p.caps, topo_.port(p.peer).caps);
    if (!r.rate) return "?????";  // ibnetdiscover's "??" width and "???" speed
    return r.rate->width_name() + r.rate->speed_name();
  }

  void write_ids(const TopoNode& node) {
    out_ += fmt::format("\nvendid={:#x}\ndevid={:#x}\n", node.vendor_id, node.device_id);
    if (node.system_image_guid.value()) out_ += fmt::format("sysimgguid={:#x}\n", node.system_image_guid.value());
  }

  void write_node(NodeIndex n) {
    const TopoNode& node = topo_.node(n);
    if (node.type == NodeType::kSwitch) {
      if (opt_.guids) {
        write_ids(node);
        out_ += fmt::format("switchguid={:#x}({:x})\n", node.node_guid.value(),
                            topo_.port({n, 0}).guid.value());
      } else {
        out_ += "\n";
      }
      const TopoPort& p0 = topo_.port({n, 0});
      out_ += fmt::format("Switch\t{} {}\t\t# \"{}\" {} port 0 lid {} lmc {}\n", node.num_ports,
                          name(n), clean(node.description),
                          node.enhanced_port0 ? "enhanced" : "base", p0.lid.value(), p0.lmc);
      for (uint8_t p = 1; p <= node.num_ports; ++p) {
        const TopoPort& port = topo_.port({n, p});
        if (!port.peer.valid()) continue;
        const TopoNode& rn = topo_.node(port.peer.node);
        out_ += fmt::format("[{}]\t{}[{}]", p, name(port.peer.node), port.peer.port);
        if (rn.type != NodeType::kSwitch && opt_.guids)
          out_ += fmt::format("({:x}) ", topo_.port(port.peer).guid.value());
        out_ += fmt::format("\t\t# \"{}\" lid {} {}\n", clean(rn.description), remote_lid(port.peer),
                            rate({n, p}));
      }
      return;
    }
    if (opt_.guids) {
      write_ids(node);
      out_ += fmt::format("{}guid={:#x}\n", node.type == NodeType::kCa ? "ca" : "rt",
                          node.node_guid.value());
    } else {
      out_ += "\n";
    }
    out_ += fmt::format("{}\t{} {}\t\t# \"{}\"\n", node.type == NodeType::kCa ? "Ca" : "Rt",
                        node.num_ports, name(n), clean(node.description));
    for (uint8_t p = 1; p <= node.num_ports; ++p) {
      const TopoPort& port = topo_.port({n, p});
      if (!port.peer.valid()) continue;
      const TopoNode& rn = topo_.node(port.peer.node);
      if (opt_.guids) {
        out_ += fmt::format("[{}]({:x}) \t{}[{}]", p, port.guid.value(), name(port.peer.node), port.peer.port);
        if (rn.type != NodeType::kSwitch) out_ += fmt::format(" ({:x}) ", topo_.port(port.peer).guid.value());
      } else {
        out_ += fmt::format("[{}]\t{}[{}]", p, name(port.peer.node), port.peer.port);
      }
      out_ += fmt::format("\t\t# lid {} lmc {} \"{}\" lid {} {}\n", port.lid.value(), port.lmc,
                          clean(rn.description), remote_lid(port.peer), rate({n, p}));
    }
  }

  const Topology& topo_;
  const NetWriteOptions& opt_;
  std::string out_;
};

}  // namespace

std::string write_net(const Topology& topology, const NetWriteOptions& options) {
  return Writer(topology, options).run();
}

Result<void> write_net_file(const std::string& path, const Topology& topology,
                            const NetWriteOptions& options) {
  return write_file_atomic(path, write_net(topology, options));
}

}  // namespace softib::fabric
