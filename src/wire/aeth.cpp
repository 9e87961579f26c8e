#include "wire/aeth.hpp"

namespace softib::wire {

std::string_view to_string(AethKind kind) {
  switch (kind) {
    case AethKind::kAck: return "ACK";
    case AethKind::kRnrNak: return "RNR NAK";
    case AethKind::kNak: return "NAK";
  }
  return "reserved";
}

std::string_view to_string(NakCode code) {
  switch (code) {
    case NakCode::kPsnSequenceError: return "PSN Sequence Error";
    case NakCode::kInvalidRequest: return "Invalid Request";
    case NakCode::kRemoteAccessError: return "Remote Access Error";
    case NakCode::kRemoteOperationalError: return "Remote Operational Error";
    case NakCode::kInvalidRdRequest: return "Invalid RD Request";
  }
  return "reserved";
}

}  // namespace softib::wire
