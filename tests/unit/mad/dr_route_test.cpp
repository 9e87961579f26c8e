// Directed routes: paths as smpquery writes them, the request an SM builds, and the IBA
// 14.2.2 hop rules walked end to end over random chains of switches, plus each rule's
// discard cases.
#include <gtest/gtest.h>

#include <vector>

#include "mad/dr_route.hpp"
#include "mad/node_info.hpp"
#include "support/random.hpp"

namespace softib::mad::test {
namespace {

using softib::testing::TestRng;

TEST(MadDrPath, ParsesAndPrintsSmpquerySyntax) {
  auto p = DrPath::parse("0,1,3");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->hop_count(), 2);
  EXPECT_EQ(p->port(0), 0);
  EXPECT_EQ(p->port(1), 1);
  EXPECT_EQ(p->port(2), 3);
  EXPECT_EQ(p->to_string(), "0,1,3");
  EXPECT_EQ(*p, DrPath::from_ports({1, 3}));
  EXPECT_EQ(DrPath::from_ports({1}).then(3), *p);
  EXPECT_EQ(DrPath::parse("0")->hop_count(), 0);
  EXPECT_EQ(DrPath().to_string(), "0");

  for (const char* bad : {"", ",", "0,", "0,,1", "a", "0,1x", "0,256", "-1", "0, 1"})
    EXPECT_FALSE(DrPath::parse(bad).has_value()) << bad;
  std::string longest = "0";
  for (int i = 0; i < kMaxHopCount; ++i) longest += ",1";
  EXPECT_EQ(DrPath::parse(longest)->hop_count(), kMaxHopCount);
  EXPECT_FALSE(DrPath::parse(longest + ",1").has_value());
}

TEST(MadDrRequest, IsAnOutboundSmpAlongThePath) {
  NodeInfo ni;
  ni.node_guid = Guid(42);
  const DrSmp s = make_dr_request(DrPath::from_ports({1, 5, 7}), Method::kGet, ni, 3, 0x99, 0x77);
  EXPECT_EQ(s.mgmt_class, MgmtClass::kSubnDirected);
  EXPECT_FALSE(is_returning(s));
  EXPECT_EQ(s.hop_pointer, 0);
  EXPECT_EQ(s.hop_count, 3);
  EXPECT_EQ(s.initial_path[1], 1);
  EXPECT_EQ(s.initial_path[2], 5);
  EXPECT_EQ(s.initial_path[3], 7);
  EXPECT_EQ(s.attribute_id, 0x0011);
  EXPECT_EQ(s.attribute_modifier, 3u);
  EXPECT_EQ(s.transaction_id, 0x99u);
  EXPECT_EQ(s.m_key, 0x77u);
  EXPECT_TRUE(s.dr_slid.is_permissive());
  EXPECT_TRUE(s.dr_dlid.is_permissive());
  EXPECT_EQ(decode<NodeInfo>(s.data)->node_guid, Guid(42));

  const DrSmp r = make_dr_response(s, MadStatus::from(InvalidField::kInvalidAttributeValue));
  EXPECT_TRUE(is_returning(r));
  EXPECT_EQ(r.method, Method::kGetResp);
  EXPECT_EQ(r.status.value(), 0x1C);
  EXPECT_EQ(r.initial_path, s.initial_path);
}

// One hop of a chain: the node there, the port the SMP enters by, the port it leaves by.
struct Hop {
  DrNode node;
  uint8_t in_port;
  uint8_t out_port;
};

TEST(MadDrRules, WalkRandomChainsOutAndBack) {
  TestRng rng;
  for (int trial = 0; trial < 300; ++trial) {
    const auto hops = static_cast<uint8_t>(rng.between(0, kMaxHopCount));
    // node 0 is the SM's CA, nodes 1..hops-1 switches, node hops the target (switch or CA).
    std::vector<Hop> chain(hops + 1u);
    DrPath path;
    chain[0] = Hop{DrNode{false, 1}, 0, 1};
    for (size_t i = 1; i <= hops; ++i) {
      const bool last = i == hops;
      const DrNode node = last && rng.coin() ? DrNode{false, 2} : DrNode{true, 36};
      const auto in = static_cast<uint8_t>(rng.between(1, node.num_ports));
      const auto out = static_cast<uint8_t>(rng.between(1, node.num_ports));
      chain[i] = Hop{node, in, out};
    }
    for (size_t i = 0; i < hops; ++i) path = path.then(chain[i].out_port);

    DrSmp smp = make_dr_request(path, Method::kGet, 0x0015, 0, 1);
    DrDecision d = dr_send(smp);
    for (size_t i = 1; i <= hops; ++i) {
      ASSERT_EQ(d, (DrDecision{DrAction::kForward, chain[i - 1].out_port})) << "hop " << i;
      d = dr_receive(smp, chain[i].node, chain[i].in_port);
      ASSERT_EQ(smp.return_path[i], chain[i].in_port);
    }
    ASSERT_EQ(d.action, DrAction::kDeliver) << "trial " << trial;
    ASSERT_EQ(smp.hop_pointer, hops + 1);  // the SMA sees HopCount + 1

    DrSmp resp = make_dr_response(smp);
    d = dr_send(resp);
    for (size_t i = hops; i >= 1; --i) {
      ASSERT_EQ(d, (DrDecision{DrAction::kForward, chain[i].in_port})) << "back at hop " << i;
      d = dr_receive(resp, chain[i - 1].node, chain[i - 1].out_port);
    }
    ASSERT_EQ(d.action, DrAction::kDeliver);
    ASSERT_EQ(resp.hop_pointer, 0);  // back at the SM
    // The round trip survives the wire at every step.
    ASSERT_TRUE(*decode<DrSmp>(encode(resp)) == resp);
  }
}

TEST(MadDrRules, NoHopsStaysOnTheNode) {
  DrSmp smp = make_dr_request(DrPath(), Method::kGet, 0x0011, 0, 1);
  EXPECT_EQ(dr_send(smp).action, DrAction::kDeliver);
  EXPECT_EQ(smp.hop_pointer, 1);
  DrSmp resp = make_dr_response(smp);
  EXPECT_EQ(dr_send(resp).action, DrAction::kDeliver);
  EXPECT_EQ(resp.hop_pointer, 0);
}

TEST(MadDrRules, DiscardWhatBreaksARule) {
  const DrNode sw{true, 8};
  const DrNode ca{false, 1};
  const DrSmp base = make_dr_request(DrPath::from_ports({1, 5, 7}), Method::kGet, 0x0011, 0, 1);

  DrSmp s = base;  // C14-9:1: received before the sender advanced the pointer
  EXPECT_EQ(dr_receive(s, sw, 1).action, DrAction::kDiscard);

  s = base;  // C14-9:2: only switches forward
  s.hop_pointer = 1;
  EXPECT_EQ(dr_receive(s, ca, 1).action, DrAction::kDiscard);

  s = base;  // C14-9:2: the next port must exist
  s.hop_pointer = 1;
  s.initial_path[2] = 9;
  EXPECT_EQ(dr_receive(s, sw, 1).action, DrAction::kDiscard);
  s.initial_path[2] = 0;
  EXPECT_EQ(dr_receive(s, sw, 1).action, DrAction::kDiscard);

  s = base;  // C14-9:5: an unreasonable hop pointer
  s.hop_pointer = 5;
  EXPECT_EQ(dr_receive(s, sw, 1).action, DrAction::kDiscard);

  s = base;  // C14-6: HopCount above 63
  s.hop_count = 64;
  EXPECT_EQ(dr_send(s).action, DrAction::kDiscard);
  s.hop_pointer = 1;
  EXPECT_EQ(dr_receive(s, sw, 1).action, DrAction::kDiscard);

  s = base;  // only a new request leaves its originator
  s.hop_pointer = 2;
  EXPECT_EQ(dr_send(s).action, DrAction::kDiscard);

  DrSmp r = make_dr_response(base);  // a response leaves from where the request arrived
  r.hop_pointer = 2;
  EXPECT_EQ(dr_send(r).action, DrAction::kDiscard);

  r = make_dr_response(base);  // C14-13:2: only switches forward on the way back
  r.hop_pointer = 3;
  EXPECT_EQ(dr_receive(r, ca, 1).action, DrAction::kDiscard);
  r.return_path[2] = 9;  // and the port must exist
  EXPECT_EQ(dr_receive(r, sw, 1).action, DrAction::kDiscard);

  r = make_dr_response(base);  // C14-13:5: an unreasonable hop pointer
  r.hop_pointer = 9;
  EXPECT_EQ(dr_receive(r, sw, 1).action, DrAction::kDiscard);

  r = make_dr_response(base);  // C14-13:4: pointer 0 is the SM's
  r.hop_pointer = 0;
  EXPECT_EQ(dr_receive(r, ca, 1).action, DrAction::kDeliver);
}

TEST(MadDrRules, LidRoutedEnds) {
  const DrNode sw{true, 8};
  const DrNode ca{false, 1};
  DrSmp s = make_dr_request(DrPath::from_ports({1, 2}), Method::kGet, 0x0011, 0, 1, 0,
                            Lid::permissive(), Lid(0x40));
  ASSERT_EQ(dr_send(s).action, DrAction::kForward);
  ASSERT_EQ(dr_receive(s, sw, 3).action, DrAction::kForward);
  DrSmp at_end = s;
  // C14-9:3: the directed part ends at a switch, which LID-routes to DrDLID; a CA cannot.
  EXPECT_EQ(dr_receive(s, sw, 4).action, DrAction::kLidRoute);
  EXPECT_EQ(s.hop_pointer, 3);
  EXPECT_EQ(dr_receive(at_end, ca, 1).action, DrAction::kDiscard);
  // C14-9:4: the target at DrDLID takes it.
  EXPECT_EQ(dr_receive(s, ca, 1).action, DrAction::kDeliver);
  // Its response goes back by LID; the switch that ended the directed part turns it into
  // a directed SMP again (C14-13:1).
  DrSmp r = make_dr_response(s);
  EXPECT_EQ(dr_send(r).action, DrAction::kLidRoute);
  EXPECT_EQ(dr_receive(r, sw, 5), (DrDecision{DrAction::kForward, 4}));

  // C14-13:3 with a LID-routed first part: the first switch LID-routes to DrSLID.
  DrSmp back = make_dr_response(make_dr_request(DrPath::from_ports({1, 2}), Method::kGet, 0x11,
                                                0, 1, 0, Lid(7), Lid::permissive()));
  back.hop_pointer = 1;
  EXPECT_EQ(dr_receive(back, sw, 2).action, DrAction::kLidRoute);
  EXPECT_EQ(back.hop_pointer, 0);
  back.hop_pointer = 1;
  EXPECT_EQ(dr_receive(back, ca, 2).action, DrAction::kDiscard);
  EXPECT_EQ(to_string(DrAction::kLidRoute), "LidRoute");
}

}  // namespace
}  // namespace softib::mad::test
