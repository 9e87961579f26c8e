#include "wire/crc.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>

#include "base/assert.hpp"
#include "wire/bth.hpp"
#include "wire/grh.hpp"
#include "wire/ipv4.hpp"
#include "wire/lrh.hpp"
#include "wire/udp.hpp"

namespace softib::wire {

namespace {

// The masked headers never exceed LRH stand-in + IPv4 with full options + UDP + BTH.
constexpr size_t kMaxMaskedHeaders = 8 + 60 + Udp::kLen + Bth::kLen;
static_assert(kMaxMaskedHeaders >= Lrh::kLen + Grh::kLen + Bth::kLen);

// GRH (and IPv6): IPVer survives; TClass and FlowLabel (bits 4..31) and HopLmt become ones.
void mask_grh(uint8_t* grh) {
  grh[0] |= 0x0F;
  grh[1] = grh[2] = grh[3] = 0xFF;
  grh[7] = 0xFF;
}

void mask_bth(uint8_t* bth) { bth[Bth::kVariantByte] = 0xFF; }

// CRC over `masked` (a masked copy of the headers) and then over the rest of `packet`,
// which starts `headers_in_packet` bytes into it.
uint32_t crc_headers_then_rest(ByteSpan masked, ByteSpan packet, size_t headers_in_packet) {
  uint32_t crc = crc32_ieee(0, masked);
  return crc32_ieee(crc, packet.subspan(headers_in_packet));
}

}  // namespace

uint32_t crc32_ieee(uint32_t crc, ByteSpan data) {
  // zlib takes uInt lengths; feed it in chunks so any span size works.
  constexpr size_t kChunk = 1u << 30;
  while (!data.empty()) {
    const size_t n = std::min(data.size(), kChunk);
    crc = static_cast<uint32_t>(::crc32(crc, data.data(), static_cast<uInt>(n)));
    data = data.subspan(n);
  }
  return crc;
}

uint32_t icrc_ib(ByteSpan packet) {
  SOFTIB_ASSERT(packet.size() >= Lrh::kLen);
  const auto lnh = static_cast<Lnh>(get(packet, Lrh::kLnh));
  SOFTIB_ASSERT(lnh == Lnh::kIbaLocal || lnh == Lnh::kIbaGlobal);
  std::array<uint8_t, kMaxMaskedHeaders> masked{};
  if (lnh == Lnh::kIbaLocal) {
    constexpr size_t kHeaders = Lrh::kLen + Bth::kLen;
    SOFTIB_ASSERT(packet.size() >= kHeaders);
    std::copy_n(packet.begin(), kHeaders, masked.begin());
    masked[0] |= 0xF0;  // VL
    mask_bth(&masked[Lrh::kLen]);
    return crc_headers_then_rest(ByteSpan(masked).first(kHeaders), packet, kHeaders);
  }
  constexpr size_t kHeaders = Lrh::kLen + Grh::kLen + Bth::kLen;
  SOFTIB_ASSERT(packet.size() >= kHeaders);
  std::copy_n(packet.begin(), kHeaders, masked.begin());
  std::fill_n(masked.begin(), Lrh::kLen, uint8_t{0xFF});  // a router may rewrite all of it
  mask_grh(&masked[Lrh::kLen]);
  mask_bth(&masked[Lrh::kLen + Grh::kLen]);
  return crc_headers_then_rest(ByteSpan(masked).first(kHeaders), packet, kHeaders);
}

uint32_t icrc_roce(ByteSpan datagram) {
  SOFTIB_ASSERT(!datagram.empty());
  const bool ipv6 = (datagram[0] >> 4) == 6;
  const size_t ip_len = ipv6 ? Grh::kLen : size_t{datagram[0] & 0x0Fu} * 4;
  const size_t in_packet = ip_len + Udp::kLen + Bth::kLen;
  SOFTIB_ASSERT(ip_len >= Ipv4::kLen && datagram.size() >= in_packet);

  std::array<uint8_t, kMaxMaskedHeaders> masked{};
  std::fill_n(masked.begin(), 8, uint8_t{0xFF});  // stands in for the LRH
  uint8_t* ip = &masked[8];
  std::copy_n(datagram.begin(), in_packet, ip);
  if (ipv6) {
    mask_grh(ip);
  } else {
    ip[Ipv4::kTosByte] = 0xFF;
    ip[Ipv4::kTtlByte] = 0xFF;
    ip[Ipv4::kChecksumByte] = ip[Ipv4::kChecksumByte + 1] = 0xFF;
  }
  uint8_t* udp = ip + ip_len;
  udp[Udp::kChecksumByte] = udp[Udp::kChecksumByte + 1] = 0xFF;
  mask_bth(udp + Udp::kLen);
  return crc_headers_then_rest(ByteSpan(masked).first(8 + in_packet), datagram, in_packet);
}

namespace {

constexpr std::array<uint16_t, 256> make_vcrc_table() {
  std::array<uint16_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xD008u ^ (c >> 1) : c >> 1;
    table[n] = static_cast<uint16_t>(c);
  }
  return table;
}
constexpr auto kVcrcTable = make_vcrc_table();

}  // namespace

uint16_t vcrc(ByteSpan packet) {
  uint16_t c = 0xFFFF;
  for (uint8_t b : packet) c = static_cast<uint16_t>(kVcrcTable[(c ^ b) & 0xFF] ^ (c >> 8));
  return static_cast<uint16_t>(c ^ 0xFFFF);
}

}  // namespace softib::wire
