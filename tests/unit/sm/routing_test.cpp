#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"
#include "routing_fixtures.hpp"
#include "sm/routing_check.hpp"
#include "sm/routing_engine.hpp"
#include "support/random.hpp"

namespace softib::sm {
namespace {

using fabric::Topology;
using testing::assign_lids;

Topology make(std::string_view spec, uint8_t lmc = 0) {
  auto t = fabric::generate(spec);
  EXPECT_TRUE(t.ok()) << t.error().to_string();
  assign_lids(*t, lmc);
  return std::move(*t);
}

RoutingGraph graph(const Topology& t) {
  auto g = RoutingGraph::build(t);
  EXPECT_TRUE(g.ok()) << g.error().to_string();
  return std::move(*g);
}

RoutingTables route(const RoutingGraph& g, std::string_view engine) {
  auto e = make_engine(engine);
  EXPECT_NE(e, nullptr);
  auto r = e->route(g);
  EXPECT_TRUE(r.ok()) << engine << ": " << r.error().to_string();
  return std::move(*r);
}

// A random connected irregular switch fabric with two CAs per switch.
Topology random_fabric(uint64_t seed, int switches) {
  softib::testing::TestRng rng(seed);
  Topology t;
  std::vector<fabric::NodeIndex> sw;
  for (int i = 0; i < switches; ++i)
    sw.push_back(*t.add_node(fabric::NodeType::kSwitch, "S" + std::to_string(i), "", Guid(0x200000 + static_cast<uint64_t>(i)), 16));
  std::vector<int> free_port(static_cast<size_t>(switches), 3);
  const auto cable = [&](int a, int b) {
    auto& pa = free_port[static_cast<size_t>(a)];
    auto& pb = free_port[static_cast<size_t>(b)];
    if (pa > 16 || pb > 16) return;
    if (t.connect({sw[static_cast<size_t>(a)], static_cast<uint8_t>(pa)}, {sw[static_cast<size_t>(b)], static_cast<uint8_t>(pb)}).ok()) {
      ++pa;
      ++pb;
    }
  };
  for (int i = 1; i < switches; ++i) cable(i, static_cast<int>(rng.between(0, static_cast<uint64_t>(i - 1))));  // a tree
  for (int extra = 0; extra < switches; ++extra)
    cable(static_cast<int>(rng.between(0, static_cast<uint64_t>(switches - 1))),
          static_cast<int>(rng.between(0, static_cast<uint64_t>(switches - 1))));
  for (int i = 0; i < switches; ++i)
    for (int p = 1; p <= 2; ++p) {
      auto h = *t.add_node(fabric::NodeType::kCa, fmt::format("H{}-{}", i, p), "", Guid(0x100000 + 4 * static_cast<uint64_t>(i * 2 + p)), 1);
      (void)t.connect({sw[static_cast<size_t>(i)], static_cast<uint8_t>(p)}, {h, 1});
    }
  assign_lids(t);
  return t;
}

TEST(Routing, EveryEngineReachesEveryLidWithoutLoops) {
  struct Case {
    const char* spec;
    std::vector<const char*> engines;
  };
  const Case cases[] = {
      {"ft2:radix=8", {"minhop", "updn", "ftree", "auto"}},
      {"ft2:radix=36,leaves=2,spines=2,hosts=8,parallel=4", {"minhop", "updn", "ftree", "auto"}},
      {"ft3:radix=8", {"minhop", "updn", "ftree", "auto"}},
      {"torus:4x4,hosts=2", {"minhop", "updn", "dor", "auto"}},
      {"torus:3x3x3,hosts=1", {"minhop", "updn", "dor", "auto"}},
      {"mesh:4x3,hosts=2", {"minhop", "updn", "dor", "auto"}},
      {"switch:hosts=4", {"minhop", "updn", "ftree", "auto"}},
  };
  for (const Case& c : cases) {
    const Topology t = make(c.spec);
    const RoutingGraph g = graph(t);
    for (const char* engine : c.engines) {
      SCOPED_TRACE(std::string(c.spec) + " / " + engine);
      const RoutingTables tables = route(g, engine);
      const RouteCheck rc = check_routes(g, tables);
      EXPECT_TRUE(rc.ok()) << rc.first_problem;
      EXPECT_EQ(rc.routes, g.switch_count() * g.endpoints().size());
      if (std::string_view(engine) != "updn") {
        EXPECT_EQ(rc.non_minimal, 0u) << "shortest paths promised";
      }
    }
  }
}

TEST(Routing, RandomIrregularFabrics) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    const Topology t = random_fabric(seed, 24);
    const RoutingGraph g = graph(t);
    for (const char* engine : {"minhop", "updn", "auto"}) {
      const RoutingTables tables = route(g, engine);
      const RouteCheck rc = check_routes(g, tables);
      EXPECT_TRUE(rc.ok()) << engine << ": " << rc.first_problem;
    }
    EXPECT_TRUE(testing::deadlock_free(g, route(g, "updn"))) << "up*/down* must be deadlock-free";
    EXPECT_EQ(route(g, "auto").engine, "updn");
  }
}

TEST(Routing, CheckerCatchesBrokenTables) {
  const Topology t = make("ft2:radix=8");
  const RoutingGraph g = graph(t);
  RoutingTables tables = route(g, "minhop");
  const Lid victim = g.endpoints()[testing::ca_endpoints(g).back()].base;
  tables.lft[0][victim.value()] = kDropPort;
  RouteCheck rc = check_routes(g, tables);
  EXPECT_EQ(rc.unreachable, 1u);
  // A two-switch loop: leaf 0 sends up to a spine that sends back down to leaf 0.
  tables = route(g, "minhop");
  const SwitchIndex leaf = 0;
  const SwitchLink up = g.links(leaf)[0];
  tables.lft[up.neighbor][victim.value()] = up.neighbor_port;
  tables.lft[leaf][victim.value()] = up.port;
  rc = check_routes(g, tables);
  EXPECT_GT(rc.loops, 0u);
  EXPECT_NE(rc.first_problem.find("loops"), std::string::npos);
}

TEST(Routing, FtreeLoadsEveryLinkWithExactlyTheIdealShare) {
  struct Case {
    const char* spec;
    uint64_t ideal;  // flows per directed link on the busiest level
  };
  // 2-level full radix 8: 32 hosts, each leaf uplink carries N - 4 = 28 flows.
  // ft2-16 sample (4 parallel cables per leaf-spine pair): 8 hosts x 8 remote / 8 uplinks = 8.
  // 3-level radix 8: 128 hosts; edge uplinks N - 4 = 124; agg uplinks 16 x 112 / 16 = 112.
  for (const Case& c : {Case{"ft2:radix=8", 28}, Case{"ft2:radix=36,leaves=2,spines=2,hosts=8,parallel=4", 8},
                        Case{"ft3:radix=8", 124}}) {
    SCOPED_TRACE(c.spec);
    const Topology t = make(c.spec);
    const RoutingGraph g = graph(t);
    const LinkLoadStats ftree = all_to_all_load(g, route(g, "ftree"));
    EXPECT_EQ(ftree.max_load, c.ideal);
    EXPECT_EQ(layered_ideal_max_load(g), std::optional<uint64_t>(c.ideal));
    const LinkLoadStats minhop = all_to_all_load(g, route(g, "minhop"));
    EXPECT_GE(minhop.max_load, ftree.max_load);
  }
}

TEST(Routing, FtreeThreeLevelPerLevelIdeal) {
  const Topology t = make("ft3:radix=8");
  const RoutingGraph g = graph(t);
  const LinkLoadStats st = all_to_all_load(g, route(g, "ftree"));
  // Every edge-to-aggregation link carries 124 flows each way, every aggregation-to-core 112.
  for (SwitchIndex s = 0; s < g.switch_count(); ++s) {
    const auto& id = t.node(g.node_of(s)).id;
    for (size_t k = 0; k < g.links(s).size(); ++k) {
      const auto& peer_id = t.node(g.node_of(g.links(s)[k].neighbor)).id;
      const bool core_level = id.starts_with("S-C") || peer_id.starts_with("S-C");
      EXPECT_EQ(st.load[s][k], core_level ? 112u : 124u) << id << " -> " << peer_id;
    }
  }
}

TEST(Routing, LayeredIdealIsUndefinedOnTori) {
  const Topology t = make("torus:4x4");
  EXPECT_EQ(layered_ideal_max_load(graph(t)), std::nullopt);
}

TEST(Routing, ShiftContentionFindsMinhopContentionOnThreeLevelTrees) {
  const Topology t = make("ft3:radix=8");
  const RoutingGraph g = graph(t);
  const ShiftContention ftree = shift_contention(g, route(g, "ftree"));
  EXPECT_EQ(ftree.shifts_tried, 127u);
  EXPECT_EQ(ftree.worst, 1u);
  EXPECT_GT(shift_contention(g, route(g, "minhop")).worst, 1u);
  const ShiftContention sampled = shift_contention(g, route(g, "ftree"), 16, 8);
  EXPECT_EQ(sampled.shifts_tried, 8u);
}

TEST(Routing, FtreeShiftPermutationsAreContentionFree) {
  for (const char* spec : {"ft2:radix=8", "ft3:radix=8", "ft2:radix=36,leaves=2,spines=2,hosts=8,parallel=4"}) {
    SCOPED_TRACE(spec);
    const Topology t = make(spec);
    const RoutingGraph g = graph(t);
    const RoutingTables ftree = route(g, "ftree");
    const RoutingTables minhop = route(g, "minhop");
    const auto cas = testing::ca_endpoints(g);
    const size_t n = cas.size();
    uint64_t minhop_worst = 0;
    for (size_t shift = 1; shift < n; ++shift) {
      std::vector<std::pair<uint32_t, uint32_t>> flows;
      for (size_t i = 0; i < n; ++i) flows.emplace_back(cas[i], cas[(i + shift) % n]);
      ASSERT_EQ(max_link_load(g, ftree, flows), 1u) << "shift " << shift;
      minhop_worst = std::max(minhop_worst, max_link_load(g, minhop, flows));
    }
    if (std::string_view(spec).starts_with("ft3")) {
      EXPECT_GT(minhop_worst, 1u);  // minhop is not
    }
  }
}

TEST(Routing, FtreeRoutesAroundFailedLinks) {
  Topology t = make("ft3:radix=8");
  const auto edge = *t.find("S-L0001");
  const auto agg = *t.find("S-A0002");
  t.disconnect({edge, 6});  // S-L0001 port 6 -> its second aggregation switch
  t.disconnect({agg, 5});   // S-A0002 port 5 -> its first core
  const RoutingGraph g = graph(t);
  auto tables = make_engine("ftree")->route(g);
  ASSERT_TRUE(tables.ok()) << tables.error().to_string();
  const RouteCheck rc = check_routes(g, *tables);
  EXPECT_TRUE(rc.ok()) << rc.first_problem;
}

TEST(Routing, DorIsDeadlockFreeOnToriOnlyWithItsVlPlan) {
  struct Case {
    const char* spec;
    bool one_vl_deadlocks;  // minimal routes in rings of 3 or 4 never close a cycle
  };
  for (const Case& c : {Case{"torus:4x4,hosts=2", false}, Case{"torus:3x3x3,hosts=1", false},
                        Case{"torus:5x3,hosts=1", true}, Case{"torus:6x6,hosts=1", true},
                        Case{"torus:5x5x5,hosts=1", true}}) {
    SCOPED_TRACE(c.spec);
    const Topology t = make(c.spec);
    const RoutingGraph g = graph(t);
    const RoutingTables dor = route(g, "dor");
    ASSERT_TRUE(dor.vl_plan.has_value());
    EXPECT_EQ(dor.vl_plan->vls, 2);
    EXPECT_TRUE(testing::deadlock_free(g, dor));
    EXPECT_EQ(testing::deadlock_free(g, dor, /*ignore_vl_plan=*/true), !c.one_vl_deadlocks);
    if (c.one_vl_deadlocks) {
      EXPECT_FALSE(testing::deadlock_free(g, route(g, "minhop")));
    }
  }
  const Topology mesh = make("mesh:4x4,hosts=1");
  const RoutingGraph mg = graph(mesh);
  EXPECT_TRUE(testing::deadlock_free(mg, route(mg, "dor"), /*ignore_vl_plan=*/true)) << "meshes need no VLs";
}

TEST(Routing, ChannelDependencyCheckAgreesWithTheOracle) {
  // check_deadlock (memoised, bitset graph) against the plain every-pair oracle above.
  for (const char* spec : {"torus:4x4,hosts=2", "torus:5x3,hosts=1", "torus:6x6,hosts=1", "mesh:4x3,hosts=2",
                           "ft2:radix=8", "ft3:radix=4"}) {
    SCOPED_TRACE(spec);
    const Topology t = make(spec);
    const RoutingGraph g = graph(t);
    for (const char* engine : {"minhop", "updn", "dor", "ftree"}) {
      auto routed = make_engine(engine)->route(g);
      if (!routed.ok()) continue;  // ftree on a torus, dor on a tree
      SCOPED_TRACE(engine);
      RoutingTables no_plan = *routed;
      no_plan.vl_plan.reset();
      for (const RoutingTables* tables : {&*routed, &no_plan}) {
        const DeadlockCheck d = check_deadlock(g, *tables);
        EXPECT_EQ(d.free, testing::deadlock_free(g, *tables));
        EXPECT_EQ(d.free, d.cycle.empty());
        EXPECT_GT(d.channels, 0u);
        EXPECT_EQ(d.vls, tables->vl_plan ? 2u : 1u);
      }
    }
  }
}

TEST(Routing, DorBalancesTorusLoad) {
  for (const char* spec : {"torus:8x8,hosts=4", "torus:4x4x4,hosts=1", "torus:6x6,hosts=2"}) {
    SCOPED_TRACE(spec);
    const Topology t = make(spec);
    const RoutingGraph g = graph(t);
    const LinkLoadStats st = all_to_all_load(g, route(g, "dor"));
    EXPECT_LE(static_cast<double>(st.max_load), 1.2 * st.mean_load) << st.max_load << " vs mean " << st.mean_load;
  }
}

TEST(Routing, AutoPicksTheEngineForTheTopology) {
  EXPECT_EQ(route(graph(make("ft3:radix=8")), "auto").engine, "ftree");
  EXPECT_EQ(route(graph(make("torus:4x4,hosts=1")), "auto").engine, "dor");
  const RoutingTables tables = route(graph(make("torus:4x4,hosts=1")), "auto");
  ASSERT_FALSE(tables.notes.empty());
  EXPECT_EQ(tables.notes[0], "auto: chose dor");
  EXPECT_NE(tables.notes[1].find("ftree does not fit"), std::string::npos) << tables.notes[1];
}

TEST(Routing, FallbackIsReportedNeverSilent) {
  const Topology t = make("torus:4x4,hosts=1");
  const RoutingGraph g = graph(t);
  const std::vector<std::string> chain{"ftree", "updn"};
  auto outcome = route_with_fallback(g, chain);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->tables.engine, "updn");
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_NE(outcome->attempts[0].find("ftree: "), std::string::npos);
  EXPECT_NE(outcome->attempts[0].find("not a fat tree"), std::string::npos) << outcome->attempts[0];
  EXPECT_EQ(outcome->attempts[1], "updn: ok");
  EXPECT_TRUE(outcome->fell_back());

  const std::vector<std::string> bad{"spaghetti"};
  EXPECT_EQ(route_with_fallback(g, bad).error().code(), Code::kInvalidArgument);
}

TEST(Routing, LmcGivesEveryLidItsOwnRoute) {
  const Topology t = make("ft2:radix=8", /*lmc=*/2);
  const RoutingGraph g = graph(t);
  for (const char* engine : {"ftree", "minhop", "updn"}) {
    SCOPED_TRACE(engine);
    const RoutingTables tables = route(g, engine);
    EXPECT_TRUE(check_routes(g, tables).ok());
    // The four LIDs of a remote CA leave its neighbouring leaf on four different uplinks.
    const Endpoint& ep = g.endpoints()[testing::ca_endpoints(g).back()];
    const SwitchIndex other_leaf = 0;
    std::set<PortNum> ports;
    for (uint16_t j = 0; j < 4; ++j) ports.insert(tables.lft[other_leaf][ep.base.value() + j]);
    EXPECT_EQ(ports.size(), 4u);
  }
}

TEST(RoutingGraph, RejectsMissingAndDuplicateLids) {
  auto t = fabric::generate("switch:hosts=2");
  ASSERT_TRUE(t.ok());
  auto g = RoutingGraph::build(*t);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message().find("has no LID"), std::string::npos);
  assign_lids(*t);
  t->port({*t->find("host-b"), 1}).lid = t->port({*t->find("host-a"), 1}).lid;
  g = RoutingGraph::build(*t);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message().find("assigned twice"), std::string::npos);
}

}  // namespace
}  // namespace softib::sm
