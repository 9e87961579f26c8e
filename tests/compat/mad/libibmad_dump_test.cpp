// Cross-check against libibmad's dumpers and builders: softib's dump of every attribute
// libibmad has a mad_dump_* function for (or a contiguous field range mad_dump_fields can
// print) is byte for byte libibmad's, for seeded random contents; and the MADs libibmad's
// mad_encode builds (directed-route requests from str2drpath paths, SA and vendor range 2
// headers) are the bytes softib's builders produce.
#include <gtest/gtest.h>

#include <infiniband/mad.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <string>
#include <vector>

#include "mad/class_port_info.hpp"
#include "mad/dr_route.hpp"
#include "mad/guid_info.hpp"
#include "mad/node_description.hpp"
#include "mad/node_info.hpp"
#include "mad/node_record.hpp"
#include "mad/notice.hpp"
#include "mad/path_record.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_counters_extended.hpp"
#include "mad/port_info.hpp"
#include "mad/sa_mad.hpp"
#include "mad/sl_to_vl_table.hpp"
#include "mad/sm_info.hpp"
#include "mad/switch_info.hpp"
#include "mad/vendor_mad.hpp"
#include "mad/vl_arbitration_table.hpp"
#include "subject.hpp"

namespace softib::mad::compat {
namespace {

// ---- whole-attribute dumps ----------------------------------------------------------------

using Dumper = void (*)(char*, int, void*, int);

std::string libibmad_dump(Dumper fn, std::vector<uint8_t> bytes, int valsz) {
  bytes.resize(std::max<size_t>(bytes.size(), 256), 0);
  std::vector<char> out(16384, 0);
  fn(out.data(), static_cast<int>(out.size()), bytes.data(), valsz);
  return std::string(out.data());
}

std::string libibmad_fields(std::vector<uint8_t> bytes, int first, int end) {
  bytes.resize(std::max<size_t>(bytes.size(), 256), 0);
  std::vector<char> out(16384, 0);
  mad_dump_fields(out.data(), static_cast<int>(out.size()), bytes.data(),
                  static_cast<int>(bytes.size()), first, end);
  return std::string(out.data());
}

template <class T>
void expect_dump(Dumper fn, int valsz) {
  TestRng rng;
  for (int i = 0; i < 300; ++i) {
    const T x = mad::test::random_value<T>(rng);
    const std::vector<uint8_t> bytes = encode(x);
    ASSERT_EQ(dump(x), libibmad_dump(fn, bytes, valsz)) << Layout<T>::kName;
  }
}

template <class T>
void expect_fields_dump(int first, int end) {
  TestRng rng;
  for (int i = 0; i < 300; ++i) {
    const T x = mad::test::random_value<T>(rng);
    ASSERT_EQ(dump(x), libibmad_fields(encode(x), first, end)) << Layout<T>::kName;
  }
}

TEST(MadLibibmadDumps, NodeInfo) { expect_dump<NodeInfo>(mad_dump_nodeinfo, 64); }
TEST(MadLibibmadDumps, PortInfo) { expect_dump<PortInfo>(mad_dump_portinfo, 64); }
TEST(MadLibibmadDumps, SwitchInfo) { expect_dump<SwitchInfo>(mad_dump_switchinfo, 64); }
TEST(MadLibibmadDumps, NodeDescription) { expect_dump<NodeDescription>(mad_dump_nodedesc, 64); }
TEST(MadLibibmadDumps, PortCountersExtended) {
  expect_dump<PortCountersExtended>(mad_dump_perfcounters_ext, 192);
}
TEST(MadLibibmadDumps, ClassPortInfo) { expect_dump<ClassPortInfo>(mad_dump_classportinfo, 72); }
TEST(MadLibibmadDumps, SLtoVLMappingTable) { expect_dump<SLtoVLMappingTable>(mad_dump_sltovl, 8); }
TEST(MadLibibmadDumps, VLArbitrationTable) {
  expect_dump<VLArbitrationTable>(mad_dump_vlarbitration, 64);
}
// No mad_dump_* function, but the field ranges dump through mad_dump_fields.
TEST(MadLibibmadDumps, NodeRecord) { expect_fields_dump<NodeRecord>(IB_SA_NR_FIRST_F, IB_SA_NR_LAST_F); }
TEST(MadLibibmadDumps, SMInfo) { expect_fields_dump<SMInfo>(IB_SMINFO_GUID_F, IB_SMINFO_STATE_F + 1); }
TEST(MadLibibmadDumps, GUIDInfo) { expect_fields_dump<GUIDInfo>(IB_GI_GUID0_F, IB_GI_GUID7_F + 1); }
// libibmad has no IssuerGID field: its Notice is the 64-byte form a Trap SMP carries.
TEST(MadLibibmadDumps, SmpNotice) {
  expect_fields_dump<SmpNotice>(IB_NOTICE_IS_GENERIC_F, IB_NOTICE_DATA_DETAILS_F + 1);
}

TEST(MadLibibmadDumps, PortCountersButLibibmadsQP1Dropped) {
  // mad_dump_perfcounters prints libibmad's IB_PC_QP1_DROP_F, which reads VL15Dropped's
  // bytes (see the mapping). Every other line must be identical.
  TestRng rng;
  for (int i = 0; i < 300; ++i) {
    const PortCounters c = mad::test::random_value<PortCounters>(rng);
    std::istringstream mine(dump(c));
    std::istringstream theirs(libibmad_dump(mad_dump_perfcounters, encode(c), 192));
    std::string a, b;
    size_t lines = 0;
    while (std::getline(mine, a)) {
      ASSERT_TRUE(std::getline(theirs, b));
      ++lines;
      if (a.starts_with("QP1Dropped:")) {
        std::string want;
        append_dump_line(want, "QP1Dropped", std::to_string(c.vl15_dropped));
        ASSERT_EQ(b + "\n", want);
        std::string ours;
        append_dump_line(ours, "QP1Dropped", std::to_string(c.qp1_dropped));
        ASSERT_EQ(a + "\n", ours);
      } else {
        ASSERT_EQ(a, b);
      }
    }
    ASSERT_FALSE(std::getline(theirs, b));
    ASSERT_EQ(lines, 21u);
  }
}

// ---- MADs libibmad builds ------------------------------------------------------------------

TEST(MadLibibmadEncode, DirectedRouteRequest) {
  TestRng rng;
  for (int i = 0; i < 200; ++i) {
    const auto hops = static_cast<uint8_t>(rng.between(0, kMaxHopCount));
    std::string text = "0";
    for (int h = 0; h < hops; ++h) text += "," + std::to_string(rng.between(1, 255));
    ib_dr_path_t dr{};
    std::vector<char> cstr(text.begin(), text.end());
    cstr.push_back('\0');
    ASSERT_EQ(str2drpath(&dr, cstr.data(), 0, 0), hops);
    const auto path = DrPath::parse(text);
    ASSERT_TRUE(path.has_value());
    ASSERT_EQ(path->hop_count(), dr.cnt);
    for (int h = 0; h <= hops; ++h) ASSERT_EQ(path->port(static_cast<size_t>(h)), dr.p[h]);
    std::array<char, 512> s{};
    ASSERT_EQ(std::string(drpath2str(&dr, s.data(), s.size())), "slid 65535; dlid 65535; " + text);

    ib_rpc_t rpc{};
    rpc.mgtclass = IB_SMI_DIRECT_CLASS;
    rpc.method = IB_MAD_METHOD_GET;
    rpc.attr.id = static_cast<unsigned>(rng.between(0, 0xFFFF));
    rpc.attr.mod = static_cast<unsigned>(rng.next());
    rpc.mkey = rng.next();
    rpc.trid = rng.next() | 1;
    std::array<uint8_t, 256> theirs{};
    ASSERT_NE(mad_encode(theirs.data(), &rpc, &dr, nullptr), nullptr);
    const DrSmp ours = make_dr_request(*path, Method::kGet, static_cast<uint16_t>(rpc.attr.id),
                                       rpc.attr.mod, rpc.trid, rpc.mkey);
    ASSERT_EQ(encode(ours), std::vector<uint8_t>(theirs.begin(), theirs.end()));
  }
}

TEST(MadLibibmadEncode, SaAndVendorHeaders) {
  ib_rpc_t rpc{};
  rpc.mgtclass = IB_SA_CLASS;
  rpc.method = IB_MAD_METHOD_GET_TABLE;
  rpc.attr.id = IB_SA_ATTR_PATHRECORD;
  rpc.mask = 0x0C;
  rpc.trid = 0x1122334455667788;
  std::array<uint8_t, 256> theirs{};
  ASSERT_NE(mad_encode(theirs.data(), &rpc, nullptr, nullptr), nullptr);
  SaMad sa;
  sa.header.method = Method::kGetTable;
  sa.header.attribute_id = attribute_id_of<PathRecord>();
  sa.header.transaction_id = rpc.trid;
  sa.component_mask = component_mask<PathRecord>({"DGID", "SGID"});
  EXPECT_EQ(encode(sa), std::vector<uint8_t>(theirs.begin(), theirs.end()));

  // What ibping sends: class 0x32, the OpenIB OUI.
  ib_rpc_t ping{};
  ping.mgtclass = IB_VENDOR_OPENIB_PING_CLASS;
  ping.method = IB_MAD_METHOD_GET;
  ping.oui = IB_OPENIB_OUI;
  ping.trid = 42;
  theirs.fill(0);
  ASSERT_NE(mad_encode(theirs.data(), &ping, nullptr, nullptr), nullptr);
  VendorMad v;
  v.header.transaction_id = 42;
  EXPECT_EQ(encode(v), std::vector<uint8_t>(theirs.begin(), theirs.end()));
  EXPECT_EQ(v.header.mgmt_class, static_cast<MgmtClass>(IB_VENDOR_OPENIB_PING_CLASS));
  EXPECT_EQ(v.oui, static_cast<uint32_t>(IB_OPENIB_OUI));
}

}  // namespace
}  // namespace softib::mad::compat
