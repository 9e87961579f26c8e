#include <array>

#include "verbs/async_event.hpp"
#include "verbs/work.hpp"

namespace softib::verbs {

// libibverbs' enum_strs.c wording, so tools print what rdma-core's print.
std::string_view to_string(WcStatus s) {
  static constexpr std::array<std::string_view, 24> kNames = {
      "success",
      "local length error",
      "local QP operation error",
      "local EE context operation error",
      "local protection error",
      "Work Request Flushed Error",
      "memory management operation error",
      "bad response error",
      "local access error",
      "remote invalid request error",
      "remote access error",
      "remote operation error",
      "transport retry counter exceeded",
      "RNR retry counter exceeded",
      "local RDD violation error",
      "remote invalid RD request",
      "aborted error",
      "invalid EE context number",
      "invalid EE context state",
      "fatal error",
      "response timeout error",
      "general error",
      "TM error",
      "TM software rendezvous",
  };
  const auto i = static_cast<size_t>(s);
  return i < kNames.size() ? kNames[i] : "unknown";
}

std::string_view to_string(WcOpcode op) {
  switch (op) {
    case WcOpcode::kSend: return "SEND";
    case WcOpcode::kRdmaWrite: return "RDMA_WRITE";
    case WcOpcode::kRdmaRead: return "RDMA_READ";
    case WcOpcode::kCompSwap: return "COMP_SWAP";
    case WcOpcode::kFetchAdd: return "FETCH_ADD";
    case WcOpcode::kBindMw: return "BIND_MW";
    case WcOpcode::kLocalInv: return "LOCAL_INV";
    case WcOpcode::kRecv: return "RECV";
    case WcOpcode::kRecvRdmaWithImm: return "RECV_RDMA_WITH_IMM";
  }
  return "unknown";
}

std::string_view to_string(AsyncEventType t) {
  static constexpr std::array<std::string_view, 20> kNames = {
      "CQ error",
      "local work queue catastrophic error",
      "invalid request local work queue error",
      "local access violation work queue error",
      "communication established",
      "send queue drained",
      "path migrated",
      "path migration request error",
      "local catastrophic error",
      "port active",
      "port error",
      "LID change",
      "P_Key change",
      "SM change",
      "SRQ catastrophic error",
      "SRQ limit reached",
      "last WQE reached",
      "client reregistration",
      "GID table change",
      "WQ fatal",
  };
  const auto i = static_cast<size_t>(t);
  return i < kNames.size() ? kNames[i] : "unknown";
}

}  // namespace softib::verbs
