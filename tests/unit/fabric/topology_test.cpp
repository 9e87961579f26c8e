#include <gtest/gtest.h>

#include "fabric/link_rate.hpp"
#include "fabric/topology.hpp"

namespace softib::fabric {
namespace {

TEST(Topology, AddConnectDisconnect) {
  Topology t;
  auto s = t.add_node(NodeType::kSwitch, "S", "sw", Guid(0x200000), 8);
  auto h = t.add_node(NodeType::kCa, "H", "", Guid(0x100000), 2);
  ASSERT_TRUE(s.ok() && h.ok());
  EXPECT_EQ(t.node(*h).description, "H");  // defaults to the id
  EXPECT_EQ(t.port({*h, 2}).guid, Guid(0x100002));
  EXPECT_EQ(t.port({*s, 5}).guid, Guid(0x200000));
  ASSERT_TRUE(t.connect({*s, 1}, {*h, 1}).ok());
  EXPECT_EQ(t.link_count(), 1u);
  EXPECT_EQ(t.port({*h, 1}).peer, (PortRef{*s, 1}));
  auto again = t.connect({*s, 1}, {*h, 2});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message().find("already cabled"), std::string::npos);
  EXPECT_FALSE(t.connect({*s, 0}, {*h, 2}).ok());
  EXPECT_FALSE(t.connect({*s, 9}, {*h, 2}).ok());
  t.disconnect({*h, 1});
  EXPECT_EQ(t.link_count(), 0u);
  EXPECT_FALSE(t.port({*s, 1}).peer.valid());
  EXPECT_EQ(t.add_node(NodeType::kCa, "H", "", Guid(1), 1).error().code(), Code::kAlreadyExists);
  EXPECT_EQ(t.add_node(NodeType::kCa, "X", "", Guid(1), 0).error().code(), Code::kInvalidArgument);
}

TEST(LinkRate, TrainsToHighestCommon) {
  const LinkCaps edr = *caps_from_annotation("4xEDR");
  const LinkCaps qdr12 = *caps_from_annotation("12xQDR");
  auto r = train(edr, edr);
  ASSERT_TRUE(r.rate.has_value());
  EXPECT_EQ(r.rate->width_name() + r.rate->speed_name(), "4xEDR");
  r = train(edr, qdr12);  // 1x|4x vs 1x|4x|12x; EDR vs up to QDR
  ASSERT_TRUE(r.rate.has_value());
  EXPECT_EQ(r.rate->width_name() + r.rate->speed_name(), "4xQDR");
  EXPECT_EQ(train(*caps_from_annotation("4xFDR10"), *caps_from_annotation("4xHDR")).rate->speed_name(), "FDR10");
}

TEST(LinkRate, NoCommonWidthKeepsLinkDownWithReason) {
  LinkCaps a, b;
  a.width_enabled = width::k1x;
  b.width_enabled = width::k4x;
  auto r = train(a, b);
  EXPECT_FALSE(r.rate.has_value());
  EXPECT_EQ(r.reason, "no common link width enabled");
  b.width_enabled = width::k1x;
  a.speed_enabled = speed::kDdr;
  b.speed_enabled = speed::kSdr;
  EXPECT_EQ(train(a, b).reason, "no common link speed enabled");
}

TEST(LinkRate, AnnotationsAsIbsimReadsThem) {
  auto c = caps_from_annotation("12xQDR");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->width_enabled, width::k1x | width::k4x | width::k12x);
  EXPECT_EQ(c->speed_enabled, speed::kAll);
  EXPECT_EQ(c->ext_speed_enabled, 0);
  c = caps_from_annotation("4xNDR");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ext_speed_enabled, ext_speed::kAll);
  EXPECT_TRUE(c->fdr10_enabled);
  EXPECT_FALSE(caps_from_annotation("3xSDR"));
  EXPECT_FALSE(caps_from_annotation("4xXDR"));
  EXPECT_FALSE(caps_from_annotation("x4"));
}

}  // namespace
}  // namespace softib::fabric
