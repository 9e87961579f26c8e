#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "base/format.hpp"
#include "sm/guid2lid.hpp"
#include "sm/partitions.hpp"
#include "sm/sm_config.hpp"

namespace softib::sm {
namespace {

using Kind = PartitionMember::Kind;

PartitionConfig parse_ok(std::string_view text) {
  auto r = parse_partitions(text, "p.conf");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(*r) : PartitionConfig{};
}

TEST(Partitions, DefaultPartitionAlwaysExists) {
  const PartitionConfig none = default_partitions();
  ASSERT_EQ(none.partitions.size(), 1u);
  EXPECT_EQ(none.partitions[0].pkey, kDefaultPKey);
  EXPECT_EQ(none.partitions[0].members[0], (PartitionMember{Kind::kAll, Guid(), Membership::kFull}));
  ASSERT_EQ(none.partitions[0].groups.size(), 1u);
  EXPECT_EQ(none.partitions[0].groups[0].mgid.to_string(), "ff12:401b:ffff::ffff:ffff");

  // A file without a Default rule: ALL limited, SELF full, and no broadcast group.
  const PartitionConfig c = parse_ok("Storage=0x8001, ipoib : ALL_CAS=full ;");
  const Partition* d = c.find(kDefaultPKey);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->members[0], (PartitionMember{Kind::kAll, Guid(), Membership::kLimited}));
  EXPECT_EQ(d->members[1], (PartitionMember{Kind::kSelf, Guid(), Membership::kFull}));
  EXPECT_TRUE(d->groups.empty());
  const Partition* s = c.find(PKey(0x0001));  // only the low 15 bits of 0x8001 are used
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name, "Storage");
  EXPECT_TRUE(s->ipoib);
  ASSERT_EQ(s->groups.size(), 1u);
  EXPECT_EQ(s->groups[0].mgid.to_string(), "ff12:401b:8001::ffff:ffff");
  EXPECT_EQ(s->groups[0].qkey, kIpoibQKey);
}

TEST(Partitions, OpenSmDocumentationExamples) {
  const char* text = R"(
 Default=0x7fff : ALL, SELF=full ;
 NewPartition , ipoib : 0x123456=full, 0x3456789034=limi, 0x2134af2306 ;
 YetAnotherOne = 0x300 : SELF=full ;
 YetAnotherOne = 0x300 : ALL=limited ;
 ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;
 # 0x123453, 0x123454 will be limited
 ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;
 ShareIO = 0x80 , defmember=full : 0x12345b, 0x12345c=limited, 0x12345d;

 # multicast groups added to default
 Default=0x7fff,ipoib:
        mgid=ff12:401b::0707,sl=1 # random IPv4 group
        mgid=ff12:601b::16    # MLDv2-capable routers
        mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group
        ALL=full;
)";
  const PartitionConfig c = parse_ok(text);
  const Partition* np = nullptr;
  for (const Partition& p : c.partitions)
    if (p.name == "NewPartition") np = &p;
  ASSERT_NE(np, nullptr);
  EXPECT_EQ(np->pkey, PKey(0x0001));  // generated
  ASSERT_EQ(np->members.size(), 3u);
  EXPECT_EQ(np->members[0], (PartitionMember{Kind::kGuid, Guid(0x123456), Membership::kFull}));
  EXPECT_EQ(np->members[1].membership, Membership::kLimited);  // "limi"
  EXPECT_EQ(np->members[2].membership, Membership::kLimited);

  const Partition* y = c.find(PKey(0x300));
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->members.size(), 2u);  // two rules merged

  const Partition* share = c.find(PKey(0x80));
  ASSERT_NE(share, nullptr);
  ASSERT_EQ(share->members.size(), 8u);
  EXPECT_EQ(share->members[0].membership, Membership::kFull);     // defmember=full
  EXPECT_EQ(share->members[2].membership, Membership::kLimited);  // no defmember here
  EXPECT_EQ(share->members[4].membership, Membership::kFull);     // =full
  EXPECT_EQ(share->members[6].membership, Membership::kLimited);  // =limited beats defmember

  const Partition* d = c.find(kDefaultPKey);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->ipoib);
  ASSERT_EQ(d->groups.size(), 4u);  // broadcast + 3 mgid lines
  EXPECT_EQ(d->groups[1].mgid.to_string(), "ff12:401b:ffff::707");  // P_Key bits filled in
  EXPECT_EQ(d->groups[1].sl, 1);
  EXPECT_EQ(d->groups[1].qkey, kIpoibQKey);
  EXPECT_EQ(d->groups[3].qkey, QKey(0xDEADBEEF));
  EXPECT_EQ(d->groups[3].mtu, 2);
}

TEST(Partitions, ScopesCreateOneGroupEach) {
  const PartitionConfig c = parse_ok("Default=0x7fff, ipoib, scope=2, scope=5, mtu=5, rate=7 : ALL=full;");
  const Partition* d = c.find(kDefaultPKey);
  ASSERT_EQ(d->groups.size(), 2u);
  EXPECT_EQ(d->groups[0].mgid.to_string(), "ff12:401b:ffff::ffff:ffff");
  EXPECT_EQ(d->groups[1].mgid.to_string(), "ff15:401b:ffff::ffff:ffff");
  EXPECT_EQ(d->groups[1].mtu, 5);
  EXPECT_EQ(d->groups[1].rate, 7);
}

TEST(Partitions, KeywordsAndEmptyPartitionsDropped) {
  const PartitionConfig c = parse_ok(
      "a=0x10 : ALL_CAS=full, ALL_SWITCHES, ALL_ROUTERS=both, SELF ;\n"
      "empty=0x20 : NONE ;\n"
      "b=0x30 : ;\n");
  const Partition* a = c.find(PKey(0x10));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->members[0].kind, Kind::kAllCas);
  EXPECT_EQ(a->members[1].kind, Kind::kAllSwitches);
  EXPECT_EQ(a->members[2], (PartitionMember{Kind::kAllRouters, Guid(), Membership::kBoth}));
  EXPECT_EQ(a->members[3].kind, Kind::kSelf);
  EXPECT_EQ(c.find(PKey(0x20)), nullptr);
  EXPECT_EQ(c.find(PKey(0x30)), nullptr);
}

TEST(Partitions, ErrorsNameTheLineAndReason) {
  struct Bad {
    const char* text;
    const char* error;
  };
  for (const Bad& b : {
           Bad{"Default=0x7fff ALL;", "p.conf:1: no partition definition found"},
           Bad{"\n\nx=zz : ALL;", "p.conf:3: bad partition definition: P_Key \"zz\""},
           Bad{"x=0x10 : 0xNOTHEX ;", "p.conf:1: bad PortGUID \"0xNOTHEX\""},
           Bad{"x=0x10, mtu=9 : ALL ;", "p.conf:1: flag 'mtu': \"9\" is not a number up to 5"},
           Bad{"x=0x10, rate=1 : ALL ;", "p.conf:1: flag 'rate': IBA rate codes start at 2"},
           Bad{"x=0x10, defmember=sometimes : ALL ;", "p.conf:1: flag 'defmember' wants full, limited or both"},
           Bad{"x=0x10 :\n mgid=fe80::1\n ALL;", "p.conf:2: mgid \"fe80::1\": gid is not multicast"},
           Bad{"x=0x10,ipoib :\n mgid=ff12:401b:8020::1\n ALL;", "p.conf:2: IP multicast group ff12:401b:8020::1 has P_Key 0x8020"},
           Bad{"x=0x10,ipoib :\n mgid=ff12:401b::1,mtu=5\n ALL;", "must use its partition's broadcast rate 3 and mtu 4"},
       }) {
    auto r = parse_partitions(b.text, "p.conf");
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_NE(r.error().message().find(b.error), std::string::npos) << r.error().message();
  }
}

TEST(Partitions, WarningsForWhatOpenSmIgnores) {
  const PartitionConfig c = parse_ok("x=0x10, fancy : 0x1=sometimes\n");
  ASSERT_EQ(c.warnings.size(), 3u);
  EXPECT_EQ(c.warnings[0], "p.conf:1: unrecognized partition flag 'fancy' ignored");
  EXPECT_EQ(c.warnings[1], "p.conf:1: unrecognized port flag 'sometimes', assuming limited");
  EXPECT_EQ(c.warnings[2], "p.conf:1: definition of partition 0x0010 has no ';'");
}

TEST(Guid2Lid, RoundTripsOpenSmFormat) {
  Guid2Lid g;
  g.set(Guid(0x0002c903000a1b2d), {Lid(1), Lid(1)});
  g.set(Guid(0x0002c903000a1b30), {Lid(4), Lid(7)});
  const std::string text = g.to_text();
  EXPECT_EQ(text, "0x0002c903000a1b2d 0x0001 0x0001\n\n0x0002c903000a1b30 0x0004 0x0007\n\n");
  EXPECT_EQ(Guid2Lid::parse(text, "guid2lid"), g);
}

TEST(Guid2Lid, BadEntriesAreSkippedWithWarnings) {
  std::vector<std::string> warnings;
  const Guid2Lid g = Guid2Lid::parse(
      "0x10 0x0001 0x0001\n\nbogus 1 1\n\n0x20 0x0005\n\n0x30 0x0009 0x0002\n\n0x10 0x0003 0x0003\n", "g2l", &warnings);
  EXPECT_EQ(g.size(), 1u);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[0], "g2l:3: bad GUID; entry ignored");
  EXPECT_EQ(warnings[1], "g2l:5: expected \"<guid> <min lid> <max lid>\"; entry ignored");
  EXPECT_EQ(warnings[2], "g2l:7: bad LID range; entry ignored");
  EXPECT_EQ(warnings[3], "g2l:9: GUID 0x0000000000000010 listed twice; entry ignored");
}

TEST(Guid2Lid, SaveIsAtomicAndLoadsBack) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("softib-g2l-{}", ::getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "guid2lid").string();
  auto missing = Guid2Lid::load(path);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->size(), 0u);  // first start
  Guid2Lid g;
  g.set(Guid(0x42), {Lid(12), Lid(12)});
  ASSERT_TRUE(g.save(path).ok());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  auto back = Guid2Lid::load(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, g);
  fs::remove_all(dir);
}

TEST(SmConfig, OpenSmNamesAndWarnings) {
  const char* text =
      "# opensm.conf\n"
      "guid 0x0002c903000a1b2d\n"
      "sm_priority 14\n"
      "routing_engine ftree,updn\n"
      "lmc 2\n"
      "subnet_prefix 0xfe80000000000000\n"
      "sweep_interval 5\n"
      "partition_config_file /etc/opensm/partitions.conf\n"
      "log_file (null)\n"
      "honor_guid2lid_file TRUE\n"
      "qos_max_vls 15\n"
      "flux_capacitor on\n";
  auto r = parse_sm_config(text, "opensm.conf");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const SmConfig& c = r->config;
  EXPECT_EQ(c.guid, Guid(0x0002c903000a1b2d));
  EXPECT_EQ(c.sm_priority, 14);
  EXPECT_EQ(c.routing_engine, (std::vector<std::string>{"ftree", "updn"}));
  EXPECT_EQ(c.lmc, 2);
  EXPECT_EQ(c.sweep_interval, 5u);
  EXPECT_EQ(c.partition_config_file, "/etc/opensm/partitions.conf");
  EXPECT_EQ(c.log_file, "");
  EXPECT_TRUE(c.honor_guid2lid_file);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0], "opensm.conf:11: OpenSM option \"qos_max_vls\" ignored");
  EXPECT_EQ(r->warnings[1], "opensm.conf:12: unknown option \"flux_capacitor\" ignored");
}

// softib sm -c writes what -F reads back: every implemented option, none lost or changed.
TEST(SmConfig, WrittenConfigReadsBackTheSame) {
  SmConfig c;
  c.guid = Guid(0x0002c903000a1b2dULL);
  c.sm_priority = 9;
  c.routing_engine = {"updn", "minhop"};
  c.lmc = 1;
  c.sweep_interval = 0;
  c.sm_key = 0x1122334455667788ULL;
  c.partition_config_file = "/tmp/p.conf";
  c.force_heavy_sweep = true;
  c.sweep_on_trap = false;
  c.max_op_vls = 3;
  const std::string text = write_sm_config(c);
  EXPECT_NE(text.find("\nguid 0x0002c903000a1b2d\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nrouting_engine updn,minhop\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nlog_file (null)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsweep_on_trap FALSE\n"), std::string::npos) << text;
  auto back = parse_sm_config(text, "written.conf");
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_TRUE(back->warnings.empty());
  EXPECT_EQ(write_sm_config(back->config), text);
  EXPECT_EQ(back->config.guid, c.guid);
  EXPECT_EQ(back->config.sm_key, c.sm_key);
  EXPECT_EQ(back->config.routing_engine, c.routing_engine);
  EXPECT_EQ(back->config.max_op_vls, 3);
  EXPECT_FALSE(back->config.sweep_on_trap);
}

TEST(SmConfig, BadValuesAreErrors) {
  auto r = parse_sm_config("sm_priority 16\n", "c");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("c:1: sm_priority"), std::string::npos) << r.error().message();
  EXPECT_FALSE(parse_sm_config("lmc seven\n", "c").ok());
  EXPECT_FALSE(parse_sm_config("force_heavy_sweep maybe\n", "c").ok());
  SmConfig c;
  EXPECT_TRUE(set_sm_option(c, "sm_priority", "3").ok());
  EXPECT_EQ(c.sm_priority, 3);
  EXPECT_EQ(set_sm_option(c, "nope", "1").error().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace softib::sm
