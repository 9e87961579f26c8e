#include <gtest/gtest.h>

#include <filesystem>

#include "fabric/audit.hpp"
#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"
#include "fabric_checks.hpp"
#include "sm/sim.hpp"

namespace softib::sm {
namespace {

using fabric::Topology;

Topology load(const std::string& name) {
  auto r = fabric::read_net_file(std::string(SOFTIB_TOPOLOGIES) + "/" + name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(r->topology) : Topology{};
}

std::unique_ptr<SimulatedSubnet> up(Topology t, SmConfig config = {}, fabric::FabricOptions options = {}) {
  config.cache_dir.clear();
  auto s = SimulatedSubnet::create(std::move(t), config, {}, options);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().to_string());
  if (!s.ok()) return nullptr;
  auto r = (*s)->bring_up();
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return std::move(*s);
}

TEST(BringUp, SwitchWithTwoHostsComesUp) {
  auto s = up(*fabric::generate("switch"));
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->sm().subnet_up());
  EXPECT_EQ(testing::check_ports(s->fabric()), "");
  EXPECT_EQ(testing::check_routes(s->fabric()), "");
  // Every end port knows where the SM is.
  const auto& t = s->fabric().topology();
  const Lid sm_lid = s->fabric().port_info(s->sm_port()).lid;
  EXPECT_EQ(s->fabric().port_info({*t.find("host-b"), 1}).master_sm_lid, sm_lid);
  EXPECT_EQ(s->fabric().port_info({*t.find("S-switch"), 0}).master_sm_lid, sm_lid);
  EXPECT_TRUE(s->sm().last_sweep().problems.empty()) << s->sm().last_sweep().problems.front();
}

TEST(BringUp, SampleFabricsComeUpWithMinimalRoutes) {
  for (const char* file : {"ft2-16.net", "ibnetdiscover-ft2-16.net", "ft2-128.net", "t2d-8x8-256.net"}) {
    SCOPED_TRACE(file);
    auto s = up(load(file));
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->sm().subnet_up());
    EXPECT_EQ(testing::check_ports(s->fabric()), "");
    EXPECT_EQ(testing::check_routes(s->fabric()), "");
    const SweepReport& r = s->sm().last_sweep();
    EXPECT_TRUE(r.problems.empty()) << r.problems.front();
    EXPECT_EQ(r.nodes, s->fabric().topology().node_count());
    EXPECT_EQ(r.links, s->fabric().topology().link_count());
    EXPECT_EQ(r.routing_engine, std::string(file).starts_with("t2d") ? "dor" : "ftree");
  }
}

TEST(BringUp, ThreeLevelFatTreeAndTorus) {
  for (const char* spec : {"ft3:radix=8", "torus:4x4x4,hosts=2", "mesh:5x3,hosts=2"}) {
    SCOPED_TRACE(spec);
    auto s = up(*fabric::generate(spec));
    ASSERT_TRUE(s);
    EXPECT_EQ(testing::check_ports(s->fabric()), "");
    EXPECT_EQ(testing::check_routes(s->fabric()), "");
  }
}

TEST(BringUp, PresetLidsAreHonoured) {
  Topology t = load("ibnetdiscover-ft2-16.net");
  auto s = up(t);
  ASSERT_TRUE(s);
  // The dump carried the LIDs OpenSM gave: softib keeps them.
  for (const fabric::TopoNode& n : t.nodes()) {
    const NodeIndex i = *t.find(n.id);
    const uint8_t p = n.type == fabric::NodeType::kSwitch ? 0 : 1;
    EXPECT_EQ(s->fabric().port_info({i, p}).lid, t.port({i, p}).lid) << n.id;
  }
}

TEST(BringUp, ResweepChangesNothingAndKeepsLids) {
  auto s = up(load("ft2-16.net"));
  ASSERT_TRUE(s);
  std::vector<Lid> before;
  const auto& t = s->fabric().topology();
  for (uint32_t i = 0; i < t.node_count(); ++i)
    before.push_back(s->fabric().port_info({NodeIndex(i), t.node(NodeIndex(i)).type == fabric::NodeType::kSwitch ? uint8_t{0} : uint8_t{1}}).lid);
  s->sm().request_sweep(true);
  ASSERT_TRUE(s->run_until_idle().ok());
  const SweepReport& r = s->sm().last_sweep();
  EXPECT_TRUE(r.heavy);
  EXPECT_EQ(r.lft_blocks_set, 0u) << "nothing changed: no LFT block resent";
  EXPECT_EQ(r.port_infos_set, 0u);
  for (uint32_t i = 0; i < t.node_count(); ++i)
    EXPECT_EQ(s->fabric().port_info({NodeIndex(i), t.node(NodeIndex(i)).type == fabric::NodeType::kSwitch ? uint8_t{0} : uint8_t{1}}).lid, before[i]);
}

TEST(BringUp, LidsSurviveAnSmRestartThroughGuid2lid) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("softib-sim-{}", ::getpid());
  fs::remove_all(dir);
  SmConfig config;
  config.cache_dir = dir.string();
  config.reassign_lids = true;  // ignore LIDs the ports carry: only guid2lid can keep them
  auto first = SimulatedSubnet::create(load("ft2-16.net"), config);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->bring_up().ok());
  ASSERT_TRUE(fs::exists(dir / "guid2lid"));
  // A fresh fabric (all LIDs 0) and a new SM with the same cache: the same LIDs come back,
  // even though the SM now runs on another port (and so discovers in another order).
  Topology t = load("ft2-16.net");
  const auto other_port = fabric::PortRef{*t.find("H-00016"), 1};
  auto second = SimulatedSubnet::create(std::move(t), config, other_port);
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->bring_up().ok());
  const auto& t1 = (*first)->fabric().topology();
  for (uint32_t i = 0; i < t1.node_count(); ++i) {
    const NodeIndex n(i);
    const uint8_t p = t1.node(n).type == fabric::NodeType::kSwitch ? 0 : 1;
    EXPECT_EQ((*second)->fabric().port_info({n, p}).lid, (*first)->fabric().port_info({n, p}).lid) << t1.node(n).id;
  }
  fs::remove_all(dir);
}

TEST(BringUp, LinkFailureTrapLeadsToRerouting) {
  auto s = up(load("ft2-16.net"));
  ASSERT_TRUE(s);
  const auto& t = s->fabric().topology();
  // Cut one of the four parallel cables between leaf 1 and spine 1.
  ASSERT_TRUE(s->fabric().set_link_up({*t.find("S-L0001"), 9}, false).ok());
  s->run_for(std::chrono::seconds(1));  // the trap arrives, the SM re-sweeps
  EXPECT_EQ(testing::check_routes(s->fabric()), "");
  const SweepReport& r = s->sm().last_sweep();
  EXPECT_TRUE(r.targeted) << "a trap from a known switch is handled without rediscovery";
  EXPECT_FALSE(r.heavy);
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  ASSERT_EQ(r.link_changes.size(), 1u);
  EXPECT_NE(r.link_changes[0].find("'leaf-0001'"), std::string::npos) << r.link_changes[0];
  EXPECT_EQ(r.links, t.link_count() - 1);
  EXPECT_GT(r.lft_blocks_set, 0u);
  EXPECT_LT(r.lft_blocks_set, 4u * 2) << "only the blocks that changed";
  // Both switches' PortInfo (36 ports each) and a few Sets: nothing like a rediscovery.
  EXPECT_LT(r.mads, 2u * 36 + 20);
}

TEST(BringUp, LinkOnTheSmsOwnPathsFailsOverAndComesBack) {
  auto s = up(load("ft2-16.net"));
  ASSERT_TRUE(s);
  const auto& t = s->fabric().topology();
  // The SM sits on H-00001 under leaf 1: the spines were discovered through leaf 1's first
  // uplink, so cutting it breaks the stored directed route to spine 1.
  const fabric::PortRef uplink{*t.find("S-L0001"), 9};
  ASSERT_TRUE(s->fabric().set_link_up(uplink, false).ok());
  s->run_for(std::chrono::seconds(1));
  fabric::FabricAudit a = fabric::audit_fabric(s->fabric());
  EXPECT_EQ(a.delivered, a.routes);
  EXPECT_TRUE(s->sm().last_sweep().targeted);
  EXPECT_TRUE(s->sm().last_sweep().problems.empty()) << s->sm().last_sweep().problems.front();
  // The cable comes back: a new link needs discovery, so a heavy sweep puts it back to use.
  ASSERT_TRUE(s->fabric().set_link_up(uplink, true).ok());
  s->run_for(std::chrono::seconds(1));
  a = fabric::audit_fabric(s->fabric());
  EXPECT_TRUE(a.ok()) << (a.problems.empty() ? "" : a.problems.front());
  EXPECT_EQ(s->sm().last_sweep().links, t.link_count());
  EXPECT_EQ(testing::check_routes(s->fabric()), "");
}

TEST(BringUp, AHostCutOffIsDroppedByARediscovery) {
  auto s = up(load("ft2-16.net"));
  ASSERT_TRUE(s);
  const auto& t = s->fabric().topology();
  ASSERT_TRUE(s->fabric().set_link_up({*t.find("S-L0002"), 1}, false).ok());
  s->run_for(std::chrono::seconds(1));
  const SweepReport& r = s->sm().last_sweep();
  EXPECT_TRUE(r.heavy);
  EXPECT_EQ(r.nodes, t.node_count() - 1);
  const fabric::FabricAudit a = fabric::audit_fabric(s->fabric());
  EXPECT_EQ(a.delivered, a.routes);  // every remaining CA still reaches every LID
}

TEST(BringUp, AuditAgreesWithTheHopByHopOracleAndCatchesBrokenState) {
  auto s = up(load("ft2-16.net"));
  ASSERT_TRUE(s);
  const auto& t = s->fabric().topology();
  const size_t cas = t.count(fabric::NodeType::kCa), switches = t.count(fabric::NodeType::kSwitch);
  fabric::FabricAudit a = fabric::audit_fabric(s->fabric());
  EXPECT_TRUE(a.ok()) << (a.problems.empty() ? "" : a.problems.front());
  EXPECT_EQ(a.cabled_ports, 2 * t.link_count());
  EXPECT_EQ(a.end_ports, cas + switches);
  EXPECT_EQ(a.routes, cas * (cas + switches - 1));
  EXPECT_EQ(a.delivered, a.routes);
  EXPECT_EQ(a.max_switch_hops, 2u);  // leaf - spine - leaf

  // A cable goes down and nobody re-routes yet: its ends are not Active and the routes over
  // it are lost.
  ASSERT_TRUE(s->fabric().set_link_up({*t.find("S-L0001"), 9}, false).ok());
  a = fabric::audit_fabric(s->fabric());
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(a.active_ports, a.cabled_ports - 2);
  EXPECT_LT(a.delivered, a.routes);
  EXPECT_FALSE(a.problems.empty());
  // The SM hears the trap and routes around it.
  s->run_for(std::chrono::seconds(1));
  a = fabric::audit_fabric(s->fabric());
  EXPECT_EQ(a.delivered, a.routes);
  EXPECT_EQ(a.active_ports, a.cabled_ports - 2);
}

TEST(BringUp, LossyLinksAreRetriedToTheSameResult) {
  fabric::FabricOptions options;
  options.seed = 7;
  Topology t = load("ft2-16.net");
  auto s = SimulatedSubnet::create(std::move(t), SmConfig{}, {}, options);
  ASSERT_TRUE(s.ok());
  const auto& topo = (*s)->fabric().topology();
  for (uint8_t p = 9; p <= 16; ++p) ASSERT_TRUE((*s)->fabric().set_impairment({*topo.find("S-L0002"), p}, {0.2, 0.05}).ok());
  ASSERT_TRUE((*s)->bring_up().ok());
  EXPECT_GT((*s)->fabric().drops().get(fabric::Drop::kLoss), 0u);
  EXPECT_EQ(testing::check_ports((*s)->fabric()), "");
  EXPECT_EQ(testing::check_routes((*s)->fabric()), "");
}

TEST(BringUp, LoopsParallelLinksDualPortCasAndAnIsland) {
  // Three switches in a ring (a loop for discovery), a doubled S-1/S-2 cable, a CA with a
  // port on each of two switches, and a switch with a host that no cable joins to the rest.
  const char* net =
      "Switch 4 \"S-1\" # \"s1\"\n[1] \"H-a\"[1]\n[2] \"S-2\"[1]\n[3] \"S-3\"[1]\n[4] \"S-2\"[4]\n\n"
      "Switch 4 \"S-2\" # \"s2\"\n[1] \"S-1\"[2]\n[2] \"S-3\"[2]\n[3] \"H-d\"[2]\n[4] \"S-1\"[4]\n\n"
      "Switch 4 \"S-3\" # \"s3\"\n[1] \"S-1\"[3]\n[2] \"S-2\"[2]\n[3] \"H-d\"[1]\n\n"
      "Ca 1 \"H-a\" # \"a\"\n[1] \"S-1\"[1]\n\n"
      "Ca 2 \"H-d\" # \"dual\"\n[1] \"S-3\"[3]\n[2] \"S-2\"[3]\n\n"
      "Switch 2 \"S-x\" # \"island\"\n[1] \"H-x\"[1]\n\n"
      "Ca 1 \"H-x\" # \"x\"\n[1] \"S-x\"[1]\n";
  auto file = fabric::read_net(net, "loops.net");
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto s = up(std::move(file->topology));
  ASSERT_TRUE(s);
  const auto& t = s->fabric().topology();
  const SweepReport& r = s->sm().last_sweep();
  EXPECT_EQ(r.nodes, 5u) << "the island is not reachable";
  EXPECT_EQ(r.links, 7u);  // ring 3 + the parallel cable + 3 CA cables
  const PortRef d1{*t.find("H-d"), 1}, d2{*t.find("H-d"), 2};
  EXPECT_EQ(s->fabric().port_info(d1).port_state, mad::PortState::kActive);
  EXPECT_EQ(s->fabric().port_info(d2).port_state, mad::PortState::kActive);
  EXPECT_NE(s->fabric().port_info(d1).lid, s->fabric().port_info(d2).lid);
  EXPECT_TRUE(s->fabric().port_info(d1).lid.is_unicast() && s->fabric().port_info(d2).lid.is_unicast());
  // Everything the SM can reach works; the island's ports stay Initialize (no SM there).
  const fabric::FabricAudit a = fabric::audit_fabric(s->fabric());
  EXPECT_EQ(a.delivered, a.routes);
  EXPECT_EQ(a.cabled_ports - a.active_ports, 2u);
  EXPECT_EQ(s->fabric().port_info({*t.find("H-x"), 1}).port_state, mad::PortState::kInitialize);
}

}  // namespace
}  // namespace softib::sm
