// Builder -> view round trips for every opcode of the table in every encoding, with seeded
// random header values and every payload size up to a 256-byte MTU (so every PadCnt), and
// truncation at every byte boundary naming the field where the bytes ran out. Lengths and
// offsets expected here come from the hand copy of table 38 (spec_table.hpp) and the wire
// codecs' field lists, not from the opcode table under test.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "packet/builder.hpp"
#include "packet/packet_view.hpp"
#include "unit/packet/random_packets.hpp"
#include "unit/packet/spec_table.hpp"
#include "wire/crc.hpp"

namespace softib::packet {
namespace {

using namespace softib::packet::testing;
using Bytes = std::vector<uint8_t>;
using wire::ByteSpan;
using wire::ParseErrorKind;

enum class Form { kIbLocal, kIbGlobal, kRoceV4, kRoceV6, kTransport };
const std::vector<Form> kAllForms = {Form::kIbLocal, Form::kIbGlobal, Form::kRoceV4, Form::kRoceV6, Form::kTransport};

std::string name(Form f) {
  switch (f) {
    case Form::kIbLocal: return "IB local";
    case Form::kIbGlobal: return "IB global";
    case Form::kRoceV4: return "RoCEv2/IPv4";
    case Form::kRoceV6: return "RoCEv2/IPv6";
    case Form::kTransport: return "RoCEv2 transport";
  }
  return "?";
}

bool is_ib(Form f) { return f == Form::kIbLocal || f == Form::kIbGlobal; }

struct Built {
  Bytes bytes;
  TransportHeaders headers;  // as the view should return them (pad_count filled in)
  Bytes payload;
  IbRoute route;
  wire::RoceV2Addressing addressing;
};

size_t spec_pad(size_t n) { return (4 - n % 4) % 4; }

Built build(TestRng& rng, const OpcodeInfo& info, Form form, size_t payload_len) {
  Built b;
  b.headers = random_headers(rng, info);
  b.payload = random_bytes(rng, payload_len);
  b.bytes.assign(2 * payload_len + 256, 0xEE);  // stale bytes: the builder must write them all
  Result<size_t> n = Status(Code::kInternal, "unset");
  switch (form) {
    case Form::kIbLocal:
    case Form::kIbGlobal:
      b.route = random_route(rng, form == Form::kIbGlobal);
      n = build_ib(b.route, b.headers, b.payload, b.bytes);
      break;
    case Form::kRoceV4:
    case Form::kRoceV6:
      b.addressing = random_addressing(rng, form == Form::kRoceV6);
      n = build_roce_v2(b.addressing, b.headers, b.payload, b.bytes);
      break;
    case Form::kTransport: n = build_transport(b.headers, b.payload, b.bytes); break;
  }
  EXPECT_TRUE(n.ok()) << n.error().to_string();
  if (n.ok()) b.bytes.resize(*n);
  b.headers.bth.pad_count = static_cast<uint8_t>(spec_pad(payload_len));
  return b;
}

wire::Parsed<PacketView> parse(Form form, ByteSpan bytes) {
  switch (form) {
    case Form::kIbLocal:
    case Form::kIbGlobal: return PacketView::parse_ib(bytes);
    case Form::kRoceV4:
    case Form::kRoceV6: return PacketView::parse_roce_v2(bytes);
    case Form::kTransport: break;
  }
  return PacketView::parse_roce_v2_transport(bytes);
}

// Where the BTH starts in a packet of this form.
size_t bth_offset(Form form) {
  switch (form) {
    case Form::kIbLocal: return 8;
    case Form::kIbGlobal: return 8 + 40;
    case Form::kRoceV4: return 20 + 8;
    case Form::kRoceV6: return 40 + 8;
    case Form::kTransport: break;
  }
  return 0;
}

// Builds the packet again from what the view shows.
Bytes rebuild(Form form, const PacketView& v, const Built& b) {
  Bytes out(b.bytes.size() + 64);
  Result<size_t> n = Status(Code::kInternal, "unset");
  if (is_ib(form)) {
    IbRoute r;
    r.lrh = *v.lrh();
    r.grh = v.grh();
    n = build_ib(r, v.headers(), v.payload(), out);
  } else if (form == Form::kTransport) {
    n = build_transport(v.headers(), v.payload(), out);
  } else {
    n = build_roce_v2(b.addressing, v.headers(), v.payload(), out);
  }
  EXPECT_TRUE(n.ok()) << n.error().to_string();
  out.resize(n.ok() ? *n : 0);
  return out;
}

void check_round_trip(Form form, const OpcodeInfo& info, const Built& b) {
  const SpecRow& spec = spec_row(info.value());
  const size_t n = b.payload.size();
  const size_t bth_at = bth_offset(form);
  const size_t payload_at = bth_at + spec_header_length(spec);
  const size_t trailer = is_ib(form) ? 6 : form == Form::kTransport ? 0 : 4;
  ASSERT_EQ(b.bytes.size(), payload_at + n + spec_pad(n) + trailer);

  auto v = parse(form, b.bytes);
  ASSERT_TRUE(v.ok()) << v.error().to_string();
  EXPECT_EQ(v->opcode(), info.opcode);
  EXPECT_EQ(&v->info(), &info);
  EXPECT_EQ(v->headers(), b.headers);
  EXPECT_EQ(v->pad_count(), spec_pad(n));
  ASSERT_EQ(v->payload().size(), n);
  EXPECT_TRUE(std::equal(b.payload.begin(), b.payload.end(), v->payload().begin()));
  // The payload sits where table 38 says, followed by zero pad bytes.
  EXPECT_EQ(v->payload().data(), b.bytes.data() + payload_at);
  for (size_t i = 0; i < spec_pad(n); ++i) EXPECT_EQ(b.bytes[payload_at + n + i], 0);
  EXPECT_TRUE(v->is_canonical());

  if (is_ib(form)) {
    EXPECT_EQ(v->encoding(), Encoding::kIb);
    wire::Lrh lrh = b.route.lrh;
    lrh.lnh = form == Form::kIbGlobal ? wire::Lnh::kIbaGlobal : wire::Lnh::kIbaLocal;
    lrh.pkt_len = static_cast<uint16_t>((b.bytes.size() - 2) / 4);
    EXPECT_EQ(v->lrh(), lrh);
    if (form == Form::kIbGlobal) {
      wire::Grh grh = *b.route.grh;
      grh.pay_len = static_cast<uint16_t>(b.bytes.size() - 2 - 8 - 40);
      EXPECT_EQ(v->grh(), grh);
    } else {
      EXPECT_FALSE(v->grh().has_value());
    }
    EXPECT_EQ(v->icrc(), wire::load_le32(&b.bytes[b.bytes.size() - 6]));
    EXPECT_EQ(v->vcrc(), wire::load_le16(&b.bytes[b.bytes.size() - 2]));
  } else {
    EXPECT_EQ(v->encoding(), Encoding::kRoceV2);
    EXPECT_FALSE(v->lrh().has_value());
    EXPECT_FALSE(v->icrc().has_value());
    if (form != Form::kTransport) {
      ASSERT_TRUE(v->roce().has_value());
      EXPECT_EQ(v->roce()->source, b.addressing.source);
      EXPECT_EQ(v->roce()->destination, b.addressing.destination);
      EXPECT_EQ(v->roce()->ipv6.has_value(), form == Form::kRoceV6);
      EXPECT_EQ(v->roce()->udp.source_port, b.addressing.source_port);
    }
  }
  EXPECT_EQ(rebuild(form, *v, b), b.bytes);
}

std::vector<size_t> payload_sizes(const OpcodeInfo& info, size_t mtu) {
  std::vector<size_t> sizes;
  if (!info.payload) return {0};
  for (size_t n = 0; n <= mtu; ++n)
    if (valid_payload_size(info, n) == n) sizes.push_back(n);
  return sizes;
}

TEST(PacketRoundTrip, EveryOpcodeEveryFormEveryPayloadSizeUpTo256) {
  TestRng rng;
  size_t packets = 0;
  for (const OpcodeInfo& info : kOpcodeTable) {
    for (Form form : kAllForms) {
      for (size_t n : payload_sizes(info, 256)) {
        SCOPED_TRACE(std::string(info.name) + " " + name(form) + " payload " + std::to_string(n));
        check_round_trip(form, info, build(rng, info, form, n));
        ++packets;
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  // Every size 0..256 for last and only packets, the 64 whole-word sizes 4..256 for first and
  // middle ones, none for opcodes without payload; in each of the five forms.
  size_t expected = 0;
  for (const SpecRow& spec : kSpec) {
    const std::string n = spec.name;
    const bool full_pmtu = n.find("_FIRST") != std::string::npos || n.find("_MIDDLE") != std::string::npos;
    expected += !spec.payload ? 1 : full_pmtu ? 64 : 257;
  }
  EXPECT_EQ(packets, 5 * expected);
}

TEST(PacketRoundTrip, LargePayloadsUpTo4096) {
  TestRng rng;
  for (const OpcodeInfo& info : kOpcodeTable) {
    if (!info.payload) continue;
    for (Form form : kAllForms) {
      for (int i = 0; i < 4; ++i) {
        const size_t n = valid_payload_size(info, i == 0 ? 4096 : rng.between(257, 4096));
        SCOPED_TRACE(std::string(info.name) + " " + name(form) + " payload " + std::to_string(n));
        check_round_trip(form, info, build(rng, info, form, n));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// ---- Truncation ----------------------------------------------------------------------

struct Segment {
  std::string_view header;
  std::span<const wire::Field> fields;
  size_t start;
  size_t length;
};

std::span<const wire::Field> fields_of(const std::string& header) {
  if (header == "RDETH") return wire::Rdeth::kFields;
  if (header == "DETH") return wire::Deth::kFields;
  if (header == "FETH") return wire::Feth::kFields;
  if (header == "RETH") return wire::Reth::kFields;
  if (header == "AtomicETH") return wire::AtomicEth::kFields;
  if (header == "AETH") return wire::Aeth::kFields;
  if (header == "AtomicAckETH") return wire::AtomicAckEth::kFields;
  if (header == "ImmDt") return wire::ImmDt::kFields;
  if (header == "IETH") return wire::Ieth::kFields;
  ADD_FAILURE() << header;
  return {};
}

// The headers of a packet laid out from table 38: LRH, GRH, BTH, extension headers.
std::vector<Segment> header_layout(Form form, const SpecRow& spec) {
  std::vector<Segment> s;
  size_t at = 0;
  if (is_ib(form)) {
    s.push_back({"LRH", wire::Lrh::kFields, at, 8});
    at += 8;
  }
  if (form == Form::kIbGlobal) {
    s.push_back({"GRH", wire::Grh::kFields, at, 40});
    at += 40;
  }
  s.push_back({"BTH", wire::Bth::kFields, at, kSpecBthLength});
  at += kSpecBthLength;
  for (const std::string& h : words(spec.headers)) {
    const auto& stored = *kSpecLength.find(h);  // a stable string_view for the header name
    s.push_back({stored.first, fields_of(h), at, stored.second});
    at += stored.second;
  }
  return s;
}

struct Expected {
  std::string header;
  std::string field;
  size_t offset;
};

// The field where `cut` bytes of `packet` run out.
Expected expected_cut(Form form, const SpecRow& spec, size_t packet_size, size_t cut) {
  for (const Segment& seg : header_layout(form, spec)) {
    if (cut >= seg.start + seg.length) continue;
    for (const wire::Field& f : seg.fields)
      if (seg.start + f.end_byte() > cut) return {std::string(seg.header), std::string(f.name), seg.start + f.first_byte()};
  }
  // Past the headers: payload (with pad), then ICRC, then VCRC.
  const size_t icrc_at = packet_size - 6;
  const size_t headers_end = header_layout(form, spec).back().start + header_layout(form, spec).back().length;
  if (cut < icrc_at) return {"Packet", "Payload", headers_end};
  if (cut < icrc_at + 4) return {"Packet", "ICRC", icrc_at};
  return {"Packet", "VCRC", icrc_at + 4};
}

TEST(PacketTruncation, EveryByteBoundaryOfNativeIbNamesTheField) {
  TestRng rng;
  for (const OpcodeInfo& info : kOpcodeTable) {
    for (Form form : {Form::kIbLocal, Form::kIbGlobal}) {
      const Built b = build(rng, info, form, valid_payload_size(info, 7));
      for (size_t cut = 0; cut < b.bytes.size(); ++cut) {
        const Expected want = expected_cut(form, spec_row(info.value()), b.bytes.size(), cut);
        SCOPED_TRACE(std::string(info.name) + " " + name(form) + " cut at " + std::to_string(cut));
        auto v = PacketView::parse_ib(ByteSpan(b.bytes).first(cut));
        ASSERT_FALSE(v.ok());
        EXPECT_EQ(v.error().kind, ParseErrorKind::kTruncated) << v.error().to_string();
        EXPECT_EQ(v.error().header, want.header) << v.error().to_string();
        EXPECT_EQ(v.error().field, want.field) << v.error().to_string();
        EXPECT_EQ(v.error().offset, want.offset) << v.error().to_string();
        EXPECT_EQ(v.error().available, cut);
      }
    }
  }
}

TEST(PacketTruncation, EveryByteBoundaryOfTheRoceTransportHeadersNamesTheField) {
  TestRng rng;
  for (const OpcodeInfo& info : kOpcodeTable) {
    const SpecRow& spec = spec_row(info.value());
    const Built b = build(rng, info, Form::kTransport, valid_payload_size(info, 7));
    for (size_t cut = 0; cut < spec_header_length(spec); ++cut) {
      const Expected want = expected_cut(Form::kTransport, spec, b.bytes.size(), cut);
      SCOPED_TRACE(std::string(info.name) + " cut at " + std::to_string(cut));
      auto v = PacketView::parse_roce_v2_transport(ByteSpan(b.bytes).first(cut));
      ASSERT_FALSE(v.ok());
      EXPECT_EQ(v.error().kind, ParseErrorKind::kTruncated);
      EXPECT_EQ(v.error().header, want.header) << v.error().to_string();
      EXPECT_EQ(v.error().field, want.field) << v.error().to_string();
      EXPECT_EQ(v.error().offset, want.offset);
    }
  }
}

TEST(PacketTruncation, EveryByteBoundaryOfARoceDatagramIsCaughtByItsIpLength) {
  TestRng rng;
  for (Form form : {Form::kRoceV4, Form::kRoceV6}) {
    const OpcodeInfo& info = opcode_info(Opcode::kRcRdmaWriteOnlyWithImmediate);
    const Built b = build(rng, info, form, 9);
    const size_t ip_len = form == Form::kRoceV4 ? 20 : 40;
    const std::string ip = form == Form::kRoceV4 ? "IPv4" : "IPv6";
    for (size_t cut = 0; cut < b.bytes.size(); ++cut) {
      SCOPED_TRACE(name(form) + " cut at " + std::to_string(cut));
      auto v = PacketView::parse_roce_v2(ByteSpan(b.bytes).first(cut));
      ASSERT_FALSE(v.ok());
      // An empty input has no version nibble: it is reported as a short IPv4 header.
      EXPECT_EQ(v.error().header, cut == 0 ? "IPv4" : ip) << v.error().to_string();
      if (cut < ip_len) {
        EXPECT_EQ(v.error().kind, ParseErrorKind::kTruncated);
      } else {
        EXPECT_EQ(v.error().kind, ParseErrorKind::kInconsistent);
        EXPECT_EQ(v.error().field, form == Form::kRoceV4 ? "TotalLength" : "PayLen");
      }
    }
  }
}

}  // namespace
}  // namespace softib::packet

namespace softib::packet {
namespace {

// build_transport_headers + the caller's payload is byte for byte build_transport, and it
// refuses what build_transport refuses.
TEST(PacketBuilder, HeadersOnlyThenPayloadEqualsTheWholeBuild) {
  TestRng rng;
  for (const OpcodeInfo& info : kOpcodeTable) {
    for (size_t n : payload_sizes(info, 64)) {
      SCOPED_TRACE(std::string(info.name) + " payload " + std::to_string(n));
      const TransportHeaders h = random_headers(rng, info);
      const std::vector<uint8_t> payload = random_bytes(rng, n);
      std::vector<uint8_t> whole(transport_length(info, n), 0xAA), parts(transport_length(info, n), 0x55);
      auto a = build_transport(h, payload, whole);
      auto b = build_transport_headers(h, n, parts);
      ASSERT_TRUE(a.ok());
      ASSERT_TRUE(b.ok());
      ASSERT_EQ(*a, *b);
      std::copy(payload.begin(), payload.end(), parts.begin() + static_cast<ptrdiff_t>(info.header_length()));
      ASSERT_EQ(whole, parts);
    }
  }
  TransportHeaders ack;
  ack.bth.opcode = static_cast<uint8_t>(Opcode::kRcAcknowledge);
  ack.aeth = wire::Aeth::ack(0);
  std::vector<uint8_t> out(64);
  EXPECT_FALSE(build_transport_headers(ack, 4, out).ok()) << "an ACK carries no payload";
  EXPECT_FALSE(build_transport_headers(ack, 0, wire::MutByteSpan(out.data(), 8)).ok()) << "too small";
}

}  // namespace
}  // namespace softib::packet
