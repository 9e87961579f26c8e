// The drop-in libibverbs.so.1 through libibverbs' own C API (verbs_api_test.cpp says what the
// tests cover): one private fabric for the whole binary (Env, registered once, in
// verbs_api_test.cpp), and a fixture with a context on its first device, a PD, and RC QPs
// connected on the same port.
#pragma once

#include <infiniband/verbs.h>
#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <gtest/gtest.h>

#include "support/softibd_process.hpp"

namespace softib::verbs_api_test {

using softib::testing::SoftibdProcess;

// The next asynchronous event within `ms` (the async fd is pollable), acknowledged.
inline bool next_async_event(ibv_context* ctx, ibv_async_event* e, int ms = 10000) {
  pollfd p{ctx->async_fd, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1) return false;
  if (ibv_get_async_event(ctx, e) != 0) return false;
  ibv_ack_async_event(e);
  return true;
}

// One private fabric (host-a, host-b, one switch, the embedded SM) for the whole binary.
class Env : public ::testing::Environment {
 public:
  void SetUp() override {
    daemon = std::make_unique<SoftibdProcess>();
    ASSERT_TRUE(daemon->ready());
    ::setenv("SOFTIB_SOCKET", daemon->socket().c_str(), 1);
    ::setenv("SOFTIB_FABRIC", daemon->name().c_str(), 1);
    ::setenv("SOFTIB_HOST", "all", 1);
  }
  void TearDown() override { daemon.reset(); }
  static inline std::unique_ptr<SoftibdProcess> daemon;
};

class Verbs : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    list_ = ibv_get_device_list(&n);
    ASSERT_NE(list_, nullptr) << std::strerror(errno);
    ASSERT_GE(n, 2);
    ctx_ = ibv_open_device(list_[0]);
    ASSERT_NE(ctx_, nullptr) << std::strerror(errno);
    // The embedded SM brings the port up: until it is Active, wait for the device's next
    // async event (the port's own changes among them; bounded by next_async_event's timeout)
    // and look again. Events come for changes after the open, so none is missed.
    ibv_port_attr a{};
    ASSERT_EQ(ibv_query_port(ctx_, 1, &a), 0);
    while (a.state != IBV_PORT_ACTIVE) {
      ibv_async_event e{};
      ASSERT_TRUE(next_async_event(ctx_, &e)) << "port 1 is still in state " << a.state;
      ASSERT_EQ(ibv_query_port(ctx_, 1, &a), 0);
    }
    pd_ = ibv_alloc_pd(ctx_);
    ASSERT_NE(pd_, nullptr);
  }
  void TearDown() override {
    if (pd_ != nullptr) {
      EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
    }
    if (ctx_ != nullptr) {
      EXPECT_EQ(ibv_close_device(ctx_), 0);
    }
    ibv_free_device_list(list_);
  }

  uint16_t lid() {
    ibv_port_attr a{};
    EXPECT_EQ(ibv_query_port(ctx_, 1, &a), 0);
    return a.lid;
  }

  // An RC QP whose sends and receives complete on `cq`; null on failure (errno set).
  ibv_qp* rc_qp(ibv_cq* cq, ibv_qp_cap cap) {
    ibv_qp_init_attr qa{};
    qa.send_cq = cq;
    qa.recv_cq = cq;
    qa.cap = cap;
    qa.qp_type = IBV_QPT_RC;
    return ibv_create_qp(pd_, &qa);
  }

  // Two RC QPs of `cap` whose sends and receives complete on one new CQ of `cqe` entries,
  // connected to each other. The caller destroys them. Call under ASSERT_NO_FATAL_FAILURE.
  void connected_pair(int cqe, ibv_qp_cap cap, ibv_cq** cq, ibv_qp** a, ibv_qp** b) {
    *cq = ibv_create_cq(ctx_, cqe, nullptr, nullptr, 0);
    ASSERT_NE(*cq, nullptr);
    *a = rc_qp(*cq, cap);
    ASSERT_NE(*a, nullptr);
    *b = rc_qp(*cq, cap);
    ASSERT_NE(*b, nullptr);
    connect(*a, (*b)->qp_num);
    connect(*b, (*a)->qp_num);
  }

  // RESET -> INIT -> RTR -> RTS, connected to `peer` on this port.
  void connect(ibv_qp* qp, uint32_t peer_qpn) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
    a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = peer_qpn;
    a.rq_psn = 7;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    a.ah_attr.dlid = lid();
    a.ah_attr.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(qp, &a,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
              0);
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 7;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 4;
    ASSERT_EQ(ibv_modify_qp(qp, &a,
                            IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                IBV_QP_MAX_QP_RD_ATOMIC),
              0);
    EXPECT_EQ(qp->state, IBV_QPS_RTS);
  }

  ibv_device** list_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
};

}  // namespace softib::verbs_api_test
