// Status: the error side of Result<T> (a default-constructed Status is Ok). The outcome of an operation that can fail for reasons outside softib's control
// (API misuse, resources, peers). Carries a code that maps to the errno the real libraries
// return, and a human-readable message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace softib {

enum class Code : uint8_t {
  kOk,
  kInvalidArgument,    // EINVAL
  kOutOfRange,         // ERANGE
  kNotFound,           // ENOENT
  kAlreadyExists,      // EEXIST
  kParseError,         // EBADMSG: malformed input (files, packets, MADs)
  kUnsupported,        // EOPNOTSUPP
  kPermissionDenied,   // EACCES
  kResourceExhausted,  // ENOMEM
  kWouldBlock,         // EAGAIN: backpressure, a distinct status and not an error
  kTimeout,            // ETIMEDOUT
  kUnavailable,        // ECONNREFUSED: the peer or daemon is not there
  kBusy,               // EBUSY: the object is in use
  kInternal,           // EIO
};

std::string_view to_string(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : code_(code), message_(message.empty() ? nullptr : std::make_shared<const std::string>(std::move(message))) {}

  // A Status for a failed system call: maps errno to the nearest Code and keeps the errno.
  static Status from_errno(int err, std::string_view context);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : empty_message(); }
  // The errno a C API returns for this status (0 when ok).
  int to_errno() const;
  // "InvalidArgument: qp is not in RTS"
  std::string to_string() const;

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_; }

 private:
  static const std::string& empty_message();

  Code code_ = Code::kOk;
  int errno_ = 0;  // set only by from_errno
  // Null when there is none (every ok Status): an ok Status is built, returned and destroyed
  // on every post and poll, and a std::string member made that cost more than the checks.
  std::shared_ptr<const std::string> message_;
};

}  // namespace softib
