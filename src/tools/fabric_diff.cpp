#include "tools/fabric_diff.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace softib::tools {

namespace {

using Link = std::pair<PortKey, PortKey>;  // lower end first

Link make_link(PortKey a, PortKey b) { return a < b ? Link{a, b} : Link{b, a}; }

std::string guid_text(uint64_t g) { return fmt::format("0x{:016x}", g); }

}  // namespace

ExpectedFabric::ExpectedFabric(const fabric::Topology& t) : t_(t) {
  for (uint32_t i = 0; i < t.node_count(); ++i) by_guid_.emplace(t.node(fabric::NodeIndex(i)).node_guid.value(), fabric::NodeIndex(i));
}

std::optional<fabric::NodeIndex> ExpectedFabric::node(uint64_t guid) const {
  auto it = by_guid_.find(guid);
  if (it == by_guid_.end()) return std::nullopt;
  return it->second;
}

std::optional<PortKey> ExpectedFabric::peer(PortKey p) const {
  auto n = node(p.guid);
  if (!n || p.port == 0 || p.port > t_.node(*n).num_ports) return std::nullopt;
  const fabric::PortRef peer = t_.port({*n, p.port}).peer;
  if (!peer.valid()) return std::nullopt;
  return PortKey{t_.node(peer.node).node_guid.value(), peer.port};
}

std::string ExpectedFabric::name(uint64_t guid) const {
  if (auto n = node(guid)) return t_.node(*n).id;
  return guid_text(guid);
}

std::string_view to_string(DiffEntry::Kind k) {
  switch (k) {
    case DiffEntry::Kind::kMissingNode: return "missing node";
    case DiffEntry::Kind::kExtraNode: return "extra node";
    case DiffEntry::Kind::kMissingLink: return "missing link";
    case DiffEntry::Kind::kExtraLink: return "extra link";
    case DiffEntry::Kind::kMiscabled: return "miscabled";
  }
  return "?";
}

size_t TopoDiff::count(DiffEntry::Kind k) const {
  return static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [k](const DiffEntry& e) { return e.kind == k; }));
}

std::string TopoDiff::summary() const {
  if (entries.empty())
    return fmt::format("no differences: {} nodes and {} links as expected\n", expected_nodes, expected_links);
  return fmt::format("{} differences: {} missing nodes, {} extra nodes, {} missing links, {} extra links, {} miscabled\n",
                     entries.size(), count(DiffEntry::Kind::kMissingNode), count(DiffEntry::Kind::kExtraNode),
                     count(DiffEntry::Kind::kMissingLink), count(DiffEntry::Kind::kExtraLink),
                     count(DiffEntry::Kind::kMiscabled));
}

nlohmann::json TopoDiff::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const DiffEntry& e : entries) list.push_back(e.json);
  return {{"differences", std::move(list)},
          {"expected", {{"nodes", expected_nodes}, {"links", expected_links}}},
          {"live", {{"nodes", live_nodes}, {"links", live_links}}},
          {"counts",
           {{"missing_nodes", count(DiffEntry::Kind::kMissingNode)},
            {"extra_nodes", count(DiffEntry::Kind::kExtraNode)},
            {"missing_links", count(DiffEntry::Kind::kMissingLink)},
            {"extra_links", count(DiffEntry::Kind::kExtraLink)},
            {"miscabled", count(DiffEntry::Kind::kMiscabled)}}}};
}

TopoDiff diff_topology(const DiscoveredFabric& live, const ExpectedFabric& expected) {
  const fabric::Topology& t = expected.topology();
  TopoDiff d;
  d.expected_nodes = t.node_count();
  d.expected_links = t.link_count();
  d.live_nodes = live.nodes.size();

  std::map<uint64_t, const DiscoveredNode*> live_nodes;
  for (const DiscoveredNode& n : live.nodes) live_nodes.emplace(n.guid, &n);
  std::set<uint64_t> expected_guids;
  for (const fabric::TopoNode& n : t.nodes()) expected_guids.insert(n.node_guid.value());

  // Names: the net file's ids, or the live node's description for one the file lacks.
  auto name = [&](uint64_t guid) {
    if (expected.node(guid)) return expected.name(guid);
    auto it = live_nodes.find(guid);
    return it == live_nodes.end() ? guid_text(guid) : fmt::format("{} \"{}\"", guid_text(guid), it->second->description);
  };
  auto port_name = [&](PortKey p) { return fmt::format("{}[{}]", name(p.guid), p.port); };
  auto port_json = [&](PortKey p) { return nlohmann::json{{"node", name(p.guid)}, {"guid", guid_text(p.guid)}, {"port", p.port}}; };

  std::vector<std::pair<PortKey, DiffEntry>> found;  // sort key, entry
  for (const fabric::TopoNode& n : t.nodes()) {
    const uint64_t g = n.node_guid.value();
    if (live_nodes.count(g)) continue;
    found.push_back({PortKey{g, 0},
                     DiffEntry{DiffEntry::Kind::kMissingNode, fmt::format("missing node: {} ({}, \"{}\")", n.id, guid_text(g), n.description),
                               {{"kind", "missing node"}, {"node", n.id}, {"guid", guid_text(g)}, {"description", n.description}}}});
  }
  for (const auto& [g, n] : live_nodes) {
    if (expected_guids.count(g)) continue;
    found.push_back({PortKey{g, 0},
                     DiffEntry{DiffEntry::Kind::kExtraNode, fmt::format("extra node: {} \"{}\"", guid_text(g), n->description),
                               {{"kind", "extra node"}, {"guid", guid_text(g)}, {"description", n->description}}}});
  }

  // Cables whose two nodes both exist on both sides.
  auto both_sides = [&](uint64_t g) { return live_nodes.count(g) && expected_guids.count(g); };
  std::set<Link> want, have;
  t.for_each_link([&](fabric::PortRef a, fabric::PortRef b) {
    const PortKey ka{t.node(a.node).node_guid.value(), a.port}, kb{t.node(b.node).node_guid.value(), b.port};
    if (both_sides(ka.guid) && both_sides(kb.guid)) want.insert(make_link(ka, kb));
  });
  size_t live_links = 0;
  for (const DiscoveredNode& n : live.nodes)
    for (const auto& p : n.ports) {
      if (!p || p->num == 0 || p->remote_node < 0) continue;
      const DiscoveredNode& r = live.nodes[static_cast<size_t>(p->remote_node)];
      const Link l = make_link(PortKey{n.guid, p->num}, PortKey{r.guid, p->remote_port});
      if (l.first == PortKey{n.guid, p->num}) ++live_links;
      if (both_sides(n.guid) && both_sides(r.guid)) have.insert(l);
    }
  d.live_links = live_links;

  std::vector<Link> missing, extra;
  std::set_difference(want.begin(), want.end(), have.begin(), have.end(), std::back_inserter(missing));
  std::set_difference(have.begin(), have.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::multimap<PortKey, size_t> extra_at;
  for (size_t i = 0; i < extra.size(); ++i) {
    extra_at.emplace(extra[i].first, i);
    extra_at.emplace(extra[i].second, i);
  }
  std::vector<bool> extra_used(extra.size(), false);
  for (const Link& e : missing) {
    bool paired = false;
    for (const PortKey& end : {e.first, e.second}) {
      auto [lo, hi] = extra_at.equal_range(end);
      for (auto it = lo; it != hi && !paired; ++it) {
        if (extra_used[it->second]) continue;
        const Link& f = extra[it->second];
        const PortKey want_peer = e.first == end ? e.second : e.first;
        const PortKey have_peer = f.first == end ? f.second : f.first;
        extra_used[it->second] = true;
        paired = true;
        found.push_back({end, DiffEntry{DiffEntry::Kind::kMiscabled,
                                        fmt::format("miscabled: {} expected {} found {}", port_name(end), port_name(want_peer), port_name(have_peer)),
                                        {{"kind", "miscabled"}, {"port", port_json(end)}, {"expected", port_json(want_peer)}, {"found", port_json(have_peer)}}}});
      }
      if (paired) break;
    }
    if (!paired)
      found.push_back({e.first, DiffEntry{DiffEntry::Kind::kMissingLink, fmt::format("missing link: {} - {}", port_name(e.first), port_name(e.second)),
                                          {{"kind", "missing link"}, {"ends", {port_json(e.first), port_json(e.second)}}}}});
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    if (extra_used[i]) continue;
    const Link& f = extra[i];
    found.push_back({f.first, DiffEntry{DiffEntry::Kind::kExtraLink, fmt::format("extra link: {} - {}", port_name(f.first), port_name(f.second)),
                                        {{"kind", "extra link"}, {"ends", {port_json(f.first), port_json(f.second)}}}}});
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if (a.second.kind != b.second.kind) return a.second.kind < b.second.kind;
    return a.first < b.first;
  });
  for (auto& [key, e] : found) d.entries.push_back(std::move(e));
  return d;
}

}  // namespace softib::tools
