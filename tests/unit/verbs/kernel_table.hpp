// A hand copy of the Linux kernel's qp_state_table (drivers/infiniband/core/verbs.c), in the
// kernel's own spelling, RC/UC/UD columns only, kept apart from src/verbs so that the tests
// check the transition table against the kernel rather than against itself. Every valid cell
// is listed for each of the three types, also when its masks are empty.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace softib::verbs::testing {

struct KernelCell {
  const char* cur;
  const char* next;
  const char* type;
  const char* req_param;  // "" = none
  const char* opt_param;
};

// clang-format off
inline const std::vector<KernelCell> kKernelTable = {
  {"IB_QPS_RESET", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_RESET", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_RESET", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_RESET", "IB_QPS_INIT", "IB_QPT_UD", "IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY", ""},
  {"IB_QPS_RESET", "IB_QPS_INIT", "IB_QPT_UC", "IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS", ""},
  {"IB_QPS_RESET", "IB_QPS_INIT", "IB_QPT_RC", "IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS", ""},

  {"IB_QPS_INIT", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_INIT", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_INIT", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_INIT", "IB_QPS_ERR", "IB_QPT_RC", "", ""},
  {"IB_QPS_INIT", "IB_QPS_ERR", "IB_QPT_UC", "", ""},
  {"IB_QPS_INIT", "IB_QPS_ERR", "IB_QPT_UD", "", ""},
  {"IB_QPS_INIT", "IB_QPS_INIT", "IB_QPT_UD", "", "IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY"},
  {"IB_QPS_INIT", "IB_QPS_INIT", "IB_QPT_UC", "", "IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS"},
  {"IB_QPS_INIT", "IB_QPS_INIT", "IB_QPT_RC", "", "IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS"},
  {"IB_QPS_INIT", "IB_QPS_RTR", "IB_QPT_UC",
   "IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN",
   "IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX"},
  {"IB_QPS_INIT", "IB_QPS_RTR", "IB_QPT_RC",
   "IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER",
   "IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX"},
  {"IB_QPS_INIT", "IB_QPS_RTR", "IB_QPT_UD", "", "IB_QP_PKEY_INDEX | IB_QP_QKEY"},

  {"IB_QPS_RTR", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_RTR", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_RTR", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_RTR", "IB_QPS_ERR", "IB_QPT_RC", "", ""},
  {"IB_QPS_RTR", "IB_QPS_ERR", "IB_QPT_UC", "", ""},
  {"IB_QPS_RTR", "IB_QPS_ERR", "IB_QPT_UD", "", ""},
  {"IB_QPS_RTR", "IB_QPS_RTS", "IB_QPT_UD", "IB_QP_SQ_PSN", "IB_QP_CUR_STATE | IB_QP_QKEY"},
  {"IB_QPS_RTR", "IB_QPS_RTS", "IB_QPT_UC", "IB_QP_SQ_PSN",
   "IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PATH_MIG_STATE"},
  {"IB_QPS_RTR", "IB_QPS_RTS", "IB_QPT_RC",
   "IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC",
   "IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE"},

  {"IB_QPS_RTS", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_RTS", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_RTS", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_RTS", "IB_QPS_ERR", "IB_QPT_RC", "", ""},
  {"IB_QPS_RTS", "IB_QPS_ERR", "IB_QPT_UC", "", ""},
  {"IB_QPS_RTS", "IB_QPS_ERR", "IB_QPT_UD", "", ""},
  {"IB_QPS_RTS", "IB_QPS_RTS", "IB_QPT_UD", "", "IB_QP_CUR_STATE | IB_QP_QKEY"},
  {"IB_QPS_RTS", "IB_QPS_RTS", "IB_QPT_UC", "",
   "IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE"},
  {"IB_QPS_RTS", "IB_QPS_RTS", "IB_QPT_RC", "",
   "IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_MIN_RNR_TIMER"},
  {"IB_QPS_RTS", "IB_QPS_SQD", "IB_QPT_UD", "", "IB_QP_EN_SQD_ASYNC_NOTIFY"},
  {"IB_QPS_RTS", "IB_QPS_SQD", "IB_QPT_UC", "", "IB_QP_EN_SQD_ASYNC_NOTIFY"},
  {"IB_QPS_RTS", "IB_QPS_SQD", "IB_QPT_RC", "", "IB_QP_EN_SQD_ASYNC_NOTIFY"},

  {"IB_QPS_SQD", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_SQD", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_SQD", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_SQD", "IB_QPS_ERR", "IB_QPT_RC", "", ""},
  {"IB_QPS_SQD", "IB_QPS_ERR", "IB_QPT_UC", "", ""},
  {"IB_QPS_SQD", "IB_QPS_ERR", "IB_QPT_UD", "", ""},
  {"IB_QPS_SQD", "IB_QPS_RTS", "IB_QPT_UD", "", "IB_QP_CUR_STATE | IB_QP_QKEY"},
  {"IB_QPS_SQD", "IB_QPS_RTS", "IB_QPT_UC", "",
   "IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PATH_MIG_STATE"},
  {"IB_QPS_SQD", "IB_QPS_RTS", "IB_QPT_RC", "",
   "IB_QP_CUR_STATE | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_MIN_RNR_TIMER | IB_QP_PATH_MIG_STATE"},
  {"IB_QPS_SQD", "IB_QPS_SQD", "IB_QPT_UD", "", "IB_QP_PKEY_INDEX | IB_QP_QKEY"},
  {"IB_QPS_SQD", "IB_QPS_SQD", "IB_QPT_UC", "",
   "IB_QP_AV | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PATH_MIG_STATE"},
  {"IB_QPS_SQD", "IB_QPS_SQD", "IB_QPT_RC", "",
   "IB_QP_PORT | IB_QP_AV | IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC | "
   "IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_ALT_PATH | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_MIN_RNR_TIMER | "
   "IB_QP_PATH_MIG_STATE"},

  {"IB_QPS_SQE", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_SQE", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_SQE", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_SQE", "IB_QPS_ERR", "IB_QPT_RC", "", ""},
  {"IB_QPS_SQE", "IB_QPS_ERR", "IB_QPT_UC", "", ""},
  {"IB_QPS_SQE", "IB_QPS_ERR", "IB_QPT_UD", "", ""},
  {"IB_QPS_SQE", "IB_QPS_RTS", "IB_QPT_UD", "", "IB_QP_CUR_STATE | IB_QP_QKEY"},
  {"IB_QPS_SQE", "IB_QPS_RTS", "IB_QPT_UC", "", "IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS"},
  {"IB_QPS_SQE", "IB_QPS_RTS", "IB_QPT_RC", "", ""},  // the kernel lists no RC masks here

  {"IB_QPS_ERR", "IB_QPS_RESET", "IB_QPT_RC", "", ""},
  {"IB_QPS_ERR", "IB_QPS_RESET", "IB_QPT_UC", "", ""},
  {"IB_QPS_ERR", "IB_QPS_RESET", "IB_QPT_UD", "", ""},
  {"IB_QPS_ERR", "IB_QPS_ERR", "IB_QPT_RC", "", ""},
  {"IB_QPS_ERR", "IB_QPS_ERR", "IB_QPT_UC", "", ""},
  {"IB_QPS_ERR", "IB_QPS_ERR", "IB_QPT_UD", "", ""},
};
// clang-format on

// enum ib_qp_state (include/rdma/ib_verbs.h), the same values as enum ibv_qp_state.
inline int kernel_state(const std::string& name) {
  static const std::map<std::string, int> kStates = {
      {"IB_QPS_RESET", 0}, {"IB_QPS_INIT", 1}, {"IB_QPS_RTR", 2}, {"IB_QPS_RTS", 3},
      {"IB_QPS_SQD", 4},   {"IB_QPS_SQE", 5},  {"IB_QPS_ERR", 6},
  };
  return kStates.at(name);
}

// enum ib_qp_attr_mask (include/rdma/ib_verbs.h), the same values as enum ibv_qp_attr_mask.
inline const std::map<std::string, uint32_t>& kernel_mask_bits() {
  static const std::map<std::string, uint32_t> kBits = {
      {"IB_QP_STATE", 1}, {"IB_QP_CUR_STATE", 1u << 1}, {"IB_QP_EN_SQD_ASYNC_NOTIFY", 1u << 2},
      {"IB_QP_ACCESS_FLAGS", 1u << 3}, {"IB_QP_PKEY_INDEX", 1u << 4}, {"IB_QP_PORT", 1u << 5},
      {"IB_QP_QKEY", 1u << 6}, {"IB_QP_AV", 1u << 7}, {"IB_QP_PATH_MTU", 1u << 8},
      {"IB_QP_TIMEOUT", 1u << 9}, {"IB_QP_RETRY_CNT", 1u << 10}, {"IB_QP_RNR_RETRY", 1u << 11},
      {"IB_QP_RQ_PSN", 1u << 12}, {"IB_QP_MAX_QP_RD_ATOMIC", 1u << 13}, {"IB_QP_ALT_PATH", 1u << 14},
      {"IB_QP_MIN_RNR_TIMER", 1u << 15}, {"IB_QP_SQ_PSN", 1u << 16}, {"IB_QP_MAX_DEST_RD_ATOMIC", 1u << 17},
      {"IB_QP_PATH_MIG_STATE", 1u << 18}, {"IB_QP_CAP", 1u << 19}, {"IB_QP_DEST_QPN", 1u << 20},
      {"IB_QP_RATE_LIMIT", 1u << 25},
  };
  return kBits;
}

// "IB_QP_AV | IB_QP_PORT" -> the mask.
inline uint32_t kernel_mask(const std::string& text) {
  uint32_t mask = 0;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    if (word == "|") continue;
    const auto it = kernel_mask_bits().find(word);
    if (it == kernel_mask_bits().end()) throw std::invalid_argument("unknown mask bit " + word);
    mask |= it->second;
  }
  return mask;
}

}  // namespace softib::verbs::testing
