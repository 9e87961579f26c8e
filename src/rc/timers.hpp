// The transport's timer encodings.
//
// RNR NAK timer (IBA 9.7.5.2.8, table 45): the 5-bit code a responder puts in an RNR NAK
// (the QP's min_rnr_timer) and the time the requester waits before retrying. Code 0 is the
// longest wait, 655.36 ms; codes 1..31 run from 0.01 ms to 491.52 ms.
//
// Local ACK timeout (IBA 9.7.6.1.3, C9-141): 4.096 us * 2^timeout for the QP's 5-bit
// timeout attribute; 0 means the timer is disabled (wait forever).
#pragma once

#include <array>
#include <cstdint>

#include "base/clock.hpp"

namespace softib::rc {

// In units of 10 microseconds.
inline constexpr std::array<uint32_t, 32> kRnrTimerTable10us = {
    65536,                                                   // 0: 655.36 ms
    1,     2,     3,     4,     6,     8,     12,    16,     // 0.01 .. 0.16 ms
    24,    32,    48,    64,    96,    128,   192,   256,    // 0.24 .. 2.56 ms
    384,   512,   768,   1024,  1536,  2048,  3072,  4096,   // 3.84 .. 40.96 ms
    6144,  8192,  12288, 16384, 24576, 32768, 49152,         // 61.44 .. 491.52 ms
};
static_assert(kRnrTimerTable10us[0] == 65536 && kRnrTimerTable10us[1] == 1 && kRnrTimerTable10us[14] == 128 &&
              kRnrTimerTable10us[18] == 512 && kRnrTimerTable10us[31] == 49152);

constexpr Duration rnr_delay(uint8_t code) {
  return std::chrono::microseconds(10) * kRnrTimerTable10us[code & 0x1F];
}

// REQUIRES: timeout != 0 (0 = no timer), timeout < 32.
constexpr Duration local_ack_timeout(uint8_t timeout) {
  return std::chrono::nanoseconds(4096) * (uint64_t{1} << (timeout & 0x1F));
}

}  // namespace softib::rc
