// PathRecord (IBA 15.2.5.16): paths between end ports, computed by walking the LFTs the SM
// programmed (its RoutingTables) hop by hop, so MTU and rate are the minimum over the
// ports the packets really cross, as the SM read them. OpenSM's pr_rcv_get_path_parms is
// the behavioural reference for the selectors, the P_Key and the SL.
#include <algorithm>
#include <limits>

#include "mad/path_record.hpp"
#include "sm/sa_internal.hpp"

namespace softib::sm {

using mad::Method;
using mad::PathRecord;
using sa::Request;
using sa::SaContext;

namespace {

constexpr int kMaxHops = 64;  // OpenSM refuses longer paths

// The PathRecord components the SA looks at.
constexpr uint64_t kServiceId = sa::bit<PathRecord>("ServiceID.MSB") | sa::bit<PathRecord>("ServiceID.LSB");
constexpr uint64_t kDgid = sa::bit<PathRecord>("DGID");
constexpr uint64_t kSgid = sa::bit<PathRecord>("SGID");
constexpr uint64_t kDlid = sa::bit<PathRecord>("DLID");
constexpr uint64_t kSlid = sa::bit<PathRecord>("SLID");
constexpr uint64_t kFlowLabel = sa::bit<PathRecord>("FlowLabel");
constexpr uint64_t kHopLimit = sa::bit<PathRecord>("HopLimit");
constexpr uint64_t kTClass = sa::bit<PathRecord>("TClass");
constexpr uint64_t kReversible = sa::bit<PathRecord>("Reversible");
constexpr uint64_t kNumbPath = sa::bit<PathRecord>("NumbPath");
constexpr uint64_t kPKey = sa::bit<PathRecord>("P_Key");
constexpr uint64_t kSl = sa::bit<PathRecord>("SL");
constexpr uint64_t kMtu = sa::bit<PathRecord>("MTUSelector") | sa::bit<PathRecord>("MTU");
constexpr uint64_t kRate = sa::bit<PathRecord>("RateSelector") | sa::bit<PathRecord>("Rate");
constexpr uint64_t kPacketLife =
    sa::bit<PathRecord>("PacketLifeTimeSelector") | sa::bit<PathRecord>("PacketLifeTime");
static_assert(kSgid == uint64_t{1} << 3 && kPacketLife == uint64_t{3} << 20);  // IBA table 205 / OpenSM

struct PathParams {
  uint8_t mtu = 0, rate = 0, packet_life = 0, sl = 0;
  PKey pkey;
};

// Calls visit(PortRef, physical) for every port a packet from endpoint `src` to `dlid`
// (owned by endpoint `dst`) leaves or enters, following the routing tables. False when the
// route is broken: no LFT entry, a dead end, a loop longer than kMaxHops.
template <class Visit>
bool walk(const SaContext& ctx, const RoutingTables& t, uint32_t src, Lid dlid, uint32_t dst, Visit visit) {
  const Endpoint& s = ctx.endpoint(src);
  const Endpoint& d = ctx.endpoint(dst);
  const RoutingGraph& g = ctx.graph();
  visit(s.owner, s.is_ca());
  if (src == dst) return true;  // loopback
  SwitchIndex cur = s.sw;
  if (s.is_ca()) visit(PortRef{g.node_of(cur), s.port}, true);
  for (int hops = 0; hops <= kMaxHops; ++hops) {
    if (cur >= t.lft.size() || dlid.value() >= t.lft[cur].size()) return false;
    const PortNum out = t.port(cur, dlid);
    if (out == kDropPort) return false;
    if (out == 0) {
      if (d.is_ca() || d.sw != cur) return false;
      visit(d.owner, false);
      return true;
    }
    visit(PortRef{g.node_of(cur), out}, true);
    if (d.is_ca() && d.sw == cur && d.port == out) {
      visit(d.owner, true);
      return true;
    }
    const auto links = g.links(cur);
    const auto link = std::find_if(links.begin(), links.end(), [&](const SwitchLink& l) { return l.port == out; });
    if (link == links.end()) return false;  // a CA port that is not the destination
    cur = link->neighbor;
    visit(PortRef{g.node_of(cur), link->neighbor_port}, true);
  }
  return false;
}

// Applies a selector to a value the path offers; false when the path cannot satisfy it.
// `lower` gives the value just below another (0: none). Greater-than leaves the path's
// value; less-than takes the largest value below the asked one when the path's is not
// already below; exactly pins the asked value when the path offers at least that (MTU,
// PacketLifeTime), or wants it equal (rate: OpenSM does not slow a path down).
template <class Compare, class Lower>
bool select(uint8_t selector, uint8_t required, uint8_t& value, Compare compare, Lower lower, bool pin = true) {
  switch (selector) {
    case sa::kGreaterThan:
      return compare(value, required) > 0;
    case sa::kLessThan:
      if (compare(value, required) < 0) return true;
      value = lower(required);
      return value != 0;
    case sa::kExactly:
      if (pin ? compare(value, required) < 0 : compare(value, required) != 0) return false;
      value = required;
      return true;
    default:
      return true;  // largest available: whatever the path offers
  }
}

int compare_plain(uint8_t a, uint8_t b) { return a < b ? -1 : (a > b ? 1 : 0); }
uint8_t minus_one(uint8_t v) { return v > 1 ? static_cast<uint8_t>(v - 1) : uint8_t{0}; }

std::optional<PathParams> path_params(const SaContext& ctx, const PathRecord& q, uint64_t mask, uint32_t src,
                                      Lid slid, uint32_t dst, Lid dlid) {
  const RoutingTables& tables = *ctx.view().tables;
  PathParams p;
  p.mtu = std::numeric_limits<uint8_t>::max();
  uint8_t link_rate = 0;
  std::optional<PortRef> first;
  const bool ok = walk(ctx, tables, src, dlid, dst, [&](PortRef port, bool physical) {
    const mad::PortInfo* pi = ctx.port_info(port);
    if (pi == nullptr) return;
    if (!first) first = port;
    p.mtu = std::min(p.mtu, sa::port_mtu(*pi, physical));
    // Every port on the way counts, a switch's port 0 at either end too (OpenSM's
    // pr_rcv_get_path_parms: the source port's rate, each hop's, the destination port's).
    const uint8_t r = ctx.rate_of(port);
    if (link_rate == 0 || sa::compare_rates(r, link_rate) < 0) link_rate = r;
  });
  if (!ok || !first) return std::nullopt;
  p.rate = link_rate;
  // IBA table 205: a loopback path's PacketLifeTime is 0; otherwise OpenSM hands out its
  // subnet_timeout.
  p.packet_life = src == dst ? 0 : ctx.config().subnet_timeout;

  if ((mask & kMtu) == kMtu &&
      !select(q.mtu_selector, q.mtu, p.mtu, compare_plain, minus_one))
    return std::nullopt;
  if ((mask & kRate) == kRate &&
      !select(q.rate_selector, q.rate, p.rate, sa::compare_rates, sa::rate_below, false))
    return std::nullopt;
  if ((mask & kPacketLife) == kPacketLife &&
      !select(q.packet_life_time_selector, q.packet_life_time, p.packet_life, compare_plain, minus_one))
    return std::nullopt;

  if (mask & kPKey) {
    if (!ctx.share_this_pkey(src, dst, q.pkey)) return std::nullopt;
    p.pkey = q.pkey;
  } else {
    const auto common = ctx.common_pkey(src, dst);
    if (!common) return std::nullopt;
    p.pkey = *common;
  }

  if (mask & kSl) {
    p.sl = q.sl;
  } else if (const Partition* part = ctx.partitions().find(p.pkey)) {
    p.sl = part->sl;
  }
  if (tables.vl_plan && tables.vl_plan->path_sl) {
    // The routing engine's SL keeps the fabric deadlock free: it wins, and a query that
    // asks for another SL gets no path (OpenSM's ERR 1F2A).
    const uint8_t sl = tables.vl_plan->path_sl(slid, dlid);
    if ((mask & kSl) && sl != q.sl) return std::nullopt;
    p.sl = sl;
  }
  return p;
}

struct Endpoints {
  std::optional<uint32_t> src, dst;
  mad::SaStatus status = mad::SaStatus::kOk;
};

bool link_local(const Gid& g) { return (g.subnet_prefix() >> 54) == (0xFE80000000000000ULL >> 54); }

// The ends a query names by GID and/or LID (OpenSM's osm_pr_get_end_points).
Endpoints end_points(const SaContext& ctx, const PathRecord& q, uint64_t mask) {
  Endpoints out;
  const auto by_gid = [&](const Gid& gid, std::optional<uint32_t>& e) {
    if (!link_local(gid) && gid.subnet_prefix() != ctx.subnet_prefix()) return false;  // no routers
    e = ctx.endpoint_by_guid(gid.interface_id());
    return e.has_value();
  };
  std::optional<uint32_t> src_gid, src_lid, dst_gid, dst_lid;
  if ((mask & kSgid) && !by_gid(q.sgid, src_gid)) return {{}, {}, mad::SaStatus::kReqInvalidGid};
  if (mask & kSlid) {
    src_lid = ctx.endpoint_by_lid(q.slid);
    if (!src_lid) return {{}, {}, mad::SaStatus::kNoRecords};
  }
  if ((mask & kDgid) && !by_gid(q.dgid, dst_gid)) return {{}, {}, mad::SaStatus::kReqInvalidGid};
  if (mask & kDlid) {
    dst_lid = ctx.endpoint_by_lid(q.dlid);
    if (!dst_lid) return {{}, {}, mad::SaStatus::kNoRecords};
  }
  if ((src_gid && src_lid && *src_gid != *src_lid) || (dst_gid && dst_lid && *dst_gid != *dst_lid))
    return {{}, {}, mad::SaStatus::kReqInvalid};
  out.src = src_gid ? src_gid : src_lid;
  out.dst = dst_gid ? dst_gid : dst_lid;
  return out;
}

class PathCollector {
 public:
  PathCollector(const SaContext& ctx, const PathRecord& q, uint64_t mask, Method method, uint32_t requester)
      : ctx_(ctx), q_(q), mask_(mask), requester_(requester) {
    // A Get asks for one path (IBA 1.2 erratum); NumbPath limits each pair in a GetTable.
    if (method == Method::kGet) {
      per_pair_ = 1;
      total_ = 1;
    } else if (mask & kNumbPath) {
      per_pair_ = q.numb_path;
    }
  }

  bool full() const { return records_.size() >= total_; }
  const std::vector<PathRecord>& records() const { return records_; }

  // OpenSM's order: first the LID pairs with the same offset in both ranges (preference
  // 0, the most redundant paths), then the other combinations (preference 2).
  void pair(uint32_t src, uint32_t dst) {
    if (full()) return;
    if (!ctx_.share_pkey(requester_, src) || !ctx_.share_pkey(requester_, dst) || !ctx_.share_pkey(src, dst)) return;
    const auto range = [&](uint32_t e, uint64_t component, Lid fixed) {
      if (mask_ & component) return std::pair<uint32_t, uint32_t>{fixed.value(), fixed.value()};
      const Endpoint& ep = ctx_.endpoint(e);
      return std::pair<uint32_t, uint32_t>{ep.base.value(), ep.base.value() + (1u << ep.lmc) - 1};
    };
    const auto [s_min, s_max] = range(src, kSlid, q_.slid);
    const auto [d_min, d_max] = range(dst, kDlid, q_.dlid);
    uint32_t found = 0;
    for (uint32_t s = s_min, d = d_min; s <= s_max && d <= d_max && found < per_pair_; ++s, ++d)
      found += one(src, Lid(static_cast<uint16_t>(s)), dst, Lid(static_cast<uint16_t>(d)), 0);
    for (uint32_t s = s_min; s <= s_max && found < per_pair_; ++s)
      for (uint32_t d = d_min; d <= d_max && found < per_pair_; ++d)
        if (s - s_min != d - d_min) found += one(src, Lid(static_cast<uint16_t>(s)), dst, Lid(static_cast<uint16_t>(d)), 2);
  }

 private:
  uint32_t one(uint32_t src, Lid slid, uint32_t dst, Lid dlid, uint8_t preference) {
    if (full()) return 0;
    const auto fwd = path_params(ctx_, q_, mask_, src, slid, dst, dlid);
    if (!fwd) return 0;
    const bool reversible = path_params(ctx_, q_, mask_, dst, dlid, src, slid).has_value();
    // Reversible = 0 in a query is "don't care" (IBA 15.2.5.16).
    if ((mask_ & kReversible) && q_.reversible && !reversible) return 0;
    PathRecord rec;
    if ((mask_ & kServiceId) != 0) rec.service_id = q_.service_id;
    rec.sgid = (mask_ & kSgid) ? q_.sgid : ctx_.port_gid(src);
    rec.dgid = (mask_ & kDgid) ? q_.dgid : ctx_.port_gid(dst);
    rec.slid = slid;
    rec.dlid = dlid;
    rec.hop_limit = 0;  // the subnet has no routers: the path stays local
    rec.reversible = reversible;
    rec.numb_path = 0;
    rec.pkey = fwd->pkey;
    rec.sl = fwd->sl;
    rec.mtu_selector = sa::kExactly;
    rec.mtu = fwd->mtu;
    rec.rate_selector = sa::kExactly;
    rec.rate = fwd->rate;
    rec.packet_life_time_selector = sa::kExactly;
    rec.packet_life_time = fwd->packet_life;
    rec.preference = preference;
    records_.push_back(rec);
    return 1;
  }

  const SaContext& ctx_;
  const PathRecord& q_;
  uint64_t mask_;
  uint32_t requester_;
  uint32_t per_pair_ = std::numeric_limits<uint32_t>::max();
  size_t total_ = std::numeric_limits<size_t>::max();
  std::vector<PathRecord> records_;
};

// A path to a multicast group (DGID an MGID): the group's parameters, if the query fits the
// group (OpenSM's pr_match_mgrp_attributes).
std::optional<PathRecord> multicast_path(const SaContext& ctx, const PathRecord& q, uint64_t mask, Method method,
                                         const McGroup* g) {
  if (g == nullptr) return std::nullopt;
  const auto member = [&](Guid guid) {
    return std::any_of(g->members.begin(), g->members.end(),
                       [&](const McGroup::Member& m) { return m.port_gid.interface_id() == guid; });
  };
  if ((mask & kDlid) && q.dlid != g->mlid) return std::nullopt;
  if ((mask & kSgid) && !member(q.sgid.interface_id())) return std::nullopt;
  if (mask & kSlid) {
    const auto e = ctx.ready() ? ctx.endpoint_by_lid(q.slid) : std::nullopt;
    if (!e || !member(ctx.port_guid(*e))) return std::nullopt;
  }
  if ((mask & kPKey) && q.pkey != g->pkey) return std::nullopt;
  if ((mask & kSl) && q.sl != g->sl) return std::nullopt;
  if ((mask & kNumbPath) && method != Method::kGet && q.numb_path == 0) return std::nullopt;
  if ((mask & kFlowLabel) && q.flow_label != g->flow_label) return std::nullopt;
  if ((mask & kHopLimit) && q.hop_limit != g->hop_limit) return std::nullopt;
  if ((mask & kTClass) && q.tclass != g->tclass) return std::nullopt;
  PathRecord rec = q;
  rec.dgid = g->mgid;
  rec.dlid = g->mlid;
  rec.tclass = g->tclass;
  rec.reversible = false;
  rec.numb_path = 1;
  rec.pkey = g->pkey;
  rec.mtu_selector = rec.rate_selector = rec.packet_life_time_selector = sa::kExactly;
  rec.mtu = g->mtu;
  rec.rate = g->rate;
  rec.packet_life_time = g->packet_life_time;
  rec.sl = g->sl;
  rec.qos_class = 0;
  rec.flow_label = g->flow_label;
  rec.hop_limit = g->scope == 2 ? g->hop_limit : 0xFF;  // beyond link-local scope: any hops
  return rec;
}

}  // namespace

void SubnetAdministrator::Impl::path_records(Request& r) {
  if (r.method() != Method::kGet && r.method() != Method::kGetTable)
    return fail(r, mad::MadStatus::from(mad::InvalidField::kMethodAttributeUnsupported));
  const auto decoded = mad::decode<PathRecord>(r.sa.data);
  if (!decoded) return fail(r, mad::SaStatus::kReqInvalid);
  const PathRecord& q = *decoded;
  const uint64_t mask = r.mask();
  if ((mask & kRate) == kRate && !sa::rate_valid(q.rate))
    return fail(r, mad::SaStatus::kReqInvalid);
  if ((mask & kMtu) == kMtu && !sa::mtu_valid(q.mtu))
    return fail(r, mad::SaStatus::kReqInvalid);
  if ((mask & kServiceId) != 0 && (mask & kServiceId) != kServiceId)
    return fail(r, mad::SaStatus::kReqInsufficientComponents);

  if ((mask & kDgid) && q.dgid.is_multicast()) {
    std::vector<PathRecord> out;
    if (auto rec = multicast_path(r.ctx, q, mask, r.method(), find_group(q.dgid))) out.push_back(*rec);
    return answer(r, out);
  }
  if (!r.ctx.ready() || r.ctx.view().tables == nullptr) return answer(r, std::vector<PathRecord>{});
  const auto requester = r.requester();
  if (!requester) return fail(r, mad::SaStatus::kReqInvalid);
  const Endpoints ends = end_points(r.ctx, q, mask);
  if (ends.status != mad::SaStatus::kOk) return fail(r, ends.status);

  PathCollector paths(r.ctx, q, mask, r.method(), *requester);
  const auto all = r.ctx.endpoints_by_guid();
  const std::vector<uint32_t> dsts = ends.dst ? std::vector<uint32_t>{*ends.dst} : all;
  const std::vector<uint32_t> srcs = ends.src ? std::vector<uint32_t>{*ends.src} : all;
  for (uint32_t d : dsts)
    for (uint32_t s : srcs) {
      if (paths.full()) break;
      paths.pair(s, d);
    }
  answer(r, paths.records());
}

}  // namespace softib::sm
