// The Subnet Administrator, driven directly: requests are hand-built SA MADs from a CA's
// LID, answers are what the SA sends through a queue MadPort, decoded with the mad codecs.
// The subnet is real: a generated fabric brought up by the SM in virtual time
// (SimulatedSubnet), its Subnet, RoutingGraph and RoutingTables handed to the SA.
#include <gtest/gtest.h>

#include <deque>
#include <set>

#include <fmt/format.h>

#include "fabric/generators.hpp"
#include "mad/class_port_info.hpp"
#include "mad/guid_info_record.hpp"
#include "mad/inform_info.hpp"
#include "mad/inform_info_record.hpp"
#include "mad/lft_record.hpp"
#include "mad/link_record.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/mft_record.hpp"
#include "mad/node_record.hpp"
#include "mad/notice.hpp"
#include "mad/path_record.hpp"
#include "mad/pkey_table_record.hpp"
#include "mad/port_info_record.hpp"
#include "mad/sa_mad.hpp"
#include "mad/service_record.hpp"
#include "mad/sl_to_vl_table_record.hpp"
#include "mad/sm_info_record.hpp"
#include "mad/switch_info_record.hpp"
#include "mad/trap_gid_details.hpp"
#include "mad/vl_arbitration_table_record.hpp"
#include "sm/sa.hpp"
#include "sm/sim.hpp"

namespace softib::sm {
namespace {

using mad::Method;
using mad::SaMad;
using mad::SaStatus;

// ---- harness ------------------------------------------------------------------------------------

class QueuePort final : public MadPort {
 public:
  Result<void> send(const Mad& m) override {
    sent.push_back(m);
    return {};
  }
  std::optional<Mad> receive() override { return std::nullopt; }
  Mad pop() {
    Mad m = sent.front();
    sent.pop_front();
    return m;
  }
  std::deque<Mad> sent;
};

std::unique_ptr<SimulatedSubnet> bring_up(std::string_view spec, SmConfig config) {
  config.cache_dir.clear();
  auto t = fabric::generate(spec);
  EXPECT_TRUE(t.ok()) << t.error().to_string();
  auto s = SimulatedSubnet::create(std::move(*t), config);
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  auto r = (*s)->bring_up();
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return std::move(*s);
}

template <class R>
constexpr uint64_t mask(std::initializer_list<std::string_view> names) {
  return mad::component_mask<R>(names);
}

SaStatus sa_status(const SaMad& m) { return static_cast<SaStatus>(m.header.status.class_specific()); }

struct Harness {
  explicit Harness(std::string_view spec, SmConfig config = {}, SaOptions options = {})
      : sim(bring_up(spec, config)), sa(port, clock, options) {
    const SubnetManager& sm = sim->sm();
    view.subnet = &sm.subnet();
    view.graph = sm.routing_graph();
    view.tables = sm.routing();
    view.config = &sm.config();
    view.sm_lid = sm.lid();
    for (uint32_t e = 0; e < graph().endpoints().size(); ++e) {
      (graph().endpoints()[e].is_ca() ? cas : switches).push_back(e);
      if (graph().endpoints()[e].owner == sim->sm_port()) sm_ep = e;
    }
    me = lid(cas[0]);
  }

  const RoutingGraph& graph() const { return *sim->sm().routing_graph(); }
  const Subnet& subnet() const { return sim->sm().subnet(); }
  const RoutingTables& tables() const { return *sim->sm().routing(); }
  Lid lid(uint32_t e) const { return graph().endpoints()[e].base; }
  Guid guid(uint32_t e) const { return subnet().topo.port(graph().endpoints()[e].owner).guid; }
  Gid gid(uint32_t e) const { return Gid(Gid::kDefaultSubnetPrefix, guid(e)); }

  template <class R>
  Mad make(Method method, const R& rec, uint64_t component_mask, Lid from, uint64_t sm_key = 0) {
    SaMad m;
    m.header.method = method;
    m.header.transaction_id = ++tid;
    m.header.attribute_id = static_cast<uint16_t>(mad::Layout<R>::kAttributeId);
    m.sm_key = sm_key;
    m.component_mask = component_mask;
    mad::encode(rec, wire::MutByteSpan(m.data));
    Mad out;
    mad::encode(m, wire::MutByteSpan(out.bytes));
    out.slid = from;
    out.remote_qp = Qpn(1);
    return out;
  }
  void send(const Mad& m) { sa.handle(m, view); }

  // The one MAD the SA answered with.
  SaMad reply() {
    EXPECT_EQ(port.sent.size(), 1u);
    if (port.sent.empty()) return SaMad{};
    const Mad m = port.pop();
    auto d = mad::decode<SaMad>(m.bytes);
    EXPECT_TRUE(d.ok()) << d.error().to_string();
    return d.ok() ? *d : SaMad{};
  }
  template <class R>
  SaMad call(Method method, const R& rec, uint64_t component_mask, std::optional<Lid> from = {}, uint64_t sm_key = 0) {
    send(make(method, rec, component_mask, from.value_or(me), sm_key));
    return reply();
  }

  Mad ack_for(const SaMad& segment, uint32_t seg, uint32_t window_last, mad::RmppType type = mad::RmppType::kAck,
              mad::RmppStatus status = mad::RmppStatus::kNormal) {
    SaMad a = segment;
    a.header.method = Method::kGetTable;  // the kernel's ACK flips the R bit back
    a.rmpp = mad::RmppHeader{mad::kRmppVersion, type, 0, mad::kRmppActive, status, seg, window_last};
    a.data.fill(0);
    Mad out;
    mad::encode(a, wire::MutByteSpan(out.bytes));
    out.slid = me;
    out.remote_qp = Qpn(1);
    return out;
  }

  // A GetTable, received as the kernel's RMPP receiver does: ACK at the end of every
  // window, opening `window` more segments.
  template <class R>
  std::vector<R> table(const R& rec, uint64_t component_mask, std::optional<Lid> from = {}, uint64_t sm_key = 0,
                       SaMad* first = nullptr, uint32_t window = 8) {
    const Lid requester = from.value_or(me);
    send(make(Method::kGetTable, rec, component_mask, requester, sm_key));
    std::vector<SaMad> segments;
    uint32_t window_last = 1;
    while (true) {
      EXPECT_FALSE(port.sent.empty()) << "the transfer stalled after " << segments.size() << " segments";
      if (port.sent.empty()) return {};
      const Mad m = port.pop();
      EXPECT_EQ(m.dlid, requester);
      auto d = mad::decode<SaMad>(m.bytes);
      EXPECT_TRUE(d.ok());
      if (!d.ok()) return {};
      EXPECT_EQ(d->header.method, Method::kGetTableResp);
      if (!d->rmpp.active()) {  // an error status
        if (first != nullptr) *first = *d;
        return {};
      }
      segments.push_back(*d);
      const uint32_t seg = d->rmpp.segment_number();
      if (d->rmpp.last() || seg == window_last) {
        window_last = seg + window;
        Mad ack = ack_for(*d, seg, window_last);
        ack.slid = requester;
        send(ack);
        if (d->rmpp.last()) break;
      }
    }
    EXPECT_TRUE(port.sent.empty());
    EXPECT_EQ(sa.transfers_in_progress(), 0u);
    if (first != nullptr) *first = segments.front();
    auto data = mad::sa_reassemble(segments);
    EXPECT_TRUE(data.ok()) << data.error().to_string();
    std::vector<R> out;
    if (!data.ok()) return out;
    const size_t stride = size_t{segments.front().attribute_offset} * 8;
    if (stride == 0) {
      EXPECT_TRUE(data->empty());
      return out;
    }
    EXPECT_EQ(stride, (mad::wire_size<R> + 7) / 8 * 8);
    EXPECT_EQ(data->size() % stride, 0u);
    for (size_t at = 0; at + stride <= data->size(); at += stride) {
      auto r = mad::decode<R>(wire::ByteSpan(data->data() + at, mad::wire_size<R>));
      EXPECT_TRUE(r.ok());
      if (r.ok()) out.push_back(*r);
    }
    return out;
  }

  std::unique_ptr<SimulatedSubnet> sim;
  QueuePort port;
  ManualClock clock;
  SubnetAdministrator sa;
  SaView view;
  std::vector<uint32_t> cas, switches;  // endpoints
  uint32_t sm_ep = 0;                   // the SM's port
  Lid me;
  uint64_t tid = 0x1000;
};

template <class R>
R only(const SaMad& m) {
  auto r = mad::decode<R>(wire::ByteSpan(m.data.data(), mad::wire_size<R>));
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : R{};
}

// ---- records from the subnet -------------------------------------------------------------------------

TEST(SaRecords, NodeRecordGetByLidAndTable) {
  Harness h("switch:hosts=2");
  const auto all = h.table(mad::NodeRecord{}, 0);
  ASSERT_EQ(all.size(), 3u);  // the switch and two single-port HCAs
  for (uint32_t e : h.cas) {
    mad::NodeRecord q;
    q.lid = h.lid(e);
    const SaMad m = h.call(Method::kGet, q, mask<mad::NodeRecord>({"LID"}));
    EXPECT_EQ(m.header.method, Method::kGetResp);
    EXPECT_TRUE(m.header.status.ok());
    EXPECT_EQ(m.attribute_offset, 14);  // 108 bytes padded to 112
    EXPECT_EQ(m.sm_key, 0u);
    const auto rec = only<mad::NodeRecord>(m);
    EXPECT_EQ(rec.lid, h.lid(e));
    EXPECT_EQ(rec.node_info.port_guid, h.guid(e));
    EXPECT_EQ(rec.node_info.node_type, mad::NodeType::kChannelAdapter);
  }
  mad::NodeRecord nobody;
  nobody.lid = Lid(999);
  EXPECT_EQ(sa_status(h.call(Method::kGet, nobody, mask<mad::NodeRecord>({"LID"}))), SaStatus::kNoRecords);
  EXPECT_EQ(sa_status(h.call(Method::kGet, mad::NodeRecord{}, 0)), SaStatus::kTooManyRecords);
}

TEST(SaRecords, ComponentMaskSelectsByAnyField) {
  Harness h("ft2:radix=8");
  mad::NodeRecord q;
  q.node_info.node_type = mad::NodeType::kSwitch;
  EXPECT_EQ(h.table(q, mask<mad::NodeRecord>({"NodeType"})).size(), h.switches.size());
  q.node_info.node_type = mad::NodeType::kChannelAdapter;
  EXPECT_EQ(h.table(q, mask<mad::NodeRecord>({"NodeType"})).size(), h.cas.size());
  // Two components: a CA type and one node GUID.
  q.node_info.node_guid = h.subnet().nodes[h.graph().endpoints()[h.cas[3]].owner.node.value()].info.node_guid;
  const auto one = h.table(q, mask<mad::NodeRecord>({"NodeType", "NodeGUID"}));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].lid, h.lid(h.cas[3]));
  // A value nobody has.
  q.node_info.node_type = mad::NodeType::kRouter;
  EXPECT_TRUE(h.table(q, mask<mad::NodeRecord>({"NodeType"})).empty());
}

TEST(SaRecords, PortInfoRecordHidesMKeyFromUntrusted) {
  SmConfig config;
  config.m_key = 0x1122334455667788;
  config.sm_key = 0xABCD;
  Harness h("switch:hosts=2", config);
  mad::PortInfoRecord q;
  q.endport_lid = h.lid(h.cas[1]);
  const uint64_t m = mask<mad::PortInfoRecord>({"EndportLID"});
  const auto untrusted = h.table(q, m);
  ASSERT_EQ(untrusted.size(), 1u);
  EXPECT_EQ(untrusted[0].port_info.m_key, 0u);
  EXPECT_EQ(untrusted[0].port_info.lid, h.lid(h.cas[1]));
  const auto trusted = h.table(q, m, {}, 0xABCD);
  ASSERT_EQ(trusted.size(), 1u);
  EXPECT_EQ(trusted[0].port_info.m_key, config.m_key);
  // Every port of the switch answers with the switch's LID.
  q.endport_lid = h.lid(h.switches[0]);
  const auto sw = h.table(q, m);
  const auto& read = h.subnet().nodes[h.graph().node_of(0).value()].port_read;
  EXPECT_EQ(sw.size(), static_cast<size_t>(std::count(read.begin(), read.end(), 1)));
  EXPECT_GE(sw.size(), 3u);
  for (const auto& rec : sw) EXPECT_EQ(rec.endport_lid, h.lid(h.switches[0]));
}

TEST(SaRecords, LinkRecordsComeInBothDirections) {
  Harness h("ft2:radix=8");
  const auto links = h.table(mad::LinkRecord{}, 0);
  EXPECT_EQ(links.size(), 2 * h.subnet().topo.link_count());
  std::set<std::tuple<uint16_t, uint8_t, uint16_t, uint8_t>> seen;
  for (const auto& l : links) seen.emplace(l.from_lid.value(), l.from_port, l.to_lid.value(), l.to_port);
  for (const auto& l : links) EXPECT_TRUE(seen.count({l.to_lid.value(), l.to_port, l.from_lid.value(), l.from_port}));
  mad::LinkRecord q;
  q.from_lid = h.lid(h.cas[0]);
  const auto mine = h.table(q, mask<mad::LinkRecord>({"FromLID"}));
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].to_lid, h.lid(h.switches[h.graph().endpoints()[h.cas[0]].sw]));
}

TEST(SaRecords, SwitchInfoAndLftRecordsAreWhatTheSmProgrammed) {
  Harness h("ft2:radix=8");
  EXPECT_EQ(h.table(mad::SwitchInfoRecord{}, 0).size(), h.switches.size());
  const SwitchIndex s = 2;
  mad::LinearForwardingTableRecord q;
  q.lid = h.lid(h.switches[s]);
  const auto blocks = h.table(q, mask<mad::LinearForwardingTableRecord>({"LID"}));
  const auto& lft = h.tables().lft[s];
  ASSERT_EQ(blocks.size(), (lft.size() + 63) / 64);
  for (const auto& b : blocks)
    for (size_t i = 0; i < 64; ++i) {
      const size_t lid = size_t{b.block_num} * 64 + i;
      EXPECT_EQ(b.lft.ports[i], lid < lft.size() ? lft[lid] : kDropPort) << "LID " << lid;
    }
  q.block_num = 0;
  const SaMad one = h.call(Method::kGet, q, mask<mad::LinearForwardingTableRecord>({"LID", "BlockNum"}));
  EXPECT_EQ(only<mad::LinearForwardingTableRecord>(one).lft.ports[h.lid(h.cas[0]).value()],
            h.tables().port(s, h.lid(h.cas[0])));
}

TEST(SaRecords, PKeyTableRecordsForTrustedRequestersFromPartitions) {
  SmConfig config;
  config.sm_key = 0x77;
  Harness h("switch:hosts=2", config);
  EXPECT_EQ(sa_status(h.call(Method::kGet, mad::PKeyTableRecord{}, 0)), SaStatus::kReqInvalid);
  auto parts = parse_partitions(fmt::format("Default=0x7fff : ALL=limited, SELF=full ;\n"
                                            "storage=0x0010, indx0 : 0x{:016x}=full ;\n",
                                            h.guid(h.cas[1]).value()));
  ASSERT_TRUE(parts.ok()) << parts.error().to_string();
  h.view.partitions = &*parts;
  mad::PKeyTableRecord q;
  q.lid = h.lid(h.cas[1]);
  const auto recs = h.table(q, mask<mad::PKeyTableRecord>({"LID"}), {}, 0x77);
  // Every block of the table (PartitionCap entries), the ones past the keys empty.
  const size_t cap = h.subnet().nodes[h.graph().endpoints()[h.cas[1]].owner.node.value()].info.partition_cap;
  ASSERT_EQ(recs.size(), std::max<size_t>(1, (cap + 31) / 32));
  for (size_t b = 1; b < recs.size(); ++b) EXPECT_EQ(recs[b].pkey_table, mad::PKeyTable{});
  EXPECT_EQ(recs[0].pkey_table.pkeys[0], PKey(0x8010));  // indx0
  EXPECT_EQ(recs[0].pkey_table.pkeys[1], PKey(0x7FFF));
  EXPECT_EQ(recs[0].pkey_table.pkeys[2], PKey(0));
  // The SM's own port is the default partition's full member.
  q.lid = h.sim->sm().lid();
  const auto sm = h.table(q, mask<mad::PKeyTableRecord>({"LID"}), {}, 0x77);
  ASSERT_GE(sm.size(), 1u);
  EXPECT_EQ(sm[0].pkey_table.pkeys[0], PKey(0xFFFF));
}

TEST(SaRecords, ClassPortInfo) {
  Harness h("switch:hosts=2");
  const SaMad m = h.call(Method::kGet, mad::ClassPortInfo{}, 0);
  ASSERT_TRUE(m.header.status.ok());
  const auto cpi = only<mad::ClassPortInfo>(m);
  EXPECT_EQ(cpi.class_version, 2);
  EXPECT_TRUE(cpi.capability_mask & (1u << 9));  // IsUDMulticastSupported
  // IsSubnetGetSetNoticeSupported, IsPortInfoCapMaskMatchSupported; no MultiPathRecord.
  EXPECT_EQ(cpi.capability_mask, 0x2202);
  EXPECT_EQ(cpi.capability_mask2, 0xB4C0u);
  EXPECT_EQ(cpi.resp_time_value, 16);            // 200 ms: 4.096 us * 2^16 = 268 ms
}

TEST(SaRecords, BeforeTheFirstSweepThereAreNoRecords) {
  Harness h("switch:hosts=2");
  h.view = SaView{};
  EXPECT_EQ(sa_status(h.call(Method::kGet, mad::NodeRecord{}, 0)), SaStatus::kNoRecords);
  EXPECT_TRUE(h.table(mad::PathRecord{}, 0).empty());
  EXPECT_TRUE(h.table(mad::LinkRecord{}, 0).empty());
  mad::MCMemberRecord join;
  join.mgid = *Gid::parse("ff12::1");
  join.port_gid = h.gid(h.cas[0]);
  join.join_state = kJoinFull;
  EXPECT_EQ(sa_status(h.call(Method::kSet, join, mask<mad::MCMemberRecord>({"MGID", "PortGID", "JoinState"}))),
            SaStatus::kReqInvalid);
}

TEST(SaRecords, AViewCaughtBetweenSweepsIsNoView) {
  // The graph and tables of one subnet with the Subnet of another (what an SM that has
  // started a new sweep holds): the SA must not mix them up.
  Harness h("ft2:radix=8");
  Harness other("switch:hosts=2");
  h.view.subnet = &other.subnet();
  EXPECT_TRUE(h.table(mad::PathRecord{}, 0).empty());
  EXPECT_TRUE(h.table(mad::LinearForwardingTableRecord{}, 0).empty());
  mad::NodeRecord q;
  q.lid = h.lid(h.cas[5]);
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, mask<mad::NodeRecord>({"LID"}))), SaStatus::kNoRecords);
}

TEST(SaRecords, TheSmsOwnPKeyTablesWinOverDerivedOnes) {
  SmConfig config;
  config.sm_key = 0x77;
  Harness h("switch:hosts=2", config);
  h.view.pkey_table = [](PortRef) { return std::vector<PKey>{PKey(0xFFFF), PKey(0x8123)}; };
  mad::PKeyTableRecord q;
  q.lid = h.lid(h.cas[1]);
  const auto recs = h.table(q, mask<mad::PKeyTableRecord>({"LID"}), {}, 0x77);
  // Every block of the table (PartitionCap entries), the ones past the keys empty.
  const size_t cap = h.subnet().nodes[h.graph().endpoints()[h.cas[1]].owner.node.value()].info.partition_cap;
  ASSERT_EQ(recs.size(), std::max<size_t>(1, (cap + 31) / 32));
  for (size_t b = 1; b < recs.size(); ++b) EXPECT_EQ(recs[b].pkey_table, mad::PKeyTable{});
  EXPECT_EQ(recs[0].pkey_table.pkeys[1], PKey(0x8123));
  // Block 1 exists (PartitionCap allows it) and is empty.
  q.block_num = 1;
  const auto b1 = h.table(q, mask<mad::PKeyTableRecord>({"LID", "BlockNum"}), {}, 0x77);
  ASSERT_EQ(b1.size(), 1u);
  EXPECT_EQ(b1[0].pkey_table.pkeys[0], PKey(0));
}

// ---- PathRecord ---------------------------------------------------------------------------------------

mad::PathRecord lid_pair(const Harness& h, uint32_t src, uint32_t dst) {
  mad::PathRecord q;
  q.slid = h.lid(src);
  q.dlid = h.lid(dst);
  return q;
}
constexpr uint64_t kLids = mask<mad::PathRecord>({"SLID", "DLID"});

TEST(SaPath, LidToLidOnAnEdrFatTree) {
  Harness h("ft2:radix=8");
  const uint32_t a = h.cas[0], b = h.cas.back();
  const SaMad m = h.call(Method::kGet, lid_pair(h, a, b), kLids);
  ASSERT_TRUE(m.header.status.ok()) << m.header.status.to_string();
  EXPECT_EQ(m.attribute_offset, 8);
  const auto p = only<mad::PathRecord>(m);
  EXPECT_EQ(p.sgid, h.gid(a));
  EXPECT_EQ(p.dgid, h.gid(b));
  EXPECT_EQ(p.slid, h.lid(a));
  EXPECT_EQ(p.dlid, h.lid(b));
  EXPECT_EQ(p.mtu, 4);    // 2048: every port's MTUCap
  EXPECT_EQ(p.rate, 16);  // 4x EDR = 100 Gb/s
  EXPECT_EQ(p.mtu_selector, 2);
  EXPECT_EQ(p.pkey, PKey(0xFFFF));
  EXPECT_EQ(p.sl, 0);
  EXPECT_TRUE(p.reversible);
  EXPECT_EQ(p.hop_limit, 0);
  EXPECT_EQ(p.packet_life_time, 18);  // subnet_timeout
  // To itself: loopback, PacketLifeTime 0.
  EXPECT_EQ(only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, a), kLids)).packet_life_time, 0);
  // By GID.
  mad::PathRecord q;
  q.sgid = h.gid(a);
  q.dgid = h.gid(b);
  const auto by_gid = only<mad::PathRecord>(h.call(Method::kGet, q, mask<mad::PathRecord>({"SGID", "DGID"})));
  EXPECT_EQ(by_gid.dlid, h.lid(b));
}

TEST(SaPath, MtuAndRateAreTheMinimumOverTheRoute) {
  Harness h("ft2:radix=8");
  // Two hosts on different leaves: their route crosses a leaf uplink. Slow that port down
  // in a copy of what the SM read.
  const uint32_t a = h.cas[0], b = h.cas.back();
  const Endpoint& ea = h.graph().endpoints()[a];
  const PortNum up = h.tables().port(ea.sw, h.lid(b));
  ASSERT_NE(up, ea.port);
  Subnet slow = h.subnet();
  mad::PortInfo& pi = slow.nodes[h.graph().node_of(ea.sw).value()].ports[up];
  pi.mtu_cap = 3;
  pi.link_speed_ext_active = 0;
  pi.link_speed_active = 4;  // QDR: 4x = 40 Gb/s
  h.view.subnet = &slow;
  const auto p = only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, b), kLids));
  EXPECT_EQ(p.mtu, 3);
  EXPECT_EQ(p.rate, 7);
  // A path that stays on the leaf does not cross it.
  const auto local = only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, h.cas[1]), kLids));
  EXPECT_EQ(local.mtu, 4);
  EXPECT_EQ(local.rate, 16);
  // A switch's port 0 carries 1024 (its MTUCap).
  EXPECT_EQ(only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, h.switches[ea.sw]), kLids)).mtu, 3);
}

TEST(SaPath, Selectors) {
  Harness h("switch:hosts=2");
  const auto ask = [&](const char* what, uint8_t selector, uint8_t value) -> std::optional<mad::PathRecord> {
    mad::PathRecord q = lid_pair(h, h.cas[0], h.cas[1]);
    uint64_t m = kLids;
    if (std::string_view(what) == "MTU") {
      q.mtu_selector = selector;
      q.mtu = value;
      m |= mask<mad::PathRecord>({"MTUSelector", "MTU"});
    } else if (std::string_view(what) == "Rate") {
      q.rate_selector = selector;
      q.rate = value;
      m |= mask<mad::PathRecord>({"RateSelector", "Rate"});
    } else {
      q.packet_life_time_selector = selector;
      q.packet_life_time = value;
      m |= mask<mad::PathRecord>({"PacketLifeTimeSelector", "PacketLifeTime"});
    }
    const SaMad r = h.call(Method::kGet, q, m);
    if (!r.header.status.ok()) {
      EXPECT_EQ(sa_status(r), SaStatus::kNoRecords);
      return std::nullopt;
    }
    return only<mad::PathRecord>(r);
  };
  EXPECT_FALSE(ask("MTU", 0, 4));          // greater than 2048: no
  EXPECT_EQ(ask("MTU", 0, 3)->mtu, 4);     // greater than 1024: 2048
  EXPECT_EQ(ask("MTU", 1, 4)->mtu, 3);     // less than 2048: 1024
  EXPECT_EQ(ask("MTU", 1, 5)->mtu, 4);     // less than 4096: 2048
  EXPECT_FALSE(ask("MTU", 1, 1));          // less than 256: nothing
  EXPECT_EQ(ask("MTU", 2, 2)->mtu, 2);     // exactly 512
  EXPECT_FALSE(ask("MTU", 2, 5));          // exactly 4096: no
  EXPECT_EQ(ask("MTU", 3, 1)->mtu, 4);     // largest
  EXPECT_EQ(ask("Rate", 2, 16)->rate, 16);
  EXPECT_FALSE(ask("Rate", 2, 7));         // exactly 40 Gb/s on a 100 Gb/s path: no (OpenSM)
  EXPECT_EQ(ask("Rate", 1, 16)->rate, 9);  // less than 100: 80 Gb/s
  EXPECT_FALSE(ask("Rate", 0, 16));
  EXPECT_EQ(ask("Rate", 0, 12)->rate, 16);  // greater than 56
  EXPECT_EQ(ask("PacketLifeTime", 1, 18)->packet_life_time, 17);
  EXPECT_FALSE(ask("PacketLifeTime", 0, 18));
  EXPECT_EQ(ask("PacketLifeTime", 2, 12)->packet_life_time, 12);
  // Invalid values and half a ServiceID are the requester's error.
  mad::PathRecord q = lid_pair(h, h.cas[0], h.cas[1]);
  q.mtu = 7;
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, kLids | mask<mad::PathRecord>({"MTUSelector", "MTU"}))),
            SaStatus::kReqInvalid);
  q = lid_pair(h, h.cas[0], h.cas[1]);
  q.rate = 1;
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, kLids | mask<mad::PathRecord>({"RateSelector", "Rate"}))),
            SaStatus::kReqInvalid);
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, kLids | mask<mad::PathRecord>({"ServiceID.MSB"}))),
            SaStatus::kReqInsufficientComponents);
}

TEST(SaPath, PKeyComesFromASharedPartition) {
  Harness h("switch:hosts=4");
  std::vector<uint32_t> others;
  for (uint32_t e : h.cas)
    if (e != h.sm_ep) others.push_back(e);
  ASSERT_EQ(others.size(), 3u);
  const uint32_t sm = h.sm_ep, a = others[0], b = others[1], c = others[2];
  auto parts = parse_partitions(fmt::format(
      "Default=0x7fff : ALL=limited, SELF=full ;\n"
      "storage=0x0010 : 0x{:016x}=full, 0x{:016x}=full ;\n"
      "compute=0x0020 : 0x{:016x}=limited, 0x{:016x}=limited ;\n",
      h.guid(a).value(), h.guid(b).value(), h.guid(a).value(), h.guid(c).value()));
  ASSERT_TRUE(parts.ok()) << parts.error().to_string();
  h.view.partitions = &*parts;
  const Lid from_a = h.lid(a);
  // A and B share storage as full members.
  EXPECT_EQ(only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, b), kLids, from_a)).pkey, PKey(0x8010));
  // A and C are both limited members everywhere they meet: no path.
  EXPECT_EQ(sa_status(h.call(Method::kGet, lid_pair(h, a, c), kLids, from_a)), SaStatus::kNoRecords);
  // The SM's port is the default partition's full member: everyone reaches it.
  EXPECT_EQ(only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, sm), kLids, from_a)).pkey, PKey(0x7FFF));
  EXPECT_EQ(only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, sm, c), kLids, h.lid(sm))).pkey, PKey(0xFFFF));
  // A requested P_Key must be shared.
  mad::PathRecord q = lid_pair(h, a, b);
  q.pkey = PKey(0x8010);
  const uint64_t with_pkey = kLids | mask<mad::PathRecord>({"P_Key"});
  EXPECT_TRUE(h.call(Method::kGet, q, with_pkey, from_a).header.status.ok());
  q.pkey = PKey(0x0020);
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, with_pkey, from_a)), SaStatus::kNoRecords);
  // C may not even ask about A and B: it shares nothing with them.
  EXPECT_EQ(sa_status(h.call(Method::kGet, lid_pair(h, a, b), kLids, h.lid(c))), SaStatus::kNoRecords);
  // Without partitions everyone is a full member of the default partition.
  h.view.partitions = nullptr;
  EXPECT_EQ(only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, c), kLids, from_a)).pkey, PKey(0xFFFF));
}

TEST(SaPath, SlComesFromTheRoutingEnginesVlPlan) {
  Harness h("torus:4x4,hosts=2");
  ASSERT_TRUE(h.tables().vl_plan.has_value()) << h.tables().engine;
  std::set<uint8_t> sls;
  for (uint32_t a : {h.cas[0], h.cas[5]})
    for (uint32_t b : h.cas) {
      const auto p = only<mad::PathRecord>(h.call(Method::kGet, lid_pair(h, a, b), kLids));
      EXPECT_EQ(p.sl, h.tables().vl_plan->path_sl(h.lid(a), h.lid(b)));
      sls.insert(p.sl);
      mad::PathRecord q = lid_pair(h, a, b);
      q.sl = static_cast<uint8_t>(p.sl ^ 1);
      EXPECT_EQ(sa_status(h.call(Method::kGet, q, kLids | mask<mad::PathRecord>({"SL"}))), SaStatus::kNoRecords);
    }
  EXPECT_GT(sls.size(), 1u);  // the dateline moves some paths to another SL
}

TEST(SaPath, TablesOfPathsAndTheirOrder) {
  Harness h("switch:hosts=2");
  const size_t ends = h.graph().endpoints().size();
  mad::PathRecord q;
  q.sgid = h.gid(h.cas[0]);
  const auto from_me = h.table(q, mask<mad::PathRecord>({"SGID"}));
  ASSERT_EQ(from_me.size(), ends);
  // Destinations in OpenSM's port-GUID map order: GUIDs compared in network byte order
  // (0x0000000000200000, the switch, before 0x0000000000100001, host-a).
  for (size_t i = 1; i < from_me.size(); ++i)
    EXPECT_LT(__builtin_bswap64(from_me[i - 1].dgid.interface_id().value()),
              __builtin_bswap64(from_me[i].dgid.interface_id().value()));
  EXPECT_EQ(from_me.front().dgid.interface_id(), Guid(0x200000)) << "the switch's port 0 sorts first";
  EXPECT_EQ(h.table(mad::PathRecord{}, 0).size(), ends * ends);
  q.numb_path = 0;
  EXPECT_TRUE(h.table(q, mask<mad::PathRecord>({"SGID", "NumbPath"})).empty());
}

TEST(SaPath, EveryPairOfAFatTreeInOneTable) {
  Harness h("ft2:radix=8");
  const size_t n = h.graph().endpoints().size();
  SaMad first;
  const auto all = h.table(mad::PathRecord{}, 0, {}, 0, &first, 64);
  ASSERT_EQ(all.size(), n * n);  // 1936 records: 620 segments
  std::set<std::pair<uint16_t, uint16_t>> pairs;
  for (const auto& p : all) {
    pairs.emplace(p.slid.value(), p.dlid.value());
    EXPECT_TRUE(p.reversible);
    EXPECT_EQ(p.pkey, PKey(0xFFFF));
  }
  EXPECT_EQ(pairs.size(), n * n);
}

TEST(SaPath, LmcGivesSeveralPathsPerPairMostRedundantFirst) {
  SmConfig config;
  config.lmc = 1;
  Harness h("switch:hosts=2", config);
  mad::PathRecord q;
  q.sgid = h.gid(h.cas[0]);
  q.dgid = h.gid(h.cas[1]);
  const uint64_t gids = mask<mad::PathRecord>({"SGID", "DGID"});
  const auto paths = h.table(q, gids);
  ASSERT_EQ(paths.size(), 4u);
  EXPECT_EQ(paths[0].preference, 0);
  EXPECT_EQ(paths[1].preference, 0);
  EXPECT_EQ(paths[2].preference, 2);
  EXPECT_EQ(paths[0].slid.value() + 1, paths[1].slid.value());
  EXPECT_EQ(paths[0].dlid.value() + 1, paths[1].dlid.value());
  q.numb_path = 1;
  EXPECT_EQ(h.table(q, gids | mask<mad::PathRecord>({"NumbPath"})).size(), 1u);
  EXPECT_TRUE(h.call(Method::kGet, q, gids).header.status.ok());  // a Get is one path
}

TEST(SaPath, EndPointErrors) {
  Harness h("switch:hosts=2");
  mad::PathRecord q;
  q.sgid = Gid(Gid::kDefaultSubnetPrefix, Guid(0xDEAD));
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, mask<mad::PathRecord>({"SGID"}))), SaStatus::kReqInvalidGid);
  q.sgid = Gid(0xFEC0000000000000ULL, h.guid(h.cas[0]));  // another subnet: no router
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, mask<mad::PathRecord>({"SGID"}))), SaStatus::kReqInvalidGid);
  q.slid = Lid(4000);
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, mask<mad::PathRecord>({"SLID"}))), SaStatus::kNoRecords);
  q.sgid = h.gid(h.cas[0]);
  q.slid = h.lid(h.cas[1]);
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, mask<mad::PathRecord>({"SGID", "SLID"}))), SaStatus::kReqInvalid);
}

// ---- multicast ---------------------------------------------------------------------------------------

constexpr uint64_t kCreate =
    mask<mad::MCMemberRecord>({"MGID", "PortGID", "JoinState", "Q_Key", "TClass", "P_Key", "FlowLabel", "SL"});
constexpr uint64_t kJoin = mask<mad::MCMemberRecord>({"MGID", "PortGID", "JoinState"});

mad::MCMemberRecord member(const Harness& h, uint32_t e, const Gid& mgid, uint8_t join = kJoinFull) {
  mad::MCMemberRecord r;
  r.mgid = mgid;
  r.port_gid = h.gid(e);
  r.join_state = join;
  r.q_key = QKey(0x1234);
  r.pkey = PKey(0xFFFF);
  return r;
}

const Gid kGroup = *Gid::parse("ff12:1234::1");

TEST(SaMcast, JoinCreatesTheGroupLeaveOfTheLastFullMemberDeletesIt) {
  Harness h("switch:hosts=3");
  const uint32_t a = h.cas[0], b = h.cas[1];
  SaMad m = h.call(Method::kSet, member(h, a, kGroup), kCreate, h.lid(a));
  ASSERT_TRUE(m.header.status.ok()) << m.header.status.to_string();
  EXPECT_EQ(m.header.method, Method::kGetResp);
  auto rec = only<mad::MCMemberRecord>(m);
  EXPECT_EQ(rec.mlid, Lid(0xC000));
  EXPECT_EQ(rec.mgid, kGroup);
  EXPECT_EQ(rec.join_state, kJoinFull);
  EXPECT_EQ(rec.mtu, 4);    // the port's NeighborMTU
  EXPECT_EQ(rec.rate, 16);  // the port's rate
  EXPECT_EQ(rec.q_key, QKey(0x1234));
  EXPECT_TRUE(h.sa.mcast_changed());
  h.sa.clear_mcast_changed();
  ASSERT_EQ(h.sa.groups().size(), 1u);
  // B joins as a non-member; then leaves; A's membership keeps the group.
  m = h.call(Method::kSet, member(h, b, kGroup, kJoinNon), kJoin, h.lid(b));
  ASSERT_TRUE(m.header.status.ok());
  EXPECT_EQ(only<mad::MCMemberRecord>(m).mlid, Lid(0xC000));
  EXPECT_TRUE(h.sa.mcast_changed());
  EXPECT_EQ(h.sa.groups().at(0xC000).members.size(), 2u);
  m = h.call(Method::kDelete, member(h, b, kGroup, kJoinNon), kJoin, h.lid(b));
  EXPECT_EQ(m.header.method, Method::kDeleteResp);
  EXPECT_EQ(only<mad::MCMemberRecord>(m).join_state, 0);
  EXPECT_EQ(h.sa.groups().at(0xC000).members.size(), 1u);
  // A second group gets the next MLID; the first group goes with its last full member.
  const Gid other = *Gid::parse("ff12:1234::2");
  EXPECT_EQ(only<mad::MCMemberRecord>(h.call(Method::kSet, member(h, b, other), kCreate, h.lid(b))).mlid, Lid(0xC001));
  EXPECT_TRUE(h.call(Method::kDelete, member(h, a, kGroup), kJoin, h.lid(a)).header.status.ok());
  EXPECT_EQ(h.sa.groups().count(0xC000), 0u);
  EXPECT_EQ(h.sa.groups().size(), 1u);
  // Its MLID is free again.
  EXPECT_EQ(only<mad::MCMemberRecord>(h.call(Method::kSet, member(h, a, kGroup), kCreate, h.lid(a))).mlid, Lid(0xC000));
}

TEST(SaMcast, BadJoinsGetTheirStatus) {
  Harness h("switch:hosts=3");
  const uint32_t a = h.cas[0], b = h.cas[1];
  const auto status = [&](Method method, const mad::MCMemberRecord& r, uint64_t m, uint32_t from) {
    return sa_status(h.call(method, r, m, h.lid(from)));
  };
  EXPECT_EQ(status(Method::kSet, member(h, a, kGroup, 0), kCreate, a), SaStatus::kReqInvalid);  // JoinState 0
  EXPECT_EQ(status(Method::kSet, member(h, a, kGroup, kJoinNon), kCreate, a), SaStatus::kReqInvalid);  // creates
  EXPECT_EQ(status(Method::kSet, member(h, a, kGroup), kJoin, a), SaStatus::kReqInsufficientComponents);
  EXPECT_EQ(status(Method::kSet, member(h, a, kGroup), mask<mad::MCMemberRecord>({"MGID", "PortGID"}), a),
            SaStatus::kReqInsufficientComponents);
  auto bad = member(h, a, kGroup);
  bad.pkey = PKey(0x8000);
  EXPECT_EQ(status(Method::kSet, bad, kCreate, a), SaStatus::kReqInvalid);  // an invalid P_Key
  bad = member(h, a, kGroup);
  bad.mtu = 7;
  EXPECT_EQ(status(Method::kSet, bad, kCreate | mask<mad::MCMemberRecord>({"MTUSelector", "MTU"}), a),
            SaStatus::kReqInvalid);
  bad.mtu = 5;
  bad.mtu_selector = 2;  // exactly 4096: more than the port carries
  EXPECT_EQ(status(Method::kSet, bad, kCreate | mask<mad::MCMemberRecord>({"MTUSelector", "MTU"}), a),
            SaStatus::kReqInvalid);
  bad = member(h, a, kGroup);
  bad.port_gid = Gid(0xFEC0000000000000ULL, h.guid(a));
  EXPECT_EQ(status(Method::kSet, bad, kCreate, a), SaStatus::kReqInvalidGid);
  bad.port_gid = Gid(Gid::kDefaultSubnetPrefix, Guid(0xDEAD));
  EXPECT_EQ(status(Method::kSet, bad, kCreate, a), SaStatus::kReqInvalid);  // unknown port
  bad = member(h, a, *Gid::parse("fe80::1"));
  EXPECT_EQ(status(Method::kSet, bad, kCreate, a), SaStatus::kReqInvalid);  // not a multicast GID
  EXPECT_TRUE(h.sa.groups().empty());

  ASSERT_TRUE(h.call(Method::kSet, member(h, a, kGroup), kCreate, h.lid(a)).header.status.ok());
  auto wrong = member(h, b, kGroup);
  wrong.pkey = PKey(0xFFF0);
  EXPECT_EQ(status(Method::kSet, wrong, kJoin | mask<mad::MCMemberRecord>({"P_Key"}), b), SaStatus::kReqInvalid);
  wrong = member(h, b, kGroup);
  wrong.q_key = QKey(99);
  EXPECT_EQ(status(Method::kSet, wrong, kJoin | mask<mad::MCMemberRecord>({"Q_Key"}), b), SaStatus::kReqInvalid);
  // B may not change A's membership (A joined for itself), nor leave for it.
  EXPECT_EQ(status(Method::kSet, member(h, a, kGroup, kJoinNon), kJoin, b), SaStatus::kReqInvalid);
  EXPECT_EQ(status(Method::kDelete, member(h, a, kGroup), kJoin, b), SaStatus::kReqInvalid);
  // Leaving what one does not hold.
  EXPECT_EQ(status(Method::kDelete, member(h, b, kGroup), kJoin, b), SaStatus::kReqInvalid);
  EXPECT_EQ(status(Method::kDelete, member(h, a, kGroup, kJoinNon), kJoin, a), SaStatus::kReqInvalid);
  EXPECT_EQ(status(Method::kDelete, member(h, a, *Gid::parse("ff12::9")), kJoin, a), SaStatus::kReqInvalid);
  EXPECT_EQ(status(Method::kDelete, member(h, a, kGroup), mask<mad::MCMemberRecord>({"MGID"}), a),
            SaStatus::kReqInsufficientComponents);
  // A port outside the group's partition cannot join.
  auto parts = parse_partitions(fmt::format("Default=0x7fff : ALL=full ;\nsmall=0x0010 : 0x{:016x}=full ;\n",
                                            h.guid(a).value()));
  ASSERT_TRUE(parts.ok());
  h.view.partitions = &*parts;
  auto in_small = member(h, a, *Gid::parse("ff12:1234::10"));
  in_small.pkey = PKey(0x8010);
  ASSERT_TRUE(h.call(Method::kSet, in_small, kCreate, h.lid(a)).header.status.ok());
  in_small.port_gid = h.gid(b);
  EXPECT_EQ(status(Method::kSet, in_small, kJoin, b), SaStatus::kReqInvalid);
}

TEST(SaMcast, ProxyJoinAndSaAssignedMgid) {
  Harness h("switch:hosts=3");
  const uint32_t a = h.cas[0], b = h.cas[1];
  // A joins B (a proxy join: they share the default partition).
  SaMad m = h.call(Method::kSet, member(h, b, Gid()), kCreate, h.lid(a));
  ASSERT_TRUE(m.header.status.ok()) << m.header.status.to_string();
  const auto rec = only<mad::MCMemberRecord>(m);
  EXPECT_TRUE(rec.proxy_join);
  EXPECT_EQ(rec.mgid.raw()[0], 0xFF);
  EXPECT_EQ(rec.mgid.raw()[2], 0xA0);  // signature 0xA01B: the SA picked it
  EXPECT_EQ(rec.mgid.raw()[3], 0x1B);
  // A proxy membership may be ended by any port of the group's partition.
  EXPECT_TRUE(h.call(Method::kDelete, member(h, b, rec.mgid), kJoin, h.lid(h.cas[2])).header.status.ok());
  EXPECT_TRUE(h.sa.groups().empty());
}

TEST(SaMcast, PartitionGroupsAreWellKnownAndIpoibGroupsNeedThem) {
  Harness h("switch:hosts=2");
  const uint32_t a = h.cas[1];
  auto parts = parse_partitions("Default=0x7fff, ipoib : ALL=full ;\nstorage=0x0010, ipoib, mtu=5, rate=7 : ALL=full ;\n");
  ASSERT_TRUE(parts.ok()) << parts.error().to_string();
  h.view.partitions = &*parts;
  // An IPoIB group of the partition before its broadcast group exists.
  const Gid mcast = *Gid::parse("ff12:401b:8010::1:2");
  auto join = member(h, a, mcast);
  join.pkey = PKey(0x8010);
  join.q_key = kIpoibQKey;
  EXPECT_EQ(sa_status(h.call(Method::kSet, join, kCreate, h.lid(a))), SaStatus::kReqInvalid);

  h.sa.create_partition_groups(*parts, h.sim->sm().config());
  ASSERT_EQ(h.sa.groups().size(), 2u);
  const McGroup& def = h.sa.groups().at(0xC000);
  EXPECT_EQ(def.mgid, *Gid::parse("ff12:401b:ffff::ffff:ffff"));
  const McGroup& storage = h.sa.groups().at(0xC001);
  EXPECT_EQ(storage.mgid, ipoib_broadcast_mgid(PKey(0x10)));
  EXPECT_EQ(storage.pkey, PKey(0x8010));
  EXPECT_EQ(storage.qkey, kIpoibQKey);
  EXPECT_EQ(storage.mtu, 5);
  EXPECT_EQ(storage.rate, 7);
  EXPECT_TRUE(storage.well_known);
  // Now the IPoIB group can be created (its Q_Key, P_Key, TClass, SL and FlowLabel agree
  // with the broadcast group's).
  SaMad m = h.call(Method::kSet, join, kCreate, h.lid(a));
  EXPECT_TRUE(m.header.status.ok()) << m.header.status.to_string();
  // Joining the broadcast group itself: a 2048-byte port cannot carry 4096.
  auto bcast = member(h, a, storage.mgid);
  bcast.pkey = PKey(0x8010);
  EXPECT_EQ(sa_status(h.call(Method::kSet, bcast, kJoin, h.lid(a))), SaStatus::kReqInvalid);
  bcast = member(h, a, def.mgid);
  ASSERT_TRUE(h.call(Method::kSet, bcast, kJoin, h.lid(a)).header.status.ok());
  ASSERT_TRUE(h.call(Method::kDelete, bcast, kJoin, h.lid(a)).header.status.ok());
  EXPECT_EQ(h.sa.groups().count(0xC000), 1u);  // well known: stays
  // A multicast PathRecord gives the group's parameters.
  mad::PathRecord pq;
  pq.dgid = def.mgid;
  const auto p = only<mad::PathRecord>(h.call(Method::kGet, pq, mask<mad::PathRecord>({"DGID"})));
  EXPECT_EQ(p.dlid, Lid(0xC000));
  EXPECT_EQ(p.pkey, PKey(0xFFFF));
  EXPECT_EQ(p.mtu, 4);
  EXPECT_EQ(p.rate, 3);
  EXPECT_EQ(p.numb_path, 1);
  // Reloading without storage: its broadcast group is no longer well known and goes.
  auto fewer = parse_partitions("Default=0x7fff, ipoib : ALL=full ;\n");
  ASSERT_TRUE(fewer.ok());
  h.sa.create_partition_groups(*fewer, h.sim->sm().config());
  EXPECT_EQ(h.sa.groups().count(0xC001), 0u);
}

TEST(SaMcast, QueriesHideMembersFromUntrustedRequesters) {
  SmConfig config;
  config.sm_key = 0x55;
  Harness h("switch:hosts=3", config);
  ASSERT_TRUE(h.call(Method::kSet, member(h, h.cas[0], kGroup), kCreate, h.lid(h.cas[0])).header.status.ok());
  ASSERT_TRUE(h.call(Method::kSet, member(h, h.cas[1], kGroup), kJoin, h.lid(h.cas[1])).header.status.ok());
  const auto groups = h.table(mad::MCMemberRecord{}, 0);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].mlid, Lid(0xC000));
  EXPECT_TRUE(groups[0].port_gid.is_zero());
  EXPECT_EQ(groups[0].join_state, 0);
  const auto members = h.table(mad::MCMemberRecord{}, 0, {}, 0x55);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[1].port_gid, h.gid(h.cas[1]));
  mad::MCMemberRecord q;
  q.mgid = *Gid::parse("ff12::77");
  EXPECT_EQ(sa_status(h.call(Method::kGet, q, mask<mad::MCMemberRecord>({"MGID"}))), SaStatus::kNoRecords);
}

// Walks every group's tree from each member's switch, flooding as switches do (every
// port of the mask but the one it came in on): no switch is reached twice (no loop), every
// receiving member's port is in its switch's mask and its switch is reached, and the
// switches with tree links form a tree.
void check_trees(const Harness& h, const std::vector<std::vector<std::array<uint64_t, 4>>>& mft) {
  const RoutingGraph& g = h.graph();
  const auto has = [](const std::array<uint64_t, 4>& m, unsigned p) { return (m[p / 64] >> (p % 64) & 1) != 0; };
  ASSERT_EQ(mft.size(), g.switch_count());
  for (const auto& [mlid, group] : h.sa.groups()) {
    SCOPED_TRACE(fmt::format("MLID 0x{:04x}", mlid));
    const size_t slot = mlid - 0xC000u;
    size_t tree_switches = 0, tree_links = 0;
    for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
      bool linked = false;
      for (const SwitchLink& l : g.links(s))
        if (has(mft[s][slot], l.port)) {
          linked = true;
          ++tree_links;
          EXPECT_TRUE(has(mft[l.neighbor][slot], l.neighbor_port)) << "one-way tree link";
        }
      tree_switches += linked ? 1 : 0;
    }
    if (tree_links != 0) {
      EXPECT_EQ(tree_links / 2, tree_switches - 1) << "not a tree";
    }
    std::set<uint64_t> guids;
    for (const auto& m : group.members) guids.insert(m.port_gid.interface_id().value());
    std::vector<std::pair<SwitchIndex, PortNum>> members;
    for (uint32_t e = 0; e < g.endpoints().size(); ++e) {
      if (!guids.count(h.guid(e).value())) continue;
      const auto& m = *std::find_if(group.members.begin(), group.members.end(),
                                    [&](const McGroup::Member& x) { return x.port_gid.interface_id() == h.guid(e); });
      const Endpoint& ep = g.endpoints()[e];
      EXPECT_EQ(has(mft[ep.sw][slot], ep.port), receives(m.join_state)) << "member port bit";
      members.emplace_back(ep.sw, ep.port);
    }
    for (const auto& [start, port] : members) {
      std::vector<int> reached(g.switch_count(), 0);
      std::vector<std::pair<SwitchIndex, PortNum>> queue{{start, port}};
      for (size_t i = 0; i < queue.size(); ++i) {
        const auto [s, in] = queue[i];
        ++reached[s];
        for (const SwitchLink& l : g.links(s))
          if (l.port != in && has(mft[s][slot], l.port)) queue.emplace_back(l.neighbor, l.neighbor_port);
      }
      for (SwitchIndex s = 0; s < g.switch_count(); ++s) EXPECT_LE(reached[s], 1) << "a loop through switch " << s;
      for (const auto& [sw, p] : members) EXPECT_EQ(reached[sw], 1) << "member switch " << sw << " not reached";
    }
  }
}

TEST(SaMulticastTables, TreesAreLoopFreeAndReachEveryMember) {
  for (const char* spec : {"ft2:radix=8", "torus:4x4,hosts=2", "switch:hosts=3"}) {
    SCOPED_TRACE(spec);
    Harness h(spec);
    // Group 1: every third host; group 2: two hosts, one of them send-only; group 3: a
    // switch (port 0) and one host.
    const Gid g2 = *Gid::parse("ff12:1234::2"), g3 = *Gid::parse("ff12:1234::3");
    for (size_t i = 0; i < h.cas.size(); i += 3)
      ASSERT_TRUE(h.call(Method::kSet, member(h, h.cas[i], kGroup), kCreate, h.lid(h.cas[i])).header.status.ok());
    ASSERT_TRUE(h.call(Method::kSet, member(h, h.cas[0], g2), kCreate, h.lid(h.cas[0])).header.status.ok());
    const uint32_t last = h.cas.back();
    ASSERT_TRUE(h.call(Method::kSet, member(h, last, g2, kJoinSendOnlyNon), kJoin, h.lid(last)).header.status.ok());
    const uint32_t sw = h.switches.back();
    auto joined = h.call(Method::kSet, member(h, sw, g3, kJoinFull), kCreate, h.lid(sw));
    ASSERT_TRUE(joined.header.status.ok()) << joined.header.status.to_string();
    ASSERT_TRUE(h.call(Method::kSet, member(h, h.cas[1], g3), kJoin, h.lid(h.cas[1])).header.status.ok());
    const auto mft = multicast_tables(h.graph(), h.subnet(), h.sa.groups());
    ASSERT_EQ(mft[0].size(), 3u);
    check_trees(h, mft);
    // The send-only member's switch is in the tree even though its port gets nothing.
    const SwitchIndex last_sw = h.graph().endpoints()[last].sw;
    EXPECT_FALSE(mft[last_sw][1][0] >> h.graph().endpoints()[last].port & 1);
  }
}

// ---- RMPP ---------------------------------------------------------------------------------------------

TEST(SaRmpp, GetTableIsSentInTheWindowTheAcksOpen) {
  Harness h("ft2:radix=8");
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  // 44 records of 112 bytes: 4928 bytes, 25 segments of 200.
  ASSERT_EQ(h.port.sent.size(), 1u);  // the first window is one segment
  auto first = mad::decode<SaMad>(h.port.pop().bytes);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->rmpp.first());
  EXPECT_EQ(first->rmpp.payload_length(), 25u * 220 - (25u * 200 - 4928));
  std::vector<SaMad> segs{*first};
  h.send(h.ack_for(*first, 1, 5));
  ASSERT_EQ(h.port.sent.size(), 4u);  // 2..5
  while (!h.port.sent.empty()) segs.push_back(*mad::decode<SaMad>(h.port.pop().bytes));
  h.send(h.ack_for(*first, 3, 5));  // progress, but no new window: nothing to send
  EXPECT_TRUE(h.port.sent.empty());
  h.send(h.ack_for(*first, 2, 5));  // an older ACK: ignored
  EXPECT_TRUE(h.port.sent.empty());
  h.send(h.ack_for(*first, 5, 30));
  ASSERT_EQ(h.port.sent.size(), 20u);  // 6..25
  while (!h.port.sent.empty()) segs.push_back(*mad::decode<SaMad>(h.port.pop().bytes));
  EXPECT_EQ(h.sa.transfers_in_progress(), 1u);  // until the last ACK
  h.send(h.ack_for(*first, 25, 30));
  EXPECT_EQ(h.sa.transfers_in_progress(), 0u);
  EXPECT_EQ(h.sa.counters().get(SaCounter::kRmppCompleted), 1u);
  ASSERT_EQ(segs.size(), 25u);
  for (uint32_t i = 0; i < segs.size(); ++i) EXPECT_EQ(segs[i].rmpp.segment_number(), i + 1);
  auto data = mad::sa_reassemble(segs);
  ASSERT_TRUE(data.ok()) << data.error().to_string();
  EXPECT_EQ(data->size(), 4928u);
}

TEST(SaRmpp, LostAckRetransmitsThenAborts) {
  Harness h("ft2:radix=8");
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  const SaMad first = *mad::decode<SaMad>(h.port.pop().bytes);
  h.send(h.ack_for(first, 1, 4));
  EXPECT_EQ(h.port.sent.size(), 3u);
  h.port.sent.clear();
  ASSERT_TRUE(h.sa.next_deadline().has_value());
  EXPECT_EQ(*h.sa.next_deadline(), h.clock.now() + std::chrono::seconds(2));
  h.sa.poll();  // not yet due
  EXPECT_TRUE(h.port.sent.empty());
  for (int retry = 0; retry < 3; ++retry) {
    h.clock.set(*h.sa.next_deadline());
    h.sa.poll();
    ASSERT_EQ(h.port.sent.size(), 3u) << "retry " << retry;  // segments 2..4 again
    EXPECT_EQ(mad::decode<SaMad>(h.port.sent.front().bytes)->rmpp.segment_number(), 2u);
    h.port.sent.clear();
  }
  EXPECT_EQ(h.sa.counters().get(SaCounter::kRmppRetransmitted), 9u);
  h.clock.set(*h.sa.next_deadline());
  h.sa.poll();
  const SaMad abort = h.reply();
  EXPECT_EQ(abort.rmpp.type, mad::RmppType::kAbort);
  EXPECT_EQ(abort.rmpp.status, mad::RmppStatus::kTooManyRetries);
  EXPECT_EQ(h.sa.transfers_in_progress(), 0u);
  EXPECT_FALSE(h.sa.next_deadline().has_value());
}

TEST(SaRmpp, AckAfterALossResumesFromTheLostSegment) {
  Harness h("ft2:radix=8");
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  const SaMad first = *mad::decode<SaMad>(h.port.pop().bytes);
  h.send(h.ack_for(first, 1, 6));
  h.port.sent.clear();            // 2..6 sent; say 4 was lost
  h.send(h.ack_for(first, 3, 8));  // the receiver has 1..3 and opens to 8
  ASSERT_EQ(h.port.sent.size(), 2u);  // 7, 8 are new
  h.port.sent.clear();
  h.send(h.ack_for(first, 3, 8));  // the same ACK again: 4 is missing
  ASSERT_EQ(h.port.sent.size(), 1u);
  EXPECT_EQ(mad::decode<SaMad>(h.port.pop().bytes)->rmpp.segment_number(), 4u);
}

TEST(SaRmpp, RequesterAbortAndStopEndTheTransfer) {
  Harness h("ft2:radix=8");
  for (auto type : {mad::RmppType::kAbort, mad::RmppType::kStop}) {
    h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
    const SaMad first = *mad::decode<SaMad>(h.port.pop().bytes);
    h.send(h.ack_for(first, 0, 0, type, type == mad::RmppType::kStop ? mad::RmppStatus::kResourcesExhausted
                                                                       : mad::RmppStatus::kUnspecified));
    EXPECT_EQ(h.sa.transfers_in_progress(), 0u);
    h.clock.advance(std::chrono::seconds(10));
    h.sa.poll();
    EXPECT_TRUE(h.port.sent.empty());
  }
  EXPECT_EQ(h.sa.counters().get(SaCounter::kRmppAbortedByPeer), 1u);
  EXPECT_EQ(h.sa.counters().get(SaCounter::kRmppStoppedByPeer), 1u);
}

TEST(SaRmpp, AcksThatBreakTheRulesAreAnsweredWithAbort) {
  Harness h("ft2:radix=8");
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  SaMad first = *mad::decode<SaMad>(h.port.pop().bytes);
  h.send(h.ack_for(first, 1, 0));  // NewWindowLast below the segment
  EXPECT_EQ(h.reply().rmpp.status, mad::RmppStatus::kNewWindowLastTooSmall);
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  first = *mad::decode<SaMad>(h.port.pop().bytes);
  h.send(h.ack_for(first, 9, 12));  // segment 9 was never sent (window 1)
  EXPECT_EQ(h.reply().rmpp.status, mad::RmppStatus::kSegmentNumberTooBig);
  EXPECT_EQ(h.sa.transfers_in_progress(), 0u);
  // An ACK for no transfer.
  h.send(h.ack_for(first, 1, 2));
  EXPECT_TRUE(h.port.sent.empty());
  EXPECT_EQ(h.sa.counters().get(SaCounter::kDropRmppUnknown), 1u);
}

TEST(SaRmpp, SmallAndEmptyTablesStillUseRmpp) {
  Harness h("switch:hosts=2");
  mad::NodeRecord q;
  q.lid = h.me;
  h.send(h.make(Method::kGetTable, q, mask<mad::NodeRecord>({"LID"}), h.me));
  SaMad one = h.reply();
  EXPECT_TRUE(one.rmpp.active() && one.rmpp.first() && one.rmpp.last());
  EXPECT_EQ(one.rmpp.type, mad::RmppType::kData);
  EXPECT_EQ(one.rmpp.payload_length(), 20u + 112u);
  EXPECT_EQ(h.sa.transfers_in_progress(), 1u);  // waits for the ACK of its one segment
  h.send(h.ack_for(one, 1, 1));
  EXPECT_EQ(h.sa.transfers_in_progress(), 0u);
  q.lid = Lid(3000);
  SaMad empty;
  EXPECT_TRUE(h.table(q, mask<mad::NodeRecord>({"LID"}), {}, 0, &empty).empty());
  EXPECT_EQ(empty.rmpp.payload_length(), 20u);
  EXPECT_EQ(empty.attribute_offset, 0);
  EXPECT_TRUE(empty.header.status.ok());
}

TEST(SaRmpp, SegmentBytesAreWhereTheIbaPutsThem) {
  Harness h("switch:hosts=2");
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  ASSERT_EQ(h.port.sent.size(), 1u);
  const Mad m = h.port.pop();
  const auto& b = m.bytes;
  EXPECT_EQ(m.dlid, h.me);
  EXPECT_EQ(m.remote_qp, Qpn(1));
  EXPECT_EQ(b[0], 1);     // BaseVersion
  EXPECT_EQ(b[1], 0x03);  // SubnAdm
  EXPECT_EQ(b[2], 2);     // ClassVersion
  EXPECT_EQ(b[3], 0x92);  // GetTableResp
  EXPECT_EQ(wire::load_be16(&b[16]), 0x0011);  // NodeRecord
  EXPECT_EQ(b[24], 1);                          // RMPPVersion
  EXPECT_EQ(b[25], 1);                          // DATA
  EXPECT_EQ(b[26] & 0x07, 0x03);                // First | Active: 3 records of 112 bytes take 2 segments
  EXPECT_EQ(wire::load_be32(&b[28]), 1u);       // SegmentNumber
  EXPECT_EQ(wire::load_be32(&b[32]), 2u * 220 - (400 - 3 * 112));  // PayloadLength of the transfer
  EXPECT_EQ(wire::load_be64(&b[36]), 0u);             // SM_Key
  EXPECT_EQ(wire::load_be16(&b[44]), 14);             // AttributeOffset: 112 / 8
  // The first record's LID: the first node the SM discovered.
  const Subnet& sn = h.subnet();
  const Lid first = sn.is_switch(NodeIndex(0)) ? sn.topo.port({NodeIndex(0), 0}).lid : sn.topo.port({NodeIndex(0), 1}).lid;
  EXPECT_EQ(wire::load_be16(&b[56]), first.value());
}

TEST(SaRmpp, ARepeatedRequestRestartsItsTransfer) {
  Harness h("ft2:radix=8");
  const Mad request = h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me);
  h.send(request);
  const SaMad first = *mad::decode<SaMad>(h.port.pop().bytes);
  h.send(h.ack_for(first, 1, 6));
  h.port.sent.clear();
  h.send(request);  // the requester timed out and asked again: segment 1, nothing else
  ASSERT_EQ(h.port.sent.size(), 1u);
  EXPECT_EQ(mad::decode<SaMad>(h.port.pop().bytes)->rmpp.segment_number(), 1u);
  EXPECT_EQ(h.sa.transfers_in_progress(), 1u);
}

TEST(SaRmpp, TooManyTransfersIsNoResources) {
  SaOptions options;
  options.max_transfers = 1;
  Harness h("switch:hosts=2", {}, options);
  h.send(h.make(Method::kGetTable, mad::NodeRecord{}, 0, h.me));
  h.port.sent.clear();
  EXPECT_EQ(sa_status(h.call(Method::kGetTable, mad::NodeRecord{}, 0, h.lid(h.cas[1]))), SaStatus::kNoResources);
}

// ---- malformed and unsupported ---------------------------------------------------------------------------

TEST(SaMalformed, EachCaseIsAnsweredOrDroppedAndCounted) {
  Harness h("switch:hosts=2");
  const auto& c = h.sa.counters();
  // Wrong ClassVersion: BadVersion.
  Mad m = h.make(Method::kGet, mad::NodeRecord{}, 0, h.me);
  m.bytes[2] = 1;
  h.send(m);
  SaMad r = *mad::decode<SaMad>([&] {
    Mad x = h.port.pop();
    x.bytes[2] = 2;  // to decode it as an SA MAD
    return x.bytes;
  }());
  EXPECT_EQ(r.header.status.invalid_field(), mad::InvalidField::kBadVersion);
  EXPECT_EQ(r.header.method, Method::kGetResp);
  // Wrong BaseVersion: dropped.
  m = h.make(Method::kGet, mad::NodeRecord{}, 0, h.me);
  m.bytes[0] = 2;
  h.send(m);
  EXPECT_TRUE(h.port.sent.empty());
  EXPECT_EQ(c.get(SaCounter::kDropBaseVersion), 1u);
  // An RMPP header that breaks IBA 13.6.2 (active, version 0): dropped.
  m = h.make(Method::kGet, mad::NodeRecord{}, 0, h.me);
  m.bytes[26] = 0x01;
  h.send(m);
  EXPECT_TRUE(h.port.sent.empty());
  EXPECT_EQ(c.get(SaCounter::kDropMalformed), 1u);
  // Not an SA MAD at all.
  m.bytes[1] = 0x01;
  h.send(m);
  EXPECT_EQ(c.get(SaCounter::kDropMalformed), 2u);
  // Unknown attribute; a method the attribute does not take; an unsupported method.
  m = h.make(Method::kGet, mad::NodeRecord{}, 0, h.me);
  wire::store_be16(&m.bytes[16], 0x0039);  // TraceRecord
  h.send(m);
  EXPECT_EQ(h.reply().header.status.invalid_field(), mad::InvalidField::kMethodAttributeUnsupported);
  EXPECT_EQ(h.call(Method::kSet, mad::NodeRecord{}, 0).header.status.invalid_field(),
            mad::InvalidField::kMethodAttributeUnsupported);
  EXPECT_EQ(h.call(Method::kDelete, mad::PathRecord{}, 0).header.status.invalid_field(),
            mad::InvalidField::kMethodAttributeUnsupported);
  r = h.call(Method::kGetMulti, mad::PathRecord{}, 0);
  EXPECT_EQ(r.header.status.invalid_field(), mad::InvalidField::kMethodUnsupported);
  EXPECT_EQ(r.header.method, Method::kGetMultiResp);
  // A foreign SM_Key: dropped (C15-0.1.5).
  h.send(h.make(Method::kGet, mad::NodeRecord{}, 0, h.me, 0x999));
  EXPECT_TRUE(h.port.sent.empty());
  EXPECT_EQ(c.get(SaCounter::kDropSmKey), 1u);
  // A response nobody asked for.
  h.send(h.make(Method::kGetResp, mad::NodeRecord{}, 0, h.me));
  EXPECT_TRUE(h.port.sent.empty());
  EXPECT_EQ(c.get(SaCounter::kDropResponse), 1u);
  // A request in several RMPP segments: refused with ABORT.
  m = h.make(Method::kSet, mad::ServiceRecord{}, 0, h.me);
  auto seg = *mad::decode<SaMad>(m.bytes);
  seg.rmpp = mad::RmppHeader{mad::kRmppVersion, mad::RmppType::kData, 0, mad::kRmppActive | mad::kRmppFirst,
                             mad::RmppStatus::kNormal, 1, 400};
  mad::encode(seg, wire::MutByteSpan(m.bytes));
  h.send(m);
  EXPECT_EQ(h.reply().rmpp.type, mad::RmppType::kAbort);
  EXPECT_EQ(c.get(SaCounter::kDropRmppRequest), 1u);
  EXPECT_EQ(c.get(SaCounter::kReceived), 11u);
  EXPECT_EQ(c.get(SaCounter::kErrorStatus), 5u);
}

// ---- services, subscriptions, reports ------------------------------------------------------------------

mad::ServiceRecord service(const Harness& h, uint64_t id, std::string_view name) {
  mad::ServiceRecord s;
  s.service_id = id;
  s.service_gid = h.gid(h.cas[1]);
  for (size_t i = 0; i < name.size(); ++i) s.service_name[i] = static_cast<uint8_t>(name[i]);
  s.service_key[0] = 0x5A;
  s.service_data32[1] = 0xDEADBEEF;
  return s;
}
constexpr uint64_t kServiceRid = mask<mad::ServiceRecord>({"ServiceID", "ServiceGID"});

TEST(SaServices, RegisterFindAndRemove) {
  SmConfig config;
  config.sm_key = 0x42;
  Harness h("switch:hosts=2", config);
  const Lid b = h.lid(h.cas[1]);
  SaMad r = h.call(Method::kSet, service(h, 0x100, "storage"), kServiceRid, b);
  ASSERT_TRUE(r.header.status.ok()) << r.header.status.to_string();
  EXPECT_EQ(only<mad::ServiceRecord>(r).service_lease, 0xFFFFFFFFu);  // no lease given: forever
  EXPECT_EQ(only<mad::ServiceRecord>(r).service_key[0], 0);            // hidden from the untrusted
  ASSERT_TRUE(h.call(Method::kSet, service(h, 0x200, "compute"), kServiceRid, b).header.status.ok());
  ASSERT_TRUE(h.call(Method::kSet, service(h, 0x100, "storage"), kServiceRid, b).header.status.ok());  // update
  EXPECT_EQ(h.table(mad::ServiceRecord{}, 0).size(), 2u);
  const auto by_name = h.table(service(h, 0, "compute"), mask<mad::ServiceRecord>({"ServiceName"}));
  ASSERT_EQ(by_name.size(), 1u);
  EXPECT_EQ(by_name[0].service_id, 0x200u);
  EXPECT_EQ(by_name[0].service_data32[1], 0xDEADBEEFu);
  mad::ServiceRecord by_data;
  by_data.service_data32[1] = 0xDEADBEEF;
  EXPECT_EQ(h.table(by_data, mask<mad::ServiceRecord>({"ServiceData32.2"})).size(), 2u);
  const auto trusted = h.table(by_data, mask<mad::ServiceRecord>({"ServiceData32.2"}), {}, 0x42);
  EXPECT_EQ(trusted[0].service_key[0], 0x5A);
  r = h.call(Method::kDelete, service(h, 0x100, "storage"), kServiceRid, b);
  EXPECT_EQ(r.header.method, Method::kDeleteResp);
  EXPECT_EQ(only<mad::ServiceRecord>(r).service_id, 0x100u);
  EXPECT_EQ(sa_status(h.call(Method::kDelete, service(h, 0x100, "storage"), kServiceRid, b)), SaStatus::kNoRecords);
  EXPECT_EQ(sa_status(h.call(Method::kSet, service(h, 0x300, "x"), mask<mad::ServiceRecord>({"ServiceID"}), b)),
            SaStatus::kReqInvalid);
}

TEST(SaServices, LeasesExpire) {
  Harness h("switch:hosts=2");
  auto s = service(h, 0x100, "short");
  s.service_lease = 10;
  ASSERT_TRUE(h.call(Method::kSet, s, kServiceRid | mask<mad::ServiceRecord>({"ServiceLease"})).header.status.ok());
  ASSERT_TRUE(h.sa.next_deadline().has_value());
  EXPECT_EQ(*h.sa.next_deadline(), h.clock.now() + std::chrono::seconds(10));
  h.clock.advance(std::chrono::seconds(4));
  const auto left = h.table(mad::ServiceRecord{}, 0);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].service_lease, 6u);
  h.clock.advance(std::chrono::seconds(6));
  h.sa.poll();
  EXPECT_TRUE(h.table(mad::ServiceRecord{}, 0).empty());
  EXPECT_FALSE(h.sa.next_deadline().has_value());
}

mad::InformInfo subscription(uint16_t trap, uint8_t subscribe = 1) {
  mad::InformInfo i;
  i.lid_range_begin = Lid(0xFFFF);
  i.is_generic = 1;
  i.subscribe = subscribe;
  i.type = 0xFFFF;
  i.trap_number_or_device_id = trap;
  i.producer_type_or_vendor_id = 0xFFFFFF;
  return i;
}

mad::Notice trap128(const Harness& h) {
  mad::Notice n;
  n.is_generic = true;
  n.type = 1;
  n.producer_type_or_vendor_id = 2;  // a switch
  n.trap_number_or_device_id = 128;
  n.issuer_lid = h.lid(h.switches[0]);
  n.issuer_gid = h.gid(h.switches[0]);
  return n;
}

TEST(SaServices, SubscribersGetReportsAndAcknowledgeThem) {
  Harness h("switch:hosts=2");
  const Lid b = h.lid(h.cas[1]);
  SaMad r = h.call(Method::kSet, subscription(128), 0, b);
  ASSERT_TRUE(r.header.status.ok()) << r.header.status.to_string();
  EXPECT_EQ(r.header.method, Method::kGetResp);
  ASSERT_TRUE(h.call(Method::kSet, subscription(64), 0, h.me).header.status.ok());

  const mad::Notice n = trap128(h);
  h.sa.report(n, h.view);
  ASSERT_EQ(h.port.sent.size(), 1u);  // only B asked for trap 128
  const Mad sent = h.port.pop();
  EXPECT_EQ(sent.dlid, b);
  EXPECT_EQ(sent.remote_qp, Qpn(1));
  const SaMad report = *mad::decode<SaMad>(sent.bytes);
  EXPECT_EQ(report.header.method, Method::kReport);
  EXPECT_EQ(report.header.attribute_id, 0x0002);
  EXPECT_EQ(*mad::decode<mad::Notice>(report.data), n);
  // The ReportResp ends it: no retry.
  SaMad resp = report;
  resp.header.method = Method::kReportResp;
  Mad back;
  mad::encode(resp, wire::MutByteSpan(back.bytes));
  back.slid = b;
  back.remote_qp = Qpn(1);
  h.send(back);
  EXPECT_EQ(h.sa.counters().get(SaCounter::kReportsAcknowledged), 1u);
  EXPECT_FALSE(h.sa.next_deadline().has_value());

  // Unanswered: sent again after the transaction timeout, transaction_retries times.
  h.sa.report(n, h.view);
  h.port.sent.clear();
  for (int i = 0; i < 3; ++i) {
    h.clock.set(*h.sa.next_deadline());
    h.sa.poll();
    EXPECT_EQ(h.port.sent.size(), 1u);
    h.port.sent.clear();
  }
  h.clock.set(*h.sa.next_deadline());
  h.sa.poll();
  EXPECT_TRUE(h.port.sent.empty());
  EXPECT_EQ(h.sa.counters().get(SaCounter::kReportsAbandoned), 1u);

  // Unsubscribed: nothing more; unsubscribing again is an error with Subscribe 0.
  ASSERT_TRUE(h.call(Method::kSet, subscription(128, 0), 0, b).header.status.ok());
  h.sa.report(n, h.view);
  EXPECT_TRUE(h.port.sent.empty());
  r = h.call(Method::kSet, subscription(128, 0), 0, b);
  EXPECT_EQ(sa_status(r), SaStatus::kReqInvalid);
  EXPECT_EQ(only<mad::InformInfo>(r).subscribe, 0);
}

TEST(SaServices, SubscriptionRules) {
  Harness h("switch:hosts=2");
  // Security traps need a trusted requester; InformInfo is only Set.
  EXPECT_EQ(sa_status(h.call(Method::kSet, subscription(257), 0)), SaStatus::kReqInvalid);
  EXPECT_EQ(h.call(Method::kGet, subscription(128), 0).header.status.invalid_field(),
            mad::InvalidField::kMethodAttributeUnsupported);
  // Traps 66/67 for groups: the subscriber hears of the groups of its partitions.
  ASSERT_TRUE(h.call(Method::kSet, subscription(0xFFFF), 0).header.status.ok());  // every trap
  const uint32_t b = h.cas[1];
  h.send(h.make(Method::kSet, member(h, b, kGroup), kCreate, h.lid(b)));
  ASSERT_EQ(h.port.sent.size(), 2u);  // the answer, then the Report
  EXPECT_TRUE(mad::decode<SaMad>(h.port.pop().bytes)->header.status.ok());
  SaMad report = *mad::decode<SaMad>(h.port.pop().bytes);
  auto notice = *mad::decode<mad::Notice>(report.data);
  EXPECT_EQ(notice.trap_number_or_device_id, 66);
  EXPECT_EQ(notice.details<mad::TrapGidDetails>()->gid, kGroup);
  EXPECT_EQ(notice.issuer_lid, h.sim->sm().lid());
  h.send(h.make(Method::kDelete, member(h, b, kGroup), kJoin, h.lid(b)));
  ASSERT_EQ(h.port.sent.size(), 2u);
  EXPECT_EQ(mad::decode<SaMad>(h.port.pop().bytes)->header.method, Method::kDeleteResp);
  notice = *mad::decode<mad::Notice>(mad::decode<SaMad>(h.port.pop().bytes)->data);
  EXPECT_EQ(notice.trap_number_or_device_id, 67);
}

TEST(SaServices, LidRangeAndGidSubscriptions) {
  Harness h("ft2:radix=8");
  const uint32_t s0 = h.switches[0], s1 = h.switches[1];
  mad::InformInfo range = subscription(128);
  range.lid_range_begin = h.lid(s0);
  range.lid_range_end = h.lid(s0);
  ASSERT_TRUE(h.call(Method::kSet, range, 0).header.status.ok());
  mad::Notice n = trap128(h);
  h.sa.report(n, h.view);
  EXPECT_EQ(h.port.sent.size(), 1u);
  h.port.sent.clear();
  n.issuer_lid = h.lid(s1);
  n.issuer_gid = h.gid(s1);
  h.sa.report(n, h.view);
  EXPECT_TRUE(h.port.sent.empty());
  // Trap 64 (a GID in service): the subject is the GID in the details.
  mad::InformInfo by_gid = subscription(64);
  by_gid.gid = h.gid(h.cas[7]);
  mad::Notice in_service;
  in_service.is_generic = true;
  in_service.type = 4;
  in_service.producer_type_or_vendor_id = 4;
  in_service.trap_number_or_device_id = 64;
  in_service.issuer_lid = h.sim->sm().lid();
  in_service.issuer_gid = h.gid(h.cas[7]);
  in_service.set_details(mad::TrapGidDetails{h.gid(h.cas[7])});
  ASSERT_TRUE(h.call(Method::kSet, by_gid, 0, h.lid(h.cas[3])).header.status.ok());
  h.sa.report(in_service, h.view);
  ASSERT_EQ(h.port.sent.size(), 1u);
  EXPECT_EQ(h.port.pop().dlid, h.lid(h.cas[3]));
  // A GID the SM does not know cannot be subscribed to.
  by_gid.gid = Gid(Gid::kDefaultSubnetPrefix, Guid(0xBAD));
  EXPECT_EQ(sa_status(h.call(Method::kSet, by_gid, 0)), SaStatus::kReqInvalid);
}

// ---- SMInfo, GUIDInfo, SL2VL, VLArb, MFT and InformInfo records -------------------------------

TEST(SaTables, SmInfoRecordsAreThisSmFirstThenTheOthersWithoutTheirKeys) {
  Harness h("switch:hosts=3");
  h.view.own_sm_info.guid = h.guid(h.sm_ep);
  h.view.own_sm_info.sm_key = 0x77;
  h.view.own_sm_info.act_count = 42;
  h.view.own_sm_info.priority = 5;
  h.view.own_sm_info.sm_state = mad::SmState::kMaster;
  mad::SMInfo other;
  other.guid = h.guid(h.cas[2]);
  other.priority = 3;
  other.sm_state = mad::SmState::kStandby;
  h.view.other_sms.emplace_back(h.lid(h.cas[2]), other);
  const auto all = h.table(mad::SMInfoRecord{}, 0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].lid, h.view.sm_lid);
  EXPECT_EQ(all[0].sm_info.guid, h.guid(h.sm_ep));
  EXPECT_EQ(all[0].sm_info.sm_key, 0u);  // OpenSM shows no SM_Key
  EXPECT_EQ(all[0].sm_info.act_count, 42u);
  EXPECT_EQ(all[0].sm_info.priority, 5);
  EXPECT_EQ(all[0].sm_info.sm_state, mad::SmState::kMaster);
  EXPECT_EQ(all[1].lid, h.lid(h.cas[2]));
  EXPECT_EQ(all[1].sm_info.sm_state, mad::SmState::kStandby);
  mad::SMInfoRecord q;
  q.sm_info.sm_state = mad::SmState::kStandby;
  const SaMad m = h.call(Method::kGet, q, mask<mad::SMInfoRecord>({"SMState"}));
  ASSERT_TRUE(m.header.status.ok()) << m.header.status.to_string();
  EXPECT_EQ(only<mad::SMInfoRecord>(m).sm_info.guid, h.guid(h.cas[2]));
  EXPECT_FALSE(h.call(Method::kSet, q, 0).header.status.ok());  // Get and GetTable only
}

TEST(SaTables, GuidInfoRecordsCoverGuidCapWithThePortGuidFirst) {
  Harness h("switch:hosts=2");
  const uint32_t b = h.cas[1];
  mad::GUIDInfoRecord q;
  q.lid = h.lid(b);
  const auto recs = h.table(q, mask<mad::GUIDInfoRecord>({"LID"}));
  const mad::PortInfo& pi = h.subnet().nodes[h.graph().endpoints()[b].owner.node.value()]
                                .ports[h.graph().endpoints()[b].owner.port];
  ASSERT_GT(pi.guid_cap, 0);
  ASSERT_EQ(recs.size(), (pi.guid_cap + 7u) / 8u);
  for (size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i].lid, h.lid(b));
    EXPECT_EQ(recs[i].block_num, i);
    mad::GUIDInfo want;
    if (i == 0) want.guids[0] = h.guid(b);
    EXPECT_EQ(recs[i].guid_info, want);
  }
  q.block_num = 1;
  const SaMad one = h.call(Method::kGet, q, mask<mad::GUIDInfoRecord>({"LID", "BlockNum"}));
  ASSERT_TRUE(one.header.status.ok());
  EXPECT_EQ(only<mad::GUIDInfoRecord>(one).guid_info, mad::GUIDInfo{});
  // A switch answers for port 0 only.
  q.lid = h.lid(h.switches[0]);
  q.block_num = 0;
  const auto sw = h.table(q, mask<mad::GUIDInfoRecord>({"LID", "BlockNum"}));
  ASSERT_EQ(sw.size(), 1u);
  EXPECT_EQ(sw[0].guid_info.guids[0], h.guid(h.switches[0]));
}

TEST(SaTables, Sl2VlRecordsOfACaPortAndEveryPortPairOfASwitch) {
  Harness h("switch:hosts=2");
  mad::SLtoVLMappingTableRecord q;
  q.lid = h.lid(h.cas[1]);
  const auto ca = h.table(q, mask<mad::SLtoVLMappingTableRecord>({"LID"}));
  ASSERT_EQ(ca.size(), 1u);
  EXPECT_EQ(ca[0], (mad::SLtoVLMappingTableRecord{h.lid(h.cas[1]), 0, 0, {}}));
  const uint32_t sw = h.switches[0];
  const size_t ports = h.subnet().topo.node(h.graph().endpoints()[sw].owner.node).num_ports;
  q.lid = h.lid(sw);
  const auto all = h.table(q, mask<mad::SLtoVLMappingTableRecord>({"LID"}));
  EXPECT_EQ(all.size(), (ports + 1) * (ports + 1));
  q.input_port_num = 1;
  q.output_port_num = 2;
  const SaMad one = h.call(Method::kGet, q, mask<mad::SLtoVLMappingTableRecord>({"LID", "InputPortNum", "OutputPortNum"}));
  ASSERT_TRUE(one.header.status.ok());
  EXPECT_EQ(only<mad::SLtoVLMappingTableRecord>(one).output_port_num, 2);
}

TEST(SaTables, Sl2VlRecordsOfSwitchesFollowTheVlPlan) {
  SmConfig config;
  config.routing_engine = {"dor"};
  Harness h("torus:4x4,hosts=1", config);
  ASSERT_TRUE(h.tables().vl_plan.has_value());
  const auto& plan = *h.tables().vl_plan;
  const SwitchIndex s = 4;
  mad::SLtoVLMappingTableRecord q;
  q.lid = h.subnet().topo.port({h.graph().node_of(s), 0}).lid;
  q.input_port_num = 0;
  for (uint8_t out = 1; out < plan.sl2vl[s].size(); ++out) {
    q.output_port_num = out;
    const SaMad m = h.call(Method::kGet, q, mask<mad::SLtoVLMappingTableRecord>({"LID", "InputPortNum", "OutputPortNum"}));
    ASSERT_TRUE(m.header.status.ok());
    EXPECT_EQ(only<mad::SLtoVLMappingTableRecord>(m).table.vl_for_sl, plan.sl2vl[s][out]) << "port " << int(out);
  }
}

TEST(SaTables, VlArbRecordsAreFourBlocksAPort) {
  Harness h("switch:hosts=2");
  const uint32_t b = h.cas[1];
  mad::VLArbitrationTableRecord q;
  q.lid = h.lid(b);
  const auto recs = h.table(q, mask<mad::VLArbitrationTableRecord>({"LID"}));
  ASSERT_EQ(recs.size(), 4u);
  for (uint8_t i = 0; i < 4; ++i) {
    EXPECT_EQ(recs[i].block_num, i + 1);
    EXPECT_EQ(recs[i].output_port_num, h.graph().endpoints()[b].owner.port);
    EXPECT_EQ(recs[i].table, mad::VLArbitrationTable{});  // the SM programs none
  }
  q.block_num = 2;
  EXPECT_EQ(h.table(q, mask<mad::VLArbitrationTableRecord>({"LID", "BlockNum"})).size(), 1u);
  const uint32_t sw = h.switches[0];
  const size_t ports = h.subnet().topo.node(h.graph().endpoints()[sw].owner.node).num_ports;
  q.lid = h.lid(sw);
  EXPECT_EQ(h.table(q, mask<mad::VLArbitrationTableRecord>({"LID"})).size(), 4 * (ports + 1));
}

TEST(SaTables, MftRecordsAreTheTreesOfTheGroups) {
  Harness h("switch:hosts=3");
  EXPECT_TRUE(h.table(mad::MulticastForwardingTableRecord{}, 0).empty());  // no group forwards
  const uint32_t a = h.cas[0], b = h.cas[1];
  ASSERT_TRUE(h.call(Method::kSet, member(h, a, kGroup), kCreate, h.lid(a)).header.status.ok());
  ASSERT_TRUE(h.call(Method::kSet, member(h, b, kGroup), kJoin, h.lid(b)).header.status.ok());
  const auto recs = h.table(mad::MulticastForwardingTableRecord{}, 0);
  const uint32_t sw = h.switches[0];
  const size_t ports = h.subnet().topo.node(h.graph().endpoints()[sw].owner.node).num_ports;
  ASSERT_EQ(recs.size(), ports / 16 + 1);  // block 0 in every position
  EXPECT_EQ(recs[0].lid, h.lid(sw));
  EXPECT_EQ(recs[0].position, 0);
  EXPECT_EQ(recs[0].block_num, 0);
  const auto peer = [&](uint32_t e) { return h.subnet().topo.port(h.graph().endpoints()[e].owner).peer.port; };
  EXPECT_EQ(recs[0].mft.port_masks[0], (1u << peer(a)) | (1u << peer(b)));
  for (size_t i = 1; i < 32; ++i) EXPECT_EQ(recs[0].mft.port_masks[i], 0);
}

TEST(SaTables, InformInfoRecordsShowTheQpnToTrustedRequestersOnly) {
  SmConfig config;
  config.sm_key = 0x77;
  Harness h("switch:hosts=2", config);
  EXPECT_TRUE(h.table(mad::InformInfoRecord{}, 0).empty());
  const Lid b = h.lid(h.cas[1]);
  ASSERT_TRUE(h.call(Method::kSet, subscription(128), 0, b).header.status.ok());
  const auto untrusted = h.table(mad::InformInfoRecord{}, 0);
  ASSERT_EQ(untrusted.size(), 1u);
  EXPECT_EQ(untrusted[0].subscriber_gid, h.gid(h.cas[1]));
  EXPECT_EQ(untrusted[0].subscriber_enum, 0);
  EXPECT_EQ(untrusted[0].inform_info.trap_number_or_device_id, 128);
  EXPECT_EQ(untrusted[0].inform_info.qpn, Qpn(0));
  const auto trusted = h.table(mad::InformInfoRecord{}, 0, {}, 0x77);
  ASSERT_EQ(trusted.size(), 1u);
  EXPECT_EQ(trusted[0].inform_info.qpn, Qpn(1));
  mad::InformInfoRecord q;
  q.subscriber_gid = h.gid(h.cas[0]);
  EXPECT_TRUE(h.table(q, mask<mad::InformInfoRecord>({"SubscriberGID"})).empty());
}

TEST(SaTables, TheDefaultSmKeyIsOpenSmsAndIsTrusted) {
  Harness h("switch:hosts=2");
  EXPECT_EQ(h.view.config->sm_key, 1u);
  EXPECT_FALSE(h.table(mad::PKeyTableRecord{}, 0, {}, 1).empty());
}

}  // namespace
}  // namespace softib::sm
