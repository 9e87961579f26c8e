// Fuzzes RoCE v2 framing: any byte string decodes or yields a ParseError; what decodes
// re-encodes to the same bytes (for the IPv4 form softib sends: IHL 5, UDP checksum 0).
// Random bytes almost never carry a valid ICRC, so each input is also tried with its IPv4
// header checksum and ICRC repaired, which lets the fuzzer reach the checks behind them.
#include <cstdint>
#include <vector>

#include "base/assert.hpp"
#include "fuzz_target.hpp"
#include "wire/crc.hpp"
#include "wire/ipv4.hpp"
#include "wire/roce.hpp"

using namespace softib;
using namespace softib::wire;

namespace {

void check(ByteSpan in) {
  auto frame = decode_roce_v2(in);
  if (!frame.ok()) {
    (void)frame.error().to_string();
    return;
  }
  // A decoded frame's ICRC is the one computed over its bytes.
  SOFTIB_ASSERT(icrc_roce(in.first(in.size() - kIcrcLen)) == frame->icrc);
  if (frame->ipv4 && frame->ipv4->ihl == 5 && frame->udp.checksum == 0 &&
      frame->ipv4->dont_fragment) {
    RoceV2Addressing a;
    a.source = frame->source;
    a.destination = frame->destination;
    a.source_port = frame->udp.source_port;
    a.traffic_class = static_cast<uint8_t>(frame->ipv4->dscp << 2 | frame->ipv4->ecn);
    a.hop_limit = frame->ipv4->ttl;
    a.identification = frame->ipv4->identification;
    std::vector<uint8_t> out(in.size());
    auto n = encode_roce_v2(a, frame->transport, out);
    SOFTIB_ASSERT(n.ok() && *n == in.size());
    SOFTIB_ASSERT(std::equal(out.begin(), out.end(), in.begin()));
  }
}

// Rewrites the IPv4 header checksum and the ICRC so that only the structure is random.
// Returns false when the input is too short or malformed for the CRC to be defined.
bool repair(std::vector<uint8_t>& d) {
  if (d.size() < Ipv4::kLen + 8 + 12 + kIcrcLen) return false;
  const bool ipv6 = (d[0] >> 4) == 6;
  const size_t ip_len = ipv6 ? 40 : size_t{d[0] & 0x0Fu} * 4;
  if (!ipv6 && ((d[0] >> 4) != 4 || ip_len < Ipv4::kLen)) return false;
  if (d.size() < ip_len + 8 + 12 + kIcrcLen) return false;
  if (!ipv6) {
    d[10] = d[11] = 0;
    store_be16(&d[10], static_cast<uint16_t>(~Ipv4::checksum(ByteSpan(d).first(ip_len))));
  }
  store_le32(&d[d.size() - kIcrcLen], icrc_roce(ByteSpan(d).first(d.size() - kIcrcLen)));
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check(ByteSpan(data, size));
  std::vector<uint8_t> repaired(data, data + size);
  if (repair(repaired)) check(repaired);
  return 0;
}
