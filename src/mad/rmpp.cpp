#include "mad/rmpp.hpp"

#include <algorithm>

namespace softib::mad {

std::string_view to_string(RmppType t) {
  switch (t) {
    case RmppType::kNone: return "None";
    case RmppType::kData: return "DATA";
    case RmppType::kAck: return "ACK";
    case RmppType::kStop: return "STOP";
    case RmppType::kAbort: return "ABORT";
  }
  return "?";
}

std::string_view to_string(RmppStatus s) {
  switch (s) {
    case RmppStatus::kNormal: return "Normal";
    case RmppStatus::kResourcesExhausted: return "ResourcesExhausted";
    case RmppStatus::kTotalTimeTooLong: return "TotalTimeTooLong";
    case RmppStatus::kInconsistentLastAndPayloadLength: return "InconsistentLastAndPayloadLength";
    case RmppStatus::kInconsistentFirstAndSegmentNumber: return "InconsistentFirstAndSegmentNumber";
    case RmppStatus::kBadRmppType: return "BadRMPPType";
    case RmppStatus::kNewWindowLastTooSmall: return "NewWindowLastTooSmall";
    case RmppStatus::kSegmentNumberTooBig: return "SegmentNumberTooBig";
    case RmppStatus::kIllegalStatus: return "IllegalStatus";
    case RmppStatus::kUnsupportedVersion: return "UnsupportedVersion";
    case RmppStatus::kTooManyRetries: return "TooManyRetries";
    case RmppStatus::kUnspecified: return "Unspecified";
  }
  return "?";
}

std::optional<RmppViolation> find_rmpp_violation(const RmppHeader& h) {
  const uint8_t first_last = h.flags & (kRmppFirst | kRmppLast);
  if (!h.active()) {
    if (first_last != 0) return RmppViolation{"RMPPFlags", h.flags};
    return std::nullopt;
  }
  if (h.version != kRmppVersion) return RmppViolation{"RMPPVersion", h.version};
  if (h.type == RmppType::kNone) return RmppViolation{"RMPPType", 0};
  if (h.type != RmppType::kData) {
    if (first_last != 0) return RmppViolation{"RMPPFlags", h.flags};
    return std::nullopt;
  }
  if (h.data1 == 0 || (h.first() && h.data1 != 1)) return RmppViolation{"Data1", h.data1};
  return std::nullopt;
}

std::vector<RmppSegment> rmpp_split(wire::ByteSpan data, RmppLayout layout, uint8_t resp_time) {
  SOFTIB_ASSERT(layout.data_len > 0 && resp_time <= kNoRespTime);
  const size_t n = std::max<size_t>(1, (data.size() + layout.data_len - 1) / layout.data_len);
  const size_t pad = n * layout.data_len - data.size();
  std::vector<RmppSegment> segments(n);
  for (size_t i = 0; i < n; ++i) {
    RmppSegment& s = segments[i];
    s.header.version = kRmppVersion;
    s.header.type = RmppType::kData;
    s.header.resp_time = resp_time;
    s.header.flags = kRmppActive;
    s.header.data1 = static_cast<uint32_t>(i + 1);
    if (i == 0) {
      s.header.flags |= kRmppFirst;
      s.header.data2 = static_cast<uint32_t>(n * layout.segment_payload() - pad);
    }
    if (i == n - 1) {
      s.header.flags |= kRmppLast;
      s.header.data2 = static_cast<uint32_t>(layout.segment_payload() - pad);
    }
    s.data.assign(layout.data_len, 0);
    const size_t at = i * layout.data_len;
    const size_t len = std::min(layout.data_len, data.size() - std::min(at, data.size()));
    std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(at), len, s.data.begin());
  }
  return segments;
}

namespace {

const wire::Field& rmpp_field(std::string_view name) {
  for (const auto& r : Layout<RmppHeader>::kRows)
    if (r.field.name == name) return r.field;
  SOFTIB_ASSERT_MSG(false, "no such RMPP field");
  return Layout<RmppHeader>::kRows[0].field;
}

wire::ParseError rmpp_illegal(std::string_view field, uint64_t value) {
  return wire::illegal(Layout<RmppHeader>::kName, rmpp_field(field), value);
}
wire::ParseError rmpp_inconsistent(std::string_view field, uint64_t value) {
  return wire::inconsistent(Layout<RmppHeader>::kName, rmpp_field(field), value);
}

}  // namespace

wire::Parsed<std::vector<uint8_t>> rmpp_reassemble(std::span<const RmppSegment> segments,
                                                   RmppLayout layout) {
  if (segments.empty()) return rmpp_inconsistent("Data1", 0);
  const size_t n = segments.size();
  for (size_t i = 0; i < n; ++i) {
    const RmppHeader& h = segments[i].header;
    if (auto v = find_rmpp_violation(h)) return rmpp_illegal(v->field, v->value);
    if (!h.active()) return rmpp_illegal("RMPPFlags", h.flags);
    if (h.type != RmppType::kData) return rmpp_illegal("RMPPType", static_cast<uint8_t>(h.type));
    if (h.data1 != i + 1) return rmpp_inconsistent("Data1", h.data1);
    if (h.first() != (i == 0) || h.last() != (i == n - 1)) return rmpp_illegal("RMPPFlags", h.flags);
    if (segments[i].data.size() != layout.data_len)
      return rmpp_inconsistent("Data2", segments[i].data.size());
  }
  // The last segment's payload holds its class header and at least one data byte, unless
  // the whole transfer is one segment (an empty table is one segment of header only).
  const uint32_t last_len = segments.back().header.data2;
  const size_t min_last = layout.class_header_len + (n > 1 ? 1 : 0);
  if (last_len < min_last || last_len > layout.segment_payload())
    return rmpp_inconsistent("Data2", last_len);
  const uint32_t total = segments.front().header.data2;
  if (total != (n - 1) * layout.segment_payload() + last_len)
    return rmpp_inconsistent("Data2", total);

  std::vector<uint8_t> data;
  data.reserve(n * layout.data_len);
  for (const RmppSegment& s : segments) data.insert(data.end(), s.data.begin(), s.data.end());
  data.resize((n - 1) * layout.data_len + (last_len - layout.class_header_len));
  return data;
}

}  // namespace softib::mad
