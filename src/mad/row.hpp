// Row: one field of a MAD attribute table. A table is a constexpr std::array<Row<T>, N> in
// wire order that says, for every field of the IBA layout (reserved ones included), its IBA
// name, where it lies (wire::Field: bit 0 = MSB of byte 0), the label libibmad prints for it,
// how to print it, which values are legal, and an accessor that binds it to a member of the
// host-order struct T. The one engine in mad/codec.hpp encodes, decodes, dumps and gets/sets
// fields by name from these tables alone; no attribute has hand-written codec code.
//
// Accessors are pairs of function pointers generated from member pointers at compile time:
//   member<&NodeInfo::node_guid>()          the member itself (integer, enum, strong id,
//                                           Gid or std::array<uint8_t, N>)
//   element<&PKeyTable::pkeys, 7>()         element 7 of a std::array member
//   bits<&MadHeader::method, 7, 1>()        bit 7 of a member (the R bit of R|Method)
//   member<&Rec::sub, &Sub::field>()        a member of a member
// and tables compose: embed<&NodeRecord::node_info, Layout<NodeInfo>::kRows>(32) yields the
// NodeInfo rows shifted by 32 bits and bound through NodeRecord::node_info.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/assert.hpp"
#include "base/gid.hpp"
#include "mad/printer.hpp"
#include "wire/bytes.hpp"
#include "wire/field.hpp"

namespace softib::mad {

// Specialized next to every attribute struct: kName, kRows and optionally kDumpOrder,
// kDumpStyle and check() (see mad/codec.hpp).
template <class T>
struct Layout;

// A type with a table.
template <class T>
concept HasLayout = requires {
  Layout<T>::kName;
  Layout<T>::kRows;
};

// How a row's bits are bound to the struct. Integer rows use get/set, byte rows (GIDs,
// strings, table blocks) get_bytes/set_bytes; reserved rows have none.
// The kind is data rather than "which pointer is set" because comparing a function's address
// with nullptr is not a constant expression under -fsanitize (GCC stops assuming addresses
// are non-null), and the tables are checked at compile time.
template <class T>
struct Access {
  enum class Kind : uint8_t { kNone, kInteger, kBytes };
  Kind kind = Kind::kNone;
  uint64_t (*get)(const T&) = nullptr;
  void (*set)(T&, uint64_t) = nullptr;
  void (*get_bytes)(const T&, wire::MutByteSpan) = nullptr;
  void (*set_bytes)(T&, wire::ByteSpan) = nullptr;

  constexpr bool is_integer() const { return kind == Kind::kInteger; }
  constexpr bool is_bytes() const { return kind == Kind::kBytes; }
  constexpr bool is_bound() const { return kind != Kind::kNone; }
};

// The values the IBA allows in an integer field; a decoded value outside is kIllegalValue.
struct Legal {
  uint64_t min = 0;
  uint64_t max = ~uint64_t{0};
  constexpr bool allows(uint64_t v) const { return v >= min && v <= max; }
  static constexpr Legal exactly(uint64_t v) { return Legal{v, v}; }
  static constexpr Legal at_most(uint64_t v) { return Legal{0, v}; }
};

template <class T>
struct Row {
  wire::Field field;                 // IBA name, bit offset, bit width
  std::string_view label;            // the dump label (libibmad's mad_field_name where it has one)
  Printer printer = Printer::kNone;   // kNone: reserved, never printed, written as zero
  Access<T> access{};
  Legal legal{};
  // True for every row but the first of a block the SA treats as one component (a P_Key
  // table block inside a P_KeyTableRecord): ComponentMask bits count components, not rows.
  bool joins_previous = false;

  constexpr bool is_reserved() const { return !access.is_bound(); }
};

// ---- accessors ---------------------------------------------------------------------------

namespace detail {

template <class M>
struct MemberPointer;
template <class C, class V>
struct MemberPointer<V C::*> {
  using Class = C;
  using Value = V;
};

template <class V>
struct IsByteArray : std::false_type {};
template <size_t N>
struct IsByteArray<std::array<uint8_t, N>> : std::true_type {};

// Values stored as bytes rather than as an integer.
template <class V>
concept ByteValue = std::same_as<V, Gid> || IsByteArray<V>::value;

// softib's strong ids (Lid, Guid, PKey, Qpn, QKey, MadStatus, ...): value() and an explicit
// constructor from the representation.
template <class V>
concept StrongValue = requires(const V& v) {
  { v.value() } -> std::unsigned_integral;
} && std::is_constructible_v<V, decltype(std::declval<const V&>().value())>;

template <class R>
constexpr R narrow(uint64_t u) {
  if constexpr (std::is_same_v<R, uint64_t>) {
    return u;
  } else {
    return static_cast<R>(u);
  }
}

template <class V>
constexpr uint64_t to_wire(const V& v) {
  if constexpr (std::is_same_v<V, bool>) {
    return v ? 1u : 0u;
  } else if constexpr (std::is_enum_v<V>) {
    static_assert(std::is_unsigned_v<std::underlying_type_t<V>>);
    return static_cast<std::underlying_type_t<V>>(v);
  } else if constexpr (std::is_integral_v<V>) {
    static_assert(std::is_unsigned_v<V>, "wire integers are unsigned");
    return v;
  } else {
    static_assert(StrongValue<V>, "no wire mapping for this member type");
    return v.value();
  }
}

template <class V>
constexpr V from_wire(uint64_t u) {
  if constexpr (std::is_same_v<V, bool>) {
    return u != 0;
  } else if constexpr (std::is_enum_v<V>) {
    return static_cast<V>(narrow<std::underlying_type_t<V>>(u));
  } else if constexpr (std::is_integral_v<V>) {
    return narrow<V>(u);
  } else {
    using Rep = std::remove_cvref_t<decltype(std::declval<const V&>().value())>;
    return V(narrow<Rep>(u));
  }
}

constexpr uint64_t low_mask(uint32_t width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// The type reached by following member pointers Ms... from a V.
template <class V, auto... Ms>
struct Follow {
  using type = V;
};
template <class V, auto M, auto... Ms>
struct Follow<V, M, Ms...> {
  using type = typename Follow<typename MemberPointer<decltype(M)>::Value, Ms...>::type;
};

// A path from an object to one of its parts: a member, then optionally members of that.
template <auto M, auto... More>
struct MemberPath {
  using Outer = typename MemberPointer<decltype(M)>::Class;
  using Value = typename Follow<typename MemberPointer<decltype(M)>::Value, More...>::type;
  static constexpr const Value& ref(const Outer& o) {
    if constexpr (sizeof...(More) == 0) {
      return o.*M;
    } else {
      return MemberPath<More...>::ref(o.*M);
    }
  }
  static constexpr Value& ref(Outer& o) {
    if constexpr (sizeof...(More) == 0) {
      return o.*M;
    } else {
      return MemberPath<More...>::ref(o.*M);
    }
  }
};

// Element I of a std::array member, then optionally members of that element.
template <auto M, size_t I, auto... More>
struct ElementPath {
  using Outer = typename MemberPointer<decltype(M)>::Class;
  using Element = typename MemberPointer<decltype(M)>::Value::value_type;
  using Value = typename Follow<Element, More...>::type;
  static constexpr const Value& ref(const Outer& o) {
    if constexpr (sizeof...(More) == 0) {
      return (o.*M)[I];
    } else {
      return MemberPath<More...>::ref((o.*M)[I]);
    }
  }
  static constexpr Value& ref(Outer& o) {
    if constexpr (sizeof...(More) == 0) {
      return (o.*M)[I];
    } else {
      return MemberPath<More...>::ref((o.*M)[I]);
    }
  }
};

template <class P>
uint64_t path_get(const typename P::Outer& o) {
  return to_wire(P::ref(o));
}
template <class P>
void path_set(typename P::Outer& o, uint64_t v) {
  P::ref(o) = from_wire<typename P::Value>(v);
}

template <class P, uint32_t Shift, uint32_t Width>
uint64_t bits_get(const typename P::Outer& o) {
  return (to_wire(P::ref(o)) >> Shift) & low_mask(Width);
}
template <class P, uint32_t Shift, uint32_t Width>
void bits_set(typename P::Outer& o, uint64_t v) {
  const uint64_t mask = low_mask(Width) << Shift;
  const uint64_t whole = (to_wire(P::ref(o)) & ~mask) | ((v << Shift) & mask);
  P::ref(o) = from_wire<typename P::Value>(whole);
}

template <class V>
constexpr wire::ByteSpan bytes_of(const V& v) {
  if constexpr (std::is_same_v<V, Gid>) {
    return v.raw();
  } else {
    return v;
  }
}

template <class P>
void path_get_bytes(const typename P::Outer& o, wire::MutByteSpan out) {
  const wire::ByteSpan b = bytes_of(P::ref(o));
  SOFTIB_ASSERT(out.size() == b.size());
  std::copy(b.begin(), b.end(), out.begin());
}
template <class P>
void path_set_bytes(typename P::Outer& o, wire::ByteSpan in) {
  using V = typename P::Value;
  if constexpr (std::is_same_v<V, Gid>) {
    std::array<uint8_t, 16> raw{};
    SOFTIB_ASSERT(in.size() == raw.size());
    std::copy(in.begin(), in.end(), raw.begin());
    P::ref(o) = Gid(raw);
  } else {
    V& dst = P::ref(o);
    SOFTIB_ASSERT(in.size() == dst.size());
    std::copy(in.begin(), in.end(), dst.begin());
  }
}

template <class P>
constexpr Access<typename P::Outer> access_of() {
  using A = Access<typename P::Outer>;
  if constexpr (ByteValue<typename P::Value>) {
    return A{A::Kind::kBytes, nullptr, nullptr, &path_get_bytes<P>, &path_set_bytes<P>};
  } else {
    return A{A::Kind::kInteger, &path_get<P>, &path_set<P>, nullptr, nullptr};
  }
}

}  // namespace detail

// The member (or member of a member) itself.
template <auto M, auto... More>
constexpr auto member() {
  return detail::access_of<detail::MemberPath<M, More...>>();
}

// Element I of a std::array member (then optionally a member of that element).
template <auto M, size_t I, auto... More>
constexpr auto element() {
  return detail::access_of<detail::ElementPath<M, I, More...>>();
}

// Width bits of an integer member starting at bit Shift (bit 0 = least significant): for
// fields the IBA splits but softib keeps whole (R|Method, the two halves of ServiceID).
template <auto M, uint32_t Shift, uint32_t Width>
constexpr auto bits() {
  using P = detail::MemberPath<M>;
  using A = Access<typename P::Outer>;
  return A{A::Kind::kInteger, &detail::bits_get<P, Shift, Width>, &detail::bits_set<P, Shift, Width>,
           nullptr, nullptr};
}

// ---- rows ---------------------------------------------------------------------------------

template <class T>
constexpr Row<T> row(std::string_view name, uint32_t bit_offset, uint32_t bit_width,
                     std::string_view label, Printer printer, Access<T> access, Legal legal = {}) {
  return Row<T>{wire::Field{name, bit_offset, bit_width}, label, printer, access, legal, false};
}

template <class T>
constexpr Row<T> reserved(uint32_t bit_offset, uint32_t bit_width,
                          std::string_view name = "Reserved") {
  return Row<T>{wire::Field{name, bit_offset, bit_width}, {}, Printer::kNone, {}, {}, false};
}

// Joins row arrays (and single-row arrays) into one table.
template <class T, size_t... N>
constexpr std::array<Row<T>, (N + ...)> concat(const std::array<Row<T>, N>&... parts) {
  std::array<Row<T>, (N + ...)> out{};
  size_t at = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(at)),
    at += N),
   ...);
  return out;
}

// The first N rows of a table, for a layout that is a prefix of another.
template <size_t N, class T, size_t M>
constexpr std::array<Row<T>, N> take(const std::array<Row<T>, M>& rows) {
  static_assert(N <= M);
  std::array<Row<T>, N> out{};
  std::copy_n(rows.begin(), N, out.begin());
  return out;
}

// The table with row `name`'s legal values replaced: a SA MAD embeds the MAD header rows but
// pins MgmtClass to 0x03.
template <class T, size_t N>
constexpr std::array<Row<T>, N> with_legal(std::array<Row<T>, N> rows, std::string_view name,
                                           Legal legal) {
  bool found = false;
  for (Row<T>& r : rows) {
    if (r.field.name == name) {
      r.legal = legal;
      found = true;
    }
  }
  SOFTIB_ASSERT_MSG(found, "with_legal: no such row");
  return rows;
}

// ---- composition --------------------------------------------------------------------------

namespace detail {

template <class P, const auto& Rows, size_t I>
uint64_t embedded_get(const typename P::Outer& o) {
  return Rows[I].access.get(P::ref(o));
}
template <class P, const auto& Rows, size_t I>
void embedded_set(typename P::Outer& o, uint64_t v) {
  Rows[I].access.set(P::ref(o), v);
}
template <class P, const auto& Rows, size_t I>
void embedded_get_bytes(const typename P::Outer& o, wire::MutByteSpan out) {
  Rows[I].access.get_bytes(P::ref(o), out);
}
template <class P, const auto& Rows, size_t I>
void embedded_set_bytes(typename P::Outer& o, wire::ByteSpan in) {
  Rows[I].access.set_bytes(P::ref(o), in);
}

template <class P, const auto& Rows, size_t I>
constexpr Row<typename P::Outer> embedded_row(uint32_t base_bit, bool one_component) {
  const auto& r = Rows[I];
  Row<typename P::Outer> out{};
  out.field = wire::Field{r.field.name, r.field.bit_offset + base_bit, r.field.bit_width};
  out.label = r.label;
  out.printer = r.printer;
  out.legal = r.legal;
  out.joins_previous = r.joins_previous || (one_component && I > 0);
  out.access.kind = static_cast<typename Access<typename P::Outer>::Kind>(r.access.kind);
  if (r.access.is_integer()) {
    out.access.get = &embedded_get<P, Rows, I>;
    out.access.set = &embedded_set<P, Rows, I>;
  }
  if (r.access.is_bytes()) {
    out.access.get_bytes = &embedded_get_bytes<P, Rows, I>;
    out.access.set_bytes = &embedded_set_bytes<P, Rows, I>;
  }
  return out;
}

template <class P, const auto& Rows>
constexpr auto embed_path(uint32_t base_bit, bool one_component) {
  constexpr size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(Rows)>>;
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::array<Row<typename P::Outer>, n>{
        embedded_row<P, Rows, I>(base_bit, one_component)...};
  }(std::make_index_sequence<n>{});
}

}  // namespace detail

// Whether an embedded table counts as one SA component or as one per field.
enum class Components : uint8_t { kPerField, kOne };

// The rows of another layout, shifted by base_bit and bound through member M.
template <auto M, const auto& Rows>
constexpr auto embed(uint32_t base_bit, Components c = Components::kPerField) {
  return detail::embed_path<detail::MemberPath<M>, Rows>(base_bit, c == Components::kOne);
}

// The same, for element I of a std::array member.
template <auto M, size_t I, const auto& Rows>
constexpr auto embed_element(uint32_t base_bit, Components c = Components::kPerField) {
  return detail::embed_path<detail::ElementPath<M, I>, Rows>(base_bit, c == Components::kOne);
}

// ---- repeated entries ---------------------------------------------------------------------

// N names with static storage built at compile time ("P_Key[0]" .. "P_Key[31]"); declare
// as a namespace-scope constexpr so the string_views in the rows stay valid.
template <size_t N, size_t Cap = 24>
struct NameList {
  std::array<std::array<char, Cap>, N> text{};
  std::array<size_t, N> size{};
  constexpr std::string_view operator[](size_t i) const { return {text[i].data(), size[i]}; }
};

template <size_t N, size_t Cap = 24>
constexpr NameList<N, Cap> indexed_names(std::string_view prefix, std::string_view suffix = {},
                                         size_t first = 0) {
  NameList<N, Cap> names{};
  for (size_t i = 0; i < N; ++i) {
    std::array<char, 20> digits{};
    size_t nd = 0;
    size_t v = first + i;
    do {
      digits[nd++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    SOFTIB_ASSERT(prefix.size() + nd + suffix.size() <= Cap);
    size_t at = 0;
    for (char c : prefix) names.text[i][at++] = c;
    while (nd > 0) names.text[i][at++] = digits[--nd];
    for (char c : suffix) names.text[i][at++] = c;
    names.size[i] = at;
  }
  return names;
}

// N rows for the N elements of std::array member M, each `width` bits, `stride` bits apart.
template <auto M, size_t N, size_t Cap>
constexpr auto repeat(const NameList<N, Cap>& names, const NameList<N, Cap>& labels,
                      uint32_t base_bit, uint32_t stride, uint32_t width, Printer printer,
                      Components c = Components::kPerField) {
  using Outer = typename detail::MemberPointer<decltype(M)>::Class;
  static_assert(std::tuple_size_v<typename detail::MemberPointer<decltype(M)>::Value> == N);
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::array<Row<Outer>, N>{Row<Outer>{
        wire::Field{names[I], base_bit + static_cast<uint32_t>(I) * stride, width}, labels[I],
        printer, element<M, I>(), Legal{}, c == Components::kOne && I > 0}...};
  }(std::make_index_sequence<N>{});
}

}  // namespace softib::mad
