#include "verbs/qp_attr.hpp"

namespace softib::verbs {

// The names libibverbs' ibv_qp_state_str() would suggest and the kernel's rxe uses in its
// debug output (qps2str[]): IBV_QPS_ without the prefix, ERR for the error state.
std::string_view to_string(QpState s) {
  switch (s) {
    case QpState::kReset: return "RESET";
    case QpState::kInit: return "INIT";
    case QpState::kRtr: return "RTR";
    case QpState::kRts: return "RTS";
    case QpState::kSqd: return "SQD";
    case QpState::kSqe: return "SQE";
    case QpState::kError: return "ERR";
  }
  return "INVALID";
}

}  // namespace softib::verbs
