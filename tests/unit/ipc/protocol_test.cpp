// The SIB1 protocol's encodings: every message type round-trips, decoders reject every
// truncation and trailing byte with a ParseError (never a crash), and fragments reassemble.
#include <gtest/gtest.h>

#include "ipc/protocol.hpp"
#include "support/random.hpp"

namespace softib::ipc {
namespace {

NodeEntry sample_node() {
  NodeEntry e;
  e.index = 7;
  e.type = 2;
  e.num_ports = 3;
  e.node_guid = 0x0002c90300001234;
  e.system_image_guid = 0x0002c90300001200;
  e.vendor_id = 0x2c9;
  e.device_id = 0xcf08;
  e.revision = 0xa0;
  e.id = "S-L0001";
  e.description = "leaf switch 1";
  e.port_guids = {0x1, 0x1, 0x1};
  return e;
}

MadMsg sample_mad(uint8_t fill) {
  MadMsg m;
  m.agent = 3;
  m.lid = 0x1234;
  m.remote_qp = 1;
  m.qkey = 0x80010000;
  m.sl = 5;
  m.pkey = 0x7fff;
  m.status = 110;
  m.mad.assign(256, fill);
  return m;
}

template <class T, class Decode>
void round_trip_and_truncate(const T& value, Decode decode) {
  Writer w;
  encode(w, value);
  const std::vector<uint8_t> bytes = w.data();
  auto back = decode(wire::ByteSpan(bytes));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, value);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto cut = decode(wire::ByteSpan(bytes.data(), n));
    EXPECT_FALSE(cut.ok()) << "a " << n << "-byte prefix of " << bytes.size() << " decoded";
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(decode(wire::ByteSpan(longer)).ok()) << "a trailing byte was accepted";
}

TEST(IpcProtocol, NodeEntryRoundTripsAndRejectsTruncation) {
  round_trip_and_truncate(sample_node(), [](wire::ByteSpan b) { return decode_node_entry(b); });
}

TEST(IpcProtocol, PortStateRoundTripsAndRejectsTruncation) {
  PortStateMsg p;
  p.node = 9;
  p.port = 1;
  p.port_guid = 0x100001;
  for (size_t i = 0; i < p.port_info.size(); ++i) p.port_info[i] = static_cast<uint8_t>(i * 3);
  p.pkeys = {0xffff, 0x8001, 0};
  round_trip_and_truncate(p, [](wire::ByteSpan b) { return decode_port_state(b); });
  p.link_layer = 2;  // a RoCE port
  p.ipv4 = 0x7F140001;
  round_trip_and_truncate(p, [](wire::ByteSpan b) { return decode_port_state(b); });
  Writer w;
  p.link_layer = 3;
  encode(w, p);
  EXPECT_FALSE(decode_port_state(w.data()).ok()) << "link layer 3 is no link layer";
}

TEST(IpcProtocol, RegisterMadAndFabricInfoRoundTrip) {
  RegisterMsg r;
  r.mgmt_class = 0x32;
  r.class_version = 1;
  r.rmpp_version = 1;
  r.method_mask[0] = 0x02;
  r.oui = 0x001405;
  round_trip_and_truncate(r, [](wire::ByteSpan b) { return decode_register(b); });
  round_trip_and_truncate(sample_mad(0xab), [](wire::ByteSpan b) { return decode_mad(b); });
  FabricInfoMsg f{"default", "switch:hosts=2", "/run/softib/default/softibd.sock", "/var/lib/softib/default",
                  42, 3, 2, 1, 2, 3, 1};
  round_trip_and_truncate(f, [](wire::ByteSpan b) { return decode_fabric_info(b); });
}

TEST(IpcProtocol, MadShorterThanAHeaderIsRejected) {
  MadMsg m = sample_mad(1);
  m.mad.resize(23);
  Writer w;
  encode(w, m);
  EXPECT_FALSE(decode_mad(w.data()).ok());
}

TEST(IpcProtocol, MadBatchRoundTripsAndRejectsDamage) {
  std::vector<MadMsg> mads;
  for (uint8_t i = 0; i < 5; ++i) mads.push_back(sample_mad(i));
  Writer w;
  encode_batch(w, mads);
  auto back = decode_mad_batch(w.data());
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, mads);
  const std::vector<uint8_t> bytes = w.data();
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode_mad_batch(wire::ByteSpan(bytes.data(), n)).ok()) << n;
  std::vector<uint8_t> bad = bytes;
  bad[0] = 0xff;  // a count far beyond the bytes present
  bad[1] = 0xff;
  EXPECT_FALSE(decode_mad_batch(bad).ok());
  Writer empty;
  encode_batch(empty, {});
  auto none = decode_mad_batch(empty.data());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(IpcProtocol, HeaderRejectsBadMagicAndShortInput) {
  const auto h = encode_header(Header{MsgType::kHello, 0, 12, 99});
  ASSERT_EQ(h.size(), kHeaderSize);
  auto ok = decode_header(h);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->type, MsgType::kHello);
  EXPECT_EQ(ok->length, 12u);
  EXPECT_EQ(ok->seq, 99u);
  auto bad = h;
  bad[0] ^= 1;
  EXPECT_FALSE(decode_header(bad).ok());
  EXPECT_FALSE(decode_header(wire::ByteSpan(h.data(), kHeaderSize - 1)).ok());
}

TEST(IpcProtocol, FragmentsReassembleInOrder) {
  testing::TestRng rng;
  std::vector<uint8_t> payload(3 * kMaxFragment + 17);
  for (auto& b : payload) b = static_cast<uint8_t>(rng.next());
  const auto frags = fragments(MsgType::kRecvMads, 5, payload);
  ASSERT_EQ(frags.size(), 4u);
  Assembler a;
  for (size_t i = 0; i < frags.size(); ++i) {
    auto m = a.feed(frags[i]);
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    if (i + 1 < frags.size()) {
      EXPECT_FALSE(m->has_value());
    } else {
      ASSERT_TRUE(m->has_value());
      EXPECT_EQ((*m)->type, MsgType::kRecvMads);
      EXPECT_EQ((*m)->seq, 5u);
      EXPECT_EQ((*m)->payload, payload);
    }
  }
}

TEST(IpcProtocol, AssemblerRejectsATypeChangeMidMessage) {
  std::vector<uint8_t> payload(kMaxFragment + 1, 7);
  auto frags = fragments(MsgType::kRecvMads, 1, payload);
  ASSERT_EQ(frags.size(), 2u);
  auto other = fragments(MsgType::kNodeEntry, 1, std::vector<uint8_t>(3, 1));
  Assembler a;
  ASSERT_TRUE(a.feed(frags[0]).ok());
  EXPECT_FALSE(a.feed(other[0]).ok());
}

TEST(IpcProtocol, AssemblerRejectsALengthThatDisagreesWithTheFragment) {
  auto frag = fragments(MsgType::kOk, 1, std::vector<uint8_t>(8, 0))[0];
  frag.pop_back();
  Assembler a;
  EXPECT_FALSE(a.feed(frag).ok());
}

}  // namespace
}  // namespace softib::ipc
