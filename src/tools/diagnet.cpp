#include "tools/diagnet.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "fabric/link_rate.hpp"
#include "mad/codec.hpp"
#include "mad/guid_info.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/pkey_table.hpp"
#include "mad/port_counters.hpp"
#include "mad/sm_info.hpp"
#include "tools/fabric_diff.hpp"

namespace softib::tools {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint8_t kSmpLid = 0x01, kPma = 0x04;
constexpr uint8_t kGet = 0x01, kGetTable = 0x12;
constexpr uint16_t kAttrNodeInfo = 0x0011, kAttrGuidInfo = 0x0014, kAttrPKeyTable = 0x0016, kAttrSmInfo = 0x0020,
                   kAttrPortCounters = 0x0012, kAttrMcMemberRecord = 0x0038;
constexpr uint32_t kCapIsSm = 1u << 1;             // PortInfo.CapabilityMask.IsSM
constexpr uint32_t kCapHasExtSpeeds = 1u << 14;    // ... IsExtendedSpeedsSupported
constexpr size_t kMadDataOffset = 64;              // SMP and PMA data areas

// IBA table 226 (PathRecord/MCMemberRecord Rate): bandwidth of each code in 100 Mb/s.
constexpr std::array<uint32_t, 23> kRateBandwidth{
    0,   0,                                   // 0, 1: reserved
    25,  100, 300, 50,  200, 400, 600,        // 2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60
    800, 1200, 140, 560, 1120, 1680, 250,     // 9: 80, 10: 120, 11: 14, 12: 56, 13: 112, 14: 168, 15: 25
    1000, 2000, 3000, 280, 500, 4000, 6000,   // 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600
};

uint32_t rate_bandwidth(uint8_t code) { return code < kRateBandwidth.size() ? kRateBandwidth[code] : 0; }

std::string gbps(uint32_t hundred_mbps) {
  return hundred_mbps % 10 ? fmt::format("{}.{} Gb/s", hundred_mbps / 10, hundred_mbps % 10)
                           : fmt::format("{} Gb/s", hundred_mbps / 10);
}

uint32_t mtu_bytes(uint8_t code) { return code >= 1 && code <= 5 ? 128u << code : 0; }

uint8_t lanes_of(uint8_t width_bit) {
  switch (width_bit) {
    case fabric::width::k1x: return 1;
    case fabric::width::k2x: return 2;
    case fabric::width::k4x: return 4;
    case fabric::width::k8x: return 8;
    case fabric::width::k12x: return 12;
    default: return 0;
  }
}

// ---- the fabric as the stages see it -------------------------------------------------------

struct Ctx {
  MadRpc& rpc;
  const DiscoveredFabric& f;
  const DiagOptions& o;
  std::optional<ExpectedFabric> expected;
  uint64_t mads = 0;

  const DiscoveredNode& node(int i) const { return f.nodes[static_cast<size_t>(i)]; }
  const DiscoveredPort* port(int i, uint8_t p) const {
    const auto& n = node(i);
    return p < n.ports.size() && n.ports[p] ? &*n.ports[p] : nullptr;
  }
  // The PortInfo whose CapabilityMask speaks for a port: port 0's on a switch.
  const mad::PortInfo* cap_info(int i, const DiscoveredPort& p) const {
    if (node(i).type != 2) return &p.info;
    const DiscoveredPort* p0 = port(i, 0);
    return p0 && p0->have_info ? &p0->info : nullptr;
  }
  bool extended(int i, const DiscoveredPort& p) const {
    const mad::PortInfo* c = cap_info(i, p);
    return c && (c->capability_mask & kCapHasExtSpeeds) && p.info.link_speed_ext_active != 0;
  }
  uint32_t lane_mbps(int i, const DiscoveredPort& p) const {
    if (extended(i, p)) {
      switch (p.info.link_speed_ext_active) {
        case fabric::ext_speed::kFdr: return 14000;
        case fabric::ext_speed::kEdr: return 25000;
        case fabric::ext_speed::kHdr: return 50000;
        case fabric::ext_speed::kNdr: return 100000;
        default: return 0;
      }
    }
    switch (p.info.link_speed_active) {
      case fabric::speed::kSdr: return 2500;
      case fabric::speed::kDdr: return 5000;
      case fabric::speed::kQdr: return 10000;
      default: return 0;
    }
  }
  std::string speed_text(int i, const DiscoveredPort& p) const {
    return std::string(extended(i, p) ? fabric::ext_speed_name(p.info.link_speed_ext_active)
                                      : fabric::speed_name(p.info.link_speed_active));
  }
  // The IBA rate code of the port's active width x speed (the highest not above it).
  uint8_t rate_code(int i, const DiscoveredPort& p) const {
    const uint32_t bw = lanes_of(p.info.link_width_active) * lane_mbps(i, p) / 100;
    uint8_t best = 2;
    for (uint8_t c = 2; c < kRateBandwidth.size(); ++c)
      if (kRateBandwidth[c] <= bw && kRateBandwidth[c] > kRateBandwidth[best]) best = c;
    return best;
  }

  std::string node_label(int i) const {
    const auto& n = node(i);
    return fmt::format("\"{}\" 0x{:016x}", n.description, n.guid);
  }
  std::string port_label(int i, uint8_t p) const {
    return fmt::format("{} port {} lid {}", node_label(i), p, node(i).lid_of(p));
  }
  nlohmann::json port_json(int i, uint8_t p) const {
    const auto& n = node(i);
    return {{"node_guid", fmt::format("0x{:016x}", n.guid)}, {"description", n.description}, {"port", p},
            {"lid", n.lid_of(p)}};
  }
  // Every external port of every node, in discovery's listing order.
  template <class F>
  void for_each_port(F&& fn) const {
    for (int i : f.listing())
      for (uint8_t p = 1; p <= node(i).num_ports; ++p)
        if (const DiscoveredPort* dp = port(i, p)) fn(i, *dp);
  }
  // End ports: switch port 0, CA and router ports.
  template <class F>
  void for_each_end_port(F&& fn) const {
    for (int i : f.listing()) {
      if (node(i).type == 2) {
        if (const DiscoveredPort* dp = port(i, 0); dp && dp->have_info) fn(i, *dp);
        continue;
      }
      for (uint8_t p = 1; p <= node(i).num_ports; ++p)
        if (const DiscoveredPort* dp = port(i, p); dp && dp->have_info) fn(i, *dp);
    }
  }
  // The CA ports that answer LID-routed SMPs: Active with a LID.
  template <class F>
  void for_each_active_ca_port(F&& fn) const {
    for (int i : f.listing()) {
      if (node(i).type == 2) continue;
      for (uint8_t p = 1; p <= node(i).num_ports; ++p)
        if (const DiscoveredPort* dp = port(i, p);
            dp && dp->have_info && dp->base_lid != 0 && dp->info.port_state == mad::PortState::kActive)
          fn(i, *dp);
    }
  }

  Result<std::vector<Result<MadBytes>>> query(const std::vector<MadRequest>& rs) {
    mads += rs.size();
    return rpc.call_many(rs);  // o.window in flight: the RPC was opened with it
  }
};

MadRequest smp_get(uint16_t lid, uint16_t attr, uint32_t modifier) {
  MadRequest r;
  r.to = Destination::to_lid(lid);
  r.mgmt_class = kSmpLid;
  r.method = kGet;
  r.attribute_id = attr;
  r.attribute_modifier = modifier;
  return r;
}

uint16_t mad_status(const MadBytes& m) { return static_cast<uint16_t>(((m[4] & 0x7F) << 8) | m[5]); }

std::span<const uint8_t> data_of(const MadBytes& m, size_t size) { return {m.data() + kMadDataOffset, size}; }

// The answer's data when it came with status 0; else the reason for a message.
template <class T>
Result<T> answer_as(const Result<MadBytes>& r) {
  if (!r) return Err{r.error()};
  if (const uint16_t s = mad_status(*r); s != 0) return Status(Code::kInvalidArgument, fmt::format("MAD status 0x{:04x}", s));
  auto v = mad::decode<T>(data_of(*r, mad::wire_size<T>));
  if (!v) return Status(Code::kParseError, v.error().to_string());
  return *v;
}

std::string reason(const Status& s) { return s.message().empty() ? s.to_string() : s.message(); }

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

// ---- Speed / Width checks --------------------------------------------------------------------

uint8_t top_bit(uint32_t mask) {
  uint8_t b = 0;
  for (uint32_t m = mask; m; m >>= 1) b = static_cast<uint8_t>(b == 0 ? 1 : b << 1);
  return b;
}

uint8_t widest(uint32_t mask) {
  for (uint8_t w : {fabric::width::k12x, fabric::width::k8x, fabric::width::k4x, fabric::width::k2x, fabric::width::k1x})
    if (mask & w) return w;
  return 0;
}

// ibnetdiscover's name of a lane speed.
std::string_view speed_of_lane(uint32_t mbps) {
  switch (mbps) {
    case 2500: return "SDR";
    case 5000: return "DDR";
    case 10000: return "QDR";
    case 14000: return "FDR";
    case 25000: return "EDR";
    case 50000: return "HDR";
    case 100000: return "NDR";
    default: return "???";
  }
}

void stage_speed_width(Ctx& c, StageReport& s) {
  std::map<std::pair<uint8_t, uint32_t>, size_t> rates;
  size_t checked = 0;
  for (int i : c.f.listing()) {
    for (uint8_t p = 1; p <= c.node(i).num_ports; ++p) {
      const DiscoveredPort* a = c.port(i, p);
      if (!a || !a->have_info || a->remote_node < 0) continue;
      const DiscoveredPort* b = c.port(a->remote_node, a->remote_port);
      if (!b || !b->have_info) continue;
      // Each link once: from its end with the lower (node GUID, port).
      const PortKey ka{c.node(i).guid, p}, kb{c.node(a->remote_node).guid, b->num};
      if (kb < ka) continue;
      if (a->info.port_physical_state != mad::PhysPortState::kLinkUp) continue;
      ++checked;
      const int j = a->remote_node;
      const uint8_t lanes = lanes_of(a->info.link_width_active);
      const uint32_t lane = c.lane_mbps(i, *a);
      ++rates[{a->info.link_width_active, lane}];
      // The messages are built only for a link that has something to say.
      auto link = [&] { return fmt::format("{} port {} <--> {} port {}", c.node_label(i), p, c.node_label(j), b->num); };
      auto js = [&] {
        return nlohmann::json{{"ends", {c.port_json(i, p), c.port_json(j, b->num)}},
                              {"width", fabric::width_name(a->info.link_width_active)}, {"speed", c.speed_text(i, *a)}};
      };
      const std::string_view width = fabric::width_name(a->info.link_width_active);
      if (a->info.link_width_active != b->info.link_width_active || lane != c.lane_mbps(j, *b)) {
        s.error(fmt::format("The ends disagree: {} {}{} vs {}{}", link(), width, c.speed_text(i, *a),
                            fabric::width_name(b->info.link_width_active), c.speed_text(j, *b)),
                js());
        continue;
      }
      if (c.o.min_lanes && lanes < c.o.min_lanes)
        s.error(fmt::format("Link width {} is below the expected {}x: {}", width, c.o.min_lanes, link()), js());
      if (c.o.min_lane_mbps && lane < c.o.min_lane_mbps)
        s.error(fmt::format("Link speed {} ({} a lane) is below the expected {}: {}", c.speed_text(i, *a), gbps(lane / 100),
                            gbps(c.o.min_lane_mbps / 100), link()),
                js());
      // What the two ends enable in common: a link trains to the best of it.
      const uint8_t could_w = widest(uint32_t{a->info.link_width_enabled} & b->info.link_width_enabled);
      if (could_w && lanes_of(could_w) > lanes)
        s.warn(fmt::format("Link width {} could be {} (both ends enable it): {}", width, fabric::width_name(could_w), link()), js());
      const mad::PortInfo* ca = c.cap_info(i, *a);
      const mad::PortInfo* cb = c.cap_info(j, *b);
      const bool ext = ca && cb && (ca->capability_mask & kCapHasExtSpeeds) && (cb->capability_mask & kCapHasExtSpeeds);
      const uint8_t ext_common = ext ? static_cast<uint8_t>(a->info.link_speed_ext_enabled & b->info.link_speed_ext_enabled & 0xF) : 0;
      if (ext_common) {
        const uint8_t best = top_bit(ext_common);
        if (!c.extended(i, *a) || best > a->info.link_speed_ext_active)
          s.warn(fmt::format("Link speed {} could be {} (both ends enable it): {}", c.speed_text(i, *a),
                             fabric::ext_speed_name(best), link()),
                 js());
      } else if (!c.extended(i, *a)) {
        const uint8_t best = top_bit(uint32_t{a->info.link_speed_enabled} & b->info.link_speed_enabled & 0xF);
        if (best > a->info.link_speed_active)
          s.warn(fmt::format("Link speed {} could be {} (both ends enable it): {}", c.speed_text(i, *a),
                             fabric::speed_name(best), link()),
                 js());
      }
    }
  }
  // Rates by name, from the (width, lane speed) pairs counted.
  std::map<std::string, size_t> named;
  for (const auto& [ws, n] : rates) named[std::string(fabric::width_name(ws.first)) + std::string(speed_of_lane(ws.second))] += n;
  std::string hist;
  for (const auto& [r, n] : named) hist += fmt::format("{}{} at {}", hist.empty() ? "" : ", ", n, r);
  s.info(fmt::format("{} links checked{}{}", checked, hist.empty() ? "" : ": ", hist));
  std::string expect;
  if (c.o.min_lanes) expect += fmt::format("--lw {}x", c.o.min_lanes);
  if (c.o.min_lane_mbps) expect += fmt::format("{}--ls {}", expect.empty() ? "" : " ", gbps(c.o.min_lane_mbps / 100));
  s.comment = expect;
  s.data = {{"links", checked}, {"rates", named}};
}

// ---- Partition Keys --------------------------------------------------------------------------

struct PortPKeys {
  int node;
  uint8_t port;
  std::vector<PKey> pkeys;  // the valid entries
};

Result<std::vector<PortPKeys>> stage_pkeys(Ctx& c, StageReport& s, bool verbose) {
  std::vector<PortPKeys> ports;
  std::vector<MadRequest> rs;
  std::vector<size_t> owner;
  c.for_each_active_ca_port([&](int i, const DiscoveredPort& p) {
    const size_t blocks = std::max<size_t>(1, (size_t{c.node(i).info.partition_cap} + 31) / 32);
    for (size_t b = 0; b < blocks; ++b) {
      rs.push_back(smp_get(p.base_lid, kAttrPKeyTable, static_cast<uint32_t>(b)));
      owner.push_back(ports.size());
    }
    ports.push_back({i, p.num, {}});
  });
  auto got = c.query(rs);
  if (!got) return Err{got.error()};
  std::vector<bool> failed(ports.size(), false);
  for (size_t k = 0; k < rs.size(); ++k) {
    PortPKeys& pp = ports[owner[k]];
    auto t = answer_as<mad::PKeyTable>((*got)[k]);
    if (!t) {
      if (!failed[owner[k]])
        s.warn(fmt::format("P_KeyTable block {} of {} not read: {}", rs[k].attribute_modifier, c.port_label(pp.node, pp.port),
                           reason(t.error())),
               c.port_json(pp.node, pp.port));
      failed[owner[k]] = true;
      continue;
    }
    for (PKey key : t->pkeys)
      if (key.is_valid()) pp.pkeys.push_back(key);
  }
  struct Members {
    std::vector<size_t> full, limited;
  };
  std::map<uint16_t, Members> parts;
  for (size_t k = 0; k < ports.size(); ++k) {
    const PortPKeys& pp = ports[k];
    if (pp.pkeys.empty() && !failed[k])
      s.warn(fmt::format("No valid P_Key: {}", c.port_label(pp.node, pp.port)), c.port_json(pp.node, pp.port));
    std::set<uint16_t> full, limited;
    for (PKey key : pp.pkeys) (key.is_full_member() ? full : limited).insert(key.base());
    for (uint16_t b : full) parts[b].full.push_back(k);
    for (uint16_t b : limited)
      if (!full.count(b)) parts[b].limited.push_back(k);
  }
  nlohmann::json pj = nlohmann::json::array();
  for (const auto& [base, m] : parts) {
    s.info(fmt::format("Partition 0x{:04x}: {} member ports ({} full, {} limited)", base, m.full.size() + m.limited.size(),
                       m.full.size(), m.limited.size()));
    nlohmann::json members = nlohmann::json::array();
    for (const auto* list : {&m.full, &m.limited})
      for (size_t k : *list) {
        nlohmann::json j = c.port_json(ports[k].node, ports[k].port);
        j["membership"] = list == &m.full ? "full" : "limited";
        members.push_back(j);
        if (verbose)
          s.info(fmt::format("    {} {}", c.port_label(ports[k].node, ports[k].port), list == &m.full ? "full" : "limited"));
      }
    if (m.full.empty())
      s.warn(fmt::format("Partition 0x{:04x} has no full member: its {} limited members cannot talk to each other", base,
                         m.limited.size()),
             {{"pkey", fmt::format("0x{:04x}", base)}});
    pj.push_back({{"pkey", fmt::format("0x{:04x}", base)}, {"full", m.full.size()}, {"limited", m.limited.size()},
                  {"members", std::move(members)}});
  }
  s.data = {{"ports", ports.size()}, {"partitions", pj}};
  return ports;
}

// ---- Alias GUIDs -----------------------------------------------------------------------------

Result<void> stage_alias_guids(Ctx& c, StageReport& s) {
  std::vector<MadRequest> rs;
  std::vector<std::pair<int, uint8_t>> owner;
  c.for_each_active_ca_port([&](int i, const DiscoveredPort& p) {
    const size_t blocks = std::max<size_t>(1, (size_t{p.info.guid_cap} + mad::GUIDInfo::kGuidsPerBlock - 1) / mad::GUIDInfo::kGuidsPerBlock);
    for (size_t b = 0; b < blocks; ++b) {
      rs.push_back(smp_get(p.base_lid, kAttrGuidInfo, static_cast<uint32_t>(b)));
      owner.push_back({i, p.num});
    }
  });
  auto got = c.query(rs);
  if (!got) return Err{got.error()};
  // Every GUID the fabric already uses, and whose it is.
  std::unordered_map<uint64_t, std::string> known;
  for (int i : c.f.listing()) {
    known.emplace(c.node(i).guid, "node GUID of " + c.node_label(i));
    for (const auto& p : c.node(i).ports)
      if (p) known.emplace(p->guid, fmt::format("port GUID of {} port {}", c.node_label(i), p->num));
  }
  size_t aliases = 0;
  std::set<std::pair<int, uint8_t>> ports_with;
  std::set<std::pair<int, uint8_t>> unread;
  for (size_t k = 0; k < rs.size(); ++k) {
    const auto [i, p] = owner[k];
    auto g = answer_as<mad::GUIDInfo>((*got)[k]);
    if (!g) {
      if (unread.insert({i, p}).second)
        s.warn(fmt::format("GUIDInfo of {} not read: {}", c.port_label(i, p), reason(g.error())), c.port_json(i, p));
      continue;
    }
    for (size_t e = 0; e < g->guids.size(); ++e) {
      const size_t index = rs[k].attribute_modifier * mad::GUIDInfo::kGuidsPerBlock + e;
      const uint64_t v = g->guids[e].value();
      if (index == 0 || v == 0) continue;  // entry 0 is the port GUID
      ++aliases;
      ports_with.insert({i, p});
      const std::string mine = fmt::format("alias GUID {} of {}", index, c.port_label(i, p));
      auto [it, fresh] = known.emplace(v, mine);
      if (!fresh) {
        nlohmann::json j = c.port_json(i, p);
        j["alias_guid"] = fmt::format("0x{:016x}", v);
        j["index"] = index;
        s.error(fmt::format("Duplicate GUID 0x{:016x}: {} is also the {}", v, mine, it->second), j);
      }
    }
  }
  s.info(fmt::format("{} alias GUIDs on {} of {} ports", aliases, ports_with.size(),
                     std::set<std::pair<int, uint8_t>>(owner.begin(), owner.end()).size()));
  s.data = {{"alias_guids", aliases}};
  return {};
}

// ---- IPoIB subnets ---------------------------------------------------------------------------

// ff1s:401b:<pkey>::ffff:ffff (IPv4) or ff1s:601b:<pkey>::ffff:ffff... (IPv6 all-nodes is not
// a broadcast group), RFC 4391 section 4.
bool ipoib_broadcast(const Gid& mgid) {
  const auto& r = mgid.raw();
  if (r[0] != 0xFF || (r[1] & 0xF0) != 0x10 || r[2] != 0x40 || r[3] != 0x1B) return false;
  for (size_t i = 6; i < 12; ++i)
    if (r[i] != 0) return false;
  return r[12] == 0xFF && r[13] == 0xFF && r[14] == 0xFF && r[15] == 0xFF;
}

Result<void> stage_ipoib(Ctx& c, StageReport& s, const std::vector<PortPKeys>& ports) {
  if (c.rpc.sm_lid() == 0) {
    s.error("No SA to ask for the IPoIB groups (no SM)");
    s.comment = "skipped: no SM";
    return {};
  }
  auto a = c.rpc.sa_query(kGetTable, kAttrMcMemberRecord, 0, mad::encode(mad::MCMemberRecord{}));
  ++c.mads;
  if (!a) {
    if (a.error().code() == Code::kUnavailable) return Err{a.error()};
    s.error("SA MCMemberRecord query failed: " + reason(a.error()));
    s.comment = "SA query failed";
    return {};
  }
  if (a->status != 0 && a->status != 0x0400 /* ERR_NO_RECORDS */) {
    s.error(fmt::format("SA MCMemberRecord query answered MAD status 0x{:04x}", a->status));
    return {};
  }
  std::map<uint16_t, mad::MCMemberRecord> groups;  // by P_Key base
  for (const auto& raw : a->records) {
    auto r = mad::decode<mad::MCMemberRecord>(std::span<const uint8_t>(raw.data(), std::min(raw.size(), mad::wire_size<mad::MCMemberRecord>)));
    if (!r || !ipoib_broadcast(r->mgid)) continue;
    const uint16_t base = static_cast<uint16_t>(((r->mgid.raw()[4] << 8) | r->mgid.raw()[5]) & 0x7FFF);
    groups.emplace(base, *r);
  }
  // The partitions' member ports, and what the local port can see (the SA shows a requester
  // only the groups of its own partitions).
  std::map<uint16_t, std::vector<const PortPKeys*>> members;
  std::set<uint16_t> mine;
  for (const PortPKeys& pp : ports)
    for (PKey k : pp.pkeys) {
      members[k.base()].push_back(&pp);
      if (pp.node == c.f.from_node && pp.port == c.f.from_port) mine.insert(k.base());
    }
  nlohmann::json gj = nlohmann::json::array();
  for (const auto& [base, g] : groups) {
    const uint32_t group_bw = rate_bandwidth(g.rate);
    const auto& who = members[base];
    s.info(fmt::format("Subnet: IPv4 PKey:0x{:04x} QKey:0x{:08x} MTU:{} rate:{} SL:{} MLID:0x{:04x} ({} member ports)", base,
                       g.q_key.value(), mtu_bytes(g.mtu), gbps(group_bw), g.sl, g.mlid.value(), who.size()));
    uint32_t lowest = 0;
    size_t slow = 0, small = 0;
    for (const PortPKeys* pp : who) {
      const DiscoveredPort* dp = c.port(pp->node, pp->port);
      if (!dp) continue;
      const uint32_t bw = rate_bandwidth(c.rate_code(pp->node, *dp));
      lowest = lowest == 0 ? bw : std::min(lowest, bw);
      nlohmann::json j = c.port_json(pp->node, pp->port);
      j["pkey"] = fmt::format("0x{:04x}", base);
      if (bw < group_bw) {
        ++slow;
        j["port_rate"] = gbps(bw);
        j["group_rate"] = gbps(group_bw);
        s.error(fmt::format("{} runs at {}, below the rate {} of the IPoIB group of partition 0x{:04x}: it cannot join",
                            c.port_label(pp->node, pp->port), gbps(bw), gbps(group_bw), base),
                j);
      }
      uint8_t mtu = dp->info.mtu_cap;
      if (dp->info.neighbor_mtu != 0) mtu = std::min(mtu, dp->info.neighbor_mtu);
      if (mtu < g.mtu) {
        ++small;
        j["port_mtu"] = mtu_bytes(mtu);
        j["group_mtu"] = mtu_bytes(g.mtu);
        s.error(fmt::format("{} has MTU {}, below the MTU {} of the IPoIB group of partition 0x{:04x}: it cannot join",
                            c.port_label(pp->node, pp->port), mtu_bytes(mtu), mtu_bytes(g.mtu), base),
                j);
      }
    }
    if (lowest > group_bw)
      s.info(fmt::format("  the group's rate {} is below its slowest member's {} (suboptimal)", gbps(group_bw), gbps(lowest)));
    gj.push_back({{"pkey", fmt::format("0x{:04x}", base)}, {"mgid", g.mgid.to_string()}, {"mlid", g.mlid.value()},
                  {"qkey", g.q_key.value()}, {"mtu", mtu_bytes(g.mtu)}, {"rate", gbps(group_bw)}, {"sl", g.sl},
                  {"members", who.size()}, {"slower_members", slow}, {"smaller_mtu_members", small}});
  }
  for (const auto& [base, who] : members) {
    if (groups.count(base)) continue;
    if (!mine.count(base)) {
      s.info(fmt::format("Partition 0x{:04x}: the local port is not a member, its IPoIB group cannot be checked", base));
      continue;
    }
    s.warn(fmt::format("No IPoIB broadcast group for partition 0x{:04x} ({} member ports)", base, who.size()),
           {{"pkey", fmt::format("0x{:04x}", base)}, {"members", who.size()}});
  }
  s.data = {{"groups", gj}};
  return {};
}

const char* tag(Severity s) { return s == Severity::kError ? "-E-" : s == Severity::kWarning ? "-W-" : "-I-"; }

}  // namespace

// ---- the report ------------------------------------------------------------------------------

size_t StageReport::warnings() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kWarning; }));
}
size_t StageReport::errors() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; }));
}
static void add(StageReport& s, Severity sev, std::string text, nlohmann::json j) {
  if (!j.is_object()) j = nlohmann::json::object();
  j["message"] = text;
  s.findings.push_back({sev, std::move(text), std::move(j)});
}
void StageReport::info(std::string text, nlohmann::json j) { add(*this, Severity::kInfo, std::move(text), std::move(j)); }
void StageReport::warn(std::string text, nlohmann::json j) { add(*this, Severity::kWarning, std::move(text), std::move(j)); }
void StageReport::error(std::string text, nlohmann::json j) { add(*this, Severity::kError, std::move(text), std::move(j)); }

size_t DiagReport::errors() const {
  size_t n = 0;
  for (const auto& s : stages) n += s.errors();
  return n;
}
size_t DiagReport::warnings() const {
  size_t n = 0;
  for (const auto& s : stages) n += s.warnings();
  return n;
}

std::string DiagReport::text(size_t max_lines) const {
  std::string o;
  for (const StageReport& s : stages) {
    o += "-------------------------------------------------\n" + s.name + "\n";
    size_t shown = 0, hidden = 0;
    for (const Finding& f : s.findings) {
      if (f.severity != Severity::kInfo && max_lines && shown >= max_lines) {
        ++hidden;
        continue;
      }
      if (f.severity != Severity::kInfo) ++shown;
      o += fmt::format("{} {}\n", tag(f.severity), f.text);
    }
    if (hidden) o += fmt::format("-I- ... and {} more (--max-lines 0 or --json shows them all)\n", hidden);
    if (s.errors() || s.warnings())
      o += fmt::format("{} {} finished with {} errors and {} warnings\n", s.errors() ? "-E-" : "-W-", s.name, s.errors(), s.warnings());
    else
      o += fmt::format("-I- {} finished successfully\n", s.name);
    o += "\n";
  }
  o += "-------------------------------------------------\nSummary\n";
  o += fmt::format("-I- {:<26}{:<11}{:<11}{}\n", "Stage", "Warnings", "Errors", "Comment");
  for (const StageReport& s : stages) {
    std::string line = fmt::format("-I- {:<26}{:<11}{:<11}{}", s.name, s.warnings(), s.errors(), s.comment);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o += line + "\n";
  }
  o += fmt::format("\n-I- {} errors, {} warnings; {} MADs in {:.2f} s\n", errors(), warnings(), mads, seconds);
  return o;
}

nlohmann::json DiagReport::to_json() const {
  nlohmann::json st = nlohmann::json::array(), summary = nlohmann::json::array();
  for (const StageReport& s : stages) {
    nlohmann::json msgs = nlohmann::json::array();
    for (const Finding& f : s.findings) {
      nlohmann::json j = f.json;
      j["severity"] = f.severity == Severity::kError ? "error" : f.severity == Severity::kWarning ? "warning" : "info";
      msgs.push_back(std::move(j));
    }
    st.push_back({{"stage", s.name}, {"warnings", s.warnings()}, {"errors", s.errors()}, {"comment", s.comment},
                  {"seconds", s.seconds}, {"messages", std::move(msgs)}, {"data", s.data}});
    summary.push_back({{"stage", s.name}, {"warnings", s.warnings()}, {"errors", s.errors()}, {"comment", s.comment}});
  }
  return {{"stages", std::move(st)}, {"summary", std::move(summary)}, {"errors", errors()}, {"warnings", warnings()},
          {"mads", mads}, {"seconds", seconds}};
}

Result<DiagReport> run_diagnet(MadRpc& rpc, const DiscoveredFabric& fabric, const DiagOptions& options,
                               double discovery_seconds) {
  const auto start = Clock::now();
  Ctx c{rpc, fabric, options, std::nullopt, fabric.mads};
  if (options.expected) c.expected.emplace(*options.expected);
  DiagReport r;
  auto timed = [&](const char* name, auto&& fn) -> Result<void> {
    StageReport s;
    s.name = name;
    const auto t0 = Clock::now();
    if constexpr (std::is_void_v<decltype(fn(s))>) {
      fn(s);
    } else {
      auto got = fn(s);
      if (!got) return Err{got.error()};
    }
    s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.stages.push_back(std::move(s));
    return {};
  };
  std::vector<PortPKeys> pkeys;
  SOFTIB_TRY(timed("Discovery", [&](StageReport& s) { stage_discovery(c, s, discovery_seconds); }));
  r.stages.back().seconds = discovery_seconds;
  SOFTIB_TRY(timed("Lids Check", [&](StageReport& s) { stage_lids(c, s); }));
  SOFTIB_TRY(timed("Links Check", [&](StageReport& s) { stage_links(c, s); }));
  SOFTIB_TRY(timed("Subnet Manager", [&](StageReport& s) { return stage_sm(c, s); }));
  SOFTIB_TRY(timed("Port Counters", [&](StageReport& s) { return stage_counters(c, s); }));
  SOFTIB_TRY(timed("Nodes Information", [&](StageReport& s) { stage_nodes(c, s); }));
  SOFTIB_TRY(timed("Speed / Width checks", [&](StageReport& s) { stage_speed_width(c, s); }));
  SOFTIB_TRY(timed("Partition Keys", [&](StageReport& s) -> Result<void> {
    auto got = stage_pkeys(c, s, options.verbose);
    if (!got) return Err{got.error()};
    pkeys = std::move(*got);
    return {};
  }));
  SOFTIB_TRY(timed("Alias GUIDs", [&](StageReport& s) { return stage_alias_guids(c, s); }));
  SOFTIB_TRY(timed("IPoIB subnets", [&](StageReport& s) { return stage_ipoib(c, s, pkeys); }));
  r.mads = c.mads;
  r.seconds = discovery_seconds + std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace softib::tools
