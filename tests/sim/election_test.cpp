// SM election, handover and failover (IBA 14.4) with several SMs on one simulated fabric.
#include <gtest/gtest.h>

#include <map>

#include "fabric/audit.hpp"
#include "fabric/net_reader.hpp"
#include "sm/sim.hpp"

namespace softib::sm {
namespace {

using fabric::NodeIndex;
using fabric::PortRef;

fabric::Topology load(const std::string& name) {
  auto r = fabric::read_net_file(std::string(SOFTIB_TOPOLOGIES) + "/" + name);
  EXPECT_TRUE(r.ok());
  return r.ok() ? std::move(r->topology) : fabric::Topology{};
}

SmConfig priority(uint8_t p) {
  SmConfig c;
  c.cache_dir.clear();
  c.sm_priority = p;
  return c;
}

// Every LID in the fabric, by (node, port).
std::map<std::pair<uint32_t, uint8_t>, uint16_t> lids(fabric::Fabric& f) {
  std::map<std::pair<uint32_t, uint8_t>, uint16_t> out;
  const auto& t = f.topology();
  for (uint32_t i = 0; i < t.node_count(); ++i)
    for (uint8_t p = 0; p <= t.node(NodeIndex(i)).num_ports; ++p) {
      const auto& pi = f.port_info({NodeIndex(i), p});
      if (pi.lid.value()) out[{i, p}] = pi.lid.value();
    }
  return out;
}

// Every end port points at `master` as its SM.
void expect_master_everywhere(fabric::Fabric& f, Lid master) {
  const auto& t = f.topology();
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const NodeIndex n(i);
    const bool sw = t.node(n).type == fabric::NodeType::kSwitch;
    for (uint8_t p = sw ? 0 : 1; p <= (sw ? 0 : t.node(n).num_ports); ++p)
      EXPECT_EQ(f.port_info({n, p}).master_sm_lid, master) << t.node(n).id << " port " << int(p);
  }
}

PortRef ca(SimulatedSubnet& s, const char* id) { return {*s.fabric().topology().find(id), 1}; }

TEST(Election, TheHigherPrioritySmBecomesMasterWhicheverStartsFirst) {
  auto s = SimulatedSubnet::create(load("ft2-16.net"), priority(3));
  ASSERT_TRUE(s.ok());
  auto& sim = **s;
  auto second = sim.add_sm(ca(sim, "H-00016"), priority(8));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE(sim.bring_up().ok());
  sim.run_for(std::chrono::seconds(5));
  EXPECT_EQ(sim.sm(1).state(), mad::SmState::kMaster);
  EXPECT_EQ(sim.sm(0).state(), mad::SmState::kStandby);
  ASSERT_TRUE(sim.sm(0).master().has_value());
  EXPECT_EQ(*sim.sm(0).master(), sim.fabric().topology().port(ca(sim, "H-00016")).guid);
  EXPECT_TRUE(fabric::audit_fabric(sim.fabric()).ok());
  expect_master_everywhere(sim.fabric(), sim.fabric().port_info(ca(sim, "H-00016")).lid);
}

TEST(Election, EqualPrioritiesElectTheLowerGuid) {
  auto s = SimulatedSubnet::create(load("ft2-16.net"), priority(5));
  ASSERT_TRUE(s.ok());
  auto& sim = **s;
  ASSERT_TRUE(sim.add_sm(ca(sim, "H-00009"), priority(5)).ok());
  ASSERT_TRUE(sim.bring_up().ok());
  sim.run_for(std::chrono::seconds(5));
  // H-00001's port GUID is the lower one.
  EXPECT_EQ(sim.sm(0).state(), mad::SmState::kMaster);
  EXPECT_EQ(sim.sm(1).state(), mad::SmState::kStandby);
}

TEST(Election, AMasterHandsOverToAStrongerSmThatJoinsLater) {
  auto s = SimulatedSubnet::create(load("ft2-16.net"), priority(2));
  ASSERT_TRUE(s.ok());
  auto& sim = **s;
  ASSERT_TRUE(sim.bring_up().ok());
  ASSERT_EQ(sim.sm(0).state(), mad::SmState::kMaster);
  const auto before = lids(sim.fabric());
  // The new SM's port announces IsSM (trap 144); the master re-sweeps, finds it outranked
  // and hands over; the new master acknowledges and takes the subnet.
  ASSERT_TRUE(sim.add_sm(ca(sim, "H-00012"), priority(10)).ok());
  sim.run_for(std::chrono::seconds(30));
  EXPECT_EQ(sim.sm(1).state(), mad::SmState::kMaster);
  EXPECT_EQ(sim.sm(0).state(), mad::SmState::kStandby);
  EXPECT_TRUE(fabric::audit_fabric(sim.fabric()).ok());
  expect_master_everywhere(sim.fabric(), sim.fabric().port_info(ca(sim, "H-00012")).lid);
  EXPECT_EQ(lids(sim.fabric()), before) << "LIDs survive the handover";
}

TEST(Election, AStandbyTakesOverWhenTheMasterDiesAndKeepsTheLids) {
  auto s = SimulatedSubnet::create(load("ft2-16.net"), priority(9));
  ASSERT_TRUE(s.ok());
  auto& sim = **s;
  ASSERT_TRUE(sim.bring_up().ok());
  ASSERT_TRUE(sim.add_sm(ca(sim, "H-00005"), priority(1)).ok());
  sim.run_for(std::chrono::seconds(5));
  ASSERT_EQ(sim.sm(0).state(), mad::SmState::kMaster);
  ASSERT_EQ(sim.sm(1).state(), mad::SmState::kStandby);
  const auto before = lids(sim.fabric());

  sim.stop_sm(0);
  // Not yet: a standby waits for polling_retry_number missed polls.
  sim.run_for(std::chrono::seconds(15));
  EXPECT_EQ(sim.sm(1).state(), mad::SmState::kStandby);
  sim.run_for(std::chrono::seconds(60));
  EXPECT_EQ(sim.sm(1).state(), mad::SmState::kMaster);
  EXPECT_TRUE(sim.sm(1).subnet_up());
  EXPECT_TRUE(fabric::audit_fabric(sim.fabric()).ok());
  expect_master_everywhere(sim.fabric(), sim.fabric().port_info(ca(sim, "H-00005")).lid);
  EXPECT_EQ(lids(sim.fabric()), before) << "LIDs survive the takeover";
}

TEST(Election, AnInactiveSmAnswersButNeverSweeps) {
  auto s = SimulatedSubnet::create(load("ft2-16.net"), priority(4));
  ASSERT_TRUE(s.ok());
  auto& sim = **s;
  SmConfig inactive = priority(15);
  inactive.sm_inactive = true;
  ASSERT_TRUE(sim.add_sm(ca(sim, "H-00003"), inactive).ok());
  ASSERT_TRUE(sim.bring_up().ok());
  EXPECT_EQ(sim.sm(0).state(), mad::SmState::kMaster);
  EXPECT_EQ(sim.sm(1).state(), mad::SmState::kNotActive);
  EXPECT_EQ(sim.sm(1).mads_sent(), 0u);
  ASSERT_EQ(sim.sm(0).other_sms().size(), 1u);
  EXPECT_EQ(sim.sm(0).other_sms()[0].state, mad::SmState::kNotActive);
  EXPECT_EQ(sim.sm(0).other_sms()[0].priority, 15);
}

}  // namespace
}  // namespace softib::sm
