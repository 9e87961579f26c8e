#include "mad/codec.hpp"

#include <fmt/format.h>

namespace softib::mad {
namespace detail {

void dump_row(std::string& out, const wire::Field& f, std::string_view label, Printer printer,
              wire::ByteSpan raw) {
  if (printer == Printer::kArray || printer == Printer::kString) {
    append_dump_line(out, label, format_bytes(printer, raw.subspan(f.first_byte(), f.bit_width / 8)));
  } else {
    append_dump_line(out, label, format_integer(printer, f.bit_width, wire::get(raw, f)));
  }
}

// mad_dump_sltovl: "|" then "%2u|" per SL, then a newline.
std::string dump_sl_to_vl(std::span<const uint64_t> vls) {
  std::string s = "|";
  for (uint64_t vl : vls) s += fmt::format("{:2}|", vl);
  s += '\n';
  return s;
}

// mad_dump_vlarbitration: the VL of every entry on one line, the weights on the next, each
// as "0x%-2X|".
std::string dump_vl_arbitration(std::span<const uint64_t> vl_weight_pairs) {
  SOFTIB_ASSERT(vl_weight_pairs.size() % 2 == 0);
  std::string s = "\nVL    : |";
  for (size_t i = 0; i < vl_weight_pairs.size(); i += 2)
    s += fmt::format("0x{:<2X}|", vl_weight_pairs[i]);
  s += "\nWEIGHT: |";
  for (size_t i = 1; i < vl_weight_pairs.size(); i += 2)
    s += fmt::format("0x{:<2X}|", vl_weight_pairs[i]);
  s += '\n';
  return s;
}

// mad_dump_nodedesc: the text up to its NUL, at most the whole field.
std::string dump_text(wire::ByteSpan bytes) {
  std::string s;
  for (uint8_t b : bytes) {
    if (b == 0) break;
    s += static_cast<char>(b);
  }
  return s;
}

Status unknown_field(std::string_view layout, std::string_view name) {
  return Status(Code::kNotFound, fmt::format("{} has no field {}", layout, name));
}

Status wrong_kind(std::string_view layout, std::string_view name, bool want_bytes) {
  return Status(Code::kInvalidArgument,
                fmt::format("{}.{} is {} field", layout, name, want_bytes ? "an integer" : "a byte"));
}

Status too_short(std::string_view layout, std::string_view name, size_t have) {
  return Status(Code::kOutOfRange,
                fmt::format("{}.{} lies beyond the {} bytes given", layout, name, have));
}

Status too_wide(std::string_view layout, std::string_view name, uint64_t value) {
  return Status(Code::kOutOfRange, fmt::format("{}.{} cannot hold {}", layout, name, value));
}

}  // namespace detail

std::vector<uint8_t> clear_reserved(const LayoutInfo& layout, wire::ByteSpan raw) {
  SOFTIB_ASSERT(raw.size() >= layout.size);
  std::vector<uint8_t> out(layout.size, 0);
  for (const RowInfo& r : layout.rows) {
    if (r.is_integer) {
      wire::set(out, r.field, wire::get(raw, r.field));
    } else if (r.is_bytes) {
      std::copy_n(raw.begin() + r.field.first_byte(), r.field.bit_width / 8,
                  out.begin() + r.field.first_byte());
    }
  }
  return out;
}

}  // namespace softib::mad
