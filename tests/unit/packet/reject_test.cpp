// Every rejection path of the view (each a ParseError naming the field) and of the builder
// (each a Status, with nothing written), and the CRC rules seen through the view: variant
// fields may change in flight, invariant ones may not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "packet/builder.hpp"
#include "packet/packet_view.hpp"
#include "unit/packet/random_packets.hpp"
#include "wire/crc.hpp"

namespace softib::packet {
namespace {

using namespace softib::packet::testing;
using Bytes = std::vector<uint8_t>;
using wire::ByteSpan;
using wire::MutByteSpan;
using wire::ParseErrorKind;

struct Packet {
  Bytes bytes;
  size_t bth_at = 0;
};

Packet ib_packet(TestRng& rng, Opcode op, size_t payload_len, bool global = false) {
  const OpcodeInfo& info = opcode_info(op);
  Packet p;
  p.bth_at = global ? 48 : 8;
  p.bytes.resize(ib_packet_length(global, info, payload_len));
  auto n = build_ib(random_route(rng, global), random_headers(rng, info), random_bytes(rng, payload_len), p.bytes);
  EXPECT_TRUE(n.ok()) << n.error().to_string();
  return p;
}

Bytes transport(TestRng& rng, Opcode op, size_t payload_len) {
  const OpcodeInfo& info = opcode_info(op);
  Bytes t(transport_length(info, payload_len));
  auto n = build_transport(random_headers(rng, info), random_bytes(rng, payload_len), t);
  EXPECT_TRUE(n.ok()) << n.error().to_string();
  return t;
}

// Recomputes ICRC and VCRC after a test edited the packet.
void fix_crcs(Bytes& p) {
  const size_t icrc_at = p.size() - 6;
  wire::store_le32(&p[icrc_at], wire::icrc_ib(ByteSpan(p).first(icrc_at)));
  wire::store_le16(&p[icrc_at + 4], wire::vcrc(ByteSpan(p).first(icrc_at + 4)));
}
// Recomputes the VCRC only, as a switch does after rewriting a variant field.
void fix_vcrc(Bytes& p) {
  wire::store_le16(&p[p.size() - 2], wire::vcrc(ByteSpan(p).first(p.size() - 2)));
}

void set_field(Bytes& p, size_t at, const wire::Field& f, uint64_t v) { wire::set(MutByteSpan(p).subspan(at), f, v); }

void expect_error(const wire::Parsed<PacketView>& v, ParseErrorKind kind, std::string_view header,
                  std::string_view field, size_t offset) {
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, kind) << v.error().to_string();
  EXPECT_EQ(v.error().header, header) << v.error().to_string();
  EXPECT_EQ(v.error().field, field) << v.error().to_string();
  EXPECT_EQ(v.error().offset, offset) << v.error().to_string();
}

// ---- The view ------------------------------------------------------------------------

TEST(PacketReject, ReservedOpcodeIsAnIllegalOpCode) {
  TestRng rng;
  size_t reserved = 0;
  for (unsigned value = 0; value < 256; ++value) {
    if (find_opcode(static_cast<uint8_t>(value)) != nullptr) continue;
    ++reserved;
    Packet p = ib_packet(rng, Opcode::kRcSendOnly, 8);
    set_field(p.bytes, p.bth_at, wire::Bth::kOpCode, value);
    fix_crcs(p.bytes);
    auto v = PacketView::parse_ib(p.bytes);
    expect_error(v, ParseErrorKind::kIllegalValue, "BTH", "OpCode", p.bth_at);
    EXPECT_EQ(v.error().value, value);
    Bytes t = transport(rng, Opcode::kRcSendOnly, 8);
    t[0] = static_cast<uint8_t>(value);
    expect_error(PacketView::parse_roce_v2_transport(t), ParseErrorKind::kIllegalValue, "BTH", "OpCode", 0);
  }
  EXPECT_EQ(reserved, 256u - kOpcodeTable.size());
}

TEST(PacketReject, PadCountLargerThanTheBytesPresent) {
  TestRng rng;
  for (uint8_t pad = 1; pad <= 3; ++pad) {
    // No payload bytes at all, yet PadCnt says some of them are pad.
    Packet p = ib_packet(rng, Opcode::kRcSendOnly, 0);
    set_field(p.bytes, p.bth_at, wire::Bth::kPadCnt, pad);
    fix_crcs(p.bytes);
    expect_error(PacketView::parse_ib(p.bytes), ParseErrorKind::kInconsistent, "BTH", "PadCnt", p.bth_at + 1);
    Bytes ack = transport(rng, Opcode::kRcAcknowledge, 0);
    set_field(ack, 0, wire::Bth::kPadCnt, pad);
    expect_error(PacketView::parse_roce_v2_transport(ack), ParseErrorKind::kInconsistent, "BTH", "PadCnt", 1);
  }
}

TEST(PacketReject, PaddedOrEmptyFirstAndMiddlePackets) {
  TestRng rng;
  for (Opcode op : {Opcode::kRcSendFirst, Opcode::kUcRdmaWriteMiddle, Opcode::kRcRdmaReadResponseFirst}) {
    SCOPED_TRACE(std::string(to_string(op)));
    Bytes t = transport(rng, op, 8);
    set_field(t, 0, wire::Bth::kPadCnt, 1);
    expect_error(PacketView::parse_roce_v2_transport(t), ParseErrorKind::kIllegalValue, "BTH", "PadCnt", 1);
    const size_t headers = opcode_info(op).header_length();
    Bytes empty(t.begin(), t.begin() + static_cast<ptrdiff_t>(headers));
    set_field(empty, 0, wire::Bth::kPadCnt, 0);
    expect_error(PacketView::parse_roce_v2_transport(empty), ParseErrorKind::kInconsistent, "Packet", "Payload",
                 headers);
  }
}

TEST(PacketReject, PayloadOnAnOpcodeThatCarriesNone) {
  TestRng rng;
  for (const OpcodeInfo& info : kOpcodeTable) {
    if (info.payload) continue;
    SCOPED_TRACE(std::string(info.name));
    Bytes t = transport(rng, info.opcode, 0);
    t.insert(t.end(), {1, 2, 3, 4});
    expect_error(PacketView::parse_roce_v2_transport(t), ParseErrorKind::kInconsistent, "Packet", "Payload",
                 info.header_length());
    // The same in a native packet whose lengths and CRCs are all correct.
    Packet p = ib_packet(rng, info.opcode, 0);
    p.bytes.insert(p.bytes.end() - 6, {1, 2, 3, 4});
    set_field(p.bytes, 0, wire::Lrh::kPktLen, (p.bytes.size() - 2) / 4);
    fix_crcs(p.bytes);
    expect_error(PacketView::parse_ib(p.bytes), ParseErrorKind::kInconsistent, "Packet", "Payload",
                 8 + info.header_length());
  }
}

TEST(PacketReject, RoceTransportThatIsNotWholeWords) {
  TestRng rng;
  Bytes t = transport(rng, Opcode::kUdSendOnly, 8);
  t.push_back(0);
  expect_error(PacketView::parse_roce_v2_transport(t), ParseErrorKind::kInconsistent, "Packet", "Payload", 20);
}

TEST(PacketReject, PacketLengthThatDisagreesWithTheBytes) {
  TestRng rng;
  for (bool global : {false, true}) {
    Packet p = ib_packet(rng, Opcode::kRcRdmaWriteOnly, 16, global);
    const auto words = wire::get(ByteSpan(p.bytes), wire::Lrh::kPktLen);
    // Extra bytes after the VCRC.
    Bytes longer = p.bytes;
    longer.push_back(0);
    expect_error(PacketView::parse_ib(longer), ParseErrorKind::kInconsistent, "LRH", "PktLen", 4);
    // A PktLen too small for the headers plus the ICRC.
    Bytes small = p.bytes;
    set_field(small, 0, wire::Lrh::kPktLen, (p.bth_at + 12 + 16) / 4);
    fix_crcs(small);
    expect_error(PacketView::parse_ib(small), ParseErrorKind::kInconsistent, "LRH", "PktLen", 4);
    // A PktLen one word short: the packet seems to run on past its VCRC.
    Bytes shorter = p.bytes;
    set_field(shorter, 0, wire::Lrh::kPktLen, words - 1);
    fix_crcs(shorter);
    expect_error(PacketView::parse_ib(shorter), ParseErrorKind::kInconsistent, "LRH", "PktLen", 4);
    // A PktLen one word long: the packet looks cut short, inside the (moved) ICRC.
    Bytes promised = p.bytes;
    set_field(promised, 0, wire::Lrh::kPktLen, words + 1);
    expect_error(PacketView::parse_ib(promised), ParseErrorKind::kTruncated, "Packet", "ICRC", words * 4);
  }
}

TEST(PacketReject, GrhPayLenThatDisagreesWithPktLen) {
  TestRng rng;
  Packet p = ib_packet(rng, Opcode::kUdSendOnlyWithImmediate, 33, true);
  const auto pay_len = wire::get(ByteSpan(p.bytes).subspan(8), wire::Grh::kPayLen);
  set_field(p.bytes, 8, wire::Grh::kPayLen, pay_len + 4);
  fix_crcs(p.bytes);
  auto v = PacketView::parse_ib(p.bytes);
  expect_error(v, ParseErrorKind::kInconsistent, "GRH", "PayLen", 12);
  EXPECT_EQ(v.error().value, pay_len + 4);
}

TEST(PacketReject, IcrcAndVcrcMismatches) {
  TestRng rng;
  for (bool global : {false, true}) {
    Packet p = ib_packet(rng, Opcode::kRcSendOnly, 20, global);
    const size_t icrc_at = p.bytes.size() - 6;
    // A damaged payload byte: the VCRC catches it first (IBA 7.8: checked at every hop).
    Bytes damaged = p.bytes;
    damaged[p.bth_at + 12 + 3] ^= 0x10;
    expect_error(PacketView::parse_ib(damaged), ParseErrorKind::kIllegalValue, "Packet", "VCRC", icrc_at + 4);
    // The same damage behind a recomputed VCRC (a broken switch): the ICRC catches it.
    fix_vcrc(damaged);
    auto v = PacketView::parse_ib(damaged);
    expect_error(v, ParseErrorKind::kIllegalValue, "Packet", "ICRC", icrc_at);
    EXPECT_EQ(v.error().value, wire::load_le32(&p.bytes[icrc_at]));
    // A damaged VCRC alone.
    Bytes bad_vcrc = p.bytes;
    bad_vcrc.back() ^= 0x01;
    expect_error(PacketView::parse_ib(bad_vcrc), ParseErrorKind::kIllegalValue, "Packet", "VCRC", icrc_at + 4);
    // A damaged ICRC alone.
    Bytes bad_icrc = p.bytes;
    bad_icrc[icrc_at] ^= 0x80;
    fix_vcrc(bad_icrc);
    expect_error(PacketView::parse_ib(bad_icrc), ParseErrorKind::kIllegalValue, "Packet", "ICRC", icrc_at);
  }
}

TEST(PacketCrc, VariantFieldsMayChangeInFlight) {
  TestRng rng;
  // Local packet: VL and BTH byte 4 (FECN, BECN) are variant (IBA 7.8.1).
  Packet local = ib_packet(rng, Opcode::kRcSendOnly, 12);
  Bytes p = local.bytes;
  set_field(p, 0, wire::Lrh::kVl, (wire::get(ByteSpan(p), wire::Lrh::kVl) + 1) % 16);
  set_field(p, 8, wire::Bth::kFecn, 1 - wire::get(ByteSpan(p).subspan(8), wire::Bth::kFecn));
  set_field(p, 8, wire::Bth::kBecn, 1 - wire::get(ByteSpan(p).subspan(8), wire::Bth::kBecn));
  fix_vcrc(p);
  EXPECT_TRUE(PacketView::parse_ib(p).ok());
  // ...but the SL of a local packet is invariant.
  p = local.bytes;
  set_field(p, 0, wire::Lrh::kSl, (wire::get(ByteSpan(p), wire::Lrh::kSl) + 1) % 16);
  fix_vcrc(p);
  expect_error(PacketView::parse_ib(p), ParseErrorKind::kIllegalValue, "Packet", "ICRC", p.size() - 6);
  // Global packet: the whole LRH and GRH TClass, FlowLabel, HopLmt are variant (a router
  // rewrites them)...
  Packet global = ib_packet(rng, Opcode::kRcSendOnly, 12, true);
  p = global.bytes;
  set_field(p, 0, wire::Lrh::kSl, (wire::get(ByteSpan(p), wire::Lrh::kSl) + 1) % 16);
  set_field(p, 0, wire::Lrh::kDlid, wire::get(ByteSpan(p), wire::Lrh::kDlid) ^ 0x55);
  set_field(p, 8, wire::Grh::kTClass, wire::get(ByteSpan(p).subspan(8), wire::Grh::kTClass) ^ 0xFF);
  set_field(p, 8, wire::Grh::kFlowLabel, wire::get(ByteSpan(p).subspan(8), wire::Grh::kFlowLabel) ^ 1);
  set_field(p, 8, wire::Grh::kHopLmt, wire::get(ByteSpan(p).subspan(8), wire::Grh::kHopLmt) ^ 0x0F);
  fix_vcrc(p);
  EXPECT_TRUE(PacketView::parse_ib(p).ok());
  // ...but not the DGID.
  p = global.bytes;
  p[8 + 39] ^= 1;
  fix_vcrc(p);
  expect_error(PacketView::parse_ib(p), ParseErrorKind::kIllegalValue, "Packet", "ICRC", p.size() - 6);
}

TEST(PacketReject, RawAndIpNonIbaPacketsAreNotForThisView) {
  TestRng rng;
  for (auto lnh : {wire::Lnh::kRaw, wire::Lnh::kIpNonIba}) {
    Packet p = ib_packet(rng, Opcode::kRcSendOnly, 4);
    set_field(p.bytes, 0, wire::Lrh::kLnh, static_cast<uint8_t>(lnh));  // (no ICRC for these)
    auto v = PacketView::parse_ib(p.bytes);
    expect_error(v, ParseErrorKind::kIllegalValue, "LRH", "LNH", 1);
    EXPECT_EQ(v.error().value, static_cast<uint8_t>(lnh));
  }
}

TEST(PacketReject, HeaderVersionsAndNextHeader) {
  TestRng rng;
  Packet p = ib_packet(rng, Opcode::kRcSendOnly, 4, true);
  Bytes b = p.bytes;
  set_field(b, 0, wire::Lrh::kLVer, 1);
  expect_error(PacketView::parse_ib(b), ParseErrorKind::kIllegalValue, "LRH", "LVer", 0);
  b = p.bytes;
  set_field(b, 8, wire::Grh::kIpVer, 4);
  expect_error(PacketView::parse_ib(b), ParseErrorKind::kIllegalValue, "GRH", "IPVer", 8);
  b = p.bytes;
  set_field(b, 8, wire::Grh::kNxtHdr, 17);  // UDP: not an IBA transport
  fix_crcs(b);
  expect_error(PacketView::parse_ib(b), ParseErrorKind::kIllegalValue, "GRH", "NxtHdr", 14);
  b = p.bytes;
  set_field(b, 48, wire::Bth::kTVer, 1);
  fix_crcs(b);
  expect_error(PacketView::parse_ib(b), ParseErrorKind::kIllegalValue, "BTH", "TVer", 49);
}

TEST(PacketReject, ReservedAethSyndrome) {
  TestRng rng;
  Bytes t = transport(rng, Opcode::kRcAcknowledge, 0);
  t[12] = 0x40 | 0x01;  // type 10 is reserved (IBA 9.3.5 table 44)
  expect_error(PacketView::parse_roce_v2_transport(t), ParseErrorKind::kIllegalValue, "AETH", "Syndrome", 12);
}

TEST(PacketReject, ErrorsInADatagramCountFromTheIpHeader) {
  TestRng rng;
  for (bool ipv6 : {false, true}) {
    const OpcodeInfo& info = opcode_info(Opcode::kRcCompareSwap);
    Bytes d(roce_v2_packet_length(ipv6, info, 0));
    ASSERT_TRUE(build_roce_v2(random_addressing(rng, ipv6), random_headers(rng, info), {}, d).ok());
    const size_t bth_at = ipv6 ? 48 : 28;
    // Damage the TVer and fix the ICRC (and the IPv6 UDP checksum) with the wire encoder.
    set_field(d, bth_at, wire::Bth::kTVer, 3);
    auto frame = wire::decode_roce_v2(d);
    EXPECT_FALSE(frame.ok());  // the ICRC no longer matches
    Bytes t(d.begin() + static_cast<ptrdiff_t>(bth_at), d.end() - 4);
    wire::RoceV2Addressing a = random_addressing(rng, ipv6);
    Bytes d2(d.size());
    ASSERT_TRUE(wire::encode_roce_v2(a, t, d2).ok());
    expect_error(PacketView::parse_roce_v2(d2), ParseErrorKind::kIllegalValue, "BTH", "TVer", bth_at + 1);
    // Errors below the transport are wire's, with its names.
    d2[bth_at + 5] ^= 1;
    if (ipv6) {
      expect_error(PacketView::parse_roce_v2(d2), ParseErrorKind::kIllegalValue, "UDP", "Checksum", 46);
    } else {
      expect_error(PacketView::parse_roce_v2(d2), ParseErrorKind::kIllegalValue, "RoCEv2", "ICRC", d2.size() - 4);
    }
  }
}

TEST(PacketView, ReservedBitsAndPadBytesAreIgnoredButReported) {
  TestRng rng;
  const OpcodeInfo& info = opcode_info(Opcode::kUdSendOnly);
  Bytes t = transport(rng, info.opcode, 5);  // 3 pad bytes
  auto clean = PacketView::parse_roce_v2_transport(t);
  ASSERT_TRUE(clean.ok());
  EXPECT_TRUE(clean->is_canonical());
  struct Edit {
    std::string what;
    size_t at;
    const wire::Field* field;
  };
  const std::vector<Edit> edits = {{"BTH.Resv6", 0, &wire::Bth::kResv6},
                                   {"BTH.Resv7", 0, &wire::Bth::kResv7},
                                   {"DETH.Resv8", 12, &wire::Deth::kResv8}};
  for (const Edit& e : edits) {
    Bytes b = t;
    set_field(b, e.at, *e.field, 1);
    auto v = PacketView::parse_roce_v2_transport(b);
    ASSERT_TRUE(v.ok()) << e.what;
    EXPECT_FALSE(v->is_canonical()) << e.what;
    EXPECT_EQ(v->headers(), clean->headers()) << e.what;
  }
  Bytes padded = t;
  padded.back() = 0x5A;
  auto v = PacketView::parse_roce_v2_transport(padded);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->is_canonical());
  EXPECT_EQ(v->payload().size(), 5u);
  // LRH reserved bits in a native packet.
  Packet p = ib_packet(rng, Opcode::kRcSendOnly, 4);
  set_field(p.bytes, 0, wire::Lrh::kRsv5, 3);
  fix_crcs(p.bytes);
  auto ib = PacketView::parse_ib(p.bytes);
  ASSERT_TRUE(ib.ok());
  EXPECT_FALSE(ib->is_canonical());
}

// ---- The builder ----------------------------------------------------------------------

// Builds into a buffer of 0xAA bytes and checks that a refusal wrote none of them.
void expect_refused(Result<size_t> (*build)(const TransportHeaders&, ByteSpan, MutByteSpan),
                    const TransportHeaders& h, ByteSpan payload, Code code, const std::string& what) {
  Bytes out(512, 0xAA);
  auto n = build(h, payload, out);
  ASSERT_FALSE(n.ok()) << what;
  EXPECT_EQ(n.error().code(), code) << what << ": " << n.error().to_string();
  EXPECT_EQ(out, Bytes(512, 0xAA)) << what;
}

Result<size_t> via_transport(const TransportHeaders& h, ByteSpan payload, MutByteSpan out) {
  return build_transport(h, payload, out);
}
Result<size_t> via_ib(const TransportHeaders& h, ByteSpan payload, MutByteSpan out) {
  return build_ib(IbRoute{}, h, payload, out);
}
Result<size_t> via_roce(const TransportHeaders& h, ByteSpan payload, MutByteSpan out) {
  wire::RoceV2Addressing a;
  a.source = Gid::from_ipv4(0x0A000001);
  a.destination = Gid::from_ipv4(0x0A000002);
  return build_roce_v2(a, h, payload, out);
}

TEST(PacketBuilder, RefusesWhatTheOpcodeTableForbids) {
  TestRng rng;
  const Bytes four = {1, 2, 3, 4};
  for (auto build : {via_transport, via_ib, via_roce}) {
    TransportHeaders h = random_headers(rng, opcode_info(Opcode::kRcSendMiddle));
    h.reth = wire::Reth{};
    expect_refused(build, h, four, Code::kInvalidArgument, "RETH on SEND_MIDDLE");

    h = random_headers(rng, opcode_info(Opcode::kRcRdmaWriteFirst));
    h.reth.reset();
    expect_refused(build, h, four, Code::kInvalidArgument, "RDMA_WRITE_FIRST without RETH");

    h = random_headers(rng, opcode_info(Opcode::kRcAcknowledge));
    expect_refused(build, h, four, Code::kInvalidArgument, "payload on an ACK");

    h = random_headers(rng, opcode_info(Opcode::kUdSendOnly));
    h.immdt = wire::ImmDt{7};
    expect_refused(build, h, four, Code::kInvalidArgument, "ImmDt on UD_SEND_ONLY");

    h = random_headers(rng, opcode_info(Opcode::kRcSendOnly));
    h.bth.opcode = 0x15;
    expect_refused(build, h, four, Code::kInvalidArgument, "reserved opcode");

    h = random_headers(rng, opcode_info(Opcode::kUcSendFirst));
    expect_refused(build, h, {}, Code::kInvalidArgument, "empty SEND_FIRST");
    expect_refused(build, h, ByteSpan(four).first(3), Code::kInvalidArgument, "SEND_FIRST of 3 bytes");

    h = random_headers(rng, opcode_info(Opcode::kRdResync));
    h.rdeth = wire::Rdeth{0x1000000};
    expect_refused(build, h, {}, Code::kInvalidArgument, "EECnxt wider than 24 bits");

    h = random_headers(rng, opcode_info(Opcode::kRcAcknowledge));
    h.aeth = wire::Aeth{0x41, 0};
    expect_refused(build, h, {}, Code::kInvalidArgument, "reserved AETH syndrome");
    h.aeth = wire::Aeth{0x00, 0x1000000};
    expect_refused(build, h, {}, Code::kInvalidArgument, "MSN wider than 24 bits");

    h = random_headers(rng, opcode_info(Opcode::kRcFlush));
    h.feth = wire::Feth{4, 0};
    expect_refused(build, h, {}, Code::kInvalidArgument, "SEL wider than 2 bits");
  }
}

TEST(PacketBuilder, RefusesBadRoutesAndShortBuffers) {
  TestRng rng;
  const TransportHeaders h = random_headers(rng, opcode_info(Opcode::kRcSendOnly));
  const Bytes payload(100, 7);
  Bytes out(512, 0xAA);

  IbRoute route;
  route.lrh.vl = 16;
  EXPECT_EQ(build_ib(route, h, payload, out).error().code(), Code::kInvalidArgument);
  route = IbRoute{};
  route.grh = wire::Grh{};
  route.grh->flow_label = 1u << 20;
  EXPECT_EQ(build_ib(route, h, payload, out).error().code(), Code::kInvalidArgument);
  EXPECT_EQ(out, Bytes(512, 0xAA));

  // LRH.PktLen holds 2047 words: 8188 bytes from the LRH through the ICRC.
  const size_t max_local = 2047 * 4 - 8 - 12 - 4;
  Bytes big(max_local + 4);
  Bytes huge(9000);
  EXPECT_TRUE(build_ib(IbRoute{}, h, ByteSpan(big).first(max_local), huge).ok());
  EXPECT_EQ(build_ib(IbRoute{}, h, ByteSpan(big).first(max_local + 1), huge).error().code(), Code::kInvalidArgument);

  // Each builder refuses a buffer one byte short, and fills one of exactly the right size.
  const OpcodeInfo& info = opcode_info(Opcode::kRcSendOnly);
  for (bool global : {false, true}) {
    IbRoute r = random_route(rng, global);
    Bytes exact(ib_packet_length(global, info, payload.size()));
    EXPECT_EQ(build_ib(r, h, payload, MutByteSpan(exact).first(exact.size() - 1)).error().code(), Code::kOutOfRange);
    EXPECT_EQ(*build_ib(r, h, payload, exact), exact.size());
  }
  for (bool ipv6 : {false, true}) {
    const wire::RoceV2Addressing a = random_addressing(rng, ipv6);
    Bytes exact(roce_v2_packet_length(ipv6, info, payload.size()));
    EXPECT_EQ(build_roce_v2(a, h, payload, MutByteSpan(exact).first(exact.size() - 1)).error().code(),
              Code::kOutOfRange);
    EXPECT_EQ(*build_roce_v2(a, h, payload, exact), exact.size());
  }
  Bytes exact(transport_length(info, payload.size()));
  EXPECT_EQ(build_transport(h, payload, MutByteSpan(exact).first(exact.size() - 1)).error().code(), Code::kOutOfRange);
  EXPECT_EQ(*build_transport(h, payload, exact), exact.size());

  // Mixed IP versions are wire's refusal.
  wire::RoceV2Addressing mixed = random_addressing(rng, true);
  mixed.destination = Gid::from_ipv4(0x0A000001);
  Bytes d(512);
  EXPECT_EQ(build_roce_v2(mixed, h, payload, d).error().code(), Code::kInvalidArgument);
}

TEST(PacketBuilder, WritesReservedBitsAndPadAsZeroOverStaleBytes) {
  TestRng rng;
  const OpcodeInfo& info = opcode_info(Opcode::kRdSendOnly);  // RDETH and DETH have Resv8
  TransportHeaders h = random_headers(rng, info);
  h.bth.pad_count = 3;  // ignored: the builder computes it
  const Bytes payload = random_bytes(rng, 6);
  Bytes out(transport_length(info, payload.size()), 0xFF);
  ASSERT_TRUE(build_transport(h, payload, out).ok());
  EXPECT_EQ(wire::get(ByteSpan(out), wire::Bth::kPadCnt), 2u);
  EXPECT_EQ(wire::get(ByteSpan(out), wire::Bth::kResv6), 0u);
  EXPECT_EQ(wire::get(ByteSpan(out), wire::Bth::kResv7), 0u);
  EXPECT_EQ(wire::get(ByteSpan(out).subspan(12), wire::Rdeth::kResv8), 0u);
  EXPECT_EQ(wire::get(ByteSpan(out).subspan(16), wire::Deth::kResv8), 0u);
  EXPECT_EQ(out[out.size() - 1], 0);
  EXPECT_EQ(out[out.size() - 2], 0);
  auto v = PacketView::parse_roce_v2_transport(out);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->is_canonical());
}

}  // namespace
}  // namespace softib::packet
