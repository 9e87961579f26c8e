#include "base/status.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace softib {

std::string_view to_string(Code code) {
  switch (code) {
    case Code::kOk: return "Ok";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kOutOfRange: return "OutOfRange";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kParseError: return "ParseError";
    case Code::kUnsupported: return "Unsupported";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kResourceExhausted: return "ResourceExhausted";
    case Code::kWouldBlock: return "WouldBlock";
    case Code::kTimeout: return "Timeout";
    case Code::kUnavailable: return "Unavailable";
    case Code::kBusy: return "Busy";
    case Code::kInternal: return "Internal";
  }
  return "Unknown";
}

namespace {

Code code_for_errno(int err) {
  switch (err) {
    case 0: return Code::kOk;
    case EINVAL: return Code::kInvalidArgument;
    case ERANGE: case EOVERFLOW: return Code::kOutOfRange;
    case ENOENT: case ESRCH: return Code::kNotFound;
    case EEXIST: case EADDRINUSE: return Code::kAlreadyExists;
    case EBADMSG: case EPROTO: return Code::kParseError;
    case EOPNOTSUPP: case ENOSYS: return Code::kUnsupported;
    case EACCES: case EPERM: return Code::kPermissionDenied;
    case ENOMEM: case ENOSPC: case EMFILE: case ENFILE: return Code::kResourceExhausted;
    case EAGAIN: return Code::kWouldBlock;
    case ETIMEDOUT: return Code::kTimeout;
    case ECONNREFUSED: case ECONNRESET: case EPIPE: case ENOTCONN: return Code::kUnavailable;
    case EBUSY: return Code::kBusy;
    default: return Code::kInternal;
  }
}

}  // namespace

Status Status::from_errno(int err, std::string_view context) {
  Status s(code_for_errno(err), fmt::format("{}: {}", context, std::strerror(err)));
  s.errno_ = err;
  return s;
}

int Status::to_errno() const {
  if (errno_ != 0) return errno_;
  switch (code_) {
    case Code::kOk: return 0;
    case Code::kInvalidArgument: return EINVAL;
    case Code::kOutOfRange: return ERANGE;
    case Code::kNotFound: return ENOENT;
    case Code::kAlreadyExists: return EEXIST;
    case Code::kParseError: return EBADMSG;
    case Code::kUnsupported: return EOPNOTSUPP;
    case Code::kPermissionDenied: return EACCES;
    case Code::kResourceExhausted: return ENOMEM;
    case Code::kWouldBlock: return EAGAIN;
    case Code::kTimeout: return ETIMEDOUT;
    case Code::kUnavailable: return ECONNREFUSED;
    case Code::kBusy: return EBUSY;
    case Code::kInternal: return EIO;
  }
  return EIO;
}

std::string Status::to_string() const {
  if (!message_) return std::string(softib::to_string(code_));
  return fmt::format("{}: {}", softib::to_string(code_), *message_);
}

const std::string& Status::empty_message() {
  static const auto* empty = new std::string();  // never destroyed: threads may outlive static destructors
  return *empty;
}

}  // namespace softib
