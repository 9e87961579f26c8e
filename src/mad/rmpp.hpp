// RMPP segmentation as pure functions (IBA 13.6.3): split a payload into DATA segments and
// put received segments back together. No timers, windows or retries: those belong to the
// sender and receiver state machines above.
//
// Each segment's RMPP payload is everything after the RMPP header (220 bytes of a 256-byte
// MAD): a class header the class repeats in every segment (the SA's SM_Key..ComponentMask,
// 20 bytes; the vendor range 2 reserved byte and OUI, 4 bytes) followed by data. The
// PayloadLength rules (IBA 13.6.2.1, 13.6.3.2) count those repeated headers, as the Linux
// kernel's RMPP sender does: the first segment carries the length of the whole transfer,
// the last the length of its own payload, the others 0; a one-segment transfer carries its
// own payload length.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mad/rmpp_header.hpp"
#include "wire/bytes.hpp"
#include "wire/parse_error.hpp"

namespace softib::mad {

struct RmppLayout {
  size_t class_header_len = 0;  // repeated in every segment, counted by PayloadLength
  size_t data_len = 0;          // data bytes per segment
  constexpr size_t segment_payload() const { return class_header_len + data_len; }
};

struct RmppSegment {
  RmppHeader header;
  std::vector<uint8_t> data;  // layout.data_len bytes, the last segment zero-padded

  friend bool operator==(const RmppSegment&, const RmppSegment&) = default;
};

// DATA segments for `data` (at least one, even for no data), numbered from 1, with Active
// on all, First on the first, Last on the last and PayloadLength as above.
// REQUIRES: layout.data_len > 0
std::vector<RmppSegment> rmpp_split(wire::ByteSpan data, RmppLayout layout,
                                    uint8_t resp_time = kNoRespTime);

// The data of a complete transfer, in segment order. Rejects (header "RMPP") a transfer
// with no segment, a segment that is not an active DATA segment, numbers not 1..n in order,
// First/Last anywhere but the ends, short segments, or PayloadLengths that disagree.
wire::Parsed<std::vector<uint8_t>> rmpp_reassemble(std::span<const RmppSegment> segments,
                                                   RmppLayout layout);

}  // namespace softib::mad
