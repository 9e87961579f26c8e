#include <gtest/gtest.h>

#include "base/file.hpp"
#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"
#include "tools/topo_command.hpp"

namespace softib::tools {
namespace {

TEST(TopoGen, MatchesTheSampleFabricFileByteForByte) {
  // topologies/ft2-648.net was written by the same convention ibsim's tools use: the
  // generator must reproduce it (the sample ends with one extra blank line).
  auto text = topo_gen("ft2");
  ASSERT_TRUE(text.ok()) << text.error().to_string();
  auto sample = read_file(std::string(SOFTIB_TOPOLOGIES) + "/ft2-648.net");
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(*text + "\n", *sample);
}

TEST(TopoGen, RoundTripsThroughTheNetReader) {
  for (const char* spec : {"ft3:radix=8", "torus:3x3x3,hosts=2", "mesh:4x2", "b2b", "switch:hosts=5"}) {
    SCOPED_TRACE(spec);
    auto text = topo_gen(spec);
    ASSERT_TRUE(text.ok());
    auto back = fabric::read_net(*text, spec);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    auto direct = fabric::generate(std::string_view(spec));
    ASSERT_TRUE(direct.ok());
    ASSERT_EQ(back->topology.node_count(), direct->node_count());
    EXPECT_EQ(back->topology.link_count(), direct->link_count());
    for (uint32_t i = 0; i < direct->node_count(); ++i) {
      const fabric::NodeIndex n(i);
      EXPECT_EQ(back->topology.node(n).id, direct->node(n).id);
      EXPECT_EQ(back->topology.node(n).node_guid, direct->node(n).node_guid) << direct->node(n).id;
    }
  }
}

TEST(TopoShow, DescribesAFabric) {
  auto text = topo_show(std::string(SOFTIB_TOPOLOGIES) + "/ft2-16.net");
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("20 nodes (16 CAs, 4 switches, 0 routers), 32 links"), std::string::npos);
  EXPECT_NE(text->find("switch-to-switch links 16"), std::string::npos);
  EXPECT_NE(text->find("32 links at 4xEDR"), std::string::npos);
  EXPECT_FALSE(topo_show("ft9").ok());
}

}  // namespace
}  // namespace softib::tools
