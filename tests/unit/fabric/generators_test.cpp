#include <gtest/gtest.h>

#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"
#include "fabric/net_writer.hpp"
#include "topology_compare.hpp"

namespace softib::fabric {
namespace {

const std::string kTopologies = SOFTIB_TOPOLOGIES;

void expect_same_as_sample(const Result<Topology>& generated, const char* file) {
  SCOPED_TRACE(file);
  ASSERT_TRUE(generated.ok()) << generated.error().to_string();
  auto sample = read_net_file(kTopologies + "/" + file);
  ASSERT_TRUE(sample.ok()) << sample.error().to_string();
  EXPECT_EQ(testing::first_difference(*generated, sample->topology), "");
}

TEST(Generators, ReproduceTheSampleFabrics) {
  expect_same_as_sample(generate(FatTree2{36, 2, 2, 8, 4}), "ft2-16.net");
  expect_same_as_sample(generate(FatTree2{36, 8, 8, 16, 2}), "ft2-128.net");
  expect_same_as_sample(generate(FatTree2{36, 0, 0, 0, 1}), "ft2-648.net");
  expect_same_as_sample(generate("torus:8x8,hosts=4"), "t2d-8x8-256.net");
}

TEST(Generators, FullThreeLevelFatTreeShape) {
  for (int k : {4, 8, 36}) {
    SCOPED_TRACE(k);
    auto t = generate(FatTree3{k, 0, 0});
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    EXPECT_EQ(t->count(NodeType::kCa), static_cast<size_t>(k * k * k / 4));
    EXPECT_EQ(t->count(NodeType::kSwitch), static_cast<size_t>(5 * k * k / 4));
    // Every switch port is used in a full tree.
    for (const TopoNode& n : t->nodes()) {
      if (n.type != NodeType::kSwitch) continue;
      const NodeIndex i = *t->find(n.id);
      for (uint8_t p = 1; p <= n.num_ports; ++p) ASSERT_TRUE(t->port({i, p}).peer.valid()) << n.id << "[" << int(p) << "]";
    }
  }
}

TEST(Generators, TorusAndMeshWiring) {
  auto torus = generate("torus:3x3x3,hosts=2");
  ASSERT_TRUE(torus.ok()) << torus.error().to_string();
  EXPECT_EQ(torus->count(NodeType::kSwitch), 27u);
  EXPECT_EQ(torus->link_count(), 27u * 2 + 27u * 3);  // hosts + one +d link per switch and dim
  const NodeIndex corner = *torus->find("S-T02-02-02");
  EXPECT_EQ(torus->port({corner, 3}).peer, (PortRef{*torus->find("S-T00-02-02"), 4}));  // +x wraps

  auto mesh = generate("mesh:3x3,hosts=1");
  ASSERT_TRUE(mesh.ok());
  EXPECT_EQ(mesh->link_count(), 9u + 2 * 3 * 2);  // no wrap-around links
  EXPECT_FALSE(mesh->port({*mesh->find("S-T02-02"), 2}).peer.valid());
}

TEST(Generators, Presets) {
  Topology b2b = back_to_back();
  EXPECT_EQ(b2b.node_count(), 2u);
  EXPECT_EQ(b2b.link_count(), 1u);
  auto sw = generate("switch");
  ASSERT_TRUE(sw.ok());
  EXPECT_TRUE(sw->find("host-a").has_value());
  EXPECT_TRUE(sw->find("host-b").has_value());
  EXPECT_EQ(sw->link_count(), 2u);
}

TEST(Generators, GeneratedFilesLoadInIbsimOrderWithTheSameGuids) {
  auto t = generate("ft3:radix=8");
  ASSERT_TRUE(t.ok());
  NetWriteOptions compact;
  compact.guid_names = false;
  compact.guids = false;
  compact.header = false;
  compact.group_by_type = false;
  auto back = read_net(write_net(*t, compact));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(testing::first_difference(*t, back->topology), "");
}

TEST(Generators, BadSpecsExplainThemselves) {
  struct Bad {
    const char* spec;
    const char* error;
  };
  for (const Bad& b : {Bad{"ft2:radix=8,hosts=6,spines=2,parallel=2", "a leaf needs 6 hosts + 4 uplinks > radix 8"},
                       Bad{"ft3:radix=7", "even radix"},
                       Bad{"torus:8", "2 or 3 dimensions"},
                       Bad{"torus:8x8,hosts=40", "> radix 36"},
                       Bad{"ft2:color=red", "unknown parameter \"color\""},
                       Bad{"ft2:radix=x", "radix=x: not a number"},
                       Bad{"hypercube", "unknown generator \"hypercube\""}}) {
    auto r = generate(b.spec);
    ASSERT_FALSE(r.ok()) << b.spec;
    EXPECT_NE(r.error().message().find(b.error), std::string::npos) << b.spec << ": " << r.error().message();
  }
}

}  // namespace
}  // namespace softib::fabric
