// The Status field of the common MAD header, IBA 13.4.7 table 112: bit 0 busy, bit 1
// redirect required, bits 2-4 the invalid-field code, bits 8-15 class specific (the SA's
// codes are SaStatus, IBA 15.2.1.1). A DR SMP keeps the D bit in bit 15 and a 15-bit status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace softib::mad {

enum class InvalidField : uint8_t {
  kNone = 0,
  kBadVersion = 1,                  // base or class version not supported
  kMethodUnsupported = 2,           // the method is not supported
  kMethodAttributeUnsupported = 3,  // the method/attribute combination is not supported
  kInvalidAttributeValue = 7,       // a field of the attribute or modifier is invalid
};

std::string_view to_string(InvalidField f);

// SA class-specific status, IBA 15.2.1.1 (Status bits 8-15 of a SubnAdm MAD).
enum class SaStatus : uint8_t {
  kOk = 0,
  kNoResources = 1,            // ERR_NO_RESOURCES
  kReqInvalid = 2,             // ERR_REQ_INVALID
  kNoRecords = 3,              // ERR_NO_RECORDS
  kTooManyRecords = 4,         // ERR_TOO_MANY_RECORDS
  kReqInvalidGid = 5,          // ERR_REQ_INVALID_GID
  kReqInsufficientComponents = 6,  // ERR_REQ_INSUFFICIENT_COMPONENTS
  kReqDenied = 7,              // ERR_REQ_DENIED
};

std::string_view to_string(SaStatus s);  // "ERR_NO_RECORDS"

class MadStatus {
 public:
  static constexpr uint16_t kBusy = 0x0001;
  static constexpr uint16_t kRedirect = 0x0002;
  static constexpr uint16_t kInvalidFieldMask = 0x001C;
  static constexpr uint16_t kReservedMask = 0x00E0;

  constexpr MadStatus() = default;
  constexpr explicit MadStatus(uint16_t v) : v_(v) {}
  static constexpr MadStatus from(InvalidField f) {
    return MadStatus(static_cast<uint16_t>(static_cast<uint16_t>(f) << 2));
  }
  static constexpr MadStatus from(SaStatus s) {
    return MadStatus(static_cast<uint16_t>(static_cast<uint16_t>(s) << 8));
  }

  constexpr uint16_t value() const { return v_; }
  constexpr bool ok() const { return v_ == 0; }
  constexpr bool busy() const { return (v_ & kBusy) != 0; }
  constexpr bool redirect() const { return (v_ & kRedirect) != 0; }
  constexpr InvalidField invalid_field() const {
    return static_cast<InvalidField>((v_ & kInvalidFieldMask) >> 2);
  }
  constexpr uint8_t class_specific() const { return static_cast<uint8_t>(v_ >> 8); }

  constexpr MadStatus with(InvalidField f) const {
    return MadStatus(static_cast<uint16_t>((v_ & ~kInvalidFieldMask) | from(f).v_));
  }
  constexpr MadStatus with_busy() const { return MadStatus(static_cast<uint16_t>(v_ | kBusy)); }
  constexpr MadStatus with_redirect() const {
    return MadStatus(static_cast<uint16_t>(v_ | kRedirect));
  }
  constexpr MadStatus with_class_specific(uint8_t c) const {
    return MadStatus(static_cast<uint16_t>((v_ & 0x00FF) | c << 8));
  }

  // "Ok", or the parts joined by ", ": "Busy, MethodAttributeUnsupported, class 0x03".
  std::string to_string() const;

  friend constexpr bool operator==(MadStatus a, MadStatus b) { return a.v_ == b.v_; }

 private:
  uint16_t v_ = 0;
};

}  // namespace softib::mad
