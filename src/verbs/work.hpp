// Work requests and work completions (IBA 10.8, 11.4; libibverbs' ibv_send_wr, ibv_recv_wr,
// ibv_sge, ibv_wc). Enumerator and flag values are libibverbs' own so the drop-in library
// converts by value.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "base/ids.hpp"
#include "packet/wr_opcode.hpp"

namespace softib::verbs {

using packet::WrOpcode;

class Ah;

// struct ibv_sge.
struct Sge {
  uint64_t addr = 0;
  uint32_t length = 0;
  LKey lkey{};
};

// enum ibv_send_flags.
namespace send_flag {
inline constexpr uint32_t kFence = 1u << 0;
inline constexpr uint32_t kSignaled = 1u << 1;
inline constexpr uint32_t kSolicited = 1u << 2;
inline constexpr uint32_t kInline = 1u << 3;
inline constexpr uint32_t kIpCsum = 1u << 4;
}  // namespace send_flag

// struct ibv_send_wr without the chaining pointer: a post takes a span of these.
struct SendWr {
  uint64_t wr_id = 0;
  std::span<const Sge> sg_list;
  WrOpcode opcode = WrOpcode::kSend;
  uint32_t send_flags = 0;
  uint32_t imm_data = 0;  // as the consumer gave it (libibverbs: network order); carried verbatim
  struct {
    uint64_t remote_addr = 0;
    RKey rkey{};
  } rdma;
  struct {
    uint64_t remote_addr = 0;
    uint64_t compare_add = 0;
    uint64_t swap = 0;
    RKey rkey{};
  } atomic;
  struct {
    const Ah* ah = nullptr;
    Qpn remote_qpn{};
    QKey remote_qkey{};
  } ud;
};

// struct ibv_recv_wr without the chaining pointer.
struct RecvWr {
  uint64_t wr_id = 0;
  std::span<const Sge> sg_list;
};

// enum ibv_wc_status.
enum class WcStatus : uint8_t {
  kSuccess = 0,
  kLocLenErr = 1,
  kLocQpOpErr = 2,
  kLocEecOpErr = 3,
  kLocProtErr = 4,
  kWrFlushErr = 5,
  kMwBindErr = 6,
  kBadRespErr = 7,
  kLocAccessErr = 8,
  kRemInvReqErr = 9,
  kRemAccessErr = 10,
  kRemOpErr = 11,
  kRetryExcErr = 12,
  kRnrRetryExcErr = 13,
  kLocRddViolErr = 14,
  kRemInvRdReqErr = 15,
  kRemAbortErr = 16,
  kInvEecnErr = 17,
  kInvEecStateErr = 18,
  kFatalErr = 19,
  kRespTimeoutErr = 20,
  kGeneralErr = 21,
  kTmErr = 22,              // tag matching: softib reports neither
  kTmRndvIncomplete = 23,
};
// ibv_wc_status_str()'s wording: "success", "local length error", ... Each view is of a string
// literal, so .data() is NUL-terminated (the drop-in libibverbs returns it as a C string).
std::string_view to_string(WcStatus s);

// enum ibv_wc_opcode.
enum class WcOpcode : uint8_t {
  kSend = 0,
  kRdmaWrite = 1,
  kRdmaRead = 2,
  kCompSwap = 3,
  kFetchAdd = 4,
  kBindMw = 5,
  kLocalInv = 6,
  kRecv = 128,
  kRecvRdmaWithImm = 129,
};
std::string_view to_string(WcOpcode op);

// The completion opcode of a send-queue WR.
constexpr WcOpcode wc_opcode_of(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteWithImm: return WcOpcode::kRdmaWrite;
    case WrOpcode::kSend:
    case WrOpcode::kSendWithImm:
    case WrOpcode::kSendWithInv: return WcOpcode::kSend;
    case WrOpcode::kRdmaRead: return WcOpcode::kRdmaRead;
    case WrOpcode::kAtomicCmpAndSwp: return WcOpcode::kCompSwap;
    case WrOpcode::kAtomicFetchAndAdd: return WcOpcode::kFetchAdd;
    case WrOpcode::kLocalInv: return WcOpcode::kLocalInv;
    case WrOpcode::kBindMw: return WcOpcode::kBindMw;
  }
  return WcOpcode::kSend;
}

// enum ibv_wc_flags.
namespace wc_flag {
inline constexpr uint32_t kGrh = 1u << 0;
inline constexpr uint32_t kWithImm = 1u << 1;
inline constexpr uint32_t kIpCsumOk = 1u << 2;
inline constexpr uint32_t kWithInv = 1u << 3;
}  // namespace wc_flag

// struct ibv_wc.
struct WorkCompletion {
  uint64_t wr_id = 0;
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kSend;
  uint32_t vendor_err = 0;
  uint32_t byte_len = 0;
  uint32_t imm_data = 0;  // or the invalidated rkey (WITH_INV)
  Qpn qp_num{};
  Qpn src_qp{};
  uint32_t wc_flags = 0;
  uint16_t pkey_index = 0;
  Lid slid{};
  uint8_t sl = 0;
  uint8_t dlid_path_bits = 0;
  uint64_t timestamp_ns = 0;  // when the CQ took it (Cq::enable_timestamps), else 0
};

}  // namespace softib::verbs
