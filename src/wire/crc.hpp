// The IBA's two packet CRCs (IBA 7.8) and the RoCE v2 form of the ICRC (IBA A17.4.5.1).
//
// ICRC: CRC-32 of IEEE 802.3 (the zlib/Ethernet CRC) over the packet with its variant fields
// replaced by ones:
//   local packet (LRH, no GRH):  LRH with VL = 1s | BTH with byte 4 = 1s | rest
//   global packet (LRH + GRH):   8 bytes of 1s for the LRH | GRH with TClass, FlowLabel,
//                                HopLmt = 1s | BTH with byte 4 = 1s | rest
//   RoCE v2:                     8 bytes of 1s | IPv4 with TOS, TTL, checksum = 1s (IPv6 as
//                                the GRH) | UDP with checksum = 1s | BTH with byte 4 = 1s | rest
// VCRC: CRC-16 with polynomial 0x100B (reflected: 0xD008), initial value and final XOR 0xFFFF,
// over the whole packet from the LRH through the ICRC, nothing masked.
// Both go on the wire least-significant byte first (store_le32 / store_le16).
//
// We use zlib's CRC-32 rather than our own: it is well kept and table-driven; a faster
// folding CRC belongs here only if a benchmark shows the data path needs it.
#pragma once

#include <cstdint>

#include "wire/bytes.hpp"

namespace softib::wire {

inline constexpr size_t kIcrcLen = 4;
inline constexpr size_t kVcrcLen = 2;

// IEEE 802.3 CRC-32 continuing from `crc` (start with 0).
uint32_t crc32_ieee(uint32_t crc, ByteSpan data);

// ICRC of a native IB packet. `packet` runs from the LRH through the last pad byte.
// REQUIRES: LRH.LNH is IBA-local (2) or IBA-global (3) and the packet holds the LRH, the GRH
// when global, and the BTH.
uint32_t icrc_ib(ByteSpan packet);

// ICRC of a RoCE v2 packet. `datagram` runs from the IP header (IPv4 of any IHL, or IPv6)
// through the last pad byte.
// REQUIRES: the datagram holds the IP header, the UDP header and the BTH.
uint32_t icrc_roce(ByteSpan datagram);

// VCRC of a native IB packet: `packet` runs from the LRH through the ICRC.
uint16_t vcrc(ByteSpan packet);

}  // namespace softib::wire
