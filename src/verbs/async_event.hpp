// Asynchronous events (IBA 11.6.3; libibverbs' enum ibv_event_type, same values).
#pragma once

#include <cstdint>
#include <string_view>

namespace softib::verbs {

enum class AsyncEventType : uint8_t {
  kCqErr = 0,
  kQpFatal = 1,
  kQpReqErr = 2,
  kQpAccessErr = 3,
  kCommEst = 4,
  kSqDrained = 5,
  kPathMig = 6,
  kPathMigErr = 7,
  kDeviceFatal = 8,
  kPortActive = 9,
  kPortErr = 10,
  kLidChange = 11,
  kPkeyChange = 12,
  kSmChange = 13,
  kSrqErr = 14,
  kSrqLimitReached = 15,
  kQpLastWqeReached = 16,
  kClientReregister = 17,
  kGidChange = 18,
  kWqFatal = 19,
};
// ibv_event_type_str()'s wording (a view of a string literal: .data() is NUL-terminated).
std::string_view to_string(AsyncEventType t);

}  // namespace softib::verbs
