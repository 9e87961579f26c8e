// The `softib` binary itself: exit codes, output formats, errors on bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(SOFTIB_CLI) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int w = ::pclose(p);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
  return r;
}

TEST(Cli, SimPrintsJsonAndSucceeds) {
  const CliRun r = run("sim switch:hosts=3 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["cas"], 3);
  EXPECT_EQ(j["active_ports"], 6);
}

TEST(Cli, BadInputGivesAClearErrorAndStatusTwo) {
  CliRun r = run("sim /nonexistent.net");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("cannot open net file \"/nonexistent.net\""), std::string::npos) << r.out;
  r = run("sim b2b --routing-engine nosuch");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("nosuch"), std::string::npos) << r.out;
  r = run("sim b2b --lmc 9");
  EXPECT_NE(r.status, 0);
  r = run("frobnicate");
  EXPECT_NE(r.status, 0);
}

TEST(Cli, TopoGenWritesANetFile) {
  const CliRun r = run("topo gen switch:hosts=2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Switch\t36 \"S-switch\""), std::string::npos) << r.out;
}

}  // namespace
