#include "mad/port_state.hpp"

namespace softib::mad {

std::string_view to_string(PortState s) {
  switch (s) {
    case PortState::kNoChange: return "NoChange";
    case PortState::kDown: return "Down";
    case PortState::kInitialize: return "Initialize";
    case PortState::kArmed: return "Armed";
    case PortState::kActive: return "Active";
  }
  return "";
}

std::string_view to_string(PhysPortState s) {
  switch (s) {
    case PhysPortState::kNoChange: return "NoChange";
    case PhysPortState::kSleep: return "Sleep";
    case PhysPortState::kPolling: return "Polling";
    case PhysPortState::kDisabled: return "Disabled";
    case PhysPortState::kPortConfigurationTraining: return "PortConfigurationTraining";
    case PhysPortState::kLinkUp: return "LinkUp";
    case PhysPortState::kLinkErrorRecovery: return "LinkErrorRecovery";
    case PhysPortState::kPhyTest: return "PhyTest";
  }
  return "";
}

}  // namespace softib::mad
