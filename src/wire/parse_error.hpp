// ParseError: why a byte string is not a valid header, packet or MAD. Decoders are total:
// any input decodes or yields a ParseError naming the field where the bytes ran out or whose
// value is illegal. A ParseError holds only static strings and integers, so rejecting a
// malformed packet on the data path allocates nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "wire/bytes.hpp"
#include "wire/field.hpp"

namespace softib::wire {

enum class ParseErrorKind : uint8_t {
  kTruncated,     // the input ended inside `field`
  kIllegalValue,  // `field` holds `value`, which the IBA forbids here
  kInconsistent,  // `field` (a length) disagrees with the bytes present
};

std::string_view to_string(ParseErrorKind kind);

struct ParseError {
  ParseErrorKind kind = ParseErrorKind::kTruncated;
  std::string_view header;  // "BTH", "LRH", "NodeInfo", ...
  std::string_view field;   // "DestQP"
  uint32_t offset = 0;      // byte offset of the field from the start of the decoded input
  uint64_t value = 0;       // kIllegalValue / kInconsistent: the offending value
  uint64_t available = 0;   // kTruncated: bytes that were there

  // "BTH.DestQP: truncated at byte 5 (input has 5 bytes)"
  std::string to_string() const;
  // The same error seen from an enclosing structure that starts `base` bytes earlier.
  ParseError shifted(uint32_t base) const {
    ParseError e = *this;
    e.offset += base;
    return e;
  }
};

template <class T>
using Parsed = Result<T, ParseError>;

// The error for an input of in_size bytes that is shorter than the layout: names the first
// field (in wire order) that does not fit.
// REQUIRES: in_size < layout_length(fields), layout_is_ordered(fields)
ParseError truncated(std::string_view header, std::span<const Field> fields, size_t in_size);

// nullopt when `in` holds the whole layout, else the truncation error.
inline std::optional<ParseError> check_length(ByteSpan in, std::string_view header,
                                              std::span<const Field> fields, size_t length) {
  if (in.size() >= length) [[likely]]
    return std::nullopt;
  return truncated(header, fields, in.size());
}

inline ParseError illegal(std::string_view header, const Field& f, uint64_t value) {
  return ParseError{ParseErrorKind::kIllegalValue, header, f.name, f.first_byte(), value, 0};
}

inline ParseError inconsistent(std::string_view header, const Field& f, uint64_t value) {
  return ParseError{ParseErrorKind::kInconsistent, header, f.name, f.first_byte(), value, 0};
}

}  // namespace softib::wire
