// Every IBA header codec: decode(encode(x)) == x for seeded random values, reserved bits
// written as zero, truncation at every byte names the field where the bytes ran out, and
// illegal values are rejected with the field named.
#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

#include "support/random.hpp"
#include "wire/aeth.hpp"
#include "wire/atomic_ack_eth.hpp"
#include "wire/atomic_eth.hpp"
#include "wire/bth.hpp"
#include "wire/deth.hpp"
#include "wire/grh.hpp"
#include "wire/ieth.hpp"
#include "wire/immdt.hpp"
#include "wire/lrh.hpp"
#include "wire/rdeth.hpp"
#include "wire/reth.hpp"
#include "wire/udp.hpp"

namespace softib::wire {
namespace {

using testing::TestRng;

Gid random_gid(TestRng& rng) {
  std::array<uint8_t, 16> raw{};
  for (auto& b : raw) b = static_cast<uint8_t>(rng.next());
  return Gid(raw);
}

Lrh random(TestRng& rng, Lrh*) {
  Lrh h;
  h.vl = static_cast<uint8_t>(rng.bits(4));
  h.sl = static_cast<uint8_t>(rng.bits(4));
  h.lnh = static_cast<Lnh>(rng.bits(2));
  h.dlid = Lid(static_cast<uint16_t>(rng.bits(16)));
  h.pkt_len = static_cast<uint16_t>(rng.bits(11));
  h.slid = Lid(static_cast<uint16_t>(rng.bits(16)));
  return h;
}
Grh random(TestRng& rng, Grh*) {
  Grh h;
  h.tclass = static_cast<uint8_t>(rng.bits(8));
  h.flow_label = static_cast<uint32_t>(rng.bits(20));
  h.pay_len = static_cast<uint16_t>(rng.bits(16));
  h.nxt_hdr = static_cast<uint8_t>(rng.bits(8));
  h.hop_lmt = static_cast<uint8_t>(rng.bits(8));
  h.sgid = random_gid(rng);
  h.dgid = random_gid(rng);
  return h;
}
Bth random(TestRng& rng, Bth*) {
  Bth h;
  h.opcode = static_cast<uint8_t>(rng.bits(8));
  h.solicited = rng.coin();
  h.mig_req = rng.coin();
  h.pad_count = static_cast<uint8_t>(rng.bits(2));
  h.pkey = PKey(static_cast<uint16_t>(rng.bits(16)));
  h.fecn = rng.coin();
  h.becn = rng.coin();
  h.dest_qp = Qpn(static_cast<uint32_t>(rng.bits(24)));
  h.ack_req = rng.coin();
  h.psn = Psn(static_cast<uint32_t>(rng.bits(24)));
  return h;
}
Rdeth random(TestRng& rng, Rdeth*) { return Rdeth{static_cast<uint32_t>(rng.bits(24))}; }
Deth random(TestRng& rng, Deth*) {
  return Deth{QKey(static_cast<uint32_t>(rng.bits(32))), Qpn(static_cast<uint32_t>(rng.bits(24)))};
}
Reth random(TestRng& rng, Reth*) {
  return Reth{rng.next(), RKey(static_cast<uint32_t>(rng.bits(32))), static_cast<uint32_t>(rng.bits(32))};
}
AtomicEth random(TestRng& rng, AtomicEth*) {
  return AtomicEth{rng.next(), RKey(static_cast<uint32_t>(rng.bits(32))), rng.next(), rng.next()};
}
Aeth random(TestRng& rng, Aeth*) {
  const auto msn = static_cast<uint32_t>(rng.bits(24));
  switch (rng.between(0, 2)) {
    case 0: return Aeth::ack(msn, static_cast<uint8_t>(rng.bits(5)));
    case 1: return Aeth::rnr_nak(msn, static_cast<uint8_t>(rng.bits(5)));
    default: return Aeth::nak(msn, static_cast<NakCode>(rng.between(0, 4)));
  }
}
AtomicAckEth random(TestRng& rng, AtomicAckEth*) { return AtomicAckEth{rng.next()}; }
ImmDt random(TestRng& rng, ImmDt*) { return ImmDt{static_cast<uint32_t>(rng.bits(32))}; }
Ieth random(TestRng& rng, Ieth*) { return Ieth{RKey(static_cast<uint32_t>(rng.bits(32)))}; }
Udp random(TestRng& rng, Udp*) {
  return Udp{static_cast<uint16_t>(rng.bits(16)), static_cast<uint16_t>(rng.bits(16)),
             static_cast<uint16_t>(rng.bits(16)), static_cast<uint16_t>(rng.bits(16))};
}

template <class H>
class HeaderTest : public ::testing::Test {};
using Headers = ::testing::Types<Lrh, Grh, Bth, Rdeth, Deth, Reth, AtomicEth, Aeth, AtomicAckEth,
                                 ImmDt, Ieth, Udp>;
TYPED_TEST_SUITE(HeaderTest, Headers);

TYPED_TEST(HeaderTest, RoundTripsRandomValues) {
  TestRng rng;
  for (int i = 0; i < 2000; ++i) {
    const TypeParam h = random(rng, static_cast<TypeParam*>(nullptr));
    std::vector<uint8_t> buf(TypeParam::kLen);
    h.encode(buf);
    auto back = TypeParam::decode(buf);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    ASSERT_EQ(*back, h);
  }
}

TYPED_TEST(HeaderTest, ReservedBitsAreWrittenAsZero) {
  TestRng rng;
  for (int i = 0; i < 200; ++i) {
    const TypeParam h = random(rng, static_cast<TypeParam*>(nullptr));
    std::vector<uint8_t> buf(TypeParam::kLen, 0xFF);  // stale bytes in the buffer
    h.encode(buf);
    for (const Field& f : TypeParam::kFields) {
      if (f.name.starts_with("Rsv") || f.name.starts_with("Resv")) {
        EXPECT_EQ(get(buf, f), 0u) << TypeParam::kName << "." << f.name;
      }
    }
  }
}

TYPED_TEST(HeaderTest, TruncationNamesTheFieldWhereBytesRanOut) {
  TestRng rng;
  const TypeParam h = random(rng, static_cast<TypeParam*>(nullptr));
  std::vector<uint8_t> buf(TypeParam::kLen);
  h.encode(buf);
  for (size_t cut = 0; cut < TypeParam::kLen; ++cut) {
    // The expected field: the first, in wire order, that does not lie wholly in `cut` bytes.
    const Field* expected = nullptr;
    for (const Field& f : TypeParam::kFields) {
      if (f.end_byte() > cut) {
        expected = &f;
        break;
      }
    }
    ASSERT_NE(expected, nullptr);
    auto r = TypeParam::decode(ByteSpan(buf).first(cut));
    ASSERT_FALSE(r.ok()) << "cut " << cut;
    EXPECT_EQ(r.error().kind, ParseErrorKind::kTruncated);
    EXPECT_EQ(r.error().header, TypeParam::kName);
    EXPECT_EQ(r.error().field, expected->name) << "cut " << cut;
    EXPECT_EQ(r.error().available, cut);
  }
}

// The extension headers of the data path read and write their fields with get_aligned and
// set_aligned (one load or store each); the generic field codec (get/set, which the MAD
// tables use and tests/compat checks against libibmad and tshark) is the reference: the same
// bytes from the same values, the same values from the same bytes.
template <class H>
struct ByFields;
template <>
struct ByFields<Reth> {
  static void encode(const Reth& h, MutByteSpan b) {
    set(b, Reth::kVa, h.va);
    set(b, Reth::kRKey, h.rkey.value());
    set(b, Reth::kDmaLen, h.dma_len);
  }
  static Reth decode(ByteSpan b) { return Reth{get(b, Reth::kVa), RKey(get_u32(b, Reth::kRKey)), get_u32(b, Reth::kDmaLen)}; }
};
template <>
struct ByFields<AtomicEth> {
  static void encode(const AtomicEth& h, MutByteSpan b) {
    set(b, AtomicEth::kVa, h.va);
    set(b, AtomicEth::kRKey, h.rkey.value());
    set(b, AtomicEth::kSwapData, h.swap_add);
    set(b, AtomicEth::kCmpData, h.compare);
  }
  static AtomicEth decode(ByteSpan b) {
    return AtomicEth{get(b, AtomicEth::kVa), RKey(get_u32(b, AtomicEth::kRKey)), get(b, AtomicEth::kSwapData),
                     get(b, AtomicEth::kCmpData)};
  }
};
template <>
struct ByFields<AtomicAckEth> {
  static void encode(const AtomicAckEth& h, MutByteSpan b) { set(b, AtomicAckEth::kOrigRemDt, h.orig_remote_data); }
  static AtomicAckEth decode(ByteSpan b) { return AtomicAckEth{get(b, AtomicAckEth::kOrigRemDt)}; }
};
template <>
struct ByFields<Aeth> {
  static void encode(const Aeth& h, MutByteSpan b) {
    set(b, Aeth::kSyndrome, h.syndrome);
    set(b, Aeth::kMsn, h.msn);
  }
  static Aeth decode(ByteSpan b) { return Aeth{get_u8(b, Aeth::kSyndrome), get_u32(b, Aeth::kMsn)}; }
};
template <>
struct ByFields<ImmDt> {
  static void encode(const ImmDt& h, MutByteSpan b) { set(b, ImmDt::kImmDt, h.imm); }
  static ImmDt decode(ByteSpan b) { return ImmDt{get_u32(b, ImmDt::kImmDt)}; }
};
template <>
struct ByFields<Ieth> {
  static void encode(const Ieth& h, MutByteSpan b) { set(b, Ieth::kRKey, h.rkey.value()); }
  static Ieth decode(ByteSpan b) { return Ieth{RKey(get_u32(b, Ieth::kRKey))}; }
};
template <>
struct ByFields<Deth> {
  static void encode(const Deth& h, MutByteSpan b) {
    set(b, Deth::kQKey, h.qkey.value());
    set(b, Deth::kResv8, 0);
    set(b, Deth::kSrcQp, h.src_qp.value());
  }
  static Deth decode(ByteSpan b) { return Deth{QKey(get_u32(b, Deth::kQKey)), Qpn(get_u32(b, Deth::kSrcQp))}; }
};

template <class H>
class AlignedHeaderTest : public ::testing::Test {};
using AlignedHeaders = ::testing::Types<Reth, AtomicEth, AtomicAckEth, Aeth, ImmDt, Ieth, Deth>;
TYPED_TEST_SUITE(AlignedHeaderTest, AlignedHeaders);

TYPED_TEST(AlignedHeaderTest, AgreesWithTheFieldTable) {
  using H = TypeParam;
  TestRng rng;
  for (int i = 0; i < 2000; ++i) {
    const H h = random(rng, static_cast<H*>(nullptr));
    std::vector<uint8_t> fast(H::kLen, 0xA5);  // stale bytes: encode() writes every one
    std::vector<uint8_t> reference(H::kLen, 0);
    h.encode(fast);
    ByFields<H>::encode(h, reference);
    ASSERT_EQ(fast, reference) << H::kName;
    // Bytes of any value (reserved ones included) read back field by field alike.
    std::vector<uint8_t> bytes(H::kLen);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng.next());
    if (std::is_same_v<H, Aeth>) bytes = reference;  // a reserved syndrome is rejected (SyndromeKinds)
    auto back = H::decode(bytes);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    ASSERT_EQ(*back, ByFields<H>::decode(bytes)) << H::kName;
  }
}

TEST(Lrh, LinkVersionMustBeZero) {
  std::vector<uint8_t> buf(Lrh::kLen);
  Lrh{}.encode(buf);
  buf[0] |= 0x01;  // LVer = 1
  auto r = Lrh::decode(buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ParseErrorKind::kIllegalValue);
  EXPECT_EQ(r.error().field, "LVer");
  EXPECT_EQ(r.error().to_string(), "LRH.LVer: illegal value 0x1 at byte 0");
}

TEST(Lrh, KnownBytes) {
  Lrh h;
  h.vl = 15;
  h.sl = 0;
  h.lnh = Lnh::kIbaLocal;
  h.dlid = Lid(0xFFFF);
  h.pkt_len = 0x46;
  h.slid = Lid(0xFFFF);
  std::vector<uint8_t> buf(8);
  h.encode(buf);
  // A directed-route SMP: VL15, LNH local, permissive LIDs, 280 bytes (0x46 words).
  EXPECT_EQ(buf, (std::vector<uint8_t>{0xF0, 0x02, 0xFF, 0xFF, 0x00, 0x46, 0xFF, 0xFF}));
}

TEST(Grh, VersionMustBeSix) {
  std::vector<uint8_t> buf(Grh::kLen);
  Grh{}.encode(buf);
  buf[0] = static_cast<uint8_t>((buf[0] & 0x0F) | 0x40);
  auto r = Grh::decode(buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "IPVer");
  EXPECT_EQ(r.error().value, 4u);
}

TEST(Bth, KnownBytesAndTransportVersion) {
  Bth h;
  h.opcode = 0x04;  // RC SEND Only
  h.solicited = true;
  h.pad_count = 3;
  h.pkey = PKey(0xFFFF);
  h.becn = true;
  h.dest_qp = Qpn(0x000012);
  h.ack_req = true;
  h.psn = Psn(0xABCDEF);
  std::vector<uint8_t> buf(12);
  h.encode(buf);
  EXPECT_EQ(buf, (std::vector<uint8_t>{0x04, 0xB0, 0xFF, 0xFF, 0x40, 0x00, 0x00, 0x12, 0x80, 0xAB,
                                       0xCD, 0xEF}));
  buf[1] |= 0x01;  // TVer = 1
  auto r = Bth::decode(buf);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "TVer");
}

// The builder's PadCnt replaces the header's own, and only it.
TEST(Bth, EncodeWithAnotherPadCount) {
  TestRng rng;
  for (int i = 0; i < 500; ++i) {
    Bth h = random(rng, static_cast<Bth*>(nullptr));
    const auto pad = static_cast<uint8_t>(rng.bits(2));
    std::vector<uint8_t> buf(Bth::kLen, 0xFF);
    h.encode(buf, pad);
    auto back = Bth::decode(buf);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->pad_count, pad);
    h.pad_count = pad;
    EXPECT_EQ(*back, h);
  }
}

TEST(Aeth, SyndromeKinds) {
  EXPECT_EQ(Aeth::ack(5, 3).kind(), AethKind::kAck);
  EXPECT_EQ(Aeth::ack(5, 3).credit_count(), 3);
  EXPECT_EQ(Aeth::rnr_nak(5, 14).syndrome, 0x2E);
  EXPECT_EQ(Aeth::rnr_nak(5, 14).rnr_timer(), 14);
  EXPECT_EQ(Aeth::nak(5, NakCode::kRemoteAccessError).syndrome, 0x62);
  EXPECT_EQ(Aeth::nak(5, NakCode::kRemoteAccessError).nak_code(), NakCode::kRemoteAccessError);
}

TEST(Aeth, ReservedSyndromesAreIllegal) {
  for (int s = 0; s < 256; ++s) {
    std::vector<uint8_t> buf{static_cast<uint8_t>(s), 0, 0, 1};
    auto r = Aeth::decode(buf);
    const int type = (s >> 5) & 3;
    const bool legal = s < 0x80 && type != 2 && !(type == 3 && (s & 0x1F) > 4);
    EXPECT_EQ(r.ok(), legal) << "syndrome " << s;
    if (!legal) {
      EXPECT_EQ(r.error().field, "Syndrome");
    }
  }
}

}  // namespace
}  // namespace softib::wire
