// Strong types for the identifiers of the IBA, so that one cannot be passed for another.
// Formatting follows the project convention: LID decimal, QPN/PSN 0x + 6 hex digits,
// GUID 0x + 16 hex digits, P_Key 0x + 4, keys 0x + 8.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>

#include "base/assert.hpp"

namespace softib {

// A value of Rep that is only comparable with its own kind. kOrdered types also get <, <=, ...
// (LIDs and GUIDs sort naturally; PSNs wrap and must not: see Psn).
template <class Tag, class Rep, bool kOrdered>
class StrongValue {
 public:
  using rep = Rep;
  constexpr StrongValue() = default;
  constexpr explicit StrongValue(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }

  friend constexpr bool operator==(StrongValue a, StrongValue b) { return a.v_ == b.v_; }
  friend constexpr auto operator<=>(StrongValue a, StrongValue b)
    requires kOrdered
  {
    return a.v_ <=> b.v_;
  }

 protected:
  Rep v_{};
};

// Local Identifier, IBA 4.1.3: 0 is reserved, 1..0xBFFF unicast, 0xC000..0xFFFE multicast,
// 0xFFFF permissive.
class Lid : public StrongValue<struct LidTag, uint16_t, true> {
 public:
  using StrongValue::StrongValue;
  static constexpr uint16_t kMaxUnicast = 0xBFFF;
  static constexpr uint16_t kMulticastBase = 0xC000;
  static constexpr Lid permissive() { return Lid(0xFFFF); }
  constexpr bool is_reserved() const { return v_ == 0; }
  constexpr bool is_unicast() const { return v_ >= 1 && v_ <= kMaxUnicast; }
  constexpr bool is_multicast() const { return v_ >= kMulticastBase && v_ < 0xFFFF; }
  constexpr bool is_permissive() const { return v_ == 0xFFFF; }
  std::string to_string() const;  // decimal
};

// Queue Pair Number: 24 bits. QP0 is the SMI, QP1 the GSI; 0xFFFFFF is the multicast QPN.
class Qpn : public StrongValue<struct QpnTag, uint32_t, true> {
 public:
  static constexpr uint32_t kMask = 0xFFFFFF;
  constexpr Qpn() = default;
  // REQUIRES: v <= 0xFFFFFF
  constexpr explicit Qpn(uint32_t v) : StrongValue(v) { SOFTIB_ASSERT(v <= kMask); }
  static constexpr Qpn smi() { return Qpn(0); }
  static constexpr Qpn gsi() { return Qpn(1); }
  static constexpr Qpn multicast() { return Qpn(kMask); }
  std::string to_string() const;  // 0x000011
};

// Packet Sequence Number: 24 bits with wrap-around (IBA 9.7.1). There is deliberately no
// operator<: ordering only makes sense within half the sequence space, so callers use
// distance() or before() and say which window they mean.
class Psn {
 public:
  static constexpr uint32_t kMask = 0xFFFFFF;
  static constexpr uint32_t kHalf = 0x800000;

  constexpr Psn() = default;
  // REQUIRES: v <= 0xFFFFFF (use wrap() to reduce an arbitrary value)
  constexpr explicit Psn(uint32_t v) : v_(v) { SOFTIB_ASSERT(v <= kMask); }
  static constexpr Psn wrap(uint64_t v) { return Psn(static_cast<uint32_t>(v & kMask)); }

  constexpr uint32_t value() const { return v_; }

  [[gnu::always_inline]] constexpr Psn operator+(uint32_t n) const { return wrap(uint64_t{v_} + n); }
  constexpr Psn operator-(uint32_t n) const { return wrap(uint64_t{v_} + kMask + 1 - (n & kMask)); }
  constexpr Psn& operator+=(uint32_t n) { return *this = *this + n; }
  constexpr Psn& operator++() { return *this += 1; }

  // Signed distance in [-2^23, 2^23) such that from + distance(from, to) == to.
  static constexpr int32_t distance(Psn from, Psn to) {
    uint32_t d = (to.v_ - from.v_) & kMask;
    return d >= kHalf ? static_cast<int32_t>(d) - static_cast<int32_t>(kMask + 1)
                      : static_cast<int32_t>(d);
  }
  // True when a comes strictly before b, i.e. b lies in the 2^23 PSNs after a.
  friend constexpr bool before(Psn a, Psn b) { return distance(a, b) > 0; }

  friend constexpr bool operator==(Psn a, Psn b) { return a.v_ == b.v_; }
  std::string to_string() const;  // 0x000123

 private:
  uint32_t v_ = 0;
};

// EUI-64 Globally Unique Identifier (node, port or system image).
class Guid : public StrongValue<struct GuidTag, uint64_t, true> {
 public:
  using StrongValue::StrongValue;
  std::string to_string() const;  // 0x0002c90300001000
};

// Partition Key, IBA 10.9: bit 15 is the membership type (1 = full, 0 = limited).
class PKey : public StrongValue<struct PKeyTag, uint16_t, true> {
 public:
  using StrongValue::StrongValue;
  static constexpr uint16_t kFullMemberBit = 0x8000;
  static constexpr PKey default_full() { return PKey(0xFFFF); }
  static constexpr PKey default_limited() { return PKey(0x7FFF); }

  constexpr bool is_full_member() const { return (v_ & kFullMemberBit) != 0; }
  constexpr uint16_t base() const { return v_ & 0x7FFF; }
  // 0x0000 and 0x8000 are invalid P_Keys (IBA 10.9.1.2).
  constexpr bool is_valid() const { return base() != 0; }
  constexpr PKey as_full() const { return PKey(static_cast<uint16_t>(v_ | kFullMemberBit)); }
  constexpr PKey as_limited() const { return PKey(base()); }
  std::string to_string() const;  // 0xffff
};

// IBA 10.9.3: two P_Keys match when both are valid, their bases are equal and at least one
// of them is a full member (two limited members cannot talk).
constexpr bool pkey_match(PKey a, PKey b) {
  return a.is_valid() && b.is_valid() && a.base() == b.base() &&
         (a.is_full_member() || b.is_full_member());
}

// Queue Key, IBA 10.2.4; keys with the high bit set are controlled (privileged).
class QKey : public StrongValue<struct QKeyTag, uint32_t, false> {
 public:
  using StrongValue::StrongValue;
  static constexpr uint32_t kControlledBit = 0x80000000;
  constexpr bool is_controlled() const { return (v_ & kControlledBit) != 0; }
  std::string to_string() const;
};

// Memory keys, IBA 10.6: the low 8 bits are the consumer-owned key, the rest the index.
class LKey : public StrongValue<struct LKeyTag, uint32_t, false> {
 public:
  using StrongValue::StrongValue;
  constexpr uint32_t index() const { return v_ >> 8; }
  constexpr uint8_t key() const { return static_cast<uint8_t>(v_); }
  std::string to_string() const;
};

class RKey : public StrongValue<struct RKeyTag, uint32_t, false> {
 public:
  using StrongValue::StrongValue;
  constexpr uint32_t index() const { return v_ >> 8; }
  constexpr uint8_t key() const { return static_cast<uint8_t>(v_); }
  std::string to_string() const;
};

}  // namespace softib

// Hashing for unordered containers.
template <class Tag, class Rep, bool kOrdered>
struct std::hash<softib::StrongValue<Tag, Rep, kOrdered>> {
  size_t operator()(softib::StrongValue<Tag, Rep, kOrdered> v) const noexcept {
    return std::hash<Rep>{}(v.value());
  }
};
template <> struct std::hash<softib::Lid> : std::hash<softib::Lid::StrongValue> {};
template <> struct std::hash<softib::Qpn> : std::hash<softib::Qpn::StrongValue> {};
template <> struct std::hash<softib::Guid> : std::hash<softib::Guid::StrongValue> {};
template <> struct std::hash<softib::PKey> : std::hash<softib::PKey::StrongValue> {};
template <> struct std::hash<softib::Psn> {
  size_t operator()(softib::Psn v) const noexcept { return std::hash<uint32_t>{}(v.value()); }
};
