// The registry: every attribute once per class, lookups, and dump_mad of whole MADs.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "mad/node_info.hpp"
#include "mad/path_record.hpp"
#include "mad/port_counters.hpp"
#include "mad/registry.hpp"
#include "mad/sa_mad.hpp"
#include "mad/smp.hpp"
#include "mad/pma_mad.hpp"

namespace softib::mad::test {
namespace {

TEST(MadRegistry, ListsEveryAttributeOncePerClass) {
  std::set<std::pair<MgmtClass, uint16_t>> seen;
  for (const AttributeEntry& e : attribute_layouts()) {
    EXPECT_TRUE(seen.insert({e.mgmt_class, e.attribute_id}).second) << e.layout.name;
    EXPECT_NE(attribute_name(e.mgmt_class, e.attribute_id), "") << e.layout.name;
    EXPECT_EQ(find_attribute(e.mgmt_class, e.attribute_id), &e.layout);
  }
  EXPECT_EQ(attribute_layouts().size(), 33u);
  EXPECT_EQ(mad_layouts().size(), 7u);
  EXPECT_EQ(detail_layouts().size(), 3u);
  EXPECT_EQ(find_attribute(MgmtClass::kSubnDirected, 0x0015)->name, "PortInfo");
  EXPECT_EQ(find_attribute(MgmtClass::kSubnAdm, 0x0035)->name, "PathRecord");
  EXPECT_EQ(find_attribute(MgmtClass::kSubnLid, 0x0002)->name, "SMP Notice");  // 64 bytes
  EXPECT_EQ(find_attribute(MgmtClass::kSubnAdm, 0x0002)->name, "Notice");      // 80 bytes
  EXPECT_EQ(find_attribute(MgmtClass::kPerfMgt, 0x0012)->name, "PortCounters");
  EXPECT_EQ(find_attribute(MgmtClass::kPerfMgt, 0x0099), nullptr);
  EXPECT_EQ(mad_layout_for(MgmtClass::kSubnDirected).name, "DR SMP");
  EXPECT_EQ(mad_layout_for(static_cast<MgmtClass>(0x32)).name, "Vendor MAD");
  EXPECT_EQ(mad_layout_for(MgmtClass::kComMgt).name, "MAD");
}

TEST(MadRegistry, DumpsWholeMads) {
  NodeInfo ni;
  ni.node_guid = Guid(0x0002C90300001000);
  const auto smp = encode(make_smp(Method::kGetResp, ni, 0, 7));
  const std::string text = dump_mad(smp);
  EXPECT_NE(text.find("MadMethod:.......................0x01\n"), std::string::npos);
  EXPECT_NE(text.find("MadIsResponse:...................1\n"), std::string::npos);
  EXPECT_NE(text.find("MadAttr:.........................0x0011\n"), std::string::npos);
  EXPECT_NE(text.find("Guid:............................0x0002c90300001000\n"), std::string::npos);

  PortCounters pc;
  pc.port_select = 3;
  EXPECT_NE(dump_mad(encode(make_pma(Method::kGetResp, pc))).find("PortSelect:......................3\n"),
            std::string::npos);

  SaMad sa;
  sa.header.attribute_id = 0x0035;
  PathRecord pr;
  pr.dlid = Lid(9);
  encode(pr, wire::MutByteSpan(sa.data));
  EXPECT_NE(dump_mad(encode(sa)).find("PathRecDLid:.....................9\n"), std::string::npos);

  auto bad = smp;
  bad[0] = 2;
  EXPECT_EQ(dump_mad(bad), "");
  EXPECT_EQ(dump_mad(wire::ByteSpan(smp).first(100)), "");
}

}  // namespace
}  // namespace softib::mad::test
