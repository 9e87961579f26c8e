// The SA through the fabric: a client on a CA port sends SA MADs, LID-routed, to the SM's
// LID, as libibumad clients (saquery, ibacm, rdma-core's path resolution) do; multicast joins
// end in MFTs the switches really hold.
#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "fabric/generators.hpp"
#include "mad/inform_info.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/notice.hpp"
#include "mad/trap_gid_details.hpp"
#include "mad/path_record.hpp"
#include "mad/sa_mad.hpp"
#include "sm/sim.hpp"

namespace softib::sm {
namespace {

using fabric::NodeIndex;
using fabric::PortRef;

// What a umad client is: an agent on a port that sends requests and keeps what comes back.
class Client final : public fabric::MadAgent {
 public:
  // `classes`: what unsolicited requests it takes (Reports need SubnAdm, as a umad client
  // registers for them).
  Client(fabric::Fabric& f, PortRef port, std::vector<uint8_t> classes = {}) : fabric_(f), port_(port) {
    auto id = f.attach(port, this, std::move(classes));
    EXPECT_TRUE(id.ok());
    id_ = id.ok() ? *id : 0;
  }
  ~Client() override { fabric_.detach(id_); }
  void on_mad(PortRef, const Mad& m) override { inbox.push_back(m); }

  template <class R>
  void send(mad::Method method, const R& rec, uint64_t component_mask, Lid sm_lid) {
    mad::SaMad m;
    m.header.method = method;
    m.header.transaction_id = ++tid_;
    m.header.attribute_id = static_cast<uint16_t>(mad::Layout<R>::kAttributeId);
    m.component_mask = component_mask;
    mad::encode(rec, wire::MutByteSpan(m.data));
    Mad out;
    mad::encode(m, wire::MutByteSpan(out.bytes));
    out.dlid = sm_lid;
    out.remote_qp = Qpn(1);
    fabric_.send(id_, out);
  }
  std::optional<mad::SaMad> answer() {
    if (inbox.empty()) return std::nullopt;
    auto d = mad::decode<mad::SaMad>(inbox.front().bytes);
    inbox.pop_front();
    EXPECT_TRUE(d.ok()) << d.error().to_string();
    if (!d) return std::nullopt;
    return *d;
  }
  std::deque<Mad> inbox;

 private:
  fabric::Fabric& fabric_;
  PortRef port_;
  fabric::AgentId id_ = 0;
  uint64_t tid_ = 0x5A000000;
};

std::unique_ptr<SimulatedSubnet> up(std::string_view spec) {
  SmConfig c;
  c.cache_dir.clear();
  auto s = SimulatedSubnet::create(*fabric::generate(spec), c);
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE((*s)->bring_up().ok());
  return std::move(*s);
}

PortRef host(SimulatedSubnet& s, const char* id) { return {*s.fabric().topology().find(id), 1}; }
Gid gid_of(SimulatedSubnet& s, PortRef p) { return Gid(Gid::kDefaultSubnetPrefix, s.fabric().topology().port(p).guid); }

TEST(SaThroughTheFabric, PathRecordAnswersFollowTheProgrammedRoute) {
  auto s = up("ft2:radix=8");
  const PortRef a = host(*s, "H-00001"), b = host(*s, "H-00030");
  Client client(s->fabric(), host(*s, "H-00007"));
  mad::PathRecord q;
  q.slid = s->fabric().port_info(a).lid;
  q.dlid = s->fabric().port_info(b).lid;
  client.send(mad::Method::kGet, q, mad::component_mask<mad::PathRecord>({"SLID", "DLID"}), s->sm().lid());
  s->run_for(std::chrono::milliseconds(10));
  auto reply = client.answer();
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->header.method, mad::Method::kGetResp);
  ASSERT_TRUE(reply->header.status.ok()) << reply->header.status.to_string();
  auto path = mad::decode<mad::PathRecord>(reply->data);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->dlid, q.dlid);
  EXPECT_EQ(path->sgid, gid_of(*s, a));
  EXPECT_EQ(path->dgid, gid_of(*s, b));
  EXPECT_EQ(path->pkey, PKey::default_full());
  EXPECT_EQ(path->mtu, 4);  // 2048: the ports' MTUCap
  EXPECT_EQ(s->fabric().drops().get(fabric::Drop::kNoAgent), 0u);
}

// Follows a group's MFT from every switch a member hangs off: every member port is reached,
// no switch twice (a tree).
void expect_tree_reaches(SimulatedSubnet& s, Lid mlid, const std::vector<PortRef>& members) {
  const auto& t = s.fabric().topology();
  std::set<std::pair<uint32_t, uint8_t>> want;
  for (PortRef m : members) want.insert({m.node.value(), m.port});
  for (PortRef origin : members) {
    std::set<std::pair<uint32_t, uint8_t>> reached;
    std::set<uint32_t> seen;
    std::vector<std::pair<NodeIndex, uint8_t>> queue{{t.port(origin).peer.node, t.port(origin).peer.port}};
    while (!queue.empty()) {
      auto [sw, in] = queue.back();
      queue.pop_back();
      ASSERT_TRUE(seen.insert(sw.value()).second) << "switch " << t.node(sw).id << " reached twice: a loop";
      for (uint8_t out : s.fabric().mft_ports(sw, mlid)) {
        if (out == in || out == 0) continue;
        const PortRef next = t.port({sw, out}).peer;
        ASSERT_TRUE(next.valid());
        if (t.node(next.node).type == fabric::NodeType::kSwitch) queue.push_back({next.node, next.port});
        else reached.insert({next.node.value(), next.port});
      }
    }
    reached.insert({origin.node.value(), origin.port});
    EXPECT_EQ(reached, want) << "from " << t.node(origin.node).id;
  }
}

TEST(SaThroughTheFabric, JoinsProgramMulticastTreesAndLeavesClearThem) {
  auto s = up("ft2:radix=8");
  const Gid group = *Gid::parse("ff12:1234:ffff::42");
  const std::vector<PortRef> members{host(*s, "H-00002"), host(*s, "H-00011"), host(*s, "H-00029")};
  std::vector<std::unique_ptr<Client>> clients;
  Lid mlid;
  for (PortRef m : members) {
    clients.push_back(std::make_unique<Client>(s->fabric(), m));
    mad::MCMemberRecord r;
    r.mgid = group;
    r.port_gid = gid_of(*s, m);
    r.join_state = 1;
    r.q_key = QKey(0x1234);
    r.pkey = PKey(0xFFFF);
    clients.back()->send(mad::Method::kSet, r,
                         mad::component_mask<mad::MCMemberRecord>(
                             {"MGID", "PortGID", "JoinState", "Q_Key", "TClass", "P_Key", "FlowLabel", "SL"}),
                         s->sm().lid());
    s->run_for(std::chrono::milliseconds(10));
    auto reply = clients.back()->answer();
    ASSERT_TRUE(reply.has_value());
    ASSERT_TRUE(reply->header.status.ok()) << reply->header.status.to_string();
    auto rec = mad::decode<mad::MCMemberRecord>(reply->data);
    ASSERT_TRUE(rec.ok());
    mlid = rec->mlid;
  }
  EXPECT_GE(mlid.value(), 0xC000);
  s->run_for(std::chrono::milliseconds(100));  // the SM reprograms the MFTs
  expect_tree_reaches(*s, mlid, members);

  // Everyone leaves: the group goes, and the switches forget it.
  for (size_t i = 0; i < members.size(); ++i) {
    mad::MCMemberRecord r;
    r.mgid = group;
    r.port_gid = gid_of(*s, members[i]);
    r.join_state = 1;
    clients[i]->send(mad::Method::kDelete, r, mad::component_mask<mad::MCMemberRecord>({"MGID", "PortGID", "JoinState"}),
                     s->sm().lid());
    s->run_for(std::chrono::milliseconds(10));
    auto reply = clients[i]->answer();
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->header.method, mad::Method::kDeleteResp);
  }
  s->run_for(std::chrono::milliseconds(100));
  const auto& t = s->fabric().topology();
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    if (t.node(NodeIndex(i)).type != fabric::NodeType::kSwitch) continue;
    EXPECT_TRUE(s->fabric().mft_ports(NodeIndex(i), mlid).empty()) << t.node(NodeIndex(i)).id;
  }
}

TEST(SaThroughTheFabric, SubscribersHearOfPortsGoingOutOfService) {
  auto s = up("ft2:radix=8");
  Client client(s->fabric(), host(*s, "H-00004"), {static_cast<uint8_t>(mad::MgmtClass::kSubnAdm)});
  mad::InformInfo sub;
  sub.lid_range_begin = Lid(0xFFFF);
  sub.is_generic = 1;
  sub.subscribe = 1;
  sub.type = 0xFFFF;
  sub.trap_number_or_device_id = 65;  // GID out of service
  sub.producer_type_or_vendor_id = 0xFFFFFF;
  client.send(mad::Method::kSet, sub, 0, s->sm().lid());
  s->run_for(std::chrono::milliseconds(10));
  auto ack = client.answer();
  ASSERT_TRUE(ack.has_value());
  ASSERT_TRUE(ack->header.status.ok()) << ack->header.status.to_string();

  // H-00020's cable goes: the SM re-sweeps and reports its GID out of service.
  const PortRef gone = host(*s, "H-00020");
  ASSERT_TRUE(s->fabric().set_link_up(gone, false).ok());
  s->run_for(std::chrono::seconds(2));
  bool heard = false;
  while (auto m = client.answer()) {
    if (m->header.method != mad::Method::kReport) continue;
    auto notice = mad::decode<mad::Notice>(m->data);
    ASSERT_TRUE(notice.ok());
    EXPECT_EQ(notice->trap_number_or_device_id, 65);
    auto details = notice->details<mad::TrapGidDetails>();
    ASSERT_TRUE(details.ok());
    EXPECT_EQ(details->gid, gid_of(*s, gone));
    heard = true;
  }
  EXPECT_TRUE(heard) << "reports sent " << s->sm().sa().counters().get(SaCounter::kReportsSent) << ", sweep heavy "
                     << s->sm().last_sweep().heavy << " targeted " << s->sm().last_sweep().targeted;
}

}  // namespace
}  // namespace softib::sm
