// Partitions and virtual lanes programmed by the SM, read back from the fabric itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "fabric/generators.hpp"
#include "sm/routing_check.hpp"
#include "sm/sim.hpp"

namespace softib::sm {
namespace {

using fabric::NodeIndex;
using fabric::PortRef;

struct Fixture {
  std::unique_ptr<SimulatedSubnet> sim;
  PortRef port(const char* host) const { return {*sim->fabric().topology().find(host), 1}; }
  Guid guid(const char* host) const { return sim->fabric().topology().port(port(host)).guid; }
  std::vector<uint16_t> keys(PortRef p) const {
    std::vector<uint16_t> out;
    for (PKey k : sim->fabric().pkeys(p))
      if (k.is_valid()) out.push_back(k.value());
    return out;
  }
  bool can_talk(const char* a, const char* b) const {
    for (PKey x : sim->fabric().pkeys(port(a)))
      for (PKey y : sim->fabric().pkeys(port(b)))
        if (pkey_match(x, y)) return true;
    return false;
  }
};

TEST(Partitions, TablesFollowPartitionsConfAndIsolateMembers) {
  auto topo = fabric::generate("switch:hosts=4");
  ASSERT_TRUE(topo.ok());
  auto guid = [&](const char* host) { return topo->port({*topo->find(host), 1}).guid; };
  const std::string path = ::testing::TempDir() + "softib-partitions.conf";
  {
    std::ofstream f(path);
    f << "Default=0x7fff : ALL=limited, SELF=full;\n"
      << fmt::format("Storage=0x0001 : {:#018x}=full, {:#018x}=full, {:#018x};\n", guid("host-a").value(),
                     guid("host-b").value(), guid("host-c").value())
      << fmt::format("Compute=0x0002, indx0 : {:#018x}=full, {:#018x}=both;\n", guid("host-d").value(),
                     guid("host-b").value());
  }
  SmConfig config;
  config.cache_dir.clear();
  config.partition_config_file = path;
  Fixture fx;
  auto created = SimulatedSubnet::create(std::move(*topo), config);
  ASSERT_TRUE(created.ok());
  fx.sim = std::move(*created);
  ASSERT_TRUE(fx.sim->bring_up().ok());
  const SweepReport& r = fx.sim->sm().last_sweep();
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_GT(r.pkey_blocks_set, 0u);

  // host-a runs the SM (SELF): full default member; host-b: Compute (indx0) first.
  EXPECT_EQ(fx.keys(fx.port("host-a")), (std::vector<uint16_t>{0xFFFF, 0x8001}));
  EXPECT_EQ(fx.keys(fx.port("host-b")), (std::vector<uint16_t>{0x8002, 0x8001, 0x7FFF}));
  EXPECT_EQ(fx.keys(fx.port("host-c")), (std::vector<uint16_t>{0x7FFF, 0x0001}));
  EXPECT_EQ(fx.keys(fx.port("host-d")), (std::vector<uint16_t>{0x8002, 0x7FFF}));
  // The P_Key check: full+full and full+limited members talk, limited+limited do not.
  EXPECT_TRUE(fx.can_talk("host-a", "host-b"));   // Storage
  EXPECT_TRUE(fx.can_talk("host-b", "host-c"));   // Storage, c limited
  EXPECT_TRUE(fx.can_talk("host-b", "host-d"));   // Compute
  EXPECT_TRUE(fx.can_talk("host-a", "host-d"));   // Default: a is the SM's port (full)
  EXPECT_FALSE(fx.can_talk("host-c", "host-d"));  // only limited Default members in common

  // The switch enforces each CA's partitions on the port facing it.
  const auto& t = fx.sim->fabric().topology();
  const PortRef facing_c = t.port(fx.port("host-c")).peer;
  EXPECT_EQ(fx.keys(facing_c), fx.keys(fx.port("host-c")));
  EXPECT_TRUE(fx.sim->fabric().port_info(facing_c).partition_enforcement_inbound);
  EXPECT_TRUE(fx.sim->fabric().port_info(facing_c).partition_enforcement_outbound);

  // A re-sweep finds every table as programmed and sends none.
  fx.sim->sm().request_sweep(true);
  fx.sim->run_for(std::chrono::seconds(1));
  EXPECT_EQ(fx.sim->sm().last_sweep().pkey_blocks_set, 0u);
  EXPECT_TRUE(fx.sim->sm().last_sweep().heavy);
  std::filesystem::remove(path);
}

TEST(Partitions, ABadFileIsReportedAndTheDefaultPartitionKept) {
  const std::string path = ::testing::TempDir() + "softib-bad-partitions.conf";
  { std::ofstream(path) << "Default=0x7fff : ALL=full;\nBroken=0xZZ : ALL;\n"; }
  SmConfig config;
  config.cache_dir.clear();
  config.partition_config_file = path;
  auto s = SimulatedSubnet::create(*fabric::generate("switch:hosts=2"), config);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->bring_up().ok());
  const auto& problems = (*s)->sm().last_sweep().problems;
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find(path + ":2:"), std::string::npos) << problems.front();
  Fixture fx{std::move(*s)};
  EXPECT_EQ(fx.keys(fx.port("host-b")), (std::vector<uint16_t>{0xFFFF}));
  std::filesystem::remove(path);
}

TEST(VirtualLanes, DorProgramsSlToVlOnEverySwitchAndStaysDeadlockFree) {
  SmConfig config;
  config.cache_dir.clear();
  auto s = SimulatedSubnet::create(*fabric::generate("torus:5x3,hosts=1"), config);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->bring_up().ok());
  const SubnetManager& sm = (*s)->sm();
  ASSERT_EQ(sm.last_sweep().routing_engine, "dor");
  ASSERT_TRUE(sm.routing() && sm.routing()->vl_plan);
  EXPECT_GT(sm.last_sweep().sl2vl_tables_set, 0u);
  // Rebuild the VL plan from what the switches hold, for every (input, output) pair the
  // routes use, and check the channel dependency graph with it.
  RoutingTables from_fabric = *sm.routing();
  const RoutingGraph& g = *sm.routing_graph();
  const auto& t = (*s)->fabric().topology();
  for (SwitchIndex sw = 0; sw < g.switch_count(); ++sw) {
    // The SM's model uses GUID-derived node ids; find the fabric's node by GUID.
    const NodeIndex node = *t.find_by_guid(g.guid_of(sw));
    for (const SwitchLink& out : g.links(sw)) {
      const auto table = (*s)->fabric().sl_to_vl({node, 0}, out.port);
      for (const SwitchLink& in : g.links(sw))
        EXPECT_EQ((*s)->fabric().sl_to_vl({node, in.port}, out.port), table);
      EXPECT_EQ(table, sm.routing()->vl_plan->sl2vl[sw][out.port]) << "switch " << sw << " port " << int(out.port);
      from_fabric.vl_plan->sl2vl[sw][out.port] = table;
    }
  }
  EXPECT_TRUE(check_deadlock(g, from_fabric).free);
  // A re-sweep sends no SL-to-VL table again.
  (*s)->sm().request_sweep(true);
  (*s)->run_for(std::chrono::seconds(1));
  EXPECT_EQ((*s)->sm().last_sweep().sl2vl_tables_set, 0u);
}

}  // namespace
}  // namespace softib::sm
