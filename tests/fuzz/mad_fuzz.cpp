// Fuzzes MAD decoding: the input is decoded as every MAD layout, every attribute and every
// trap-details layout, both from its start and where the attribute sits in a MAD of its
// class. What decodes must re-encode to the input with only its reserved bits cleared, and
// decode again to the same bytes; errors and dumps must be total. The decoded directed-route
// SMP goes through the IBA 14.2.2 hop rules, and the input cut into MADs through SA RMPP
// reassembly.
#include <cstdint>
#include <span>
#include <vector>

#include "base/assert.hpp"
#include "fuzz_target.hpp"
#include "mad/codec.hpp"
#include "mad/dr_route.hpp"
#include "mad/registry.hpp"
#include "mad/sa_mad.hpp"

using namespace softib;
using namespace softib::mad;

namespace {

void check_layout(const LayoutInfo& layout, wire::ByteSpan in) {
  std::vector<uint8_t> out(layout.size);
  if (auto err = layout.reencode(in, out)) {
    SOFTIB_ASSERT(err->kind != wire::ParseErrorKind::kTruncated || in.size() < layout.size);
    SOFTIB_ASSERT(err->header == layout.name);
    (void)err->to_string();
    return;
  }
  SOFTIB_ASSERT(in.size() >= layout.size);
  SOFTIB_ASSERT(out == clear_reserved(layout, in));
  std::vector<uint8_t> again(layout.size);
  SOFTIB_ASSERT(!layout.reencode(out, again).has_value());
  SOFTIB_ASSERT(again == out);
  SOFTIB_ASSERT(!layout.dump(in).empty() || layout.name == "NodeDescription");
}

void check_dr_rules(wire::ByteSpan in) {
  auto smp = decode<DrSmp>(in);
  if (!smp.ok()) return;
  for (const DrNode node : {DrNode{false, 1}, DrNode{true, 36}}) {
    DrSmp s = *smp;
    const DrDecision d = dr_receive(s, node, in.size() > 256 ? in[256] : 1);
    SOFTIB_ASSERT(d.action != DrAction::kForward || (d.port >= 1 && d.port <= node.num_ports));
    SOFTIB_ASSERT(s.hop_pointer <= kMaxHopCount + 1 || d.action == DrAction::kDiscard);
    DrSmp t = *smp;
    (void)dr_send(t);
    (void)make_dr_response(*smp);
  }
}

void check_sa_reassembly(wire::ByteSpan in) {
  std::vector<SaMad> segments;
  for (size_t at = 0; at + kMadSize <= in.size(); at += kMadSize) {
    auto m = decode<SaMad>(in.subspan(at, kMadSize));
    if (!m.ok()) return;
    segments.push_back(*m);
  }
  if (segments.empty()) return;
  auto data = sa_reassemble(segments);
  if (!data.ok()) return;
  // A transfer that reassembles splits back into segments carrying the same data.
  const auto again = sa_segments(segments.front(), *data);
  auto back = sa_reassemble(again);
  SOFTIB_ASSERT(back.ok() && *back == *data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const wire::ByteSpan in(data, size);
  for (const LayoutInfo& l : mad_layouts()) check_layout(l, in);
  for (const LayoutInfo& l : detail_layouts()) check_layout(l, in);
  for (const AttributeEntry& e : attribute_layouts()) {
    check_layout(e.layout, in);
    // Where the class puts it in a MAD (SMP/PMA data at 64, SA data at 56).
    const size_t offset = e.mgmt_class == MgmtClass::kSubnAdm ? 56 : 64;
    if (size > offset) check_layout(e.layout, in.subspan(offset));
  }
  (void)dump_mad(in);
  check_dr_rules(in);
  check_sa_reassembly(in);
  return 0;
}
