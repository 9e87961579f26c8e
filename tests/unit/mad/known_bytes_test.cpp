// Hand-checked bytes for the layouts (IBA bit numbering is easy to get subtly wrong), the
// illegal values each MAD class rejects, SA component bits, and the printers.
#include <gtest/gtest.h>

#include <vector>

#include "all_layouts.hpp"
#include "mad/attribute_id.hpp"
#include "mad/mad_status.hpp"
#include "mad/method.hpp"
#include "mad/mgmt_class.hpp"
#include "mad/port_state.hpp"
#include "mad/printer.hpp"

namespace softib::mad::test {
namespace {

using wire::ByteSpan;
using wire::ParseErrorKind;

template <class T>
wire::ParseError expect_illegal(const std::vector<uint8_t>& bytes) {
  auto r = decode<T>(bytes);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return {};
  EXPECT_EQ(r.error().kind, ParseErrorKind::kIllegalValue);
  EXPECT_EQ(r.error().header, Layout<T>::kName);
  return r.error();
}

TEST(MadHeader, KnownBytes) {
  MadHeader h;
  h.mgmt_class = MgmtClass::kSubnAdm;
  h.class_version = 2;
  h.method = Method::kGetTableResp;
  h.status = MadStatus::from(SaStatus::kNoRecords);
  h.transaction_id = 0x0102030405060708;
  h.attribute_id = 0x0035;
  h.attribute_modifier = 0xDEADBEEF;
  const std::vector<uint8_t> want{0x01, 0x03, 0x02, 0x92, 0x03, 0x00, 0x00, 0x00,
                                  0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                  0x00, 0x35, 0x00, 0x00, 0xDE, 0xAD, 0xBE, 0xEF};
  const auto bytes = encode(h);
  EXPECT_EQ(bytes, want);
  EXPECT_EQ(*get_field<MadHeader>(bytes, "R"), 1u);
  EXPECT_EQ(*get_field<MadHeader>(bytes, "Method"), 0x12u);
  EXPECT_EQ(*get_field<MadHeader>(bytes, "MadTRID"), 0x0102030405060708u);  // by dump label
}

TEST(MadHeader, BaseVersionMustBeOne) {
  std::vector<uint8_t> bytes = encode(MadHeader{});
  bytes[0] = 2;
  const auto e = expect_illegal<MadHeader>(bytes);
  EXPECT_EQ(e.field, "BaseVersion");
  EXPECT_EQ(e.value, 2u);
  EXPECT_EQ(e.to_string(), "MAD.BaseVersion: illegal value 0x2 at byte 0");
  // The same rule holds in every class layout that embeds the header.
  std::vector<uint8_t> sa = encode(SaMad{});
  sa[0] = 0x80;  // OPA's base version
  EXPECT_EQ(expect_illegal<SaMad>(sa).field, "BaseVersion");
}

TEST(MadClassLayouts, PinTheirClassAndVersion) {
  std::vector<uint8_t> smp = encode(Smp{});
  smp[1] = 0x81;
  EXPECT_EQ(expect_illegal<Smp>(smp).field, "MgmtClass");
  smp = encode(Smp{});
  smp[2] = 2;
  EXPECT_EQ(expect_illegal<Smp>(smp).field, "ClassVersion");

  std::vector<uint8_t> dr = encode(DrSmp{});
  dr[1] = 0x01;
  EXPECT_EQ(expect_illegal<DrSmp>(dr).field, "MgmtClass");

  std::vector<uint8_t> sa = encode(SaMad{});
  sa[2] = 1;  // SA is class version 2 (IBA 15.2.1.1)
  const auto e = expect_illegal<SaMad>(sa);
  EXPECT_EQ(e.field, "ClassVersion");
  EXPECT_EQ(e.value, 1u);

  std::vector<uint8_t> pma = encode(PmaMad{});
  pma[1] = 0x03;
  EXPECT_EQ(expect_illegal<PmaMad>(pma).field, "MgmtClass");

  std::vector<uint8_t> vendor = encode(VendorMad{});
  vendor[1] = 0x09;  // range 1 has no RMPP header or OUI
  EXPECT_EQ(expect_illegal<VendorMad>(vendor).field, "MgmtClass");
  vendor[1] = 0x4F;
  EXPECT_TRUE(decode<VendorMad>(vendor).ok());
  vendor[1] = 0x50;
  EXPECT_EQ(expect_illegal<VendorMad>(vendor).field, "MgmtClass");
}

TEST(MadDrSmp, KnownBytes) {
  DrSmp s;
  s.method = Method::kGetResp;
  s.direction = true;
  s.status = MadStatus(0x1234);
  s.hop_pointer = 2;
  s.hop_count = 3;
  s.attribute_id = 0x0011;
  s.dr_slid = Lid(0x0102);
  s.initial_path[1] = 7;
  s.return_path[3] = 9;
  const auto b = encode(s);
  EXPECT_EQ(b[0], 0x01);
  EXPECT_EQ(b[1], 0x81);
  EXPECT_EQ(b[3], 0x81);
  EXPECT_EQ(b[4], 0x92);  // D bit, then the 15-bit status 0x1234
  EXPECT_EQ(b[5], 0x34);
  EXPECT_EQ(b[6], 2);
  EXPECT_EQ(b[7], 3);
  EXPECT_EQ(b[17], 0x11);
  EXPECT_EQ(b[32], 0x01);
  EXPECT_EQ(b[33], 0x02);
  EXPECT_EQ(b[34], 0xFF);  // DrDLID permissive
  EXPECT_EQ(b[35], 0xFF);
  EXPECT_EQ(b[128 + 1], 7);
  EXPECT_EQ(b[192 + 3], 9);
}

TEST(MadDrSmp, HopCountAbove63IsIllegal) {
  DrSmp s;
  s.hop_count = 63;
  std::vector<uint8_t> b = encode(s);
  EXPECT_TRUE(decode<DrSmp>(b).ok());
  b[7] = 64;
  const auto e = expect_illegal<DrSmp>(b);
  EXPECT_EQ(e.field, "HopCount");
  EXPECT_EQ(e.value, 64u);
  EXPECT_EQ(e.offset, 7u);
  EXPECT_EQ(e.to_string(), "DR SMP.HopCount: illegal value 0x40 at byte 7");
}

std::vector<uint8_t> rmpp_bytes(uint8_t version, RmppType type, uint8_t flags, uint32_t seg) {
  RmppHeader h;
  h.version = version;
  h.type = type;
  h.flags = flags;
  h.data1 = seg;
  return encode(h);
}

TEST(MadRmpp, BadFlagsAreIllegal) {
  EXPECT_TRUE(decode<RmppHeader>(rmpp_bytes(0, RmppType::kNone, 0, 0)).ok());
  EXPECT_TRUE(decode<RmppHeader>(rmpp_bytes(1, RmppType::kData, kRmppActive | kRmppFirst, 1)).ok());
  EXPECT_TRUE(decode<RmppHeader>(rmpp_bytes(1, RmppType::kData, kRmppActive | kRmppLast, 9)).ok());
  EXPECT_TRUE(decode<RmppHeader>(rmpp_bytes(1, RmppType::kAck, kRmppActive, 3)).ok());

  struct Case {
    uint8_t version;
    RmppType type;
    uint8_t flags;
    uint32_t seg;
    std::string_view field;
  };
  const Case cases[] = {
      {0, RmppType::kNone, kRmppFirst, 1, "RMPPFlags"},                 // First without Active
      {1, RmppType::kData, kRmppLast, 1, "RMPPFlags"},                  // Last without Active
      {2, RmppType::kData, kRmppActive | kRmppFirst, 1, "RMPPVersion"},  // only version 1
      {1, RmppType::kNone, kRmppActive, 1, "RMPPType"},                 // active needs a type
      {1, RmppType::kAck, kRmppActive | kRmppFirst, 1, "RMPPFlags"},    // First only on DATA
      {1, RmppType::kStop, kRmppActive | kRmppLast, 0, "RMPPFlags"},
      {1, RmppType::kData, kRmppActive, 0, "Data1"},                    // segments count from 1
      {1, RmppType::kData, kRmppActive | kRmppFirst, 2, "Data1"},       // First is segment 1
  };
  for (const Case& c : cases) {
    const auto bytes = rmpp_bytes(c.version, c.type, c.flags, c.seg);
    EXPECT_EQ(expect_illegal<RmppHeader>(bytes).field, c.field) << static_cast<int>(c.flags);
    // Inside an SA MAD and a vendor MAD the same rule names the same field.
    SaMad sa;
    sa.rmpp = *decode<RmppHeader>(rmpp_bytes(0, RmppType::kNone, 0, 0));
    std::vector<uint8_t> sab = encode(sa);
    std::copy(bytes.begin(), bytes.end(), sab.begin() + 24);
    const auto e = expect_illegal<SaMad>(sab);
    EXPECT_EQ(e.field, c.field);
    EXPECT_GE(e.offset, 24u);
    std::vector<uint8_t> vb = encode(VendorMad{});
    std::copy(bytes.begin(), bytes.end(), vb.begin() + 24);
    EXPECT_EQ(expect_illegal<VendorMad>(vb).field, c.field);
  }
  auto bytes = rmpp_bytes(0, RmppType::kNone, 0, 0);
  bytes[1] = 5;  // no RMPPType 5
  EXPECT_EQ(expect_illegal<RmppHeader>(bytes).field, "RMPPType");
}

TEST(MadNodeInfo, KnownBytes) {
  NodeInfo n;
  n.node_type = NodeType::kSwitch;
  n.num_ports = 36;
  n.system_image_guid = Guid(0x1111222233334444);
  n.node_guid = Guid(0x0002C90300001000);
  n.port_guid = Guid(0x0002C90300001001);
  n.partition_cap = 8;
  n.device_id = 0xC738;
  n.revision = 0xA0;
  n.local_port_num = 5;
  n.vendor_id = 0x0002C9;
  const std::vector<uint8_t> want{
      0x01, 0x01, 0x02, 0x24, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x00, 0x02,
      0xC9, 0x03, 0x00, 0x00, 0x10, 0x00, 0x00, 0x02, 0xC9, 0x03, 0x00, 0x00, 0x10, 0x01,
      0x00, 0x08, 0xC7, 0x38, 0x00, 0x00, 0x00, 0xA0, 0x05, 0x00, 0x02, 0xC9};
  EXPECT_EQ(encode(n), want);
  EXPECT_EQ(dump(n),
            "BaseVers:........................1\n"
            "ClassVers:.......................1\n"
            "NodeType:........................Switch\n"
            "NumPorts:........................36\n"
            "SystemGuid:......................0x1111222233334444\n"
            "Guid:............................0x0002c90300001000\n"
            "PortGuid:........................0x0002c90300001001\n"
            "PartCap:.........................8\n"
            "DevId:...........................0xc738\n"
            "Revision:........................0x000000a0\n"
            "LocalPort:.......................5\n"
            "VendorId:........................0x0002c9\n");
}

TEST(MadPortInfo, KnownBytes) {
  PortInfo p;
  p.lid = Lid(0x1234);
  p.master_sm_lid = Lid(1);
  p.link_speed_supported = 1;
  p.port_state = PortState::kActive;
  p.port_physical_state = PhysPortState::kLinkUp;
  p.link_down_default_state = 2;
  p.m_key_protect_bits = 2;
  p.lmc = 3;
  p.link_speed_active = 4;
  p.link_speed_enabled = 5;
  p.neighbor_mtu = 4;
  p.master_sm_sl = 1;
  p.vl_stall_count = 7;
  p.hoq_life = 0x13;
  p.client_reregister = true;
  p.multicast_pkey_trap_suppression_enabled = 1;
  p.subnet_timeout = 18;
  p.resp_time_value = 0x11;
  p.link_round_trip_latency = 0xABCDEF;
  p.capability_mask2 = 0x0421;
  p.link_speed_ext_active = 2;
  p.link_speed_ext_supported = 3;
  p.link_speed_ext_enabled = 30;
  const auto b = encode(p);
  EXPECT_EQ(b[16], 0x12);
  EXPECT_EQ(b[17], 0x34);
  EXPECT_EQ(b[19], 0x01);
  EXPECT_EQ(b[32], 0x14);  // LinkSpeedSupported 1, PortState Active
  EXPECT_EQ(b[33], 0x52);  // LinkUp, LinkDownDefaultState Polling
  EXPECT_EQ(b[34], 0x83);  // M_KeyProtectBits 2, reserved, LMC 3
  EXPECT_EQ(b[35], 0x45);
  EXPECT_EQ(b[36], 0x41);
  EXPECT_EQ(b[42], 0xF3);  // VLStallCount 7, HOQLife 19
  EXPECT_EQ(b[51], 0xB2);  // ClientReregister, suppression 01, SubnetTimeOut 18
  EXPECT_EQ(b[52], 0x11);
  EXPECT_EQ(b[56], 0x00);
  EXPECT_EQ(b[57], 0xAB);
  EXPECT_EQ(b[59], 0xEF);
  EXPECT_EQ(b[60], 0x04);
  EXPECT_EQ(b[61], 0x21);
  EXPECT_EQ(b[62], 0x23);
  EXPECT_EQ(b[63], 0x1E);
  const std::string d = dump(p);
  EXPECT_NE(d.find("LinkState:.......................Active\n"), std::string::npos);
  EXPECT_NE(d.find("PhysLinkState:...................LinkUp\n"), std::string::npos);
  EXPECT_NE(d.find("NeighborMTU:.....................2048\n"), std::string::npos);
  EXPECT_NE(d.find("LinkSpeedExtEnabled:.............Extended link speeds disabled\n"),
            std::string::npos);
  EXPECT_NE(d.find("CapabilityMask2:.................0x421\n\t\t\t\tIsSetNodeDescriptionSupported\n"
                   "\t\t\t\tIsLinkSpeedHDRSupported\n\t\t\t\tIsLinkSpeedNDRSupported\n"),
            std::string::npos);
}

TEST(MadPortCounters, QP1DroppedPrecedesVL15Dropped) {
  // IBA 16.1.3.5 and OpenSM put QP1Dropped at bytes 20-21 (libibmad's IB_PC_QP1_DROP_F reads
  // bytes 22-23; see tests/compat/mad).
  PortCounters c;
  c.qp1_dropped = 0x0102;
  c.vl15_dropped = 0x0304;
  const auto b = encode(c);
  EXPECT_EQ(b[20], 0x01);
  EXPECT_EQ(b[21], 0x02);
  EXPECT_EQ(b[22], 0x03);
  EXPECT_EQ(b[23], 0x04);
}

TEST(MadNodeDescription, UsesAllSixtyFourBytes) {
  const std::string text(64, 'x');
  const NodeDescription d = NodeDescription::from(text + "cut");
  EXPECT_EQ(d.text(), text);
  EXPECT_EQ(dump(d), text);  // mad_dump_nodedesc prints the whole field
  NodeRecord r;
  r.node_description = d;
  // In a record the field prints as libibmad's mad_dump_string: quoted, cut to 63 chars.
  EXPECT_NE(dump(r).find("NodeDesc:........................'" + std::string(62, 'x') + "\n"),
            std::string::npos);
  EXPECT_EQ(dump(NodeDescription::from("switch-1 mlx5_0")), "switch-1 mlx5_0");
}

TEST(MadSlToVl, DumpsAsLibibmadTable) {
  SLtoVLMappingTable t;
  for (size_t sl = 0; sl < 16; ++sl) t.vl_for_sl[sl] = static_cast<uint8_t>(15 - sl);
  const auto b = encode(t);
  EXPECT_EQ(b[0], 0xFE);
  EXPECT_EQ(b[7], 0x10);
  EXPECT_EQ(dump(t), "|15|14|13|12|11|10| 9| 8| 7| 6| 5| 4| 3| 2| 1| 0|\n");
}

TEST(MadVlArbitration, DumpsAsLibibmadTable) {
  VLArbitrationTable t;
  t.entries[0] = {1, 0xFF};
  t.entries[1] = {15, 7};
  const auto b = encode(t);
  EXPECT_EQ(b[0], 0x01);
  EXPECT_EQ(b[1], 0xFF);
  EXPECT_EQ(b[2], 0x0F);
  EXPECT_EQ(b[3], 0x07);
  std::string vl = "\nVL    : |0x1 |0xF |";
  std::string weight = "\nWEIGHT: |0xFF|0x7 |";
  for (int i = 2; i < 32; ++i) {
    vl += "0x0 |";
    weight += "0x0 |";
  }
  EXPECT_EQ(dump(t), vl + weight + "\n");
}

TEST(MadNotice, DetailsRoundTripThroughDataDetails) {
  Notice n;
  n.type = static_cast<uint8_t>(NoticeType::kUrgent);
  n.producer_type_or_vendor_id = 2;  // a switch
  n.trap_number_or_device_id = kTrapLinkStateChange;
  n.set_details(Trap128Details{Lid(0x2A)});
  EXPECT_EQ(n.data_details[0], 0x00);
  EXPECT_EQ(n.data_details[1], 0x2A);
  EXPECT_EQ(n.details<Trap128Details>()->lid, Lid(0x2A));

  Trap144Details d;
  d.lid = Lid(0x1234);
  d.other_local_changes = true;
  d.capability_mask = 0x02510868;
  d.node_description_change = true;
  d.capability_mask2_change = true;
  d.capability_mask2 = 0x0011;
  n.set_details(d);
  const auto b = encode(n);
  EXPECT_EQ(b[10 + 2], 0x12);
  EXPECT_EQ(b[10 + 3], 0x34);
  EXPECT_EQ(b[10 + 5], 0x01);
  EXPECT_EQ(b[10 + 6], 0x02);
  EXPECT_EQ(b[10 + 9], 0x68);
  EXPECT_EQ(b[10 + 11], 0x21);
  EXPECT_EQ(b[10 + 13], 0x11);
  EXPECT_TRUE(*n.details<Trap144Details>() == d);

  // A Trap SMP carries the first 64 bytes: everything but IssuerGID.
  n.issuer_gid = Gid(0xFE80000000000000ULL, Guid(9));
  const Smp trap = make_smp(Method::kTrap, SmpNotice{n});
  EXPECT_EQ(trap.header.attribute_id, 0x0002);
  EXPECT_EQ(std::vector<uint8_t>(trap.data.begin(), trap.data.end()),
            std::vector<uint8_t>(b.begin(), b.begin() + 64));
  auto back = decode<SmpNotice>(trap.data);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back->notice.details<Trap144Details>() == d);
  EXPECT_EQ(back->notice.issuer_gid, Gid());

  TrapGidDetails g{Gid(0xFE80000000000000ULL, Guid(0x0002C90300001001))};
  n.set_details(g);
  EXPECT_EQ(encode(n)[10 + 6], 0xFE);
  EXPECT_EQ(n.details<TrapGidDetails>()->gid, g.gid);
}

TEST(MadComponents, BitsCountFieldsInOrder) {
  EXPECT_EQ(component_bit<NodeRecord>("LID"), 0);
  EXPECT_EQ(component_bit<NodeRecord>("NodeGUID"), 7);
  EXPECT_EQ(component_bit<NodeRecord>("NodeString"), 14);
  EXPECT_EQ(component_bit<PortInfoRecord>("LMC"), 20);
  EXPECT_EQ(component_bit<PortInfoRecord>("LinkSpeedExtEnabled"), 57);
  EXPECT_EQ(component_bit<PathRecord>("DGID"), 2);
  EXPECT_EQ(component_bit<PathRecord>("SL"), 15);
  EXPECT_EQ(component_bit<MCMemberRecord>("ProxyJoin"), 17);
  // A table block is one component.
  EXPECT_EQ(component_bit<PKeyTableRecord>("P_Key[0]"), 4);
  EXPECT_EQ(component_bit<PKeyTableRecord>("P_Key[31]"), 4);
  EXPECT_EQ(component_bit<LinearForwardingTableRecord>("Port[63]"), 3);
  EXPECT_EQ(component_bit<ServiceRecord>("ServiceData64.2"), 36);
  EXPECT_EQ(component_bit<PathRecord>("NoSuchField"), -1);
  static_assert(component_mask<PathRecord>({"DGID", "SGID"}) == 0xC);
}

TEST(MadEnums, SpellTheSpec) {
  EXPECT_EQ(to_string(Method::kGet), "Get");
  EXPECT_EQ(to_string(Method::kGetResp), "GetResp");
  EXPECT_EQ(to_string(Method::kTrapRepress), "TrapRepress");
  EXPECT_EQ(to_string(Method::kGetTableResp), "GetTableResp");
  EXPECT_EQ(to_string(static_cast<Method>(0x42)), "0x42");
  EXPECT_EQ(response_to(Method::kSet), Method::kGetResp);
  EXPECT_EQ(response_to(Method::kGetTable), Method::kGetTableResp);
  EXPECT_EQ(response_to(Method::kTrap), Method::kTrapRepress);
  EXPECT_EQ(response_to(Method::kDelete), Method::kDeleteResp);
  EXPECT_TRUE(is_response(Method::kReportResp));
  EXPECT_TRUE(is_response(Method::kTrapRepress));
  EXPECT_FALSE(is_response(Method::kTrap));

  EXPECT_EQ(to_string(MgmtClass::kSubnDirected), "SubnDirected");
  EXPECT_EQ(to_string(MgmtClass::kCongestionMgt), "CongestionMgt");
  EXPECT_EQ(to_string(static_cast<MgmtClass>(0x32)), "VendorRange2(0x32)");
  EXPECT_EQ(to_string(static_cast<MgmtClass>(0x0A)), "VendorRange1(0x0a)");
  EXPECT_EQ(to_string(static_cast<MgmtClass>(0x7F)), "0x7f");
  EXPECT_TRUE(is_vendor_range2(kOpenIbPingClass));
  EXPECT_FALSE(is_vendor_range2(static_cast<uint8_t>(0x50)));

  EXPECT_EQ(MadStatus().to_string(), "Ok");
  EXPECT_EQ(MadStatus::from(InvalidField::kMethodAttributeUnsupported).value(), 0x000C);
  EXPECT_EQ(MadStatus::from(InvalidField::kInvalidAttributeValue).value(), 0x001C);
  EXPECT_EQ(MadStatus(0x0001).with_redirect().with(InvalidField::kBadVersion).to_string(),
            "Busy, Redirect, BadVersion");
  EXPECT_EQ(MadStatus::from(SaStatus::kNoRecords).to_string(), "class 0x03");
  EXPECT_EQ(MadStatus::from(SaStatus::kReqInvalid).class_specific(), 2);
  EXPECT_EQ(to_string(SaStatus::kReqInsufficientComponents), "ERR_REQ_INSUFFICIENT_COMPONENTS");

  EXPECT_EQ(attribute_name(MgmtClass::kSubnLid, 0x0015), "PortInfo");
  EXPECT_EQ(attribute_name(MgmtClass::kSubnDirected, 0x0020), "SMInfo");
  EXPECT_EQ(attribute_name(MgmtClass::kSubnAdm, 0x0015), "LinearForwardingTableRecord");
  EXPECT_EQ(attribute_name(MgmtClass::kPerfMgt, 0x001D), "PortCountersExtended");
  EXPECT_EQ(attribute_name(static_cast<MgmtClass>(0x32), 0x0001), "ClassPortInfo");
  EXPECT_EQ(attribute_name(MgmtClass::kSubnAdm, 0x7777), "");

  EXPECT_EQ(to_string(PortState::kArmed), "Armed");
  EXPECT_EQ(to_string(PhysPortState::kLinkUp), "LinkUp");
  EXPECT_EQ(to_string(SmState::kMaster), "Master");
  EXPECT_EQ(to_string(RmppType::kAbort), "ABORT");
  EXPECT_EQ(to_string(RmppStatus::kBadRmppType), "BadRMPPType");
}

TEST(MadPrinters, ModelLibibmad) {
  EXPECT_EQ(format_integer(Printer::kUint, 8, 200), "200");
  EXPECT_EQ(format_integer(Printer::kHex, 20, 0x12345), "0x012345");
  EXPECT_EQ(format_integer(Printer::kHex, 64, 1), "0x0000000000000001");
  EXPECT_EQ(format_integer(Printer::kNodeType, 8, 3), "Router");
  EXPECT_EQ(format_integer(Printer::kNodeType, 24, 4), "?(4)?");
  EXPECT_EQ(format_integer(Printer::kLinkWidth, 8, 8), "12X");
  EXPECT_EQ(format_integer(Printer::kLinkWidth, 8, 3), "undefined (3)");
  EXPECT_EQ(format_integer(Printer::kLinkWidthSupported, 8, 3), "1X or 4X");
  EXPECT_EQ(format_integer(Printer::kLinkWidthSupported, 8, 2), "4X (IBA extension)");
  EXPECT_EQ(format_integer(Printer::kLinkWidthSupported, 8, 0), "undefined (0) (IBA extension)");
  EXPECT_EQ(format_integer(Printer::kLinkWidthEnabled, 8, 33), "1X or undefined (33)");
  EXPECT_EQ(format_integer(Printer::kLinkSpeed, 4, 0), "Extended speed");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedSupported, 4, 7), "2.5 Gbps or 5.0 Gbps or 10.0 Gbps");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedEnabled, 4, 6), "5.0 Gbps or 10.0 Gbps (IBA extension)");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedEnabled, 4, 9), "2.5 Gbps or undefined (9)");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedExt, 4, 4), "53.125 Gbps");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedExtSupported, 4, 0), "0");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedExtSupported, 4, 3), "14.0625 Gbps or 25.78125 Gbps");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedExtEnabled, 5, 30), "Extended link speeds disabled");
  EXPECT_EQ(format_integer(Printer::kLinkSpeedExtEnabled, 5, 16), "undefined (16)");
  EXPECT_EQ(format_integer(Printer::kPortState, 4, 9), "?(9)");
  EXPECT_EQ(format_integer(Printer::kMtu, 4, 5), "4096");
  EXPECT_EQ(format_integer(Printer::kVlCap, 4, 5), "VL0-14");
  EXPECT_EQ(format_integer(Printer::kOperVls, 4, 0), "No change");
  EXPECT_EQ(format_integer(Printer::kPortCapMask, 32, 0), "0x0");
  EXPECT_EQ(format_integer(Printer::kPortCapMask, 32, 0x2001),  // bits 0 and 13 have no name
            "0x2001");
  EXPECT_EQ(format_integer(Printer::kPortCapMask, 32, 0x80000002),
            "0x80000002\n\t\t\t\tIsSM\n\t\t\t\tIsHierarchyInfoSupported");
  const uint8_t text[4] = {'a', 'b', 'c', 'd'};
  EXPECT_EQ(format_bytes(Printer::kString, text), "'ab");  // cut to 3 characters, as libibmad
  EXPECT_EQ(format_bytes(Printer::kArray, text), "61626364");
  std::string line;
  append_dump_line(line, "Lid", "7");
  EXPECT_EQ(line, "Lid:.............................7\n");
}

}  // namespace
}  // namespace softib::mad::test
