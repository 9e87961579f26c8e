// Brings an RC QP of an rc::Device from Reset to RTS towards its peer: the ibv_rc_pingpong
// sequence (INIT, RTR, RTS) with the attribute masks libibverbs requires, for tests, fuzz
// targets and benchmarks that drive a Device directly. Returns the first failure.
// REQUIRES: the caller holds what the Device needs for modify_qp (its lock, if an engine runs).
#pragma once

#include <cstdint>

#include "base/status.hpp"
#include "rc/device.hpp"
#include "verbs/qp_attr.hpp"

namespace softib::test {

// A port with `lid` and nothing else set: what a Device driven directly needs.
inline rc::PortAttr port_with_lid(Lid lid) {
  rc::PortAttr p;
  p.lid = lid;
  return p;
}

struct RcPath {
  Qpn dest_qp{};
  Lid dlid{};
  verbs::Mtu mtu = verbs::Mtu::k1024;
  uint32_t access = verbs::access::kRemoteWrite | verbs::access::kRemoteRead | verbs::access::kRemoteAtomic;
  uint8_t rd_atomic = 4;  // max_rd_atomic and max_dest_rd_atomic
  uint8_t timeout = 14;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;
};

inline Status connect_rc(rc::Device& device, rc::Qp* qp, const RcPath& p) {
  using namespace verbs;
  QpAttr a;
  a.qp_state = QpState::kInit;
  a.port_num = 1;
  a.qp_access_flags = p.access;
  if (Status s = device.modify_qp(qp, a, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags); !s.ok())
    return s;
  a = {};
  a.qp_state = QpState::kRtr;
  a.path_mtu = p.mtu;
  a.dest_qp_num = p.dest_qp;
  a.ah_attr.dlid = p.dlid;
  a.ah_attr.port_num = 1;
  a.max_dest_rd_atomic = p.rd_atomic;
  a.min_rnr_timer = p.min_rnr_timer;
  if (Status s = device.modify_qp(qp, a, attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                                             attr::kMaxDestRdAtomic | attr::kMinRnrTimer);
      !s.ok())
    return s;
  a = {};
  a.qp_state = QpState::kRts;
  a.timeout = p.timeout;
  a.retry_cnt = p.retry_cnt;
  a.rnr_retry = p.rnr_retry;
  a.max_rd_atomic = p.rd_atomic;
  return device.modify_qp(qp, a, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry |
                                     attr::kMaxQpRdAtomic);
}

}  // namespace softib::test
