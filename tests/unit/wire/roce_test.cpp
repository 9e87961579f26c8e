#include <gtest/gtest.h>

#include <vector>

#include "support/random.hpp"
#include "wire/bth.hpp"
#include "wire/crc.hpp"
#include "wire/roce.hpp"

namespace softib::wire {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes transport_bytes(size_t payload, uint8_t opcode = 0x04) {
  Bth bth;
  bth.opcode = opcode;
  bth.pkey = PKey(0xFFFF);
  bth.dest_qp = Qpn(0x12);
  bth.psn = Psn(7);
  Bytes t(Bth::kLen + payload);
  bth.encode(t);
  for (size_t i = 0; i < payload; ++i) t[Bth::kLen + i] = static_cast<uint8_t>(i * 7);
  return t;
}

RoceV2Addressing v4() {
  RoceV2Addressing a;
  a.source = Gid::from_ipv4(0x7F000001);
  a.destination = Gid::from_ipv4(0x7F000002);
  a.source_port = 49152;
  a.traffic_class = 0x1A;
  return a;
}

RoceV2Addressing v6() {
  RoceV2Addressing a;
  a.source = *Gid::parse("fe80::1");
  a.destination = *Gid::parse("fe80::2");
  a.flow_label = 0x12345;
  return a;
}

Bytes encode(const RoceV2Addressing& a, const Bytes& transport) {
  Bytes out(roce_v2_length(a.ipv6(), transport.size()));
  auto n = encode_roce_v2(a, transport, out);
  EXPECT_TRUE(n.ok());
  EXPECT_EQ(*n, out.size());
  return out;
}

TEST(RoceV2, Ipv4RoundTrip) {
  const Bytes t = transport_bytes(32);
  const Bytes d = encode(v4(), t);
  ASSERT_EQ(d.size(), 20u + 8 + 12 + 32 + 4);
  auto f = decode_roce_v2(d);
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  ASSERT_TRUE(f->ipv4.has_value());
  EXPECT_EQ(f->ipv4->identification, 0);
  EXPECT_TRUE(f->ipv4->dont_fragment);
  EXPECT_EQ(f->ipv4->dscp, 0x1A >> 2);
  EXPECT_EQ(f->source, v4().source);
  EXPECT_EQ(f->destination, v4().destination);
  EXPECT_EQ(f->udp.source_port, 49152);
  EXPECT_EQ(f->udp.destination_port, 4791);
  EXPECT_EQ(f->udp.checksum, 0);
  EXPECT_EQ(Bytes(f->transport.begin(), f->transport.end()), t);
}

TEST(RoceV2, Ipv6RoundTripWithUdpChecksum) {
  const Bytes t = transport_bytes(13);
  const Bytes d = encode(v6(), t);
  auto f = decode_roce_v2(d);
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  ASSERT_TRUE(f->ipv6.has_value());
  EXPECT_EQ(f->ipv6->flow_label, 0x12345u);
  EXPECT_NE(f->udp.checksum, 0);
  EXPECT_EQ(Bytes(f->transport.begin(), f->transport.end()), t);
}

TEST(RoceV2, MixedIpVersionsRejected) {
  RoceV2Addressing a = v4();
  a.destination = *Gid::parse("fe80::2");
  Bytes out(200);
  EXPECT_EQ(encode_roce_v2(a, transport_bytes(4), out).error().code(), Code::kInvalidArgument);
}

TEST(RoceV2, SmallOutputRejected) {
  Bytes out(10);
  EXPECT_EQ(encode_roce_v2(v4(), transport_bytes(4), out).error().code(), Code::kOutOfRange);
}

struct Corruption {
  const char* name;
  size_t offset;
  uint8_t xor_mask;
  const char* header;
  const char* field;
};

TEST(RoceV2, CorruptionsAreNamed) {
  const Bytes good = encode(v4(), transport_bytes(16));
  const Corruption cases[] = {
      {"ip version", 0, 0x10, "IPv4", "Version"},  // 0x55: version 5
      {"ip checksum", 10, 0x01, "IPv4", "HeaderChecksum"},
      {"udp dest port", 20 + 3, 0x01, "UDP", "DestinationPort"},
      {"payload bit", 20 + 8 + 12 + 3, 0x10, "RoCEv2", "ICRC"},
      {"icrc", good.size() - 1, 0x01, "RoCEv2", "ICRC"},
  };
  for (const auto& c : cases) {
    Bytes d = good;
    d[c.offset] ^= c.xor_mask;
    auto f = decode_roce_v2(d);
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_EQ(f.error().header, c.header) << c.name;
    EXPECT_EQ(f.error().field, c.field) << c.name;
  }
}

TEST(RoceV2, VariantFieldsMayChangeInFlight) {
  // A router may rewrite TOS/ECN and TTL (fixing the IP checksum); the ICRC still holds.
  Bytes d = encode(v4(), transport_bytes(16));
  d[1] = 0x03;  // ECN CE
  d[8] = 1;     // TTL
  d[10] = d[11] = 0;
  store_be16(&d[10], static_cast<uint16_t>(~Ipv4::checksum(ByteSpan(d).first(20))));
  auto f = decode_roce_v2(d);
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  EXPECT_EQ(f->ipv4->ecn, 3);
}

TEST(RoceV2, LengthsMustAgree) {
  Bytes d = encode(v4(), transport_bytes(16));
  d.pop_back();  // datagram shorter than IPv4.TotalLength says
  auto f = decode_roce_v2(d);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "TotalLength");
  EXPECT_EQ(f.error().kind, ParseErrorKind::kInconsistent);
}

TEST(RoceV2, FragmentsRejected) {
  Bytes d = encode(v4(), transport_bytes(16));
  d[6] |= 0x20;  // MF
  d[10] = d[11] = 0;
  store_be16(&d[10], static_cast<uint16_t>(~Ipv4::checksum(ByteSpan(d).first(20))));
  auto f = decode_roce_v2(d);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "FragmentOffset");
}

TEST(RoceV2, EveryTruncationIsAnErrorNeverACrash) {
  for (const Bytes& d : {encode(v4(), transport_bytes(9)), encode(v6(), transport_bytes(9))}) {
    for (size_t cut = 0; cut < d.size(); ++cut) {
      auto f = decode_roce_v2(ByteSpan(d).first(cut));
      EXPECT_FALSE(f.ok()) << cut;
    }
  }
}

TEST(RoceV2, RandomBytesNeverCrash) {
  testing::TestRng rng;
  for (int i = 0; i < 20000; ++i) {
    Bytes d(rng.between(0, 120));
    for (auto& b : d) b = static_cast<uint8_t>(rng.next());
    if (!d.empty() && rng.coin()) d[0] = static_cast<uint8_t>(rng.coin() ? 0x45 : 0x60);
    (void)decode_roce_v2(d);
  }
}

}  // namespace
}  // namespace softib::wire

#include <filesystem>
#include <fstream>

namespace softib::wire {
namespace {

// The fuzz seeds were written by tests/fuzz/make_roce_v2_corpus.py, which computes the ICRC
// with Python's zlib: an implementation independent of ours. Every valid seed must decode.
TEST(RoceV2, PythonZlibSeedsDecode) {
  const std::filesystem::path dir = std::filesystem::path(SOFTIB_SOURCE_DIR) / "tests/fuzz/corpus/roce_v2";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    if (name.find("truncated") != std::string::npos) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const Bytes d((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto f = decode_roce_v2(d);
    EXPECT_TRUE(f.ok()) << name << ": " << (f.ok() ? "" : f.error().to_string());
    ++checked;
  }
  EXPECT_GE(checked, 8);
}

}  // namespace
}  // namespace softib::wire
