// Seeded random packet contents for the packet tests (unit and tshark compat): typed headers
// for any opcode of the table, payloads, native IB routes and RoCE v2 addressing.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "packet/builder.hpp"
#include "packet/opcode.hpp"
#include "packet/transport_headers.hpp"
#include "support/random.hpp"

namespace softib::packet::testing {

using softib::testing::TestRng;

inline Gid random_gid(TestRng& rng) {
  std::array<uint8_t, 16> raw{};
  for (auto& b : raw) b = static_cast<uint8_t>(rng.next());
  raw[0] = static_cast<uint8_t>(0x20 | (raw[0] & 0x1F));  // global unicast: never IPv4-mapped
  return Gid(raw);
}

// QPNs 0 and 1 are the SMI and GSI: tshark would read the payload as a MAD. Avoid them so a
// random packet is always an ordinary data packet.
inline Qpn random_data_qpn(TestRng& rng) { return Qpn(static_cast<uint32_t>(rng.between(2, 0xFFFFFF))); }

inline wire::Aeth random_aeth(TestRng& rng) {
  const auto msn = static_cast<uint32_t>(rng.bits(24));
  switch (rng.between(0, 2)) {
    case 0: return wire::Aeth::ack(msn, static_cast<uint8_t>(rng.bits(5)));
    case 1: return wire::Aeth::rnr_nak(msn, static_cast<uint8_t>(rng.bits(5)));
    default: return wire::Aeth::nak(msn, static_cast<wire::NakCode>(rng.between(0, 4)));
  }
}

// Random values for every field of the BTH and of each extension header `info` carries.
// bth.pad_count is left 0 (the builder computes it).
inline TransportHeaders random_headers(TestRng& rng, const OpcodeInfo& info) {
  TransportHeaders h;
  h.bth.opcode = info.value();
  h.bth.solicited = rng.coin();
  h.bth.mig_req = rng.coin();
  h.bth.pkey = PKey(static_cast<uint16_t>(rng.bits(16)));
  h.bth.fecn = rng.coin();
  h.bth.becn = rng.coin();
  h.bth.dest_qp = random_data_qpn(rng);
  h.bth.ack_req = rng.coin();
  h.bth.psn = Psn(static_cast<uint32_t>(rng.bits(24)));
  using enum ExtHeader;
  if (info.headers.has(kRdeth)) h.rdeth = wire::Rdeth{static_cast<uint32_t>(rng.bits(24))};
  if (info.headers.has(kDeth)) h.deth = wire::Deth{QKey(static_cast<uint32_t>(rng.bits(32))), random_data_qpn(rng)};
  if (info.headers.has(kFeth))
    h.feth = wire::Feth{static_cast<uint8_t>(rng.bits(2)), static_cast<uint8_t>(rng.bits(4))};
  if (info.headers.has(kReth))
    h.reth = wire::Reth{rng.next(), RKey(static_cast<uint32_t>(rng.bits(32))), static_cast<uint32_t>(rng.bits(32))};
  if (info.headers.has(kAtomicEth))
    h.atomic_eth = wire::AtomicEth{rng.next(), RKey(static_cast<uint32_t>(rng.bits(32))), rng.next(), rng.next()};
  if (info.headers.has(kAeth)) h.aeth = random_aeth(rng);
  if (info.headers.has(kAtomicAckEth)) h.atomic_ack_eth = wire::AtomicAckEth{rng.next()};
  if (info.headers.has(kImmDt)) h.immdt = wire::ImmDt{static_cast<uint32_t>(rng.bits(32))};
  if (info.headers.has(kIeth)) h.ieth = wire::Ieth{RKey(static_cast<uint32_t>(rng.bits(32)))};
  return h;
}

inline std::vector<uint8_t> random_bytes(TestRng& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng.next());
  return v;
}

inline IbRoute random_route(TestRng& rng, bool global) {
  IbRoute r;
  r.lrh.vl = static_cast<uint8_t>(rng.bits(4));
  r.lrh.sl = static_cast<uint8_t>(rng.bits(4));
  r.lrh.dlid = Lid(static_cast<uint16_t>(rng.bits(16)));
  r.lrh.slid = Lid(static_cast<uint16_t>(rng.bits(16)));
  if (global) {
    wire::Grh g;
    g.tclass = static_cast<uint8_t>(rng.bits(8));
    g.flow_label = static_cast<uint32_t>(rng.bits(20));
    g.hop_lmt = static_cast<uint8_t>(rng.bits(8));
    g.sgid = random_gid(rng);
    g.dgid = random_gid(rng);
    r.grh = g;
  }
  return r;
}

inline wire::RoceV2Addressing random_addressing(TestRng& rng, bool ipv6) {
  wire::RoceV2Addressing a;
  if (ipv6) {
    a.source = random_gid(rng);
    a.destination = random_gid(rng);
    a.flow_label = static_cast<uint32_t>(rng.bits(20));
  } else {
    // 10.0.0.0/8: ordinary unicast addresses.
    a.source = Gid::from_ipv4(0x0A000000u | static_cast<uint32_t>(rng.bits(24)));
    a.destination = Gid::from_ipv4(0x0A000000u | static_cast<uint32_t>(rng.bits(24)));
  }
  a.source_port = static_cast<uint16_t>(rng.between(49152, 65535));
  a.traffic_class = static_cast<uint8_t>(rng.bits(8));
  // Wireshark notes an IPv4 TTL below 5 ("Time To Live only 3"); real senders use 64.
  a.hop_limit = static_cast<uint8_t>(rng.between(8, 255));
  return a;
}

// A payload size `info` accepts: any size for a last or only packet, a positive multiple of
// 4 for a first or middle one, 0 for an opcode without payload.
inline size_t valid_payload_size(const OpcodeInfo& info, size_t wanted) {
  if (!info.payload) return 0;
  if (info.payload_is_full_pmtu()) return wanted < 4 ? 4 : wanted - wanted % 4;
  return wanted;
}

}  // namespace softib::packet::testing
