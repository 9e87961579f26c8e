#include "mad/sm_info.hpp"

namespace softib::mad {

std::string_view to_string(SmState s) {
  switch (s) {
    case SmState::kNotActive: return "NotActive";
    case SmState::kDiscovering: return "Discovering";
    case SmState::kStandby: return "Standby";
    case SmState::kMaster: return "Master";
  }
  return "";
}

}  // namespace softib::mad
