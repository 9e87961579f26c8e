// diagnet's fabric stages: Discovery, Lids Check, Links Check, Subnet Manager, Port Counters,
// Nodes Information.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "mad/guid_info.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/pkey_table.hpp"
#include "mad/port_counters.hpp"
#include "mad/sm_info.hpp"
#include "tools/diagnet_stages.hpp"

namespace softib::tools::diag {

// ---- Discovery -------------------------------------------------------------------------------

void stage_discovery(Ctx& c, StageReport& s, double seconds) {
  size_t sw = 0, ca = 0, rt = 0, links = 0;
  for (const auto& n : c.f.nodes) {
    (n.type == 2 ? sw : n.type == 1 ? ca : rt)++;
    for (const auto& p : n.ports)
      if (p && p->num != 0 && p->remote_node >= 0) ++links;
  }
  links /= 2;
  s.info(fmt::format("Discovered {} nodes ({} switches, {} CAs, {} routers) and {} links in {:.2f} s ({} MADs, {} hops max)",
                     c.f.nodes.size(), sw, ca, rt, links, seconds, c.f.mads, c.f.max_hops));
  s.data = {{"nodes", c.f.nodes.size()}, {"switches", sw}, {"cas", ca}, {"routers", rt}, {"links", links},
            {"mads", c.f.mads}, {"max_hops", c.f.max_hops}, {"seconds", seconds}};

  // Duplicate GUIDs: a node GUID or port GUID held by more than one node.
  std::unordered_map<uint64_t, std::vector<std::pair<int, std::string>>> owners;
  for (int i : c.f.listing()) {
    const auto& n = c.node(i);
    owners[n.guid].push_back({i, "node GUID of " + c.node_label(i)});
    for (uint8_t p = n.type == 2 ? 0 : 1; p <= n.num_ports; ++p) {
      const DiscoveredPort* dp = c.port(i, p);
      if (!dp || (n.type == 2 && p != 0)) continue;
      if (dp->guid == n.guid) continue;  // a switch's port GUID is its node GUID
      owners[dp->guid].push_back({i, fmt::format("port GUID of {} port {}", c.node_label(i), p)});
    }
  }
  std::map<uint64_t, std::vector<std::string>> dups;
  for (const auto& [g, who] : owners) {
    std::set<int> nodes;
    for (const auto& [i, what] : who) nodes.insert(i);
    if (nodes.size() > 1)
      for (const auto& [i, what] : who) dups[g].push_back(what);
  }
  for (const auto& [g, what] : dups) {
    std::string list;
    for (const auto& w : what) list += (list.empty() ? "" : ", ") + w;
    s.error(fmt::format("Duplicate GUID 0x{:016x}: {}", g, list), {{"guid", fmt::format("0x{:016x}", g)}, {"holders", what}});
  }

  if (!c.expected) return;
  const fabric::Topology& t = c.expected->topology();
  std::unordered_map<uint64_t, int> live;
  for (int i : c.f.listing()) live.emplace(c.node(i).guid, i);
  for (const fabric::TopoNode& n : t.nodes())
    if (!live.count(n.node_guid.value()))
      s.warn(fmt::format("Node not reached: {} 0x{:016x} \"{}\" (in {})", n.id, n.node_guid.value(), n.description,
                         c.o.expected_name),
             {{"node", n.id}, {"node_guid", fmt::format("0x{:016x}", n.node_guid.value())}});
  for (int i : c.f.listing())
    if (!c.expected->node(c.node(i).guid))
      s.warn(fmt::format("Node not in {}: {}", c.o.expected_name, c.node_label(i)),
             {{"node_guid", fmt::format("0x{:016x}", c.node(i).guid)}});
}

// ---- Lids Check ------------------------------------------------------------------------------

void stage_lids(Ctx& c, StageReport& s) {
  std::unordered_map<uint16_t, std::pair<int, uint8_t>> first;
  std::map<uint16_t, std::vector<std::pair<int, uint8_t>>> dups;
  size_t ports = 0;
  uint16_t lo = 0xFFFF, hi = 0;
  c.for_each_end_port([&](int i, const DiscoveredPort& p) {
    ++ports;
    const uint16_t lid = p.base_lid;
    const bool active = p.info.port_state == mad::PortState::kActive;
    if (lid == 0) {
      if (active) s.error(fmt::format("LID 0 on an Active port: {}", c.port_label(i, p.num)), c.port_json(i, p.num));
      return;
    }
    if (lid >= Lid::kMulticastBase) {
      s.error(fmt::format("LID {} is in the multicast range: {}", lid, c.port_label(i, p.num)), c.port_json(i, p.num));
      return;
    }
    const uint32_t count = 1u << p.lmc;
    lo = std::min(lo, lid);
    hi = static_cast<uint16_t>(std::max<uint32_t>(hi, lid + count - 1));
    for (uint32_t l = lid; l < lid + count && l < Lid::kMulticastBase; ++l) {
      auto [it, fresh] = first.emplace(static_cast<uint16_t>(l), std::pair<int, uint8_t>{i, p.num});
      if (!fresh) {
        auto& d = dups[static_cast<uint16_t>(l)];
        if (d.empty()) d.push_back(it->second);
        d.push_back({i, p.num});
      }
    }
  });
  for (const auto& [lid, who] : dups) {
    std::string list;
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& [i, p] : who) {
      list += (list.empty() ? "" : ", ") + fmt::format("{} port {}", c.node_label(i), p);
      holders.push_back(c.port_json(i, p));
    }
    s.error(fmt::format("Duplicate LID {}: {}", lid, list), {{"lid", lid}, {"holders", holders}});
  }
  if (ports && hi) s.info(fmt::format("{} end ports with LIDs {}..{}", ports, lo, hi));
  s.data = {{"end_ports", ports}, {"duplicate_lids", dups.size()}};
}

// ---- Links Check -----------------------------------------------------------------------------

void stage_links(Ctx& c, StageReport& s) {
  size_t up = 0, down_cabled = 0;
  std::set<std::pair<PortKey, PortKey>> reported;
  c.for_each_port([&](int i, const DiscoveredPort& p) {
    if (!p.have_info) return;
    const auto& n = c.node(i);
    auto state = [&] { return fmt::format("{}/{}", mad::to_string(p.info.port_state), mad::to_string(p.info.port_physical_state)); };
    if (p.info.port_physical_state == mad::PhysPortState::kLinkUp) {
      ++up;
      if (p.info.port_state != mad::PortState::kActive) {
        std::string peer;
        if (p.remote_node >= 0) peer = fmt::format(" (peer {} port {})", c.node_label(p.remote_node), p.remote_port);
        nlohmann::json j = c.port_json(i, p.num);
        j["state"] = state();
        s.error(fmt::format("Logical state is not Active: {} is {}{}", c.port_label(i, p.num), state(), peer), j);
      }
      return;
    }
    if (!c.expected) return;
    const PortKey here{n.guid, p.num};
    auto peer = c.expected->peer(here);
    if (!peer) return;  // no cable there
    const auto key = here < *peer ? std::pair{here, *peer} : std::pair{*peer, here};
    if (!reported.insert(key).second) return;  // the other end was reported
    ++down_cabled;
    const int pi = c.f.find_guid(peer->guid);
    std::string peer_text = pi >= 0 ? fmt::format("{} port {}", c.node_label(pi), peer->port)
                                    : fmt::format("{}[{}] (not reached)", c.expected->name(peer->guid), peer->port);
    if (pi >= 0)
      if (const DiscoveredPort* pp = c.port(pi, peer->port); pp && pp->have_info)
        peer_text += fmt::format(" {}/{}", mad::to_string(pp->info.port_state), mad::to_string(pp->info.port_physical_state));
    nlohmann::json j = c.port_json(i, p.num);
    j["state"] = state();
    j["peer"] = {{"node", c.expected->name(peer->guid)}, {"node_guid", fmt::format("0x{:016x}", peer->guid)}, {"port", peer->port}};
    s.error(fmt::format("Link down: {} {} <--> {} (cabled in {})", c.port_label(i, p.num), state(), peer_text,
                        c.o.expected_name),
            j);
  });
  s.info(fmt::format("{} ports LinkUp{}", up, c.expected ? fmt::format(", {} cabled links down", down_cabled) : ""));
  if (!c.expected) s.comment = "no expected topology: cabled Down ports not checked";
  s.data = {{"ports_up", up}, {"cabled_links_down", down_cabled}};
}

// ---- Subnet Manager --------------------------------------------------------------------------

Result<void> stage_sm(Ctx& c, StageReport& s) {
  if (auto r = c.rpc.refresh_port(); !r) {
    if (r.error().code() == Code::kUnavailable) return Err{r.error()};
    s.error("Cannot read the local port's PortInfo: " + reason(r.error()));
    return {};
  }
  const uint16_t sm_lid = c.rpc.sm_lid();
  if (sm_lid == 0) {
    s.error("No subnet manager: the local port's MasterSMLID is 0");
    s.comment = "no SM";
    return {};
  }
  // The master first, then every other port that says IsSM.
  std::vector<MadRequest> rs{smp_get(sm_lid, kAttrSmInfo, 0)};
  std::vector<std::pair<int, uint8_t>> who{{-1, 0}};
  c.for_each_end_port([&](int i, const DiscoveredPort& p) {
    const mad::PortInfo* cap = c.cap_info(i, p);
    const uint16_t lid = p.base_lid;
    if (cap && (cap->capability_mask & kCapIsSm) && lid != 0 && lid != sm_lid) {
      rs.push_back(smp_get(lid, kAttrSmInfo, 0));
      who.push_back({i, p.num});
    }
  });
  auto got = c.query(rs);
  if (!got) return Err{got.error()};
  auto master = answer_as<mad::SMInfo>((*got)[0]);
  nlohmann::json sms = nlohmann::json::array();
  if (!master) {
    s.error(fmt::format("SMInfo of the SM at LID {} not read: {}", sm_lid, reason(master.error())));
  } else {
    std::string where;
    c.for_each_end_port([&](int i, const DiscoveredPort& p) {
      if (p.base_lid == sm_lid && where.empty()) where = c.port_label(i, p.num);
    });
    s.info(fmt::format("Master SM: GUID 0x{:016x} LID {} priority {} state {} ActCount {}{}", master->guid.value(), sm_lid,
                       master->priority, mad::to_string(master->sm_state), master->act_count,
                       where.empty() ? "" : " on " + where));
    sms.push_back({{"guid", fmt::format("0x{:016x}", master->guid.value())}, {"lid", sm_lid}, {"priority", master->priority},
                   {"state", mad::to_string(master->sm_state)}, {"act_count", master->act_count}, {"master_sm_lid", true}});
    if (master->sm_state != mad::SmState::kMaster)
      s.error(fmt::format("The SM at LID {} (the local port's MasterSMLID) is in state {}, not Master", sm_lid,
                          mad::to_string(master->sm_state)));
  }
  for (size_t k = 1; k < rs.size(); ++k) {
    const auto [i, p] = who[k];
    auto other = answer_as<mad::SMInfo>((*got)[k]);
    if (!other) {
      s.warn(fmt::format("SMInfo of {} (IsSM) not read: {}", c.port_label(i, p), reason(other.error())), c.port_json(i, p));
      continue;
    }
    s.info(fmt::format("SM: GUID 0x{:016x} LID {} priority {} state {} on {}", other->guid.value(), c.node(i).lid_of(p),
                       other->priority, mad::to_string(other->sm_state), c.port_label(i, p)));
    sms.push_back({{"guid", fmt::format("0x{:016x}", other->guid.value())}, {"lid", c.node(i).lid_of(p)},
                   {"priority", other->priority}, {"state", mad::to_string(other->sm_state)}, {"act_count", other->act_count}});
    if (other->sm_state == mad::SmState::kMaster)
      s.error(fmt::format("A second master SM: {} (the subnet's MasterSMLID is {})", c.port_label(i, p), sm_lid),
              c.port_json(i, p));
  }
  s.data = {{"sm_lid", sm_lid}, {"sms", sms}};
  return {};
}

// ---- Port Counters ---------------------------------------------------------------------------

struct CounterDef {
  const char* name;
  uint64_t (*get)(const mad::PortCounters&);
};

constexpr CounterDef kErrorCounters[] = {
    {"SymbolErrorCounter", [](const mad::PortCounters& p) -> uint64_t { return p.symbol_error_counter; }},
    {"LinkErrorRecoveryCounter", [](const mad::PortCounters& p) -> uint64_t { return p.link_error_recovery_counter; }},
    {"LinkDownedCounter", [](const mad::PortCounters& p) -> uint64_t { return p.link_downed_counter; }},
    {"PortRcvErrors", [](const mad::PortCounters& p) -> uint64_t { return p.port_rcv_errors; }},
    {"PortRcvRemotePhysicalErrors", [](const mad::PortCounters& p) -> uint64_t { return p.port_rcv_remote_physical_errors; }},
    {"PortRcvSwitchRelayErrors", [](const mad::PortCounters& p) -> uint64_t { return p.port_rcv_switch_relay_errors; }},
    {"PortXmitDiscards", [](const mad::PortCounters& p) -> uint64_t { return p.port_xmit_discards; }},
    {"PortXmitConstraintErrors", [](const mad::PortCounters& p) -> uint64_t { return p.port_xmit_constraint_errors; }},
    {"PortRcvConstraintErrors", [](const mad::PortCounters& p) -> uint64_t { return p.port_rcv_constraint_errors; }},
    {"LocalLinkIntegrityErrors", [](const mad::PortCounters& p) -> uint64_t { return p.local_link_integrity_errors; }},
    {"ExcessiveBufferOverrunErrors", [](const mad::PortCounters& p) -> uint64_t { return p.excessive_buffer_overrun_errors; }},
    {"VL15Dropped", [](const mad::PortCounters& p) -> uint64_t { return p.vl15_dropped; }},
};

Result<void> stage_counters(Ctx& c, StageReport& s) {
  struct Target {
    int node;
    uint8_t port;
  };
  std::vector<Target> targets;
  std::vector<MadRequest> reads;
  auto add = [&](int i, uint8_t p, uint16_t lid) {
    mad::PortCounters sel;
    sel.port_select = p;
    MadRequest r;
    r.to = Destination::to_lid(lid);
    r.mgmt_class = kPma;
    r.method = kGet;
    r.attribute_id = kAttrPortCounters;
    r.data = mad::encode(sel);
    reads.push_back(std::move(r));
    targets.push_back({i, p});
  };
  for (int i : c.f.listing()) {
    const auto& n = c.node(i);
    for (uint8_t p = 1; p <= n.num_ports; ++p) {
      const DiscoveredPort* dp = c.port(i, p);
      if (!dp || !dp->have_info) continue;
      if (n.type == 2) {
        if (n.sma_lid != 0 && dp->info.port_physical_state == mad::PhysPortState::kLinkUp) add(i, p, n.sma_lid);
      } else if (dp->base_lid != 0 && dp->info.port_state == mad::PortState::kActive) {
        add(i, p, dp->base_lid);
      }
    }
  }
  if (targets.empty()) {
    s.warn("No port answers PMA queries (no LIDs: is an SM running?)");
    s.comment = "skipped: no LIDs";
    return {};
  }
  auto before = c.query(reads);
  if (!before) return Err{before.error()};

  // Traffic: `traffic` NodeInfo Gets to every node that has a LID, round after round.
  std::vector<MadRequest> traffic;
  std::vector<uint16_t> lids;
  for (int i : c.f.listing()) {
    const uint16_t lid = c.node(i).type == 2 ? c.node(i).sma_lid : c.node(i).lid_of(c.node(i).info.local_port_num);
    if (lid != 0) lids.push_back(lid);
  }
  for (uint32_t round = 0; round < c.o.traffic; ++round)
    for (uint16_t lid : lids) traffic.push_back(smp_get(lid, kAttrNodeInfo, 0));
  size_t lost = 0;
  if (!traffic.empty()) {
    auto sent = c.query(traffic);
    if (!sent) return Err{sent.error()};
    for (const auto& r : *sent)
      if (!r) ++lost;
  }
  auto after = c.query(reads);
  if (!after) return Err{after.error()};

  s.info(fmt::format("PortCounters of {} ports read before and after {} MADs of traffic ({} to each of {} nodes){}",
                     targets.size(), traffic.size(), c.o.traffic, lids.size(),
                     lost ? fmt::format(", {} of them unanswered", lost) : ""));
  if (lost) s.warn(fmt::format("{} of the {} traffic MADs got no answer", lost, traffic.size()), {{"lost", lost}});
  nlohmann::json bad = nlohmann::json::array();
  size_t unread = 0;
  for (size_t k = 0; k < targets.size(); ++k) {
    const auto [i, p] = targets[k];
    auto b = answer_as<mad::PortCounters>((*before)[k]);
    auto a = answer_as<mad::PortCounters>((*after)[k]);
    if (!a) {
      ++unread;
      s.warn(fmt::format("PortCounters of {} not read: {}", c.port_label(i, p), reason(a.error())), c.port_json(i, p));
      continue;
    }
    for (const CounterDef& d : kErrorCounters) {
      const uint64_t v = d.get(*a);
      const uint64_t was = b ? d.get(*b) : v;
      if (v == 0) continue;
      nlohmann::json j = c.port_json(i, p);
      j["counter"] = d.name;
      j["value"] = v;
      j["increase"] = v > was ? v - was : 0;
      bad.push_back(j);
      s.error(fmt::format("{}: {} = {}{}", c.port_label(i, p), d.name, v,
                          v > was ? fmt::format(" (increased by {} during the run)", v - was) : ""),
              j);
    }
  }
  s.data = {{"ports", targets.size()}, {"traffic_mads", traffic.size()}, {"unread", unread}, {"errors", bad}};
  return {};
}

// ---- Nodes Information -----------------------------------------------------------------------

void stage_nodes(Ctx& c, StageReport& s) {
  struct Key {
    uint8_t type;
    uint32_t vendor;
    uint16_t device;
    auto operator<=>(const Key&) const = default;
  };
  std::map<Key, std::map<uint32_t, size_t>> revisions;
  for (int i : c.f.listing()) {
    const auto& n = c.node(i);
    ++revisions[Key{n.type, n.info.vendor_id, n.info.device_id}][n.info.revision];
    if (n.description.empty()) s.warn(fmt::format("Empty NodeDescription: {}", c.node_label(i)), c.port_json(i, 0));
  }
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& [k, revs] : revisions) {
    size_t total = 0;
    std::string list;
    for (const auto& [rev, count] : revs) {
      total += count;
      list += fmt::format("{}0x{:x} ({})", list.empty() ? "" : ", ", rev, count);
    }
    const char* type = k.type == 2 ? "switches" : k.type == 1 ? "CAs" : "routers";
    s.info(fmt::format("{} {} vendor 0x{:06x} device 0x{:04x} revision {}", total, type, k.vendor, k.device, list));
    devices.push_back({{"type", type}, {"vendor_id", k.vendor}, {"device_id", k.device}, {"count", total}});
    if (revs.size() > 1)
      s.warn(fmt::format("{} of device 0x{:04x} (vendor 0x{:06x}) run different revisions: {}", type, k.device, k.vendor, list),
             {{"vendor_id", k.vendor}, {"device_id", k.device}});
  }
  s.data = {{"devices", devices}};
}

}  // namespace softib::tools::diag
