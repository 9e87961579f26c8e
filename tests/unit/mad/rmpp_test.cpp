// RMPP segmentation (IBA 13.6.3): split and reassemble, the PayloadLength rules, and the
// transfers reassembly must refuse; and the same through whole SA MADs on the wire.
#include <gtest/gtest.h>

#include <vector>

#include "mad/rmpp.hpp"
#include "mad/sa_mad.hpp"
#include "mad/vendor_mad.hpp"
#include "support/random.hpp"

namespace softib::mad::test {
namespace {

using softib::testing::TestRng;
using wire::ParseErrorKind;

std::vector<uint8_t> random_bytes(TestRng& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng.next());
  return v;
}

TEST(MadRmppSplit, OneSegmentForLittleOrNoData) {
  auto segs = rmpp_split({}, kSaRmppLayout);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].header.flags, kRmppActive | kRmppFirst | kRmppLast);
  EXPECT_EQ(segs[0].header.type, RmppType::kData);
  EXPECT_EQ(segs[0].header.version, 1);
  EXPECT_EQ(segs[0].header.segment_number(), 1u);
  EXPECT_EQ(segs[0].header.payload_length(), 20u);  // the SA header alone
  EXPECT_EQ(segs[0].header.resp_time, kNoRespTime);
  EXPECT_EQ(segs[0].data, std::vector<uint8_t>(200, 0));

  const std::vector<uint8_t> full(200, 7);
  segs = rmpp_split(full, kSaRmppLayout, 3);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].header.payload_length(), 220u);
  EXPECT_EQ(segs[0].header.resp_time, 3);
}

TEST(MadRmppSplit, PayloadLengthOnFirstAndLastOnly) {
  const std::vector<uint8_t> data(201 + 200, 1);  // three segments, one byte in the last
  const auto segs = rmpp_split(data, kSaRmppLayout);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(segs[0].header.flags, kRmppActive | kRmppFirst);
  EXPECT_EQ(segs[1].header.flags, kRmppActive);
  EXPECT_EQ(segs[2].header.flags, kRmppActive | kRmppLast);
  EXPECT_EQ(segs[0].header.payload_length(), 3 * 220u - 199);  // whole transfer
  EXPECT_EQ(segs[1].header.payload_length(), 0u);
  EXPECT_EQ(segs[2].header.payload_length(), 220u - 199);      // this segment
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(segs[i].header.segment_number(), i + 1);
  EXPECT_EQ(segs[2].data[0], 1);
  EXPECT_EQ(segs[2].data[1], 0);  // padding
  // The vendor layout repeats 4 bytes per segment and carries 216.
  const auto v = rmpp_split(data, kVendorRmppLayout);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].header.payload_length(), 2 * 220u - (432 - 401));
  EXPECT_EQ(v[1].header.payload_length(), 4u + 401 - 216);
}

TEST(MadRmppReassemble, GivesBackWhatWasSplit) {
  TestRng rng;
  for (size_t n = 0; n < 1200; n += 1 + rng.between(0, 13)) {
    for (RmppLayout layout : {kSaRmppLayout, kVendorRmppLayout}) {
      const auto data = random_bytes(rng, n);
      const auto segs = rmpp_split(data, layout);
      auto back = rmpp_reassemble(segs, layout);
      ASSERT_TRUE(back.ok()) << n << ": " << back.error().to_string();
      ASSERT_EQ(*back, data) << n;
      // Every segment header is one the codec accepts.
      for (const auto& s : segs) ASSERT_TRUE(decode<RmppHeader>(encode(s.header)).ok());
    }
  }
}

TEST(MadRmppReassemble, RefusesBrokenTransfers) {
  TestRng rng;
  const auto data = random_bytes(rng, 650);  // four segments
  const auto good = rmpp_split(data, kSaRmppLayout);
  ASSERT_EQ(good.size(), 4u);
  auto fails_on = [&](std::vector<RmppSegment> segs, std::string_view field) {
    auto r = rmpp_reassemble(segs, kSaRmppLayout);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().header, "RMPP");
    EXPECT_EQ(r.error().field, field);
  };
  fails_on({}, "Data1");
  auto segs = good;
  segs.erase(segs.begin() + 1);  // a missing segment
  fails_on(segs, "Data1");
  segs = good;
  std::swap(segs[1], segs[2]);  // out of order
  fails_on(segs, "Data1");
  segs = good;
  segs[2].header.flags |= kRmppFirst;  // First in the middle: breaks the header rules
  fails_on(segs, "Data1");
  segs = good;
  segs[3].header.flags = kRmppActive;  // no Last
  fails_on(segs, "RMPPFlags");
  segs = good;
  segs[1].header.flags = 0;  // not active
  fails_on(segs, "RMPPFlags");
  segs = good;
  segs[1].header.type = RmppType::kAck;
  fails_on(segs, "RMPPType");
  segs = good;
  segs[0].header.data2 += 1;  // total disagrees with the last segment
  fails_on(segs, "Data2");
  segs = good;
  segs[3].header.data2 = 221;  // more than a segment holds
  fails_on(segs, "Data2");
  segs = good;
  segs[3].header.data2 = 20;  // a last segment with its header only
  fails_on(segs, "Data2");
  segs = good;
  segs[2].data.pop_back();  // a short segment
  fails_on(segs, "Data2");
  segs = good;
  segs[0].header.version = 2;
  fails_on(segs, "RMPPVersion");
}

TEST(MadSaRmpp, SegmentsTravelAsSaMads) {
  TestRng rng;
  SaMad first;
  first.header.method = Method::kGetTableResp;
  first.header.attribute_id = 0x0011;
  first.header.transaction_id = 0x1234;
  first.sm_key = 0xABCD;
  first.attribute_offset = attribute_offset_for(108);
  EXPECT_EQ(first.attribute_offset, 14);
  first.component_mask = 0x80;
  const auto records = random_bytes(rng, 7 * 112);
  const auto mads = sa_segments(first, records, 18);
  ASSERT_EQ(mads.size(), 4u);
  std::vector<SaMad> received;
  for (const SaMad& m : mads) {
    EXPECT_EQ(m.header, first.header);
    EXPECT_EQ(m.sm_key, first.sm_key);
    EXPECT_EQ(m.attribute_offset, first.attribute_offset);
    EXPECT_EQ(m.rmpp.resp_time, 18);
    const auto wire_bytes = encode(m);
    ASSERT_EQ(wire_bytes.size(), kMadSize);
    auto back = decode<SaMad>(wire_bytes);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    received.push_back(*back);
  }
  auto data = sa_reassemble(received);
  ASSERT_TRUE(data.ok()) << data.error().to_string();
  EXPECT_EQ(*data, records);
}

}  // namespace
}  // namespace softib::mad::test
