#include "mad/sa_mad.hpp"

namespace softib::mad {

std::vector<SaMad> sa_segments(const SaMad& first, wire::ByteSpan data, uint8_t resp_time) {
  std::vector<SaMad> out;
  for (const RmppSegment& seg : rmpp_split(data, kSaRmppLayout, resp_time)) {
    SaMad m = first;
    m.rmpp = seg.header;
    std::copy(seg.data.begin(), seg.data.end(), m.data.begin());
    out.push_back(m);
  }
  return out;
}

wire::Parsed<std::vector<uint8_t>> sa_reassemble(std::span<const SaMad> segments) {
  std::vector<RmppSegment> segs;
  segs.reserve(segments.size());
  for (const SaMad& m : segments)
    segs.push_back(RmppSegment{m.rmpp, std::vector<uint8_t>(m.data.begin(), m.data.end())});
  return rmpp_reassemble(segs, kSaRmppLayout);
}

}  // namespace softib::mad
