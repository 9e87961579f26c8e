// Fuzzes PacketView. Every input is parsed twice, as a native IB packet (LRH ... VCRC) and as
// a RoCE v2 transport part (BTH ... pad); each parse yields a view or a ParseError. Whatever
// parses is rebuilt from its typed values with the builder:
//   - a canonical packet (reserved bits and pad bytes zero) rebuilds to identical bytes;
//   - any other rebuilds to a packet of the same length that parses to the same values
//     (the IBA has receivers ignore reserved bits, so the view does not keep them).
// And the transport's one-pass parser (TransportFrame) accepts exactly what the view accepts,
// with the same values; the transport's fast header writer writes what the builder writes.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/assert.hpp"
#include "fuzz_target.hpp"
#include "packet/builder.hpp"
#include "packet/packet_view.hpp"
#include "packet/transport_frame.hpp"

using namespace softib;
using namespace softib::packet;
using wire::ByteSpan;

namespace {

void check_same_values(const PacketView& a, const PacketView& b) {
  SOFTIB_ASSERT(a.opcode() == b.opcode());
  SOFTIB_ASSERT(a.headers() == b.headers());
  SOFTIB_ASSERT(std::equal(a.payload().begin(), a.payload().end(), b.payload().begin(), b.payload().end()));
  SOFTIB_ASSERT(a.lrh() == b.lrh());
  SOFTIB_ASSERT(a.grh() == b.grh());
}

void check_view(const PacketView& v, ByteSpan in) {
  // The payload lies inside the input, after the headers.
  SOFTIB_ASSERT(v.payload().data() >= in.data() && v.payload().data() + v.payload().size() <= in.data() + in.size());
  SOFTIB_ASSERT(v.pad_count() < 4);
  SOFTIB_ASSERT(v.info().payload || v.payload().empty());
  SOFTIB_ASSERT(find_opcode(v.bth().opcode) == &v.info());
}

void rebuild_ib(const PacketView& v, ByteSpan in) {
  check_view(v, in);
  IbRoute route;
  route.lrh = *v.lrh();
  route.grh = v.grh();
  std::vector<uint8_t> out(in.size());
  auto n = build_ib(route, v.headers(), v.payload(), out);
  SOFTIB_ASSERT(n.ok() && *n == in.size());
  if (v.is_canonical()) {
    SOFTIB_ASSERT(std::equal(out.begin(), out.end(), in.begin()));
    return;
  }
  auto again = PacketView::parse_ib(out);
  SOFTIB_ASSERT(again.ok() && again->is_canonical());
  check_same_values(v, *again);
}

void rebuild_transport(const PacketView& v, ByteSpan in) {
  check_view(v, in);
  std::vector<uint8_t> out(in.size());
  auto n = build_transport(v.headers(), v.payload(), out);
  SOFTIB_ASSERT(n.ok() && *n == in.size());
  if (v.is_canonical()) {
    SOFTIB_ASSERT(std::equal(out.begin(), out.end(), in.begin()));
    return;
  }
  auto again = PacketView::parse_roce_v2_transport(out);
  SOFTIB_ASSERT(again.ok() && again->is_canonical());
  check_same_values(v, *again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ByteSpan in(data, size);
  if (auto ib = PacketView::parse_ib(in); ib.ok()) {
    rebuild_ib(*ib, in);
  } else {
    (void)ib.error().to_string();
  }
  TransportFrame frame;
  const bool fast = parse_transport_frame(in, frame);
  if (auto t = PacketView::parse_roce_v2_transport(in); t.ok()) {
    SOFTIB_ASSERT_MSG(fast, "TransportFrame refused what PacketView accepts");
    SOFTIB_ASSERT(&frame.info() == &t->info() && frame.headers() == t->headers());
    SOFTIB_ASSERT(frame.payload().data() == t->payload().data() && frame.payload().size() == t->payload().size());
    std::vector<uint8_t> out(in.size());
    const size_t n = write_transport_headers(t->info(), t->headers(), t->payload().size(), out);
    std::copy(t->payload().begin(), t->payload().end(), out.begin() + static_cast<ptrdiff_t>(t->info().header_length()));
    std::vector<uint8_t> want(in.size());
    auto built = build_transport(t->headers(), t->payload(), want);
    SOFTIB_ASSERT(built.ok() && *built == n && out == want);
    rebuild_transport(*t, in);
  } else {
    SOFTIB_ASSERT_MSG(!fast, "TransportFrame accepted what PacketView refuses");
    (void)t.error().to_string();
  }
  return 0;
}
