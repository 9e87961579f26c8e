#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fabric/net_reader.hpp"
#include "fabric/net_writer.hpp"
#include "topology_compare.hpp"

namespace softib::fabric {
namespace {

const std::string kTopologies = SOFTIB_TOPOLOGIES;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Topology load(const std::string& name) {
  auto r = read_net_file(kTopologies + "/" + name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(r->topology) : Topology{};
}

TEST(NetReader, LoadsEverySampleFabric) {
  struct Expect {
    const char* file;
    size_t cas, switches, links;
  };
  for (const Expect& e : {Expect{"ft2-16.net", 16, 4, 16 + 2 * 2 * 4},
                          Expect{"ft2-128.net", 128, 16, 128 + 8 * 8 * 2},
                          Expect{"ft2-648.net", 648, 54, 648 + 36 * 18},
                          Expect{"t2d-8x8-256.net", 256, 64, 256 + 64 * 2},
                          Expect{"ibnetdiscover-ft2-16.net", 16, 4, 16 + 2 * 2 * 4}}) {
    SCOPED_TRACE(e.file);
    Topology t = load(e.file);
    EXPECT_EQ(t.count(NodeType::kCa), e.cas);
    EXPECT_EQ(t.count(NodeType::kSwitch), e.switches);
    EXPECT_EQ(t.link_count(), e.links);
  }
}

TEST(NetReader, IbsimCountersAssignGuidsInFileOrder) {
  Topology t = load("ft2-16.net");
  // CAs come first in the file: 0x100000, 0x100002, ...; switches from 0x200000.
  EXPECT_EQ(t.node(*t.find("H-00001")).node_guid, Guid(0x100000));
  EXPECT_EQ(t.port({*t.find("H-00001"), 1}).guid, Guid(0x100001));
  EXPECT_EQ(t.node(*t.find("H-00002")).node_guid, Guid(0x100002));
  EXPECT_EQ(t.node(*t.find("S-L0001")).node_guid, Guid(0x200000));
  EXPECT_EQ(t.node(*t.find("S-S0002")).node_guid, Guid(0x200003));
  EXPECT_TRUE(t.node(*t.find("S-L0001")).enhanced_port0);
  EXPECT_EQ(t.node(*t.find("S-L0001")).description, "leaf-0001");
}

TEST(NetReader, IbnetdiscoverDumpKeepsGuidsAndLids) {
  Topology t = load("ibnetdiscover-ft2-16.net");
  const NodeIndex leaf2 = *t.find("S-0000000000200001");
  EXPECT_EQ(t.node(leaf2).node_guid, Guid(0x200001));
  EXPECT_EQ(t.node(leaf2).description, "leaf-0002");
  EXPECT_EQ(t.port({leaf2, 0}).lid, Lid(3));
  EXPECT_TRUE(t.node(leaf2).enhanced_port0);
  const NodeIndex h16 = *t.find("H-000000000010001e");
  EXPECT_EQ(t.node(h16).node_guid, Guid(0x10001e));
  EXPECT_EQ(t.port({h16, 1}).guid, Guid(0x10001f));
  EXPECT_EQ(t.port({h16, 1}).lid, Lid(22));
  EXPECT_EQ(t.port({h16, 1}).peer, (PortRef{leaf2, 8}));
}

TEST(NetWriter, IbnetdiscoverDumpRoundTripsByteForByte) {
  const std::string original = slurp(kTopologies + "/ibnetdiscover-ft2-16.net");
  auto r = read_net(original, kTopologies + "/ibnetdiscover-ft2-16.net");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Topology& t = r->topology;
  NetWriteOptions o;
  o.generated_on = "Sat Nov 21 08:58:01 2026";
  o.initiated_from = PortRef{*t.find("H-0000000000100000"), 1};
  EXPECT_EQ(write_net(t, o), original);
}

TEST(NetWriter, WrittenFilesReadBackIdentical) {
  for (const char* file : {"ft2-16.net", "t2d-8x8-256.net", "ibnetdiscover-ft2-16.net"}) {
    SCOPED_TRACE(file);
    Topology t = load(file);
    NetWriteOptions keep_ids;
    keep_ids.guid_names = false;
    auto back = read_net(write_net(t, keep_ids));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(testing::first_difference(t, back->topology), "");
  }
}

TEST(NetWriter, GuidNamesReloadWithIdenticalGuids) {
  Topology t = load("ft2-128.net");
  auto back = read_net(write_net(t));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  ASSERT_EQ(back->topology.node_count(), t.node_count());
  for (const TopoNode& n : t.nodes()) {
    const std::string name = fmt::format("{}-{:016x}", n.type == NodeType::kSwitch ? 'S' : 'H', n.node_guid.value());
    auto m = back->topology.find(name);
    ASSERT_TRUE(m.has_value()) << name;
    EXPECT_EQ(back->topology.node(*m).node_guid, n.node_guid);
    EXPECT_EQ(back->topology.node(*m).description, n.description);
  }
}

TEST(NetReader, IbsimExampleWithDefaultsAndOptions) {
  // From ibsim's net-examples: no annotations, w= options, a missing remote port means 1.
  const char* text =
      "# comment\n"
      "width=3\n"
      "Switch\t8 \"Switch1\"\n"
      "[1]\t\"Hca1\"[1]\n"
      "[2]\t\"Hca2\"[2]\tw=1\n"
      "[3]\t\"Switch2\"[3]\n"
      "\n"
      "Switch 8 \"Switch2\"\n"
      "[3]\t\"Switch1\"[3]\n"
      "\n"
      "Hca\t2 \"Hca1\"\n"
      "[1]\t\"Switch1\"\n"
      "\n"
      "Hca\t2 \"Hca2\"\n"
      "[2]\t\"Switch1\"[2]\tw=1\n";
  auto r = read_net(text, "example.net");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Topology& t = r->topology;
  EXPECT_EQ(t.link_count(), 3u);
  EXPECT_EQ(t.port({*t.find("Switch1"), 1}).caps.width_enabled, 3);
  EXPECT_EQ(t.port({*t.find("Switch1"), 2}).caps.width_enabled, 1);
  EXPECT_FALSE(t.node(*t.find("Switch1")).enhanced_port0);  // ibsim's default
  // Hca1 (2 ports) took 0x100000..0x100002; Hca2 starts at 0x100003.
  EXPECT_EQ(t.node(*t.find("Hca2")).node_guid, Guid(0x100003));
}

TEST(NetReader, GuidDirectives) {
  const char* text =
      "switchguid=0x0002c90300001000\n"
      "Switch 2 \"S1\" # \"one\" enhanced port 0 lid 7 lmc 1\n"
      "[1] \"C1\"[1] # \"c\" lid 0 1xSDR\n"
      "\n"
      "switchguid+0x10\n"
      "sysimgguid=0x5555\n"
      "vendid=0x2c9\n"
      "devid=0xc738\n"
      "Switch 2 \"S2\"\n"
      "\n"
      "caguid=+0x100\n"
      "Ca 2 \"C1\" # \"cee\"\n"
      "[1](abc) \"S1\"[1] # lid 9 lmc 2 \"one\" lid 7 1xSDR\n";
  auto r = read_net(text);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Topology& t = r->topology;
  const TopoNode& s1 = t.node(*t.find("S1"));
  const TopoNode& s2 = t.node(*t.find("S2"));
  EXPECT_EQ(s1.node_guid, Guid(0x0002c90300001000));
  EXPECT_EQ(t.port({*t.find("S1"), 0}).lid, Lid(7));
  EXPECT_EQ(t.port({*t.find("S1"), 0}).lmc, 1);
  EXPECT_EQ(s2.node_guid, Guid(0x0002c90300001010));  // relative to the last absolute base
  EXPECT_EQ(s2.system_image_guid, Guid(0x5555));
  EXPECT_EQ(s2.vendor_id, 0x2c9u);
  EXPECT_EQ(s2.device_id, 0xc738);
  EXPECT_EQ(s1.system_image_guid, s1.node_guid);  // sysimgguid applies to the next node only
  const TopoNode& c1 = t.node(*t.find("C1"));
  EXPECT_EQ(c1.node_guid, Guid(0x100));  // "caguid=+0x100" is absolute (ibsim's strtoull)
  EXPECT_EQ(c1.device_id, 0xc738);       // devid is sticky
  EXPECT_EQ(c1.vendor_id, 0u);           // vendid is not
  EXPECT_EQ(t.port({*t.find("C1"), 1}).guid, Guid(0xabc));
  EXPECT_EQ(t.port({*t.find("C1"), 1}).lid, Lid(9));
  EXPECT_EQ(t.port({*t.find("C1"), 1}).lmc, 2);
  EXPECT_EQ(t.port({*t.find("C1"), 1}).caps.width_enabled, 1);
}

TEST(NetReader, EqualsSignInsideCommentIsNotAnOption) {
  // ibsim reads "type=5" in a description as e=5; softib reads options before '#' only.
  const char* text =
      "Switch 2 \"S\" # \"sw\"\n"
      "[1] \"H\"[1] # \"type=5 host\" lid 0 4xQDR\n"
      "\n"
      "Ca 1 \"H\" # \"type=5 host\"\n"
      "[1] \"S\"[1] # lid 0 lmc 0 \"sw\" lid 0 4xQDR\n";
  auto r = read_net(text);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->topology.port({*r->topology.find("S"), 1}).caps.ext_speed_enabled, 0);
}

TEST(NetReader, ModulesIncludesAndAliases) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("softib-net-{}", ::getpid());
  fs::create_directories(dir);
  {
    std::ofstream(dir / "rack.net") << "module=\"r1\"\n"
                                       "Switch 4 \"leaf\"\n"
                                       "@[4] \"up\"\n"
                                       "[1] \"h1\"[1]\n"
                                       "\n"
                                       "Ca 1 \"h1\"\n"
                                       "[1] \"leaf\"[1]\n";
    std::ofstream(dir / "top.net") << "include \"rack.net\"\n"
                                      "module=\"\"\n"
                                      "Switch 4 \"core\"\n"
                                      "[1] \"r1@up\"\n";
  }
  auto r = read_net_file((dir / "top.net").string());
  fs::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Topology& t = r->topology;
  ASSERT_TRUE(t.find("r1#leaf").has_value());
  EXPECT_EQ(t.port({*t.find("core"), 1}).peer, (PortRef{*t.find("r1#leaf"), 4}));
  EXPECT_EQ(t.port({*t.find("r1#h1"), 1}).peer, (PortRef{*t.find("r1#leaf"), 1}));
}

struct BadFile {
  const char* name;
  const char* text;
  const char* error;  // expected substring, including the line number
};

TEST(NetReader, BadFilesAreRejectedWithFileLineAndReason) {
  const BadFile cases[] = {
      {"unknown remote", "Switch 2 \"S\"\n[1] \"X\"[1]\n", "bad.net:2: cannot find remote node \"X\""},
      {"one-sided cable", "Switch 2 \"S\"\n[1] \"H\"[1]\n\nCa 1 \"H\"\n",
       "bad.net:2: \"S\"[1] is cabled to \"H\"[1], which does not list the cable back"},
      {"mis-cabled", "Switch 2 \"S\"\n[1] \"H\"[1]\n[2] \"T\"[1]\n\nCa 1 \"H\"\n[1] \"S\"[2]\n\nCa 1 \"T\"\n[1] \"S\"[2]\n",
       "bad.net:2: \"S\"[1] is cabled to \"H\"[1], but that port is cabled to \"S\"[2] (line 6)"},
      {"port out of range", "Switch 2 \"S\"\n[3] \"H\"[1]\n", "bad.net:2: port 3 out of range: \"S\" has ports 1..2"},
      {"port zero", "Switch 2 \"S\"\n[0] \"H\"[1]\n", "bad.net:2: port 0 out of range"},
      {"remote port out of range", "Switch 2 \"S\"\n[1] \"H\"[4]\n\nCa 1 \"H\"\n[1] \"S\"[1]\n",
       "bad.net:2: remote port 4 out of range: \"H\" has ports 1..1"},
      {"duplicate port", "Switch 2 \"S\"\n[1] \"H\"[1]\n[1] \"H\"[1]\n", "bad.net:3: port 1 of \"S\" listed twice (first at line 2)"},
      {"duplicate id", "Switch 2 \"S\"\n\nSwitch 2 \"S\"\n", "bad.net:3: node id \"S\" already exists"},
      {"duplicate guid", "switchguid=0x10\nSwitch 2 \"A\"\n\nswitchguid=0x10\nSwitch 2 \"B\"\n",
       "bad.net:5: node GUID 0x0000000000000010 is already used by \"A\""},
      {"port line outside record", "Switch 2 \"S\"\n\n[1] \"H\"[1]\n", "bad.net:3: port line outside a node record"},
      {"no port count", "Switch \"S\"\n", "bad.net:1: expected a port count"},
      {"too many ports", "Switch 255 \"S\"\n", "bad.net:1: 255 ports: at most 254"},
      {"no id", "Ca 1 S\n", "bad.net:1: expected a quoted node id"},
      {"reserved char in id", "Ca 1 \"a#b\"\n", "bad.net:1: node id \"a#b\": '#' and '@' are reserved"},
      {"bad lid", "Switch 2 \"S\" # \"s\" lid 50000\n", "bad.net:1: lid 50000 is not a unicast LID"},
      {"bad lmc", "Switch 2 \"S\" # \"s\" lid 5 lmc 9\n", "bad.net:1: lmc 9 out of range 0..7"},
      {"bad width option", "Switch 2 \"S\"\n[1] \"H\"[1] w=40\n", "bad.net:2: bad enabled width 40"},
      {"bad width line", "width=0\n", "bad.net:1: width must be 1..31"},
      {"bad assignment", "vendid 5\n", "bad.net:1: bad assignment: missing '='"},
      {"missing include", "include \"does-not-exist.net\"\n", "bad.net:1: cannot open net file"},
      {"unknown alias", "Switch 2 \"S\"\n[1] \"@nope\"\n", "bad.net:2: unknown alias \"@nope\""},
      {"unterminated bracket", "Switch 2 \"S\"\n[1 \"H\"[1]\n", "bad.net:2: expected a port number in brackets"},
  };
  for (const BadFile& c : cases) {
    auto r = read_net(c.text, "bad.net");
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().code(), Code::kParseError) << c.name;
    EXPECT_NE(r.error().message().find(c.error), std::string::npos)
        << c.name << ": got \"" << r.error().message() << "\"";
  }
}

TEST(NetReader, DuplicateGuidsLoadWhenAllowed) {
  NetReadOptions allow;
  allow.allow_duplicate_guids = true;
  auto r = read_net("switchguid=0x10\nSwitch 2 \"A\"\n\nswitchguid=0x10\nSwitch 2 \"B\"\n", "dup.net", allow);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->topology.node(*r->topology.find("B")).node_guid, Guid(0x10));
}

TEST(NetReader, IncludeDepthIsBounded) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("softib-inc-{}", ::getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "loop.net") << "include \"loop.net\"\n";
  auto r = read_net_file((dir / "loop.net").string());
  fs::remove_all(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("includes nested deeper than 9"), std::string::npos) << r.error().message();
}

TEST(NetReader, WarnsAboutIgnoredConsoleCommands) {
  auto r = read_net("do Link \"S1\"[3] \"S2\"[3]\nSwitch 2 \"S\"\n", "w.net");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "w.net:1: ibsim console command ignored");
}

TEST(NetReader, CrLfLineEndings) {
  auto r = read_net("Switch 2 \"S\"\r\n[1] \"H\"[1]\r\n\r\nCa 1 \"H\"\r\n[1] \"S\"[1]\r\n");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->topology.link_count(), 1u);
}

}  // namespace
}  // namespace softib::fabric
