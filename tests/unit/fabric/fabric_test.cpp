#include <gtest/gtest.h>

#include "fabric/fabric.hpp"
#include "fabric/generators.hpp"
#include "fabric_fixture.hpp"
#include "mad/linear_forwarding_table.hpp"
#include "mad/node_description.hpp"
#include "mad/node_info.hpp"
#include "mad/notice.hpp"
#include "mad/pkey_table.hpp"
#include "mad/pma_mad.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_info.hpp"
#include "mad/switch_info.hpp"
#include "mad/trap128_details.hpp"

namespace softib::fabric {
namespace {

using mad::DrPath;
using mad::InvalidField;
using mad::Method;
using mad::PortState;
using mad::PhysPortState;
using mad::SmpAttr;
using testing::AgentOn;

// host-a and host-b on ports 1 and 2 of one switch.
struct SwitchFabric : ::testing::Test {
  SwitchFabric() : fabric(*generate("switch:hosts=2")) {
    a = *fabric.topology().find("host-a");
    b = *fabric.topology().find("host-b");
    sw = *fabric.topology().find("S-switch");
  }
  Fabric fabric;
  NodeIndex a, b, sw;
};

TEST_F(SwitchFabric, LinksTrainToInitAndSwitchPort0IsActive) {
  EXPECT_EQ(fabric.port_info({a, 1}).port_state, PortState::kInitialize);
  EXPECT_EQ(fabric.port_info({a, 1}).port_physical_state, PhysPortState::kLinkUp);
  EXPECT_EQ(fabric.port_info({a, 1}).link_width_active, width::k4x);
  EXPECT_EQ(fabric.port_info({a, 1}).link_speed_ext_active, ext_speed::kEdr);
  EXPECT_EQ(fabric.port_info({sw, 0}).port_state, PortState::kActive);
  EXPECT_EQ(fabric.port_info({sw, 3}).port_state, PortState::kDown);  // no cable
  EXPECT_EQ(fabric.port_info({sw, 3}).port_physical_state, PhysPortState::kPolling);
}

TEST_F(SwitchFabric, DirectedRouteDiscovery) {
  AgentOn sm(fabric, {a, 1});
  auto local = sm.dr_get<mad::NodeInfo>(DrPath());
  ASSERT_TRUE(local);
  EXPECT_EQ(local->node_type, mad::NodeType::kChannelAdapter);
  EXPECT_EQ(local->local_port_num, 1);
  EXPECT_EQ(local->node_guid, fabric.topology().node(a).node_guid);
  EXPECT_EQ(local->port_guid, fabric.topology().port({a, 1}).guid);

  auto s = sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->node_type, mad::NodeType::kSwitch);
  EXPECT_EQ(s->local_port_num, 1);  // host-a is cabled to switch port 1
  EXPECT_EQ(s->num_ports, 36);

  auto desc = sm.dr_get<mad::NodeDescription>(DrPath::from_ports({1}));
  ASSERT_TRUE(desc);
  EXPECT_EQ(desc->text(), "switch");

  auto pi = sm.dr_get<mad::PortInfo>(DrPath::from_ports({1}), 2);
  ASSERT_TRUE(pi);
  EXPECT_EQ(pi->port_state, PortState::kInitialize);
  EXPECT_EQ(pi->local_port_num, 1);  // the port the SMP came in on

  auto far = sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 2}));
  ASSERT_TRUE(far);
  EXPECT_EQ(far->node_guid, fabric.topology().node(b).node_guid);
}

TEST_F(SwitchFabric, BadDirectedRoutesAreDroppedAndCounted) {
  AgentOn sm(fabric, {a, 1});
  // Out through a switch port with no cable.
  EXPECT_FALSE(sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 3})));
  EXPECT_EQ(fabric.drops().get(Drop::kLinkDown), 1u);
  // A port the switch does not have.
  EXPECT_FALSE(sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 40})));
  EXPECT_EQ(fabric.drops().get(Drop::kDirectedRoute), 1u);
  // Through a CA (host-b cannot forward).
  EXPECT_FALSE(sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 2, 1})));
  EXPECT_EQ(fabric.drops().get(Drop::kDirectedRoute), 2u);
  // A CA port's QP0 sends only through its own port.
  EXPECT_FALSE(sm.dr_get<mad::NodeInfo>(DrPath::from_ports({2})));
}

TEST_F(SwitchFabric, UnsupportedAttributeAndMethodStatus) {
  AgentOn sm(fabric, {a, 1});
  auto r = sm.dr(DrPath(), Method::kGet, SmpAttr::kLinearForwardingTable);  // a CA has no LFT
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status.invalid_field(), InvalidField::kMethodAttributeUnsupported);
  r = sm.dr(DrPath(), Method::kSet, SmpAttr::kNodeInfo);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status.invalid_field(), InvalidField::kMethodAttributeUnsupported);
  r = sm.dr(DrPath::from_ports({1}), Method::kGet, SmpAttr::kPortInfo, 99);  // no port 99
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status.invalid_field(), InvalidField::kInvalidAttributeValue);
  r = sm.dr(DrPath::from_ports({1}), Method::kGet, SmpAttr::kLinearForwardingTable, 49152 / 64);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status.invalid_field(), InvalidField::kInvalidAttributeValue);
}

TEST_F(SwitchFabric, PortStateTransitionsFollowIba) {
  AgentOn sm(fabric, {a, 1});
  const DrPath to_b = DrPath::from_ports({1, 2});
  mad::PortInfo set = *sm.dr_get<mad::PortInfo>(to_b);
  set.lid = Lid(7);
  set.master_sm_lid = Lid(1);
  set.port_state = PortState::kActive;  // Init -> Active skips Armed: invalid
  auto r = sm.dr_set(to_b, set);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status.invalid_field(), InvalidField::kInvalidAttributeValue);
  EXPECT_EQ(fabric.port_info({b, 1}).lid, Lid(0));  // nothing changed
  set.port_state = PortState::kArmed;
  r = sm.dr_set(to_b, set);
  ASSERT_TRUE(r && r->status.ok());
  EXPECT_EQ(fabric.port_info({b, 1}).lid, Lid(7));
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kArmed);
  set.port_state = PortState::kActive;
  ASSERT_TRUE(sm.dr_set(to_b, set)->status.ok());
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kActive);
  set.port_state = PortState::kInitialize;  // only training puts a port in Init
  EXPECT_EQ(sm.dr_set(to_b, set)->status.invalid_field(), InvalidField::kInvalidAttributeValue);
  set.port_state = PortState::kDown;  // the link bounces and retrains
  ASSERT_TRUE(sm.dr_set(to_b, set)->status.ok());
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kInitialize);
  EXPECT_EQ(fabric.traffic({b, 1}).errors[static_cast<size_t>(ErrorCounter::kLinkDowned)], 1u);
}

TEST_F(SwitchFabric, LidRoutedSmpsFollowTheLft) {
  AgentOn sm(fabric, {a, 1});
  // Give host-a LID 1, the switch LID 2, host-b LID 3.
  mad::PortInfo pa = fabric.port_info({a, 1});
  pa.lid = Lid(1);
  ASSERT_TRUE(sm.dr_set(DrPath(), pa)->status.ok());
  mad::PortInfo p0 = fabric.port_info({sw, 0});
  p0.lid = Lid(2);
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p0, 0)->status.ok());
  mad::PortInfo pb = fabric.port_info({b, 1});
  pb.lid = Lid(3);
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1, 2}), pb)->status.ok());

  const auto get_node_info = mad::make_smp(Method::kGet, mad::NodeInfo{}, 0, 77);
  EXPECT_FALSE((sm.lid<mad::Smp>(get_node_info, Lid(3))));  // no LFT yet
  EXPECT_EQ(fabric.drops().get(Drop::kNoLftEntry), 1u);

  mad::LinearForwardingTable block;
  block.ports.fill(0xFF);
  block.ports[1] = 1;
  block.ports[2] = 0;
  block.ports[3] = 2;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), block, 0)->status.ok());
  EXPECT_EQ(fabric.lft_port(sw, Lid(3)), 2);

  auto r = sm.lid<mad::Smp>(get_node_info, Lid(3));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header.method, Method::kGetResp);
  EXPECT_EQ(mad::decode<mad::NodeInfo>(r->data)->node_guid, fabric.topology().node(b).node_guid);
  r = sm.lid<mad::Smp>(get_node_info, Lid(2));  // the switch itself
  ASSERT_TRUE(r);
  EXPECT_EQ(mad::decode<mad::NodeInfo>(r->data)->node_type, mad::NodeType::kSwitch);
  EXPECT_FALSE((sm.lid<mad::Smp>(get_node_info, Lid(9))));  // LFT entry 0xFF
}

TEST_F(SwitchFabric, LinkFailureSendsTrap128ToTheMasterSm) {
  AgentOn sm(fabric, {a, 1}, {static_cast<uint8_t>(mad::MgmtClass::kSubnLid)});
  mad::PortInfo pa = fabric.port_info({a, 1});
  pa.lid = Lid(1);
  ASSERT_TRUE(sm.dr_set(DrPath(), pa)->status.ok());
  mad::PortInfo p0 = fabric.port_info({sw, 0});
  p0.lid = Lid(2);
  p0.master_sm_lid = Lid(1);
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p0, 0)->status.ok());
  mad::LinearForwardingTable block;
  block.ports.fill(0xFF);
  block.ports[1] = 1;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), block, 0)->status.ok());
  // The links came up at power-on, so PortStateChange is already set; an SM clears it
  // (writing 1) and from then on each change raises trap 128.
  ASSERT_TRUE(fabric.switch_info(sw).port_state_change);
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), fabric.switch_info(sw))->status.ok());
  ASSERT_FALSE(fabric.switch_info(sw).port_state_change);

  sm.recorder().got.clear();
  ASSERT_TRUE(fabric.set_link_up({b, 1}, false).ok());
  fabric.pump();
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kDown);
  EXPECT_EQ(fabric.port_info({sw, 2}).port_physical_state, PhysPortState::kPolling);
  EXPECT_EQ(fabric.link_down_reason({b, 1}), "link down");
  EXPECT_TRUE(fabric.switch_info(sw).port_state_change);
  ASSERT_EQ(sm.recorder().got.size(), 1u);
  auto trap = mad::decode<mad::Smp>(sm.recorder().got[0].bytes);
  ASSERT_TRUE(trap);
  EXPECT_EQ(trap->header.method, Method::kTrap);
  auto notice = mad::decode<mad::SmpNotice>(trap->data);
  ASSERT_TRUE(notice);
  EXPECT_EQ(notice->notice.trap_number_or_device_id, 128);
  EXPECT_EQ(notice->notice.issuer_lid, Lid(2));
  EXPECT_EQ(sm.recorder().got[0].slid, Lid(2));

  // Clearing PortStateChange (write 1) re-arms the trap.
  mad::SwitchInfo si = fabric.switch_info(sw);
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), si)->status.ok());
  EXPECT_FALSE(fabric.switch_info(sw).port_state_change);
  ASSERT_TRUE(fabric.set_link_up({b, 1}, true).ok());
  fabric.pump();
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kInitialize);
}

TEST(Fabric, IncompatibleEndsStayDownWithAReason) {
  Topology t = back_to_back();
  t.port({NodeIndex(0), 1}).caps.width_enabled = width::k1x;
  t.port({NodeIndex(1), 1}).caps.width_enabled = width::k12x;
  Fabric f(std::move(t));
  EXPECT_EQ(f.port_info({NodeIndex(0), 1}).port_state, PortState::kDown);
  EXPECT_EQ(f.link_down_reason({NodeIndex(0), 1}), "no common link width enabled");
}

TEST_F(SwitchFabric, DisablingAPortTakesTheLinkDown) {
  AgentOn sm(fabric, {a, 1});
  mad::PortInfo p = fabric.port_info({sw, 2});
  p.port_physical_state = PhysPortState::kDisabled;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p, 2)->status.ok());
  EXPECT_EQ(fabric.port_info({sw, 2}).port_physical_state, PhysPortState::kDisabled);
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kDown);
  EXPECT_EQ(fabric.link_down_reason({b, 1}), "disabled");
  p.port_physical_state = PhysPortState::kPolling;
  p.port_state = PortState::kInitialize;  // stale: the port is Down now, and Init cannot be set
  EXPECT_EQ(sm.dr_set(DrPath::from_ports({1}), p, 2)->status.invalid_field(), InvalidField::kInvalidAttributeValue);
  p.port_state = PortState::kNoChange;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p, 2)->status.ok());
  EXPECT_EQ(fabric.port_info({b, 1}).port_state, PortState::kInitialize);
}

TEST_F(SwitchFabric, MKeyProtection) {
  AgentOn sm(fabric, {a, 1});
  const DrPath to_b = DrPath::from_ports({1, 2});
  mad::PortInfo p = fabric.port_info({b, 1});
  p.m_key = 0x1234;
  p.m_key_protect_bits = 1;
  ASSERT_TRUE(sm.dr_set(to_b, p)->status.ok());
  // Level 1: Get with a wrong key works but hides the key; Set with a wrong key is dropped.
  auto got = sm.dr_get<mad::PortInfo>(to_b);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->m_key, 0u);
  p.lid = Lid(5);
  EXPECT_FALSE(sm.dr_set(to_b, p));
  EXPECT_EQ(fabric.drops().get(Drop::kMKey), 1u);
  EXPECT_EQ(fabric.port_info({b, 1}).m_key_violations, 1);
  EXPECT_TRUE(sm.dr_set(to_b, p, 0, 0x1234)->status.ok());  // the right key
  EXPECT_EQ(fabric.port_info({b, 1}).lid, Lid(5));
  p.m_key_protect_bits = 2;
  ASSERT_TRUE(sm.dr_set(to_b, p, 0, 0x1234)->status.ok());
  EXPECT_FALSE(sm.dr_get<mad::PortInfo>(to_b));  // level 2: Get needs the key too
}

TEST_F(SwitchFabric, PKeyTableBlocks) {
  AgentOn sm(fabric, {a, 1});
  auto t = sm.dr_get<mad::PKeyTable>(DrPath());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->pkeys[0], PKey(0xFFFF));
  mad::PKeyTable set;
  set.pkeys[0] = PKey(0x7FFF);
  set.pkeys[1] = PKey(0x8001);
  ASSERT_TRUE(sm.dr_set(DrPath(), set, 0)->status.ok());
  EXPECT_EQ(fabric.pkeys({a, 1})[1], PKey(0x8001));
  EXPECT_EQ(sm.dr(DrPath(), Method::kGet, SmpAttr::kP_KeyTable, 2)->status.invalid_field(),
            InvalidField::kInvalidAttributeValue);  // 64 entries: blocks 0 and 1
  // A switch port's table: port in bits 31:16.
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), set, 2u << 16)->status.ok());
  EXPECT_EQ(fabric.pkeys({sw, 2})[1], PKey(0x8001));
}

TEST_F(SwitchFabric, PmaCountsAndResets) {
  AgentOn sm(fabric, {a, 1});
  // Traffic: 5 directed-route Gets through the switch to host-b and back.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 2})));
  ASSERT_TRUE(fabric.add_errors({sw, 2}, ErrorCounter::kSymbolError, 3).ok());
  // PMA queries need LIDs and Active ports: bring the path up by hand.
  mad::PortInfo pa = fabric.port_info({a, 1});
  pa.lid = Lid(1);
  pa.port_state = PortState::kArmed;
  ASSERT_TRUE(sm.dr_set(DrPath(), pa)->status.ok());
  pa.port_state = PortState::kActive;
  ASSERT_TRUE(sm.dr_set(DrPath(), pa)->status.ok());
  mad::PortInfo p0 = fabric.port_info({sw, 0});
  p0.lid = Lid(2);
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p0, 0)->status.ok());
  mad::PortInfo p1 = fabric.port_info({sw, 1});
  p1.port_state = PortState::kArmed;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p1, 1)->status.ok());
  p1.port_state = PortState::kActive;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), p1, 1)->status.ok());
  mad::LinearForwardingTable block;
  block.ports.fill(0xFF);
  block.ports[1] = 1;
  block.ports[2] = 0;
  ASSERT_TRUE(sm.dr_set(DrPath::from_ports({1}), block, 0)->status.ok());

  mad::PmaMad q;
  q.header.attribute_id = static_cast<uint16_t>(mad::PmaAttr::kPortCounters);
  q.header.transaction_id = sm.next_tid();
  mad::PortCounters sel;
  sel.port_select = 2;
  mad::encode(sel, wire::MutByteSpan(q.data));
  auto r = sm.lid<mad::PmaMad>(q, Lid(2), Qpn(1));
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->header.status.ok());
  auto pc = mad::decode<mad::PortCounters>(r->data);
  ASSERT_TRUE(pc);
  EXPECT_EQ(pc->symbol_error_counter, 3);
  EXPECT_EQ(pc->port_xmit_pkts, 5u);  // the five requests left switch port 2
  EXPECT_EQ(pc->port_rcv_pkts, 5u);   // and five responses came back in
  EXPECT_GT(pc->port_xmit_data, 5u * 64);

  q.header.method = Method::kSet;
  sel.counter_select = 0xFFFF;
  mad::encode(sel, wire::MutByteSpan(q.data));
  q.header.transaction_id = sm.next_tid();
  r = sm.lid<mad::PmaMad>(q, Lid(2), Qpn(1));
  ASSERT_TRUE(r && r->header.status.ok());
  pc = mad::decode<mad::PortCounters>(r->data);
  EXPECT_EQ(pc->symbol_error_counter, 0);
  EXPECT_EQ(pc->port_xmit_pkts, 0u);
}

TEST_F(SwitchFabric, ImpairedLinksLoseMadsDeterministically) {
  AgentOn sm(fabric, {a, 1});
  ASSERT_TRUE(fabric.set_impairment({sw, 2}, LinkImpairment{0.5, 0}).ok());
  int answered = 0;
  for (int i = 0; i < 200; ++i) answered += sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 2})) ? 1 : 0;
  EXPECT_GT(answered, 20);   // roughly a quarter survive both directions
  EXPECT_LT(answered, 100);
  // Each unanswered exchange lost exactly one MAD: the request or the response.
  EXPECT_EQ(fabric.drops().get(Drop::kLoss), static_cast<uint64_t>(200 - answered));
  // The same seed gives the same run.
  Fabric again(*generate("switch:hosts=2"));
  AgentOn sm2(again, {*again.topology().find("host-a"), 1});
  ASSERT_TRUE(again.set_impairment({*again.topology().find("S-switch"), 2}, LinkImpairment{0.5, 0}).ok());
  int answered2 = 0;
  for (int i = 0; i < 200; ++i) answered2 += sm2.dr_get<mad::NodeInfo>(DrPath::from_ports({1, 2})) ? 1 : 0;
  EXPECT_EQ(answered, answered2);
  EXPECT_EQ(fabric.traffic({b, 1}).errors[static_cast<size_t>(ErrorCounter::kSymbolError)] +
                fabric.traffic({sw, 2}).errors[static_cast<size_t>(ErrorCounter::kSymbolError)],
            fabric.drops().get(Drop::kLoss));
}

TEST_F(SwitchFabric, AgentsOwnTheirClassesAndResponses) {
  testing::Recorder other;
  auto id = fabric.attach({a, 1}, &other, {0x32});
  ASSERT_TRUE(id.ok());
  testing::Recorder clash;
  EXPECT_EQ(fabric.attach({a, 1}, &clash, {0x32}).error().code(), Code::kAlreadyExists);
  EXPECT_EQ(fabric.attach({sw, 3}, &clash, {0x32}).error().code(), Code::kInvalidArgument);
  AgentOn sm(fabric, {a, 1});
  ASSERT_TRUE(sm.dr_get<mad::NodeInfo>(DrPath::from_ports({1})));
  EXPECT_TRUE(other.got.empty());  // the response went to the agent that asked
  fabric.detach(*id);
}

}  // namespace
}  // namespace softib::fabric
