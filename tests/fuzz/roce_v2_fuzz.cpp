// Fuzzes RoCE v2 framing: any byte string decodes or yields a ParseError; what decodes
// re-encodes to the same bytes (for the IPv4 form softib sends: IHL 5, UDP checksum 0).
#include <cstdint>
#include <vector>

#include "base/assert.hpp"
#include "fuzz_target.hpp"
#include "wire/crc.hpp"
#include "wire/roce.hpp"

using namespace softib;
using namespace softib::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  auto frame = decode_roce_v2(in);
  if (!frame.ok()) {
    (void)frame.error().to_string();
    return 0;
  }
  // A decoded frame's ICRC is the one computed over its bytes.
  SOFTIB_ASSERT(icrc_roce(in.first(size - kIcrcLen)) == frame->icrc);
  if (frame->ipv4 && frame->ipv4->ihl == 5 && frame->udp.checksum == 0) {
    RoceV2Addressing a;
    a.source = frame->source;
    a.destination = frame->destination;
    a.source_port = frame->udp.source_port;
    a.traffic_class = static_cast<uint8_t>(frame->ipv4->dscp << 2 | frame->ipv4->ecn);
    a.hop_limit = frame->ipv4->ttl;
    a.identification = frame->ipv4->identification;
    if (frame->ipv4->dont_fragment) {
      std::vector<uint8_t> out(size);
      auto n = encode_roce_v2(a, frame->transport, out);
      SOFTIB_ASSERT(n.ok() && *n == size);
      SOFTIB_ASSERT(std::equal(out.begin(), out.end(), in.begin()));
    }
  }
  return 0;
}
