// diagnet's configuration stages: Speed / Width checks, Partition Keys, Alias GUIDs, IPoIB
// subnets.
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

// ---- Speed / Width checks --------------------------------------------------------------------

namespace {

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

}  // namespace

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
namespace {

bool ipoib_broadcast(const Gid& mgid) {
  const auto& r = mgid.raw();
  if (r[0] != 0xFF || (r[1] & 0xF0) != 0x10 || r[2] != 0x40 || r[3] != 0x1B) return false;
  for (size_t i = 6; i < 12; ++i)
    if (r[i] != 0) return false;
  return r[12] == 0xFF && r[13] == 0xFF && r[14] == 0xFF && r[15] == 0xFF;
}

}  // namespace

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

}  // namespace softib::tools::diag
