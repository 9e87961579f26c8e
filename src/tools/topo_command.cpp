#include "tools/topo_command.hpp"

#include <map>

#include <fmt/format.h>

#include "fabric/generators.hpp"
#include "fabric/net_writer.hpp"
#include "tools/topology_source.hpp"

namespace softib::tools {

Result<std::string> topo_gen(const std::string& spec) {
  auto t = fabric::generate(spec);
  if (!t) return Err{t.error()};
  fabric::NetWriteOptions o;
  o.guid_names = false;
  o.guids = false;
  o.header = false;
  o.group_by_type = false;
  return fabric::write_net(*t, o);
}

Result<std::string> topo_show(const std::string& source) {
  auto loaded = load_topology(source);
  if (!loaded) return Err{loaded.error()};
  const fabric::Topology& t = loaded->topology;
  std::string out = fmt::format("{}: {} nodes ({} CAs, {} switches, {} routers), {} links\n", source,
                                t.node_count(), t.count(fabric::NodeType::kCa), t.count(fabric::NodeType::kSwitch),
                                t.count(fabric::NodeType::kRouter), t.link_count());
  std::map<std::string, size_t> rates;
  size_t switch_links = 0, unconnected = 0;
  t.for_each_link([&](fabric::PortRef a, fabric::PortRef b) {
    const fabric::TrainResult trained = fabric::train(t.port(a).caps, t.port(b).caps);
    ++rates[trained.rate ? trained.rate->width_name() + trained.rate->speed_name()
                         : fmt::format("down ({})", trained.reason)];
    if (t.node(a.node).type == fabric::NodeType::kSwitch && t.node(b.node).type == fabric::NodeType::kSwitch)
      ++switch_links;
  });
  for (uint32_t i = 0; i < t.node_count(); ++i)
    for (uint8_t p = 1; p <= t.node(fabric::NodeIndex(i)).num_ports; ++p)
      if (!t.port({fabric::NodeIndex(i), p}).peer.valid()) ++unconnected;
  out += fmt::format("  switch-to-switch links {}, unconnected ports {}\n", switch_links, unconnected);
  for (const auto& [rate, count] : rates) out += fmt::format("  {:>8} links at {}\n", count, rate);
  for (const auto& w : loaded->warnings) out += fmt::format("  warning: {}\n", w);
  return out;
}

}  // namespace softib::tools
