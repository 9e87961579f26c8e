// The one MAD codec engine: every operation on an attribute, header or MAD layout is driven
// by its table, Layout<T>::kRows (see mad/row.hpp). A layout provides
//
//   static constexpr std::string_view kName;        "NodeInfo"
//   static constexpr std::array<Row<T>, N> kRows;    every field in wire order, reserved too
//   static constexpr std::array kDumpOrder;         optional: row names in libibmad's order
//   static constexpr DumpStyle kDumpStyle;          optional: default kFieldLines
//   static std::optional<wire::ParseError> check(const T&);  optional cross-field rules
//
// and gets: decode (total: truncation names the first field in wire order that does not
// fit, illegal values name their field), encode (reserved bits written as zero), get/set of
// a field by name on raw bytes, a dump byte-identical to libibmad's mad_dump_* where it has
// one, SA component-mask bits, and a type-erased LayoutInfo for registries and fuzzers.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "base/status.hpp"
#include "mad/row.hpp"
#include "wire/parse_error.hpp"

namespace softib::mad {

// How an attribute dumps as a whole.
enum class DumpStyle : uint8_t {
  kFieldLines,     // "Label:....value" per field (mad_dump_nodeinfo, mad_dump_portinfo, ...)
  kText,           // the text of the single byte field up to its NUL (mad_dump_nodedesc)
  kSlToVl,         // "| 0| 1| ...|15|" (mad_dump_sltovl)
  kVlArbitration,  // a VL line and a WEIGHT line (mad_dump_vlarbitration)
};

namespace detail {

template <class T>
concept HasDumpOrder = requires { Layout<T>::kDumpOrder; };
template <class T>
concept HasDumpStyle = requires { Layout<T>::kDumpStyle; };
template <class T>
concept HasCheck = requires(const T& t) {
  { Layout<T>::check(t) } -> std::same_as<std::optional<wire::ParseError>>;
};

template <class T>
inline constexpr size_t kRowCount = std::tuple_size_v<std::remove_cvref_t<decltype(Layout<T>::kRows)>>;

// Non-template pieces of the dump (codec.cpp).
void dump_row(std::string& out, const wire::Field& f, std::string_view label, Printer printer,
              wire::ByteSpan raw);
std::string dump_sl_to_vl(std::span<const uint64_t> vls);
std::string dump_vl_arbitration(std::span<const uint64_t> vl_weight_pairs);
std::string dump_text(wire::ByteSpan bytes);
Status unknown_field(std::string_view layout, std::string_view name);
Status wrong_kind(std::string_view layout, std::string_view name, bool want_bytes);
Status too_short(std::string_view layout, std::string_view name, size_t have);
Status too_wide(std::string_view layout, std::string_view name, uint64_t value);

}  // namespace detail

// The fields of T's table, in wire order.
template <class T>
inline constexpr auto layout_fields = [] {
  std::array<wire::Field, detail::kRowCount<T>> f{};
  for (size_t i = 0; i < f.size(); ++i) f[i] = Layout<T>::kRows[i].field;
  return f;
}();

// Bytes on the wire: one past the last byte any row touches.
template <class T>
inline constexpr size_t wire_size = wire::layout_length(layout_fields<T>);

// The table is well formed: fields in wire order without overlap, integer rows readable as
// integers, byte rows whole bytes, reserved rows unbound and unprinted, bound rows labelled,
// legal ranges within the field, and the names of bound rows unique. Asserted by decode,
// encode and dump, so a malformed table does not compile.
template <class T>
constexpr bool layout_is_sound() {
  const auto& rows = Layout<T>::kRows;
  if (!wire::layout_is_valid(layout_fields<T>) || !wire::layout_is_ordered(layout_fields<T>))
    return false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row<T>& r = rows[i];
    if (r.field.name.empty()) return false;
    if (r.is_reserved() != (r.printer == Printer::kNone)) return false;
    if (r.is_reserved()) continue;
    if (r.label.empty()) return false;
    if (r.access.is_integer() == r.access.is_bytes()) return false;
    const bool byte_printer = r.printer == Printer::kArray || r.printer == Printer::kString;
    if (r.access.is_bytes() != byte_printer) return false;
    if (r.access.is_integer() && !r.field.fits_integer()) return false;
    if (r.access.is_bytes() && !r.field.byte_aligned()) return false;
    if (r.legal.min > r.legal.max || r.legal.min > detail::low_mask(r.field.bit_width))
      return false;
    for (size_t j = i + 1; j < rows.size(); ++j)
      if (!rows[j].is_reserved() && rows[j].field.name == r.field.name) return false;
  }
  return true;
}

// The bound row called `name` (its IBA name, else its dump label), or nullptr.
template <class T>
constexpr const Row<T>* find_row(std::string_view name) {
  for (const Row<T>& r : Layout<T>::kRows)
    if (!r.is_reserved() && r.field.name == name) return &r;
  for (const Row<T>& r : Layout<T>::kRows)
    if (!r.is_reserved() && r.label == name) return &r;
  return nullptr;
}

// ---- decode / encode ----------------------------------------------------------------------

namespace detail {

// Row I of T's table, with every offset and width a constant: the engine is instantiated per
// row, so each field read or write compiles to fixed byte loads and shifts (a generic loop
// over the table would re-derive them per field at run time; measured 3x slower on the
// LFT blocks and DR SMP headers of a fabric bring-up).
template <class T, size_t I>
inline bool decode_row(wire::ByteSpan in, T& t, std::optional<wire::ParseError>& error) {
  constexpr const Row<T>& r = Layout<T>::kRows[I];
  if constexpr (r.access.is_integer()) {
    const uint64_t v = wire::get_bits(in.data(), r.field.bit_offset, r.field.bit_width);
    if constexpr (r.legal.min != 0 || r.legal.max < low_mask(r.field.bit_width)) {
      if (!r.legal.allows(v)) {
        error = wire::illegal(Layout<T>::kName, r.field, v);
        return false;
      }
    }
    r.access.set(t, v);
  } else if constexpr (r.access.is_bytes()) {
    r.access.set_bytes(t, in.subspan(r.field.first_byte(), r.field.bit_width / 8));
  }
  return true;
}

template <class T, size_t I>
inline void encode_row(const T& t, wire::MutByteSpan out) {
  constexpr const Row<T>& r = Layout<T>::kRows[I];
  if constexpr (r.access.is_integer()) {
    wire::set_bits(out.data(), r.field.bit_offset, r.field.bit_width, r.access.get(t));
  } else if constexpr (r.access.is_bytes()) {
    r.access.get_bytes(t, out.subspan(r.field.first_byte(), r.field.bit_width / 8));
  }
}

}  // namespace detail

template <class T>
wire::Parsed<T> decode(wire::ByteSpan in) {
  static_assert(layout_is_sound<T>());
  if (auto e = wire::check_length(in, Layout<T>::kName, layout_fields<T>, wire_size<T>)) return *e;
  T t{};
  std::optional<wire::ParseError> error;
  const bool ok = [&]<size_t... I>(std::index_sequence<I...>) {
    return (detail::decode_row<T, I>(in, t, error) && ...);
  }(std::make_index_sequence<detail::kRowCount<T>>());
  if (!ok) return *error;
  if constexpr (detail::HasCheck<T>) {
    if (auto e = Layout<T>::check(t)) return *e;
  }
  return t;
}

// Writes wire_size<T> bytes; reserved bits are zero.
// REQUIRES: out.size() >= wire_size<T>, every integer member fits its field.
template <class T>
void encode(const T& t, wire::MutByteSpan out) {
  static_assert(layout_is_sound<T>());
  SOFTIB_ASSERT(out.size() >= wire_size<T>);
  std::fill_n(out.begin(), wire_size<T>, uint8_t{0});
  [&]<size_t... I>(std::index_sequence<I...>) {
    (detail::encode_row<T, I>(t, out), ...);
  }(std::make_index_sequence<detail::kRowCount<T>>());
}

template <class T>
std::vector<uint8_t> encode(const T& t) {
  std::vector<uint8_t> out(wire_size<T>);
  encode(t, wire::MutByteSpan(out));
  return out;
}

// For Layout<T>::check: the kIllegalValue error for row `name` holding `value`.
template <class T>
wire::ParseError illegal_field(std::string_view name, uint64_t value) {
  for (const Row<T>& r : Layout<T>::kRows)
    if (r.field.name == name) return wire::illegal(Layout<T>::kName, r.field, value);
  SOFTIB_ASSERT_MSG(false, "illegal_field: no such row");
  return {};
}

// ---- fields by name on raw bytes ----------------------------------------------------------

template <class T>
Result<uint64_t> get_field(wire::ByteSpan raw, std::string_view name) {
  const Row<T>* r = find_row<T>(name);
  if (r == nullptr) return detail::unknown_field(Layout<T>::kName, name);
  if (!r->access.is_integer()) return detail::wrong_kind(Layout<T>::kName, name, false);
  if (raw.size() < r->field.end_byte()) return detail::too_short(Layout<T>::kName, name, raw.size());
  return wire::get(raw, r->field);
}

template <class T>
Status set_field(wire::MutByteSpan raw, std::string_view name, uint64_t value) {
  const Row<T>* r = find_row<T>(name);
  if (r == nullptr) return detail::unknown_field(Layout<T>::kName, name);
  if (!r->access.is_integer()) return detail::wrong_kind(Layout<T>::kName, name, false);
  if (raw.size() < r->field.end_byte()) return detail::too_short(Layout<T>::kName, name, raw.size());
  if (value > detail::low_mask(r->field.bit_width))
    return detail::too_wide(Layout<T>::kName, name, value);
  wire::set(raw, r->field, value);
  return {};
}

template <class T>
Result<std::vector<uint8_t>> get_field_bytes(wire::ByteSpan raw, std::string_view name) {
  const Row<T>* r = find_row<T>(name);
  if (r == nullptr) return detail::unknown_field(Layout<T>::kName, name);
  if (!r->access.is_bytes()) return detail::wrong_kind(Layout<T>::kName, name, true);
  if (raw.size() < r->field.end_byte()) return detail::too_short(Layout<T>::kName, name, raw.size());
  const auto b = raw.subspan(r->field.first_byte(), r->field.bit_width / 8);
  return std::vector<uint8_t>(b.begin(), b.end());
}

template <class T>
Status set_field_bytes(wire::MutByteSpan raw, std::string_view name, wire::ByteSpan value) {
  const Row<T>* r = find_row<T>(name);
  if (r == nullptr) return detail::unknown_field(Layout<T>::kName, name);
  if (!r->access.is_bytes()) return detail::wrong_kind(Layout<T>::kName, name, true);
  if (raw.size() < r->field.end_byte()) return detail::too_short(Layout<T>::kName, name, raw.size());
  if (value.size() != r->field.bit_width / 8)
    return detail::too_wide(Layout<T>::kName, name, value.size());
  std::copy(value.begin(), value.end(), raw.begin() + r->field.first_byte());
  return {};
}

// ---- dump ---------------------------------------------------------------------------------

template <class T>
constexpr DumpStyle dump_style() {
  if constexpr (detail::HasDumpStyle<T>) {
    return Layout<T>::kDumpStyle;
  } else {
    return DumpStyle::kFieldLines;
  }
}

namespace detail {

template <class T>
constexpr size_t bound_row_count() {
  size_t n = 0;
  for (const Row<T>& r : Layout<T>::kRows)
    if (!r.is_reserved()) ++n;
  return n;
}

// Indices of the printed rows in dump order: kDumpOrder when the layout has one (it must
// name every bound row once), else table order.
template <class T>
inline constexpr auto kDumpIndices = [] {
  std::array<size_t, bound_row_count<T>()> order{};
  const auto& rows = Layout<T>::kRows;
  if constexpr (HasDumpOrder<T>) {
    static_assert(Layout<T>::kDumpOrder.size() == bound_row_count<T>(),
                  "kDumpOrder must list every bound row");
    for (size_t k = 0; k < order.size(); ++k) {
      bool found = false;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (!rows[i].is_reserved() && rows[i].field.name == Layout<T>::kDumpOrder[k]) {
          order[k] = i;
          found = true;
        }
      }
      SOFTIB_ASSERT_MSG(found, "kDumpOrder names a row that is not in the table");
    }
  } else {
    size_t k = 0;
    for (size_t i = 0; i < rows.size(); ++i)
      if (!rows[i].is_reserved()) order[k++] = i;
  }
  return order;
}();

template <class T>
std::vector<uint64_t> bound_integers(wire::ByteSpan raw) {
  std::vector<uint64_t> v;
  for (const Row<T>& r : Layout<T>::kRows)
    if (r.access.is_integer()) v.push_back(wire::get(raw, r.field));
  return v;
}

}  // namespace detail

// The dump of raw attribute bytes, as smpquery/perfquery print them through libibmad.
// REQUIRES: raw.size() >= wire_size<T>
template <class T>
std::string dump(wire::ByteSpan raw) {
  static_assert(layout_is_sound<T>());
  SOFTIB_ASSERT(raw.size() >= wire_size<T>);
  constexpr DumpStyle style = dump_style<T>();
  if constexpr (style == DumpStyle::kFieldLines) {
    std::string out;
    for (size_t i : detail::kDumpIndices<T>) {
      const Row<T>& r = Layout<T>::kRows[i];
      detail::dump_row(out, r.field, r.label, r.printer, raw);
    }
    return out;
  } else if constexpr (style == DumpStyle::kText) {
    static_assert(detail::bound_row_count<T>() == 1);
    const Row<T>& r = Layout<T>::kRows[detail::kDumpIndices<T>[0]];
    return detail::dump_text(raw.subspan(r.field.first_byte(), r.field.bit_width / 8));
  } else if constexpr (style == DumpStyle::kSlToVl) {
    return detail::dump_sl_to_vl(detail::bound_integers<T>(raw));
  } else {
    return detail::dump_vl_arbitration(detail::bound_integers<T>(raw));
  }
}

template <class T>
std::string dump(const T& t) {
  const std::vector<uint8_t> raw = encode(t);
  return dump<T>(wire::ByteSpan(raw));
}

// ---- SA components (IBA 15.2.4.1) -----------------------------------------------------------

// The ComponentMask bit of row `name`: SA components are the record's fields in order,
// reserved fields included, a block marked joins_previous counting once. -1 when absent.
template <class T>
constexpr int component_bit(std::string_view name) {
  int component = -1;
  for (const Row<T>& r : Layout<T>::kRows) {
    if (!r.joins_previous) ++component;
    if (r.field.name == name) return component;
  }
  return -1;
}

// REQUIRES: every name is a row of T.
template <class T>
constexpr uint64_t component_mask(std::initializer_list<std::string_view> names) {
  uint64_t mask = 0;
  for (std::string_view n : names) {
    const int bit = component_bit<T>(n);
    SOFTIB_ASSERT_MSG(bit >= 0 && bit < 64, "component_mask: no such component");
    mask |= uint64_t{1} << bit;
  }
  return mask;
}

// ---- type-erased view ---------------------------------------------------------------------

struct RowInfo {
  wire::Field field;
  std::string_view label;
  Printer printer = Printer::kNone;
  bool is_integer = false;
  bool is_bytes = false;
  Legal legal;
  bool joins_previous = false;
  constexpr bool is_reserved() const { return !is_integer && !is_bytes; }
};

// What registries, fuzzers and cross-checks need of a layout without knowing its type.
struct LayoutInfo {
  std::string_view name;
  size_t size = 0;
  std::span<const RowInfo> rows;
  // Decodes `in`; on success encodes the value into `out` (size bytes) and returns nullopt.
  std::optional<wire::ParseError> (*reencode)(wire::ByteSpan in, wire::MutByteSpan out) = nullptr;
  std::string (*dump)(wire::ByteSpan raw) = nullptr;  // REQUIRES: raw.size() >= size
};

namespace detail {

template <class T>
inline constexpr auto kRowInfos = [] {
  std::array<RowInfo, kRowCount<T>> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    const Row<T>& r = Layout<T>::kRows[i];
    out[i] = RowInfo{r.field, r.label, r.printer, r.access.is_integer(), r.access.is_bytes(),
                     r.legal, r.joins_previous};
  }
  return out;
}();

template <class T>
std::optional<wire::ParseError> reencode(wire::ByteSpan in, wire::MutByteSpan out) {
  auto t = decode<T>(in);
  if (!t.ok()) return t.error();
  encode(*t, out);
  return std::nullopt;
}

template <class T>
std::string dump_raw(wire::ByteSpan raw) {
  return dump<T>(raw);
}

}  // namespace detail

template <class T>
constexpr LayoutInfo layout_info() {
  return LayoutInfo{Layout<T>::kName, wire_size<T>, detail::kRowInfos<T>, &detail::reencode<T>,
                    &detail::dump_raw<T>};
}

// The bytes of `raw` with every reserved bit cleared: what encode(decode(raw)) gives back.
std::vector<uint8_t> clear_reserved(const LayoutInfo& layout, wire::ByteSpan raw);

}  // namespace softib::mad
