#include <gtest/gtest.h>

#include <filesystem>

#include "base/file.hpp"
#include "tools/sim_report.hpp"

namespace softib::tools {
namespace {

SimOptions options(std::string topology) {
  SimOptions o;
  o.topology = std::move(topology);
  o.config.cache_dir.clear();
  return o;
}

TEST(SimReport, SampleFatTreeComesUpIdeal) {
  auto r = run_sim(options(std::string(SOFTIB_TOPOLOGIES) + "/ft2-16.net"));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->ok());
  EXPECT_FALSE(r->generated);
  EXPECT_EQ(r->cas, 16u);
  EXPECT_EQ(r->switches, 4u);
  EXPECT_EQ(r->links, 32u);
  EXPECT_EQ(r->routing_engine, "ftree");
  EXPECT_EQ(r->active_ports, 64u);
  EXPECT_EQ(r->cabled_ports, 64u);
  EXPECT_EQ(r->lids, 20u);
  EXPECT_EQ(r->routes, 16u * 19u);
  EXPECT_EQ(r->delivered, r->routes);
  EXPECT_GT(r->mads, 100u);
  ASSERT_TRUE(r->quality_measured);
  ASSERT_TRUE(r->ideal_max_link_load.has_value());
  EXPECT_EQ(r->max_link_load, *r->ideal_max_link_load);
  EXPECT_EQ(r->shifts_tried, 15u);
  EXPECT_EQ(r->worst_shift_load, 1u);
  EXPECT_GT(r->peak_rss_mb, 0.0);

  const nlohmann::json j = to_json(*r);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["routing_engine"], "ftree");
  EXPECT_EQ(j["routing_quality"]["worst_shift_link_load"], 1);
  EXPECT_NE(to_text(*r).find("result   ok"), std::string::npos);
}

TEST(SimReport, GeneratorSpecsAndTheFallbackChainAreReported) {
  SimOptions o = options("torus:4x4,hosts=2");
  o.config.routing_engine = {"ftree", "dor"};
  auto r = run_sim(o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->generated);
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->routing_engine, "dor");
  ASSERT_EQ(r->routing_attempts.size(), 2u);
  EXPECT_NE(r->routing_attempts[0].find("ftree"), std::string::npos);
  EXPECT_FALSE(r->ideal_max_link_load.has_value());  // a torus is not layered
  EXPECT_NE(to_text(*r).find("fallback: ftree"), std::string::npos);
}

TEST(SimReport, WritesOpenSmDumpsAndPKeyTables) {
  const std::string dir = ::testing::TempDir() + "softib-sim-dumps";
  std::filesystem::remove_all(dir);
  SimOptions o = options("switch:hosts=2");
  o.dump_dir = dir;
  auto r = run_sim(o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->dumps_written.size(), 3u);  // + softib-pkeys.dump
  auto lfts = read_file(dir + "/opensm-lfts.dump");
  ASSERT_TRUE(lfts.ok());
  EXPECT_TRUE(lfts->starts_with("Unicast lids [0-3] of switch Lid "));
  EXPECT_NE(lfts->find("3 lids dumped\n"), std::string::npos);
  auto lst = read_file(dir + "/opensm-subnet.lst");
  ASSERT_TRUE(lst.ok());
  EXPECT_NE(lst->find("{ CA-SM Ports:01 "), std::string::npos);  // the SM's own port
  EXPECT_NE(lst->find("PHY=4x LOG=ACT SPD="), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(SimReport, BadTopologiesAreRejectedWithTheirReason) {
  auto missing = run_sim(options("/nonexistent/fabric.net"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), Code::kNotFound);
  EXPECT_NE(missing.error().message().find("/nonexistent/fabric.net"), std::string::npos);
  auto spec = run_sim(options("ft3:radix=7"));
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace softib::tools
