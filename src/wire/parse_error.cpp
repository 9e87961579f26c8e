#include "wire/parse_error.hpp"

#include <fmt/format.h>

namespace softib::wire {

std::string_view to_string(ParseErrorKind kind) {
  switch (kind) {
    case ParseErrorKind::kTruncated: return "truncated";
    case ParseErrorKind::kIllegalValue: return "illegal value";
    case ParseErrorKind::kInconsistent: return "inconsistent";
  }
  return "?";
}

std::string ParseError::to_string() const {
  switch (kind) {
    case ParseErrorKind::kTruncated:
      return fmt::format("{}.{}: truncated at byte {} (input has {} bytes)", header, field, offset,
                         available);
    case ParseErrorKind::kIllegalValue:
      return fmt::format("{}.{}: illegal value {:#x} at byte {}", header, field, value, offset);
    case ParseErrorKind::kInconsistent:
      return fmt::format("{}.{}: value {} disagrees with the bytes present (at byte {})", header,
                         field, value, offset);
  }
  return "?";
}

ParseError truncated(std::string_view header, std::span<const Field> fields, size_t in_size) {
  for (const Field& f : fields) {
    if (f.end_byte() > in_size)
      return ParseError{ParseErrorKind::kTruncated, header, f.name, f.first_byte(), 0, in_size};
  }
  SOFTIB_ASSERT_MSG(false, "truncated() called with an input that holds every field");
  return {};
}

}  // namespace softib::wire
