// Fuzzes PacketView. Every input is parsed twice, as a native IB packet (LRH ... VCRC) and as
// a RoCE v2 transport part (BTH ... pad); each parse yields a view or a ParseError. Whatever
// parses is rebuilt from its typed values with the builder:
//   - a canonical packet (reserved bits and pad bytes zero) rebuilds to identical bytes;
//   - any other rebuilds to a packet of the same length that parses to the same values
//     (the IBA has receivers ignore reserved bits, so the view does not keep them).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/assert.hpp"
#include "fuzz_target.hpp"
#include "packet/builder.hpp"
#include "packet/packet_view.hpp"

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
  if (auto t = PacketView::parse_roce_v2_transport(in); t.ok()) {
    rebuild_transport(*t, in);
  } else {
    (void)t.error().to_string();
  }
  return 0;
}
