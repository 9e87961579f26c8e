// Port states of PortInfo, IBA 14.2.5.6: the logical PortState (IBA 7.2) and the
// PortPhysicalState of the link training state machine (IBA 5.6.2).
#pragma once

#include <cstdint>
#include <string_view>

namespace softib::mad {

enum class PortState : uint8_t {
  kNoChange = 0,  // in a Set: leave the state alone
  kDown = 1,
  kInitialize = 2,
  kArmed = 3,
  kActive = 4,
};

enum class PhysPortState : uint8_t {
  kNoChange = 0,
  kSleep = 1,
  kPolling = 2,
  kDisabled = 3,
  kPortConfigurationTraining = 4,
  kLinkUp = 5,
  kLinkErrorRecovery = 6,
  kPhyTest = 7,
};

std::string_view to_string(PortState s);      // "Active"; "" for reserved values
std::string_view to_string(PhysPortState s);  // "LinkUp"

}  // namespace softib::mad
