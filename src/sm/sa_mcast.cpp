// Multicast (IBA 15.2.5.17): MCMemberRecord joins (which create groups), leaves and
// queries; the groups partitions.conf defines; and the MFT port masks of every group's
// spanning tree. OpenSM's osm_sa_mcmember_record.c and osm_multicast.c are the behavioural
// reference: its validations and status codes, its "a group lives while it has a full
// member" rule and its traps 66/67.
#include <algorithm>
#include <set>

#include "base/log.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/trap_gid_details.hpp"
#include "sm/sa_internal.hpp"

namespace softib::sm {

using mad::MCMemberRecord;
using mad::Method;
using sa::Request;

namespace {

using R = MCMemberRecord;
constexpr uint64_t kMgid = sa::bit<R>("MGID");
constexpr uint64_t kPortGid = sa::bit<R>("PortGID");
constexpr uint64_t kQKey = sa::bit<R>("Q_Key");
constexpr uint64_t kMlid = sa::bit<R>("MLID");
constexpr uint64_t kMtuSelector = sa::bit<R>("MTUSelector");
constexpr uint64_t kMtu = kMtuSelector | sa::bit<R>("MTU");
constexpr uint64_t kTClass = sa::bit<R>("TClass");
constexpr uint64_t kPKey = sa::bit<R>("P_Key");
constexpr uint64_t kRateSelector = sa::bit<R>("RateSelector");
constexpr uint64_t kRate = kRateSelector | sa::bit<R>("Rate");
constexpr uint64_t kPacketLife = sa::bit<R>("PacketLifeTime");
constexpr uint64_t kSl = sa::bit<R>("SL");
constexpr uint64_t kFlowLabel = sa::bit<R>("FlowLabel");
constexpr uint64_t kHopLimit = sa::bit<R>("HopLimit");
constexpr uint64_t kScope = sa::bit<R>("Scope");
constexpr uint64_t kJoinState = sa::bit<R>("JoinState");
constexpr uint64_t kProxyJoin = sa::bit<R>("ProxyJoin");
static_assert(kJoinState == uint64_t{1} << 16 && kProxyJoin == uint64_t{1} << 17);  // IBA / OpenSM

// Join and leave name the group, the port and the membership (o15-0.1.8).
constexpr uint64_t kJoinComponents = kMgid | kPortGid | kJoinState;
// Creating a group takes its defining parameters too (OpenSM's REQUIRED_MC_CREATE_COMP_MASK).
constexpr uint64_t kCreateComponents = kJoinComponents | kQKey | kTClass | kPKey | kFlowLabel | kSl;

constexpr uint8_t kFullJoin = kJoinFull | kJoinSendOnlyFull;
constexpr uint8_t kLinkLocal = 2;

uint16_t signature(const Gid& g) { return static_cast<uint16_t>(g.raw()[2] << 8 | g.raw()[3]); }
uint8_t scope_of(const Gid& g) { return g.raw()[1] & 0x0F; }

bool has_full_member(const McGroup& g) {
  return std::any_of(g.members.begin(), g.members.end(),
                     [](const McGroup::Member& m) { return (m.join_state & kFullJoin) != 0; });
}

McGroup::Member* member_of(McGroup& g, Guid port_guid) {
  for (McGroup::Member& m : g.members)
    if (m.port_gid.interface_id() == port_guid) return &m;
  return nullptr;
}

// The group as an MCMemberRecord (selectors "exactly", as OpenSM answers).
MCMemberRecord record_of(const McGroup& g) {
  MCMemberRecord r;
  r.mgid = g.mgid;
  r.q_key = g.qkey;
  r.mlid = g.mlid;
  r.mtu_selector = sa::kExactly;
  r.mtu = g.mtu;
  r.tclass = g.tclass;
  r.pkey = g.pkey;
  r.rate_selector = sa::kExactly;
  r.rate = g.rate;
  r.packet_life_time_selector = sa::kExactly;
  r.packet_life_time = g.packet_life_time;
  r.sl = g.sl;
  r.flow_label = g.flow_label;
  r.hop_limit = g.hop_limit;
  r.scope = g.scope;
  return r;
}

// Components that must equal the group's (OpenSM's validate_other_comp_fields).
bool other_components_match(const MCMemberRecord& q, uint64_t mask, const McGroup& g) {
  if ((mask & kQKey) && q.q_key != g.qkey) return false;
  if (mask & kPKey) {
    if (!q.pkey.is_full_member() && !g.pkey.is_full_member()) return false;
    if (q.pkey.base() != g.pkey.base()) return false;
  }
  if ((mask & kTClass) && q.tclass != g.tclass) return false;
  if ((mask & kSl) && q.sl != g.sl) return false;
  if ((mask & kFlowLabel) && q.flow_label != g.flow_label) return false;
  if ((mask & kHopLimit) && q.hop_limit != g.hop_limit) return false;
  return true;
}

// The MTU and rate selectors against the group's values (OpenSM's validate_more_comp_fields).
bool selectors_match(const MCMemberRecord& q, uint64_t mask, const McGroup& g) {
  const auto check = [](uint8_t selector, int cmp) {
    switch (selector) {
      case sa::kGreaterThan: return cmp > 0;
      case sa::kLessThan: return cmp < 0;
      case sa::kExactly: return cmp == 0;
      default: return true;
    }
  };
  if ((mask & kMtu) == kMtu && !check(q.mtu_selector, g.mtu < q.mtu ? -1 : (g.mtu > q.mtu ? 1 : 0))) return false;
  if ((mask & kRate) == kRate && !check(q.rate_selector, sa::compare_rates(g.rate, q.rate))) return false;
  return true;
}

// o15-0.1.5 for an MGID a requester picked (OpenSM's validate_requested_mgid).
bool mgid_valid(const Gid& mgid) {
  if (!mgid.is_multicast()) return false;
  const uint16_t sig = signature(mgid);
  if (sig == 0x401B || sig == 0x601B) return true;  // IPoIB MGIDs (RFC 4391) follow their own format
  if ((mgid.raw()[1] & 0xE0) != 0) return false;     // reserved flag bits
  if (sig == 0xA01B && scope_of(mgid) == kLinkLocal) return false;  // SA-assigned MGIDs are never link-local
  return true;
}

}  // namespace

const McGroup* SubnetAdministrator::Impl::find_group(const Gid& mgid) const {
  for (const auto& [mlid, g] : groups)
    if (g.mgid == mgid) return &g;
  return nullptr;
}

McGroup* SubnetAdministrator::Impl::find_group(const Gid& mgid) {
  for (auto& [mlid, g] : groups)
    if (g.mgid == mgid) return &g;
  return nullptr;
}

std::optional<uint16_t> SubnetAdministrator::Impl::allocate_mlid(const sa::SaContext& ctx,
                                                                 std::optional<uint16_t> wanted) const {
  // The switches' smallest MulticastFDBCap bounds the MLIDs every switch can forward.
  uint32_t top = 0xFFFE;
  if (ctx.view().subnet != nullptr) {
    for (uint32_t i = 0; i < ctx.subnet().nodes.size(); ++i) {
      const uint16_t cap = ctx.subnet().nodes[i].sw.multicast_fdb_cap;
      if (ctx.subnet().is_switch(NodeIndex(i)) && cap != 0) top = std::min<uint32_t>(top, Lid::kMulticastBase + cap - 1u);
    }
  }
  if (wanted && *wanted >= Lid::kMulticastBase && *wanted <= top && groups.count(*wanted) == 0) return wanted;
  for (uint32_t m = Lid::kMulticastBase; m <= top; ++m)
    if (groups.count(static_cast<uint16_t>(m)) == 0) return static_cast<uint16_t>(m);
  return std::nullopt;
}

void SubnetAdministrator::Impl::group_notice(const McGroup& g, uint16_t trap, const SaView& view) {
  // Traps 66/67 (IBA 14.2.5.1): raised by the SM, the MGID in the details.
  mad::Notice n;
  n.is_generic = true;
  n.type = static_cast<uint8_t>(mad::NoticeType::kSubnetManagement);
  n.producer_type_or_vendor_id = 4;  // a class manager
  n.trap_number_or_device_id = trap;
  n.issuer_lid = view.sm_lid;
  n.set_details(mad::TrapGidDetails{g.mgid});
  if (view.subnet != nullptr && view.subnet->self.valid()) {
    const sa::SaContext ctx(view);
    n.issuer_gid = Gid(ctx.subnet_prefix(), view.subnet->topo.port({view.subnet->self, view.subnet->self_port}).guid);
  }
  report(n, view);
}

void SubnetAdministrator::Impl::mc_member_records(Request& r) {
  const auto q = mad::decode<MCMemberRecord>(r.sa.data);
  if (!q) return fail(r, mad::SaStatus::kReqInvalid);
  const uint64_t mask = r.mask();
  const bool set_or_delete = r.method() == Method::kSet || r.method() == Method::kDelete;
  if (set_or_delete && (mask & kJoinComponents) != kJoinComponents)
    return fail(r, mad::SaStatus::kReqInsufficientComponents);
  if (((mask & kRate) == kRate && !sa::rate_valid(q->rate)) || ((mask & kMtu) == kMtu && !sa::mtu_valid(q->mtu)))
    return fail(r, mad::SaStatus::kReqInvalid);
  switch (r.method()) {
    case Method::kSet: return mc_join(r, *q);
    case Method::kDelete: return mc_leave(r, *q);
    default: return mc_query(r, *q);  // Get, GetTable
  }
}

void SubnetAdministrator::Impl::mc_join(Request& r, const MCMemberRecord& q) {
  const uint64_t mask = r.mask();
  const sa::SaContext& ctx = r.ctx;
  if (q.port_gid.subnet_prefix() != ctx.subnet_prefix()) return fail(r, mad::SaStatus::kReqInvalidGid);
  if (!ctx.ready()) return fail(r, mad::SaStatus::kReqInvalid);
  const auto port = ctx.endpoint_by_guid(q.port_gid.interface_id());
  const auto requester = r.requester();
  if (!port || !requester) return fail(r, mad::SaStatus::kReqInvalid);
  // A port may join for another (a proxy) only inside a partition they share.
  const bool proxy = *port != *requester;
  if (proxy && !ctx.share_pkey(*port, *requester)) return fail(r, mad::SaStatus::kReqInvalid);
  if ((mask & kPKey) && !q.pkey.is_valid()) return fail(r, mad::SaStatus::kReqInvalid);
  const uint8_t join = q.join_state;
  if (join == 0) return fail(r, mad::SaStatus::kReqInvalid);
  const mad::PortInfo* pi = ctx.port_info(ctx.endpoint(*port).owner);

  McGroup fresh;
  McGroup* group = q.mgid.is_zero() ? nullptr : find_group(q.mgid);
  const bool create = group == nullptr;
  if (create) {
    // o15-0.1.9: only a full member creates a group, and only with its parameters.
    if ((join & kFullJoin) == 0) return fail(r, mad::SaStatus::kReqInvalid);
    if ((mask & kCreateComponents) != kCreateComponents) return fail(r, mad::SaStatus::kReqInsufficientComponents);
    fresh.mgid = q.mgid;
    if (q.mgid.is_zero()) {
      // The SA picks the MGID: ff1<scope>:a01b:<subnet prefix>:<counter> (o15-0.2.6).
      std::array<uint8_t, 16> raw{};
      raw[0] = 0xFF;
      raw[1] = static_cast<uint8_t>(0x10 | ((mask & kScope) && q.scope != 0 ? q.scope : kLinkLocal));
      raw[2] = 0xA0;
      raw[3] = 0x1B;
      for (int i = 0; i < 8; ++i) raw[static_cast<size_t>(4 + i)] = static_cast<uint8_t>(ctx.subnet_prefix() >> (56 - 8 * i));
      bool found = false;
      for (int tries = 0; tries < 1000 && !found; ++tries, ++mgid_counter) {
        for (int i = 0; i < 4; ++i) raw[static_cast<size_t>(12 + i)] = static_cast<uint8_t>(mgid_counter >> (24 - 8 * i));
        found = find_group(Gid(raw)) == nullptr;
        if (found) fresh.mgid = Gid(raw);
      }
      if (!found) return fail(r, mad::SaStatus::kNoResources);
    } else if (!mgid_valid(q.mgid)) {
      return fail(r, mad::SaStatus::kReqInvalid);
    } else if (const uint16_t sig = signature(q.mgid); sig == 0x401B || sig == 0x601B) {
      // An IPoIB group other than the broadcast group needs its partition's broadcast group,
      // and must agree with it (OpenSM's ipoib_mcgroup_creation_validation).
      std::array<uint8_t, 16> raw = ipoib_broadcast_mgid(PKey(0)).raw();
      raw[1] = static_cast<uint8_t>((raw[1] & 0xF0) | scope_of(q.mgid));
      raw[4] = q.mgid.raw()[4];
      raw[5] = q.mgid.raw()[5];
      const Gid broadcast(raw);
      if (broadcast != q.mgid) {
        const McGroup* b = find_group(broadcast);
        if (b == nullptr || !other_components_match(q, mask, *b)) return fail(r, mad::SaStatus::kReqInvalid);
      }
    }
    // MTU and rate: what the selectors ask, realizable on the joining port (OpenSM's
    // mgrp_request_is_realizable); the port's own values when not asked.
    const uint8_t port_mtu = pi != nullptr ? pi->neighbor_mtu : 0;
    const uint8_t port_rate = pi != nullptr ? ctx.rate_of(ctx.endpoint(*port).owner) : 0;
    uint8_t mtu = port_mtu != 0 ? port_mtu : sa::kMaxMtu;
    if ((mask & kMtu) == kMtu && q.mtu_selector != sa::kLargest) {
      mtu = q.mtu;
      if (q.mtu_selector == sa::kGreaterThan) {
        if (port_mtu != 0 && q.mtu >= port_mtu) return fail(r, mad::SaStatus::kReqInvalid);
        mtu = port_mtu != 0 ? port_mtu : static_cast<uint8_t>(q.mtu + 1);
      } else if (q.mtu_selector == sa::kLessThan) {
        mtu = port_mtu != 0 && q.mtu > port_mtu ? port_mtu : static_cast<uint8_t>(q.mtu - 1);
      }
      if (!sa::mtu_valid(mtu)) return fail(r, mad::SaStatus::kReqInvalid);
    }
    uint8_t rate = port_rate != 0 ? port_rate : uint8_t{18};
    if ((mask & kRate) == kRate && q.rate_selector != sa::kLargest) {
      rate = q.rate;
      if (q.rate_selector == sa::kGreaterThan) {
        if (port_rate != 0 && sa::compare_rates(q.rate, port_rate) >= 0) return fail(r, mad::SaStatus::kReqInvalid);
        rate = port_rate != 0 ? port_rate : sa::rate_above(q.rate);
      } else if (q.rate_selector == sa::kLessThan) {
        rate = port_rate != 0 && sa::compare_rates(q.rate, port_rate) > 0 ? port_rate : sa::rate_below(q.rate);
      }
      if (!sa::rate_valid(rate)) return fail(r, mad::SaStatus::kReqInvalid);
    }
    const std::optional<uint16_t> mlid = allocate_mlid(ctx, (mask & kMlid) ? std::optional<uint16_t>(q.mlid.value())
                                                                           : std::nullopt);
    if (!mlid) return fail(r, mad::SaStatus::kNoResources);
    fresh.mlid = Lid(*mlid);
    fresh.pkey = q.pkey;
    fresh.qkey = q.q_key;
    fresh.mtu = mtu;
    fresh.rate = rate;
    fresh.sl = q.sl;
    fresh.tclass = q.tclass;
    fresh.flow_label = q.flow_label;
    fresh.hop_limit = q.hop_limit;
    fresh.scope = scope_of(fresh.mgid);
    fresh.packet_life_time = (mask & kPacketLife) ? q.packet_life_time : ctx.config().subnet_timeout;
    group = &fresh;
  } else if (!other_components_match(q, mask, *group)) {
    return fail(r, mad::SaStatus::kReqInvalid);
  }
  // o15-0.2.4: the selectors fit the group and the port can carry its MTU and rate.
  if (!selectors_match(q, mask, *group)) return fail(r, mad::SaStatus::kReqInvalid);
  if (pi != nullptr && (pi->neighbor_mtu < group->mtu || sa::compare_rates(ctx.rate_of(ctx.endpoint(*port).owner), group->rate) < 0))
    return fail(r, mad::SaStatus::kReqInvalid);
  if (!ctx.has_pkey(*port, group->pkey)) return fail(r, mad::SaStatus::kReqInvalid);
  McGroup::Member* member = create ? nullptr : member_of(*group, q.port_gid.interface_id());
  // o15-0.2.1: only the port itself changes a membership it made; a proxy membership, any
  // port of the group's partition.
  if (member != nullptr && (member->proxy ? !ctx.has_pkey(*requester, group->pkey) : proxy))
    return fail(r, mad::SaStatus::kReqInvalid);

  if (create) {
    const uint16_t mlid = group->mlid.value();
    groups.emplace(mlid, std::move(fresh));
    group = &groups.at(mlid);
    log(LogLevel::kInfo, "sa", "multicast group {} created, MLID 0x{:04x}", group->mgid, mlid);
  }
  const bool had_full = has_full_member(*group);
  if (member == nullptr) {
    group->members.push_back(McGroup::Member{ctx.port_gid(*port), join, proxy});
    member = &group->members.back();
    mcast_changed = true;
  } else if ((member->join_state | join) != member->join_state) {
    member->join_state = static_cast<uint8_t>(member->join_state | join);
    mcast_changed = true;
  }
  MCMemberRecord out = record_of(*group);
  out.port_gid = member->port_gid;
  out.join_state = member->join_state;
  out.proxy_join = member->proxy;
  answer(r, std::vector<MCMemberRecord>{out});
  if (!had_full && has_full_member(*group)) group_notice(*group, 66, r.ctx.view());
}

void SubnetAdministrator::Impl::mc_leave(Request& r, const MCMemberRecord& q) {
  const sa::SaContext& ctx = r.ctx;
  if (q.port_gid.subnet_prefix() != ctx.subnet_prefix()) return fail(r, mad::SaStatus::kReqInvalidGid);
  McGroup* group = find_group(q.mgid);
  if (group == nullptr) return fail(r, mad::SaStatus::kReqInvalid);
  McGroup::Member* member = member_of(*group, q.port_gid.interface_id());
  // o15-0.1.14: the port is a member, and leaves only states it holds.
  const uint8_t join = q.join_state;
  if (member == nullptr || (join & member->join_state) == 0 || (join | member->join_state) != member->join_state)
    return fail(r, mad::SaStatus::kReqInvalid);
  const auto requester = r.requester();
  if (!requester) return fail(r, mad::SaStatus::kReqInvalid);
  if (member->proxy ? !ctx.has_pkey(*requester, group->pkey) : ctx.port_guid(*requester) != q.port_gid.interface_id())
    return fail(r, mad::SaStatus::kReqInvalid);

  member->join_state = static_cast<uint8_t>(member->join_state & ~join);
  MCMemberRecord out = record_of(*group);
  out.port_gid = member->port_gid;
  out.join_state = member->join_state;
  out.proxy_join = member->proxy;
  if (member->join_state == 0) std::erase_if(group->members, [](const McGroup::Member& m) { return m.join_state == 0; });
  mcast_changed = true;
  answer(r, std::vector<MCMemberRecord>{out});
  // A group lives while it has a full member (OpenSM); the SM's own groups stay.
  if (!has_full_member(*group)) {
    if ((join & kFullJoin) != 0) group_notice(*group, 67, r.ctx.view());  // while the group is known
    if (!group->well_known) {
      log(LogLevel::kInfo, "sa", "multicast group {} (MLID 0x{:04x}) deleted", group->mgid, group->mlid.value());
      groups.erase(group->mlid.value());
    }
  }
}

void SubnetAdministrator::Impl::mc_query(Request& r, const MCMemberRecord& q) {
  const uint64_t mask = r.mask();
  std::vector<MCMemberRecord> out;
  std::optional<uint32_t> requester;
  if (r.ctx.ready()) {
    requester = r.requester();
    if (!requester) return fail(r, mad::SaStatus::kReqInvalid);
  }
  std::vector<const McGroup*> order;
  for (const auto& [mlid, g] : groups) order.push_back(&g);
  std::sort(order.begin(), order.end(), [](const McGroup* a, const McGroup* b) { return a->mgid < b->mgid; });
  const auto state_matches = [&](uint8_t scope, uint8_t join) {
    return (!(mask & kScope) || q.scope == scope) && (!(mask & kJoinState) || q.join_state == join);
  };
  for (const McGroup* g : order) {
    if ((mask & kMgid) && q.mgid != g->mgid) continue;
    if ((mask & kMlid) && q.mlid != g->mlid) continue;
    if (requester && !r.ctx.has_pkey(*requester, g->pkey)) continue;  // its partition only
    if (!other_components_match(q, mask, *g) || !selectors_match(q, mask, *g)) continue;
    const MCMemberRecord base = record_of(*g);
    if (mask & kPortGid) {
      const auto it = std::find_if(g->members.begin(), g->members.end(), [&](const McGroup::Member& m) {
        return m.port_gid.interface_id() == q.port_gid.interface_id();
      });
      if (it == g->members.end() || !state_matches(g->scope, it->join_state)) continue;
      if ((mask & kProxyJoin) && q.proxy_join != it->proxy) continue;
      MCMemberRecord rec = base;
      rec.port_gid = it->port_gid;
      rec.join_state = it->join_state;
      rec.proxy_join = it->proxy;
      out.push_back(rec);
    } else if (r.trusted) {
      // A trusted requester sees every member.
      for (const McGroup::Member& m : g->members) {
        if (!state_matches(g->scope, m.join_state) || ((mask & kProxyJoin) && q.proxy_join != m.proxy)) continue;
        MCMemberRecord rec = base;
        rec.port_gid = m.port_gid;
        rec.join_state = m.join_state;
        rec.proxy_join = m.proxy;
        out.push_back(rec);
      }
    } else {
      uint8_t join = 0;
      for (const McGroup::Member& m : g->members) join = static_cast<uint8_t>(join | m.join_state);
      if (!state_matches(g->scope, join) || ((mask & kProxyJoin) && q.proxy_join)) continue;
      out.push_back(base);
    }
  }
  // IBA 15.2.5.17: PortGID, JoinState and ProxyJoin are zero except to a trusted requester.
  if (!r.trusted)
    for (MCMemberRecord& rec : out) {
      rec.port_gid = Gid();
      rec.join_state = 0;
      rec.proxy_join = false;
    }
  answer(r, out);
}

void SubnetAdministrator::create_partition_groups(const PartitionConfig& partitions, const SmConfig& config) {
  Impl& s = *impl_;
  std::set<Gid> named;
  const SaView none{};
  const sa::SaContext ctx(none);
  for (const Partition& p : partitions.partitions) {
    for (const McGroupSpec& spec : p.groups) {
      named.insert(spec.mgid);
      McGroup* g = s.find_group(spec.mgid);
      if (g == nullptr) {
        const auto mlid = s.allocate_mlid(ctx, std::nullopt);
        if (!mlid) {
          log(LogLevel::kWarn, "sa", "no MLID left for multicast group {} of partition {}", spec.mgid, p.name);
          continue;
        }
        McGroup fresh;
        fresh.mgid = spec.mgid;
        fresh.mlid = Lid(*mlid);
        g = &s.groups.emplace(*mlid, std::move(fresh)).first->second;
        s.mcast_changed = true;
      }
      // OpenSM's osm_prtn_add_mcgroup: full-member P_Key, PacketLifeTime = subnet_timeout,
      // HopLimit 0 on the link, any beyond it.
      g->pkey = p.pkey.as_full();
      g->qkey = spec.qkey;
      g->mtu = spec.mtu;
      g->rate = spec.rate;
      g->sl = spec.sl;
      g->tclass = spec.tclass;
      g->flow_label = spec.flow_label;
      g->scope = scope_of(spec.mgid);
      g->hop_limit = g->scope == kLinkLocal ? 0 : 0xFF;
      g->packet_life_time = config.subnet_timeout;
      g->well_known = true;
    }
  }
  for (auto it = s.groups.begin(); it != s.groups.end();) {
    McGroup& g = it->second;
    if (g.well_known && named.count(g.mgid) == 0) g.well_known = false;
    if (!g.well_known && !has_full_member(g)) {
      it = s.groups.erase(it);
      s.mcast_changed = true;
    } else {
      ++it;
    }
  }
}

// ---- MFTs --------------------------------------------------------------------------------------

std::vector<std::vector<std::array<uint64_t, 4>>> multicast_tables(const RoutingGraph& graph, const Subnet& subnet,
                                                                   const std::map<uint16_t, McGroup>& groups) {
  const size_t switches = graph.switch_count();
  std::vector<std::vector<std::array<uint64_t, 4>>> out(switches);
  if (groups.empty()) return out;
  const size_t size = size_t{groups.rbegin()->first} - Lid::kMulticastBase + 1;
  for (auto& table : out) table.assign(size, std::array<uint64_t, 4>{});

  // End ports by port GUID.
  std::map<uint64_t, uint32_t> by_guid;
  for (uint32_t e = 0; e < graph.endpoints().size(); ++e)
    by_guid.emplace(subnet.topo.port(graph.endpoints()[e].owner).guid.value(), e);

  const auto set_bit = [](std::array<uint64_t, 4>& mask, unsigned port) { mask[port / 64] |= uint64_t{1} << (port % 64); };
  std::vector<uint8_t> dist;
  for (const auto& [mlid, g] : groups) {
    if (mlid < Lid::kMulticastBase) continue;
    const size_t slot = size_t{mlid} - Lid::kMulticastBase;
    // Where the members hang off: switch, and whether the member is behind a CA link.
    std::map<SwitchIndex, bool> at;  // switch -> has a CA member (one hop more)
    std::vector<std::pair<SwitchIndex, PortNum>> receivers;
    for (const McGroup::Member& m : g.members) {
      const auto it = by_guid.find(m.port_gid.interface_id().value());
      if (it == by_guid.end()) continue;
      const Endpoint& ep = graph.endpoints()[it->second];
      if (ep.sw == kNoSwitch) continue;
      at[ep.sw] = at[ep.sw] || ep.is_ca();
      if (receives(m.join_state)) receivers.emplace_back(ep.sw, ep.port);
    }
    if (at.empty()) continue;
    // The root: the switch whose farthest member is nearest (ties: lowest index).
    std::vector<uint32_t> worst(switches, 0);
    for (const auto& [sw, behind_ca] : at) {
      switch_distances(graph, sw, dist);
      for (SwitchIndex s = 0; s < switches; ++s) {
        const uint32_t d = dist[s] == 0xFF ? 0xFFFFu : uint32_t{dist[s]} + (behind_ca ? 1u : 0u);
        worst[s] = std::max(worst[s], d);
      }
    }
    const SwitchIndex root =
        static_cast<SwitchIndex>(std::min_element(worst.begin(), worst.end()) - worst.begin());
    // Breadth-first search tree from the root: parent link of every switch.
    struct Parent {
      SwitchIndex sw = kNoSwitch;
      PortNum port = 0;       // on the parent, towards the child
      PortNum child_port = 0; // on the child, towards the parent
    };
    std::vector<Parent> parent(switches);
    std::vector<uint8_t> seen(switches, 0);
    std::vector<SwitchIndex> queue{root};
    seen[root] = 1;
    for (size_t i = 0; i < queue.size(); ++i) {
      const SwitchIndex s = queue[i];
      for (const SwitchLink& l : graph.links(s)) {
        if (seen[l.neighbor]) continue;
        seen[l.neighbor] = 1;
        parent[l.neighbor] = Parent{s, l.port, l.neighbor_port};
        queue.push_back(l.neighbor);
      }
    }
    // The tree: every member switch's path to the root.
    std::vector<uint8_t> in_tree(switches, 0);
    in_tree[root] = 1;
    for (const auto& [sw, behind_ca] : at) {
      if (!seen[sw]) continue;  // cut off from the root: unreachable for this group
      for (SwitchIndex c = sw; !in_tree[c]; c = parent[c].sw) {
        in_tree[c] = 1;
        set_bit(out[c][slot], parent[c].child_port);
        set_bit(out[parent[c].sw][slot], parent[c].port);
      }
    }
    for (const auto& [sw, port] : receivers)
      if (seen[sw]) set_bit(out[sw][slot], port);
  }
  return out;
}

}  // namespace softib::sm
