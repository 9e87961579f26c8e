// ICRC and VCRC: a known-answer vector captured from real hardware, and agreement with
// independent bit-at-a-time implementations over masks written out from the spec text.
#include <gtest/gtest.h>

#include <vector>

#include "support/random.hpp"
#include "wire/bth.hpp"
#include "wire/crc.hpp"
#include "wire/grh.hpp"
#include "wire/lrh.hpp"

namespace softib::wire {
namespace {

using Bytes = std::vector<uint8_t>;

// Reference CRC-32 (IEEE 802.3), bit-reflected, one bit at a time.
uint32_t ref_crc32(const Bytes& data) {
  uint32_t c = 0xFFFFFFFF;
  for (uint8_t b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}

uint8_t reverse_bits(uint8_t b) {
  uint8_t r = 0;
  for (int i = 0; i < 8; ++i) r = static_cast<uint8_t>(r << 1 | ((b >> i) & 1));
  return r;
}

// Reference VCRC written the other way round: MSB-first CRC-16, polynomial 0x100B
// (x^16 + x^12 + x^3 + x + 1), over bit-reversed bytes, result bit-reversed, init and final
// XOR 0xFFFF. Equivalent to the reflected table form only if both are right.
uint16_t ref_vcrc(const Bytes& data) {
  uint16_t c = 0xFFFF;
  for (uint8_t byte : data) {
    c = static_cast<uint16_t>(c ^ (reverse_bits(byte) << 8));
    for (int k = 0; k < 8; ++k) c = static_cast<uint16_t>((c & 0x8000) ? (c << 1) ^ 0x100B : c << 1);
  }
  const uint16_t r = static_cast<uint16_t>(reverse_bits(static_cast<uint8_t>(c >> 8)) |
                                           reverse_bits(static_cast<uint8_t>(c)) << 8);
  return static_cast<uint16_t>(r ^ 0xFFFF);
}

Bytes hex(std::string_view text) {
  Bytes out;
  int nibble = -1;
  for (char ch : text) {
    int v = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (v < 0) continue;
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<uint8_t>(nibble << 4 | v));
      nibble = -1;
    }
  }
  return out;
}

// A RoCE v2 CNP captured on a ConnectX-4 Lx (scapy test/contrib/roce.uts), Ethernet header
// removed. TOS 0xc2, IP ID 0x718c, UDP checksum 0, BTH BECN set; ICRC 82 fd 00 2a on the wire.
const Bytes kConnectX4Cnp = hex(
    "45c2 003c 718c 4000 4011 9161 0a00 1101 0a00 1201"  // IPv4
    "0000 12b7 0028 0000"                                // UDP
    "8100 ffff 4000 0118 0000 0000"                      // BTH: CNP, BECN, QP 0x118
    "0000 0000 0000 0000 0000 0000 0000 0000"            // CNP reserved
    "82fd 002a");                                        // ICRC

TEST(Icrc, MatchesConnectX4HardwareCapture) {
  const ByteSpan datagram(kConnectX4Cnp);
  const ByteSpan covered = datagram.first(datagram.size() - kIcrcLen);
  const uint32_t icrc = icrc_roce(covered);
  uint8_t wire[4];
  store_le32(wire, icrc);
  EXPECT_EQ(Bytes(wire, wire + 4), hex("82fd 002a"));
}

TEST(Icrc, SeedAfterEightOnesIsRxeConstant) {
  // Linux rxe starts its CRC at 0xdebb20e3: the state after 8 bytes of ones, the LRH stand-in.
  const Bytes ones(8, 0xFF);
  EXPECT_EQ(~crc32_ieee(0, ones), 0xdebb20e3u);
}

TEST(Icrc, RoceIpv4MasksVariantFields) {
  // Changing TOS, TTL, IP checksum, UDP checksum or BTH byte 4 leaves the ICRC unchanged;
  // changing anything else changes it.
  const Bytes base(kConnectX4Cnp.begin(), kConnectX4Cnp.end() - 4);
  const uint32_t icrc = icrc_roce(base);
  for (size_t i = 1; i < base.size(); ++i) {  // byte 0 (version, IHL) is structure, not data
    Bytes changed = base;
    changed[i] ^= 0x01;
    const bool variant = i == 1 || i == 8 || i == 10 || i == 11 ||  // IPv4 TOS, TTL, checksum
                         i == 26 || i == 27 ||                      // UDP checksum
                         i == 28 + 4;                               // BTH byte 4
    EXPECT_EQ(icrc_roce(changed) == icrc, variant) << "byte " << i;
  }
}

TEST(Icrc, RoceIpv6AgreesWithReference) {
  testing::TestRng rng;
  for (int iter = 0; iter < 200; ++iter) {
    Bytes d(40 + 8 + 12 + rng.between(0, 64));
    for (auto& b : d) b = static_cast<uint8_t>(rng.next());
    d[0] = static_cast<uint8_t>(0x60 | (d[0] & 0x0F));
    Bytes pseudo(8, 0xFF);
    Bytes masked = d;
    masked[0] |= 0x0F;                            // traffic class, high nibble
    masked[1] = masked[2] = masked[3] = 0xFF;     // traffic class low nibble, flow label
    masked[7] = 0xFF;                             // hop limit
    masked[46] = masked[47] = 0xFF;               // UDP checksum
    masked[48 + 4] = 0xFF;                        // BTH FECN/BECN/Resv6
    pseudo.insert(pseudo.end(), masked.begin(), masked.end());
    ASSERT_EQ(icrc_roce(d), ref_crc32(pseudo));
  }
}

TEST(Icrc, NativeLocalAndGlobalAgreeWithReference) {
  testing::TestRng rng;
  for (int iter = 0; iter < 200; ++iter) {
    const bool global = rng.coin();
    Bytes p((global ? 60 : 20) + rng.between(0, 64));
    for (auto& b : p) b = static_cast<uint8_t>(rng.next());
    p[0] &= 0xF0;                                                // LVer 0
    p[1] = static_cast<uint8_t>((p[1] & 0xFC) | (global ? 3 : 2));  // LNH
    Bytes pseudo = p;
    if (global) {
      for (int i = 0; i < 8; ++i) pseudo[static_cast<size_t>(i)] = 0xFF;  // whole LRH
      pseudo[8] |= 0x0F;
      pseudo[9] = pseudo[10] = pseudo[11] = 0xFF;
      pseudo[15] = 0xFF;
      pseudo[48 + 4] = 0xFF;
    } else {
      pseudo[0] |= 0xF0;  // VL
      pseudo[8 + 4] = 0xFF;
    }
    ASSERT_EQ(icrc_ib(p), ref_crc32(pseudo)) << (global ? "global" : "local");
  }
}

TEST(Icrc, LocalPacketIgnoresVlButNotSl) {
  Bytes p(8 + 12 + 8, 0x11);
  p[0] = 0x00;
  p[1] = 0x02;
  const uint32_t icrc = icrc_ib(p);
  Bytes vl = p;
  vl[0] = 0xF0;  // a switch moved the packet to another VL
  EXPECT_EQ(icrc_ib(vl), icrc);
  Bytes sl = p;
  sl[1] = 0x12;  // SL is invariant within a subnet
  EXPECT_NE(icrc_ib(sl), icrc);
}

TEST(Vcrc, AgreesWithMsbFirstReference) {
  testing::TestRng rng;
  for (int iter = 0; iter < 500; ++iter) {
    Bytes d(rng.between(0, 300));
    for (auto& b : d) b = static_cast<uint8_t>(rng.next());
    ASSERT_EQ(vcrc(d), ref_vcrc(d));
  }
}

TEST(Vcrc, CoversEveryByteIncludingVl) {
  Bytes p(8 + 12 + 4, 0x5A);
  const uint16_t v = vcrc(p);
  for (size_t i = 0; i < p.size(); ++i) {
    Bytes changed = p;
    changed[i] ^= 0x80;
    EXPECT_NE(vcrc(changed), v) << i;
  }
}

}  // namespace
}  // namespace softib::wire
