#include "mad/mad_status.hpp"

#include <fmt/format.h>

namespace softib::mad {

std::string_view to_string(InvalidField f) {
  switch (f) {
    case InvalidField::kNone: return "None";
    case InvalidField::kBadVersion: return "BadVersion";
    case InvalidField::kMethodUnsupported: return "MethodUnsupported";
    case InvalidField::kMethodAttributeUnsupported: return "MethodAttributeUnsupported";
    case InvalidField::kInvalidAttributeValue: return "InvalidAttributeValue";
  }
  return "ReservedInvalidFieldCode";
}

std::string_view to_string(SaStatus s) {
  switch (s) {
    case SaStatus::kOk: return "OK";
    case SaStatus::kNoResources: return "ERR_NO_RESOURCES";
    case SaStatus::kReqInvalid: return "ERR_REQ_INVALID";
    case SaStatus::kNoRecords: return "ERR_NO_RECORDS";
    case SaStatus::kTooManyRecords: return "ERR_TOO_MANY_RECORDS";
    case SaStatus::kReqInvalidGid: return "ERR_REQ_INVALID_GID";
    case SaStatus::kReqInsufficientComponents: return "ERR_REQ_INSUFFICIENT_COMPONENTS";
    case SaStatus::kReqDenied: return "ERR_REQ_DENIED";
  }
  return "ERR_UNKNOWN";
}

std::string MadStatus::to_string() const {
  if (ok()) return "Ok";
  std::string s;
  auto add = [&s](std::string_view part) {
    if (!s.empty()) s += ", ";
    s += part;
  };
  if (busy()) add("Busy");
  if (redirect()) add("Redirect");
  if (invalid_field() != InvalidField::kNone) add(mad::to_string(invalid_field()));
  if ((v_ & kReservedMask) != 0) add(fmt::format("reserved {:#04x}", v_ & kReservedMask));
  if (class_specific() != 0) add(fmt::format("class {:#04x}", class_specific()));
  return s;
}

}  // namespace softib::mad
