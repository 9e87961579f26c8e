// The drop-in libibverbs.so.1 through libibverbs' own C API, as a program linked with
// -libverbs sees it: this test includes only <infiniband/verbs.h> for the verbs and links the
// drop-in library (not the system's). It covers what the pingpongs and perftest do not reach:
// the extended API (query_device_ex, the sized query_port and the exported legacy one,
// query_gid_ex / _table, ibv_cq_ex polling with timestamps, ibv_qp_ex wr_* posting,
// reg_mr_iova2), completion channels, asynchronous events, and libibverbs' error returns.
#include <infiniband/verbs.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ipc/client.hpp"
#include "support/random.hpp"
#include "support/softibd_process.hpp"

namespace {

using softib::testing::SoftibdProcess;

// The next asynchronous event within `ms` (the async fd is pollable), acknowledged.
bool next_async_event(ibv_context* ctx, ibv_async_event* e, int ms = 10000) {
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
  static std::unique_ptr<SoftibdProcess> daemon;
};
std::unique_ptr<SoftibdProcess> Env::daemon;
const auto* const env = ::testing::AddGlobalTestEnvironment(new Env);

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

TEST_F(Verbs, DevicesAreSoftibWithTheFabricsIdentity) {
  EXPECT_STREQ(ibv_get_device_name(list_[0]), "softib0");
  EXPECT_STREQ(ibv_get_device_name(list_[1]), "softib1");
  EXPECT_EQ(ibv_get_device_index(list_[1]), 1);
  EXPECT_EQ(list_[0]->node_type, IBV_NODE_CA);
  EXPECT_EQ(list_[0]->transport_type, IBV_TRANSPORT_IB);

  ibv_device_attr_ex ex{};
  ASSERT_EQ(ibv_query_device_ex(ctx_, nullptr, &ex), 0);
  EXPECT_EQ(ex.orig_attr.vendor_id, 0xFFFFFFu) << "not a real vendor's: perftest must not use mlx5dv/efadv";
  EXPECT_EQ(ex.orig_attr.node_guid, ibv_get_device_guid(list_[0]));
  EXPECT_EQ(ex.orig_attr.phys_port_cnt, 1);
  EXPECT_GT(ex.orig_attr.max_qp_wr, 0);
  EXPECT_GT(ex.hca_core_clock, 0u);
  EXPECT_NE(ex.completion_timestamp_mask, 0u);
  ibv_device_attr plain{};
  ASSERT_EQ(ibv_query_device(ctx_, &plain), 0);
  EXPECT_EQ(std::memcmp(&plain, &ex.orig_attr, sizeof plain), 0);
  ibv_query_device_ex_input input{};
  input.comp_mask = 1;  // no such input: EINVAL
  EXPECT_EQ(ibv_query_device_ex(ctx_, &input, &ex), EINVAL);
}

TEST_F(Verbs, PortsAreActiveWithTheSmsLidAndTheLegacyQueryWritesOnlyItsPrefix) {
  ibv_port_attr a{};
  ASSERT_EQ(ibv_query_port(ctx_, 1, &a), 0);
  EXPECT_EQ(a.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(a.link_layer, IBV_LINK_LAYER_INFINIBAND);
  EXPECT_NE(a.lid, 0);
  EXPECT_NE(a.sm_lid, 0);
  EXPECT_EQ(a.phys_state, 5);  // LinkUp
  EXPECT_GE(a.gid_tbl_len, 1);
  EXPECT_EQ(ibv_query_port(ctx_, 2, &a), EINVAL);

  // The exported ibv_query_port@IBVERBS_1.1 (for programs built before the inline one)
  // writes struct _compat_ibv_port_attr: everything before port_cap_flags2.
  ibv_port_attr legacy;
  std::memset(&legacy, 0xAB, sizeof legacy);
  ASSERT_EQ((ibv_query_port)(ctx_, 1, reinterpret_cast<_compat_ibv_port_attr*>(&legacy)), 0);
  EXPECT_EQ(legacy.lid, lid());
  EXPECT_EQ(legacy.port_cap_flags2, 0xABAB) << "wrote past the legacy struct";
}

TEST_F(Verbs, GidsAndPkeys) {
  ibv_device_attr d{};
  ASSERT_EQ(ibv_query_device(ctx_, &d), 0);
  ibv_gid gid{};
  ASSERT_EQ(ibv_query_gid(ctx_, 1, 0, &gid), 0);
  EXPECT_EQ(gid.raw[0], 0xFE);
  EXPECT_EQ(gid.raw[1], 0x80);
  EXPECT_NE(gid.global.interface_id, 0u);
  EXPECT_EQ(ibv_query_gid(ctx_, 1, 4096, &gid), -1);

  ibv_gid_entry e{};
  ASSERT_EQ(ibv_query_gid_ex(ctx_, 1, 0, &e, 0), 0);
  EXPECT_EQ(e.gid_type, IBV_GID_TYPE_IB);
  EXPECT_EQ(e.port_num, 1u);
  EXPECT_EQ(std::memcmp(e.gid.raw, gid.raw, 16), 0);
  EXPECT_EQ(ibv_query_gid_ex(ctx_, 1, 0, &e, 1), EINVAL) << "no flags are defined";

  std::vector<ibv_gid_entry> table(8);
  const ssize_t n = ibv_query_gid_table(ctx_, table.data(), table.size(), 0);
  ASSERT_GE(n, 1);
  EXPECT_EQ(std::memcmp(table[0].gid.raw, gid.raw, 16), 0);

  __be16 pkey = 0;
  ASSERT_EQ(ibv_query_pkey(ctx_, 1, 0, &pkey), 0);
  EXPECT_EQ(be16toh(pkey), 0xFFFF);
  EXPECT_EQ(ibv_get_pkey_index(ctx_, 1, htobe16(0xFFFF)), 0);
  EXPECT_EQ(ibv_query_pkey(ctx_, 1, d.max_pkeys, &pkey), -1);
}

TEST_F(Verbs, ExtendedCqAndQpApisMoveDataWithTimestamps) {
  ibv_cq_init_attr_ex cq_attr{};
  cq_attr.cqe = 64;
  cq_attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
  ibv_cq_ex* cq = ibv_create_cq_ex(ctx_, &cq_attr);
  ASSERT_NE(cq, nullptr) << std::strerror(errno);

  ibv_qp_init_attr_ex qa{};
  qa.send_cq = ibv_cq_ex_to_cq(cq);
  qa.recv_cq = ibv_cq_ex_to_cq(cq);
  qa.cap = {16, 16, 2, 2, 64};
  qa.qp_type = IBV_QPT_RC;
  qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  qa.pd = pd_;
  qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  ibv_qp* a = ibv_create_qp_ex(ctx_, &qa);
  ASSERT_NE(a, nullptr) << std::strerror(errno);
  ibv_qp* b = ibv_create_qp_ex(ctx_, &qa);
  ASSERT_NE(b, nullptr);
  connect(a, b->qp_num);
  connect(b, a->qp_num);

  alignas(8) std::vector<uint8_t> buf(8192, 0);
  ibv_mr* mr = ibv_reg_mr_iova2(pd_, buf.data(), buf.size(), 0x100000,
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
                                    IBV_ACCESS_RELAXED_ORDERING);
  ASSERT_NE(mr, nullptr) << std::strerror(errno);
  // iova 0x100000 stands for buf[0]: local SGEs and remote addresses alike are iova-based.
  constexpr uint64_t kIova = 0x100000;
  ibv_sge rsge{kIova + 4096, 100, mr->lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 77;
  rwr.sg_list = &rsge;
  rwr.num_sge = 1;
  ibv_recv_wr* bad_r = nullptr;
  ASSERT_EQ(ibv_post_recv(b, &rwr, &bad_r), 0);

  ibv_qp_ex* x = ibv_qp_to_qp_ex(a);
  ASSERT_NE(x, nullptr);
  const char msg[] = "hello, softib";
  std::memcpy(buf.data(), msg, sizeof msg);
  ibv_wr_start(x);
  x->wr_id = 1;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(x);
  ibv_wr_set_sge(x, mr->lkey, kIova, sizeof msg);
  x->wr_id = 2;
  ibv_wr_rdma_write(x, mr->rkey, kIova + 6000);
  ibv_wr_set_inline_data(x, const_cast<char*>("inline!"), 8);
  x->wr_id = 3;
  ibv_wr_atomic_fetch_add(x, mr->rkey, kIova + 7000, 5);
  ibv_wr_set_sge(x, mr->lkey, kIova + 7008, 8);
  ASSERT_EQ(ibv_wr_complete(x), 0);

  // Four completions: three on the send side (SEND, WRITE, FETCH_ADD) and the receive; read
  // them with the ibv_cq_ex API.
  std::vector<std::pair<uint64_t, ibv_wc_opcode>> seen;
  uint64_t last_ts = 0;
  for (int spins = 0; seen.size() < 4 && spins < 2000000; ++spins) {
    ibv_poll_cq_attr pa{};
    if (ibv_start_poll(cq, &pa) != 0) continue;
    do {
      ASSERT_EQ(cq->status, IBV_WC_SUCCESS) << ibv_wc_status_str(cq->status);
      seen.emplace_back(cq->wr_id, ibv_wc_read_opcode(cq));
      const uint64_t ts = ibv_wc_read_completion_ts(cq);
      EXPECT_GE(ts, last_ts);
      last_ts = ts;
      if (cq->wr_id == 77) {
        EXPECT_EQ(ibv_wc_read_byte_len(cq), sizeof msg);
        EXPECT_EQ(ibv_wc_read_qp_num(cq), b->qp_num);
      }
    } while (ibv_next_poll(cq) == 0);
    ibv_end_poll(cq);
  }
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_GT(last_ts, 0u);
  EXPECT_STREQ(reinterpret_cast<char*>(buf.data() + 4096), msg);
  EXPECT_STREQ(reinterpret_cast<char*>(buf.data() + 6000), "inline!");
  uint64_t after = 0, fetched = 0;
  std::memcpy(&after, buf.data() + 7000, 8);
  std::memcpy(&fetched, buf.data() + 7008, 8);
  EXPECT_EQ(after, 5u);
  EXPECT_EQ(fetched, 0u);

  // Batches after the first reuse the builder's storage (wr_complete keeps its vectors): each
  // still lands whole, inline data included.
  for (int round = 0; round < 3; ++round) {
    const std::string text = "again #" + std::to_string(round);
    ibv_wr_start(x);
    x->wr_id = 10 + static_cast<uint64_t>(round);
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(x, mr->rkey, kIova + 6100 + 64 * static_cast<uint64_t>(round));
    ibv_wr_set_inline_data(x, const_cast<char*>(text.c_str()), text.size() + 1);
    ASSERT_EQ(ibv_wr_complete(x), 0);
    bool done = false;
    for (int spins = 0; !done && spins < 2000000; ++spins) {
      ibv_poll_cq_attr pa{};
      if (ibv_start_poll(cq, &pa) != 0) continue;
      EXPECT_EQ(cq->status, IBV_WC_SUCCESS);
      EXPECT_EQ(cq->wr_id, 10u + static_cast<uint64_t>(round));
      done = true;
      ibv_end_poll(cq);
    }
    ASSERT_TRUE(done);
    EXPECT_STREQ(reinterpret_cast<char*>(buf.data() + 6100 + 64 * round), text.c_str());
  }

  // An opcode not in send_ops_flags fails the batch.
  ibv_wr_start(x);
  ibv_wr_rdma_read(x, mr->rkey, kIova);
  ibv_wr_set_sge(x, mr->lkey, kIova, 8);
  EXPECT_EQ(ibv_wr_complete(x), EOPNOTSUPP);

  // A batch the core refuses a part of posts none of it ("the entire posting will be
  // aborted", ibv_wr_post(3); until 2026-11-29 the requests before the refused one went): a
  // WRITE, then a SEND of more SGEs than the QP takes; then 17 WRITEs for a send queue of 16.
  ibv_wr_start(x);
  x->wr_id = 20;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(x, mr->rkey, kIova + 6500);
  ibv_wr_set_inline_data(x, const_cast<char*>("never"), 6);
  x->wr_id = 21;
  ibv_wr_send(x);
  const std::array<ibv_sge, 3> three = {ibv_sge{kIova, 1, mr->lkey}, ibv_sge{kIova, 1, mr->lkey},
                                        ibv_sge{kIova, 1, mr->lkey}};
  ibv_wr_set_sge_list(x, three.size(), three.data());
  EXPECT_EQ(ibv_wr_complete(x), EINVAL);
  ibv_wr_start(x);
  for (uint64_t i = 0; i < 17; ++i) {
    x->wr_id = 30 + i;
    ibv_wr_rdma_write(x, mr->rkey, kIova + 6600 + i);
    ibv_wr_set_inline_data(x, const_cast<char*>("x"), 1);
  }
  EXPECT_EQ(ibv_wr_complete(x), ENOMEM);
  // A good batch still goes, and its completion is the only one.
  ibv_wr_start(x);
  x->wr_id = 50;
  ibv_wr_rdma_write(x, mr->rkey, kIova + 6700);
  ibv_wr_set_inline_data(x, const_cast<char*>("after"), 6);
  ASSERT_EQ(ibv_wr_complete(x), 0);
  std::vector<uint64_t> ids;
  for (int spins = 0; ids.empty() && spins < 2000000; ++spins) {
    ibv_poll_cq_attr pa{};
    if (ibv_start_poll(cq, &pa) != 0) continue;
    do {
      ids.push_back(cq->wr_id);
    } while (ibv_next_poll(cq) == 0);
    ibv_end_poll(cq);
  }
  EXPECT_EQ(ids, std::vector<uint64_t>{50});
  EXPECT_STREQ(reinterpret_cast<char*>(buf.data() + 6700), "after");
  EXPECT_EQ(buf[6500], 0) << "a WRITE of a refused batch landed";
  EXPECT_TRUE(std::all_of(buf.begin() + 6600, buf.begin() + 6617, [](uint8_t v) { return v == 0; }))
      << "a WRITE of a batch too long for the queue landed";

  EXPECT_EQ(ibv_destroy_qp(a), 0);
  EXPECT_EQ(ibv_destroy_qp(b), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

// Chains of work requests longer than the drop-in converts at a time (16) and with several
// SGEs each: every request is posted, completes once, in order, its bytes scattered and
// gathered where its SGEs say; a poll for many completions drains them across its internal
// batches. A chain with a bad request posts those before it and points bad_wr at it.
TEST_F(Verbs, ChainsOfWorkRequestsPostWholeAndStopAtTheFirstBadOne) {
  ibv_cq* cq = ibv_create_cq(ctx_, 256, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ibv_qp* a = rc_qp(cq, {64, 64, 4, 4, 0});
  ASSERT_NE(a, nullptr);
  ibv_qp* b = rc_qp(cq, {64, 64, 4, 4, 0});
  ASSERT_NE(b, nullptr);
  connect(a, b->qp_num);
  connect(b, a->qp_num);
  std::vector<uint8_t> buf(1 << 16, 0);
  ibv_mr* mr = ibv_reg_mr(pd_, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_NE(mr, nullptr);
  const auto at = [&](size_t off) { return reinterpret_cast<uint64_t>(buf.data() + off); };
  // Each message is 24 bytes, "message NN" padded: gathered from three SGEs of 8 bytes, out
  // of order in the buffer, and scattered into a receive's two SGEs (4 bytes, then 20).
  constexpr size_t kN = 40;
  std::vector<ibv_recv_wr> recvs(kN);
  std::vector<std::array<ibv_sge, 2>> rsges(kN);
  std::vector<ibv_send_wr> sends(kN);
  std::vector<std::array<ibv_sge, 3>> ssges(kN);
  for (size_t i = 0; i < kN; ++i) {
    char text[25] = {};
    std::snprintf(text, sizeof text, "message %02d .............", static_cast<int>(i));
    const size_t src = 1024 + 32 * i;
    std::memcpy(buf.data() + src + 16, text, 8);  // the pieces lie in the order 2, 0, 1
    std::memcpy(buf.data() + src, text + 8, 8);
    std::memcpy(buf.data() + src + 8, text + 16, 8);
    ssges[i] = {ibv_sge{at(src + 16), 8, mr->lkey}, ibv_sge{at(src), 8, mr->lkey}, ibv_sge{at(src + 8), 8, mr->lkey}};
    sends[i] = {};
    sends[i].wr_id = i;
    sends[i].sg_list = ssges[i].data();
    sends[i].num_sge = 3;
    sends[i].opcode = IBV_WR_SEND;
    sends[i].send_flags = IBV_SEND_SIGNALED;
    sends[i].next = i + 1 < kN ? &sends[i + 1] : nullptr;
    const size_t dst = 8192 + 64 * i;
    rsges[i] = {ibv_sge{at(dst), 4, mr->lkey}, ibv_sge{at(dst + 32), 20, mr->lkey}};
    recvs[i] = {};
    recvs[i].wr_id = 1000 + i;
    recvs[i].sg_list = rsges[i].data();
    recvs[i].num_sge = 2;
    recvs[i].next = i + 1 < kN ? &recvs[i + 1] : nullptr;
  }
  ibv_recv_wr* bad_r = nullptr;
  ASSERT_EQ(ibv_post_recv(b, recvs.data(), &bad_r), 0);
  ibv_send_wr* bad_s = nullptr;
  ASSERT_EQ(ibv_post_send(a, sends.data(), &bad_s), 0);

  // Polls for up to 32 at a time until `count` completions came (or ~2 s of spinning).
  const auto drain = [&](size_t count) {
    std::vector<ibv_wc> got;
    ibv_wc wc[32];
    for (int spins = 0; got.size() < count && spins < 20000000; ++spins) {
      const int n = ibv_poll_cq(cq, 32, wc);
      EXPECT_GE(n, 0);
      got.insert(got.end(), wc, wc + std::max(n, 0));
    }
    return got;
  };
  const std::vector<ibv_wc> got = drain(2 * kN);
  ASSERT_EQ(got.size(), 2u * kN);
  uint64_t next_send = 0, next_recv = 1000;
  for (const ibv_wc& wc : got) {
    ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status) << " wr_id " << wc.wr_id;
    if (wc.opcode == IBV_WC_SEND) {
      EXPECT_EQ(wc.wr_id, next_send++);
      EXPECT_EQ(wc.qp_num, a->qp_num);
    } else {
      ASSERT_EQ(wc.opcode, IBV_WC_RECV);
      EXPECT_EQ(wc.wr_id, next_recv++);
      EXPECT_EQ(wc.byte_len, 24u);
      EXPECT_EQ(wc.qp_num, b->qp_num);
      EXPECT_EQ(wc.src_qp, a->qp_num);
      EXPECT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0u);
    }
  }
  EXPECT_EQ(next_send, kN);
  EXPECT_EQ(next_recv, 1000u + kN);
  for (size_t i = 0; i < kN; ++i) {
    char want[25] = {};
    std::snprintf(want, sizeof want, "message %02d .............", static_cast<int>(i));
    const size_t dst = 8192 + 64 * i;
    EXPECT_EQ(std::string(reinterpret_cast<char*>(buf.data() + dst), 4) +
                  std::string(reinterpret_cast<char*>(buf.data() + dst + 32), 20),
              std::string(want, 24))
        << "message " << i;
  }

  // A chain of 20 WRITEs whose 18th has an opcode softib does not have (TSO): the 17 before
  // it are posted and land, bad_wr points at it, and nothing after it is posted.
  std::vector<ibv_send_wr> writes(20);
  std::vector<ibv_sge> wsges(20);
  for (size_t i = 0; i < writes.size(); ++i) {
    buf[2048 + i] = static_cast<uint8_t>(0xA0 + i);
    wsges[i] = {at(2048 + i), 1, mr->lkey};
    writes[i] = {};
    writes[i].wr_id = 500 + i;
    writes[i].sg_list = &wsges[i];
    writes[i].num_sge = 1;
    writes[i].opcode = i == 17 ? IBV_WR_TSO : IBV_WR_RDMA_WRITE;
    writes[i].send_flags = IBV_SEND_SIGNALED;
    writes[i].wr.rdma.remote_addr = at(16384 + i);
    writes[i].wr.rdma.rkey = mr->rkey;
    writes[i].next = i + 1 < writes.size() ? &writes[i + 1] : nullptr;
  }
  bad_s = nullptr;
  EXPECT_EQ(ibv_post_send(a, writes.data(), &bad_s), EINVAL);
  EXPECT_EQ(bad_s, &writes[17]);
  const std::vector<ibv_wc> written = drain(17);
  ASSERT_EQ(written.size(), 17u);
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(written[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(written[i].wr_id, 500 + i);
    EXPECT_EQ(written[i].opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(buf[16384 + i], static_cast<uint8_t>(0xA0 + i));
  }
  EXPECT_EQ(buf[16384 + 17], 0) << "the bad request was not sent";
  EXPECT_EQ(buf[16384 + 18], 0) << "nor one after it";

  // More SGEs than any QP has (the list path's room is 64): EINVAL, not a post of nothing
  // repeated for ever (it hung until 2026-11-29).
  ibv_send_wr many = writes[0];
  many.next = nullptr;
  many.num_sge = 100;
  bad_s = nullptr;
  EXPECT_EQ(ibv_post_send(a, &many, &bad_s), EINVAL);
  EXPECT_EQ(bad_s, &many);
  writes[1].num_sge = 100;  // and as the second of a chain: the first is posted
  writes[0].next = &writes[1];
  writes[1].next = nullptr;
  bad_s = nullptr;
  EXPECT_EQ(ibv_post_send(a, writes.data(), &bad_s), EINVAL);
  EXPECT_EQ(bad_s, &writes[1]);
  const std::vector<ibv_wc> first = drain(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].wr_id, 500u);

  // A chain of receives whose fourth has a negative SGE count: three are posted (a QP moved
  // to Error flushes exactly those), bad_wr points at the fourth.
  for (size_t i = 0; i < 6; ++i) {
    recvs[i].wr_id = 2000 + i;
    recvs[i].num_sge = i == 3 ? -1 : 2;
    recvs[i].next = i + 1 < 6 ? &recvs[i + 1] : nullptr;
  }
  bad_r = nullptr;
  EXPECT_EQ(ibv_post_recv(b, recvs.data(), &bad_r), EINVAL);
  EXPECT_EQ(bad_r, &recvs[3]);
  ibv_qp_attr err{};
  err.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b, &err, IBV_QP_STATE), 0);
  const std::vector<ibv_wc> flushed = drain(3);
  ASSERT_EQ(flushed.size(), 3u);
  for (size_t i = 0; i < flushed.size(); ++i) {
    EXPECT_EQ(flushed[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(flushed[i].wr_id, 2000 + i);
  }
  ibv_wc extra{};
  EXPECT_EQ(ibv_poll_cq(cq, 1, &extra), 0) << "wr_id " << extra.wr_id;

  EXPECT_EQ(ibv_destroy_qp(a), 0);
  EXPECT_EQ(ibv_destroy_qp(b), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

// Random chains through the drop-in's post paths (the one-request path and the list path, in
// batches): every opcode libibverbs has and some it has not, SGE counts from -1 to 100, every
// flag, keys and bounds good and bad. Whatever a post returns, it returns (the list path once
// looped for ever), with an errno libibverbs uses and bad_wr inside the chain; the requests
// before bad_wr are posted and nothing after it. Whenever a bad request has moved a QP to
// Error (and every 50 rounds), both go to Error, then Reset and are connected again: by then
// every request posted has completed exactly once, each queue in the order posted, and none
// that was not posted.
TEST_F(Verbs, RandomChainsPostUpToTheirFirstRefusalAndCompleteExactlyOnce) {
  softib::testing::TestRng rng;
  const auto below = [&](uint64_t n) { return rng.between(0, n - 1); };  // uniform in [0, n)
  ibv_cq* cq = ibv_create_cq(ctx_, 4096, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ibv_qp* a = rc_qp(cq, {128, 128, 4, 4, 64});
  ASSERT_NE(a, nullptr);
  ibv_qp* b = rc_qp(cq, {128, 128, 4, 4, 64});
  ASSERT_NE(b, nullptr);
  connect(a, b->qp_num);
  connect(b, a->qp_num);
  std::vector<uint8_t> buf(1 << 16, 0);
  ibv_mr* mr = ibv_reg_mr(pd_, buf.data(), buf.size(),
                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                              IBV_ACCESS_REMOTE_ATOMIC);
  ASSERT_NE(mr, nullptr);
  const auto at = [&](uint64_t off) { return reinterpret_cast<uint64_t>(buf.data()) + off; };
  // 100 SGEs for sends inside the buffer (inline data is read from them), a few with a bad
  // key or reaching past the MR; 100 for receives, of 1 KiB (a SEND fits a receive of one);
  // one of 8 bytes for atomics.
  std::vector<ibv_sge> sges(100), rsges(100);
  ibv_sge atomic_sge{at(0), 8, mr->lkey};
  const auto fill_sges = [&] {
    for (ibv_sge& g : sges) {
      g = {at(below(buf.size() - 64)), static_cast<uint32_t>(below(65)), below(300) == 0 ? mr->lkey + 1 : mr->lkey};
      if (below(300) == 0) g.length = static_cast<uint32_t>(buf.size());  // past the MR's end
    }
    for (ibv_sge& g : rsges) g = {at(below(buf.size() / 2)), 1024, below(300) == 0 ? mr->lkey + 1 : mr->lkey};
    atomic_sge.addr = at(below(buf.size() / 8) * 8);
  };
  static constexpr std::array<int, 9> kSgeCounts = {-1, 0, 1, 2, 4, 5, 33, 65, 100};
  static constexpr std::array<int, 13> kOpcodes = {
      IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
      IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
      IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1, 13};  // 13: no opcode (in the enum's range)
  const auto some_sges = [&] {
    // Mostly few (the one-request path's), sometimes any of kSgeCounts.
    return below(4) != 0 ? static_cast<int>(below(5)) : kSgeCounts[below(kSgeCounts.size())];
  };
  std::map<uint64_t, bool> posted;  // wr_id -> is a receive, until it completes
  uint64_t next_id = 1, last_send = 0, last_recv = 0;
  size_t cycles = 0, successes = 0, receives_owed = 0;
  // Checks and forgets what the CQ holds now.
  const auto take = [&] {
    ibv_wc wc[64];
    for (int k; (k = ibv_poll_cq(cq, 64, wc)) != 0;) {
      ASSERT_GT(k, 0);
      for (int i = 0; i < k; ++i) {
        auto it = posted.find(wc[i].wr_id);
        ASSERT_NE(it, posted.end()) << "a completion for wr_id " << wc[i].wr_id << ", never posted or already completed";
        ASSERT_EQ(wc[i].qp_num, it->second ? b->qp_num : a->qp_num);
        uint64_t& last = it->second ? last_recv : last_send;
        EXPECT_GT(wc[i].wr_id, last) << "out of the order posted";
        last = wc[i].wr_id;
        successes += wc[i].status == IBV_WC_SUCCESS;
        receives_owed -= it->second;
        posted.erase(it);
      }
    }
  };
  // What the QPs can still carry out they do (all of it, unless a QP went to Error), then
  // both go to Error: every request still owed completes (flushed if nothing else). Each
  // within ~2 s of polling.
  const auto settle = [&] {
    for (int spins = 0; posted.size() > receives_owed && spins < 2000000; ++spins) {
      ASSERT_NO_FATAL_FAILURE(take());
      ibv_qp_attr qa{};
      ibv_qp_init_attr qi{};
      ASSERT_EQ(ibv_query_qp(a, &qa, IBV_QP_STATE, &qi), 0);
      if (qa.qp_state != IBV_QPS_RTS) break;
    }
    ibv_qp_attr err{};
    err.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(ibv_modify_qp(a, &err, IBV_QP_STATE), 0);
    ASSERT_EQ(ibv_modify_qp(b, &err, IBV_QP_STATE), 0);
    for (int spins = 0; !posted.empty() && spins < 2000000; ++spins) ASSERT_NO_FATAL_FAILURE(take());
    ASSERT_TRUE(posted.empty()) << posted.size() << " posted requests never completed, the first wr_id "
                                << posted.begin()->first;
  };
  // How many of the chain of `n` at `first` a post took: all, or those before `bad`, which
  // must point into the chain, with an errno libibverbs uses.
  const auto taken_by = [](int rc, const auto* bad, const auto* first, size_t n, size_t* taken) {
    *taken = n;
    if (rc == 0) return;
    ASSERT_TRUE(rc == EINVAL || rc == ENOMEM || rc == EOPNOTSUPP) << rc;
    ASSERT_GE(bad, first);
    ASSERT_LT(bad, first + n);
    *taken = static_cast<size_t>(bad - first);
  };
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(::testing::Message() << "round " << round);
    fill_sges();
    // Enough good receives that a SEND waits for none (an RNR wait would hold the send queue).
    if (receives_owed < 48) {
      std::array<ibv_recv_wr, 16> top{};
      std::array<ibv_sge, 16> tsge{};
      for (size_t i = 0; i < top.size(); ++i) {
        tsge[i] = {at(below(buf.size() / 2)), 1024, mr->lkey};
        top[i].wr_id = next_id++;
        top[i].sg_list = &tsge[i];
        top[i].num_sge = 1;
        top[i].next = i + 1 < top.size() ? &top[i + 1] : nullptr;
      }
      ibv_recv_wr* bad = nullptr;
      ASSERT_EQ(ibv_post_recv(b, top.data(), &bad), 0);
      for (const ibv_recv_wr& r : top) posted[r.wr_id] = true;
      receives_owed += top.size();
    }
    const size_t n = below(4) == 0 ? 1 + below(40) : 1 + below(3);
    if (below(3) == 0) {
      std::vector<ibv_recv_wr> wrs(n);
      for (size_t i = 0; i < n; ++i) {
        wrs[i] = {};
        wrs[i].wr_id = next_id++;
        wrs[i].num_sge = some_sges();
        wrs[i].sg_list = rsges.data();
        wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
      }
      ibv_recv_wr* bad = nullptr;
      const int rc = ibv_post_recv(b, wrs.data(), &bad);
      size_t taken = 0;
      ASSERT_NO_FATAL_FAILURE(taken_by(rc, bad, wrs.data(), n, &taken));
      for (size_t i = 0; i < taken; ++i) posted[wrs[i].wr_id] = true;
      receives_owed += taken;
      continue;
    }
    std::vector<ibv_send_wr> wrs(n);
    for (size_t i = 0; i < n; ++i) {
      ibv_send_wr& w = wrs[i];
      w = {};
      w.wr_id = next_id++;
      w.opcode = static_cast<ibv_wr_opcode>(kOpcodes[below(below(5) == 0 ? kOpcodes.size() : 7)]);
      w.num_sge = some_sges();
      w.sg_list = sges.data();
      w.send_flags = IBV_SEND_SIGNALED | static_cast<unsigned>(rng.bits(5) & ~uint64_t{IBV_SEND_SIGNALED});
      w.imm_data = static_cast<uint32_t>(rng.next());
      if (w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        if (below(30) != 0) {
          w.sg_list = &atomic_sge;
          w.num_sge = 1;
        }
        w.wr.atomic.remote_addr = at(below(buf.size() / 8) * 8 + (below(100) == 0 ? 4 : 0));
        w.wr.atomic.rkey = below(100) == 0 ? mr->rkey + 1 : mr->rkey;
        w.wr.atomic.compare_add = rng.next();
        w.wr.atomic.swap = rng.next();
      } else {
        w.wr.rdma.remote_addr = at(below(100) == 0 ? below(buf.size() + 4096) : below(buf.size() / 2));
        w.wr.rdma.rkey = below(100) == 0 ? mr->rkey + 1 : mr->rkey;
      }
      w.next = i + 1 < n ? &wrs[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    const int rc = ibv_post_send(a, wrs.data(), &bad);
    size_t taken = 0;
    ASSERT_NO_FATAL_FAILURE(taken_by(rc, bad, wrs.data(), n, &taken));
    for (size_t i = 0; i < taken; ++i) posted[wrs[i].wr_id] = false;
    // Now and then, take what has completed (a full send queue refuses with ENOMEM).
    if (below(4) == 0) {
      ASSERT_NO_FATAL_FAILURE(take());
    }
    ibv_qp_attr qa{};
    ibv_qp_init_attr qi{};
    ASSERT_EQ(ibv_query_qp(a, &qa, IBV_QP_STATE, &qi), 0);
    const bool a_ok = qa.qp_state == IBV_QPS_RTS;
    ASSERT_EQ(ibv_query_qp(b, &qa, IBV_QP_STATE, &qi), 0);
    if (!a_ok || qa.qp_state != IBV_QPS_RTS || round % 50 == 49) {
      ASSERT_NO_FATAL_FAILURE(settle());
      ++cycles;
      ibv_qp_attr reset{};
      reset.qp_state = IBV_QPS_RESET;
      ASSERT_EQ(ibv_modify_qp(a, &reset, IBV_QP_STATE), 0);
      ASSERT_EQ(ibv_modify_qp(b, &reset, IBV_QP_STATE), 0);
      connect(a, b->qp_num);
      connect(b, a->qp_num);
    }
  }
  ASSERT_NO_FATAL_FAILURE(settle());
  EXPECT_GE(cycles, 8u);
  EXPECT_GT(successes, 100u) << "the QPs spent the test in Error";
  ibv_wc wc{};
  EXPECT_EQ(ibv_poll_cq(cq, 1, &wc), 0);
  EXPECT_EQ(ibv_destroy_qp(a), 0);
  EXPECT_EQ(ibv_destroy_qp(b), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(Verbs, CompletionChannelsAreRealFdsAndEventsAreAcknowledged) {
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx_);
  ASSERT_NE(ch, nullptr);
  int marker = 0;
  ibv_cq* cq = ibv_create_cq(ctx_, 16, &marker, ch, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), EBUSY) << "in use (libibverbs returns it, errno untouched)";
  ibv_qp* a = rc_qp(cq, {4, 4, 1, 1, 0});
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(ibv_qp_to_qp_ex(a), nullptr) << "made without IBV_QP_INIT_ATTR_SEND_OPS_FLAGS";
  connect(a, a->qp_num);  // to itself

  ASSERT_EQ(ibv_req_notify_cq(cq, 0), 0);
  char data[16] = "x";
  ibv_mr* mr = ibv_reg_mr(pd_, data, sizeof data, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_NE(mr, nullptr);
  ibv_sge sge{reinterpret_cast<uintptr_t>(data), 4, mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 9;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(data + 8);
  wr.wr.rdma.rkey = mr->rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a, &wr, &bad), 0);

  pollfd p{ch->fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1) << "the channel's fd becomes readable";
  ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  EXPECT_EQ(ev_cq, cq);
  EXPECT_EQ(ev_ctx, &marker);
  ibv_wc wc{};
  ASSERT_EQ(ibv_poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, 9u);
  EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
  ibv_ack_cq_events(cq, 1);

  // A bad lkey: a local protection error, and the QP goes to Error.
  sge.lkey = mr->lkey + 1000;
  ASSERT_EQ(ibv_post_send(a, &wr, &bad), 0);
  int n = 0;
  for (int i = 0; i < 2000000 && n == 0; ++i) n = ibv_poll_cq(cq, 1, &wc);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(ibv_query_qp(a, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(a->state, IBV_QPS_ERR);
  EXPECT_EQ(init.cap.max_send_wr, 4u);

  EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a QP and an MR use it";
  EXPECT_EQ(ibv_destroy_qp(a), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
}

TEST_F(Verbs, MisuseFailsWithLibibverbsErrnos) {
  ibv_cq* cq = ibv_create_cq(ctx_, 0, nullptr, nullptr, 0);
  EXPECT_EQ(cq, nullptr);
  EXPECT_EQ(errno, EINVAL);
  cq = ibv_create_cq(ctx_, 8, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(ibv_req_notify_cq(cq, 0), EINVAL) << "no completion channel";
  ibv_qp_init_attr qa{};
  qa.send_cq = cq;
  qa.recv_cq = cq;
  qa.cap = {4, 4, 1, 1, 0};
  qa.qp_type = IBV_QPT_RAW_PACKET;
  EXPECT_EQ(ibv_create_qp(pd_, &qa), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = 1u << 30;
  EXPECT_EQ(ibv_create_qp(pd_, &qa), nullptr);
  EXPECT_EQ(errno, EINVAL);
  qa.cap.max_send_wr = 4;
  ibv_qp* qp = ibv_create_qp(pd_, &qa);
  ASSERT_NE(qp, nullptr);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;  // RESET -> RTS is not a transition
  EXPECT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  EXPECT_EQ(ibv_destroy_cq(cq), EBUSY) << "the QP uses it";
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_reg_mr(pd_, nullptr, 0, IBV_ACCESS_LOCAL_WRITE), nullptr);
  EXPECT_STREQ(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "transport retry counter exceeded");
  EXPECT_STREQ(ibv_event_type_str(IBV_EVENT_PORT_ERR), "port error");
  EXPECT_STREQ(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
  EXPECT_EQ(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
  EXPECT_EQ(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
}

// Takes host-a's link down and up (each test runs in its own process and fabric: ctest).
TEST_F(Verbs, ZLinkDownAndUpAreAsyncEvents) {
  auto ctl = softib::ipc::Connection::open({}, "test", Env::daemon->socket());
  ASSERT_TRUE(ctl.ok());
  auto nodes = ctl->list_nodes(softib::ipc::Connection::NodeFilter::kCas);
  ASSERT_TRUE(nodes.ok());
  ASSERT_TRUE(ctl->link_set((*nodes)[0].index, 1, softib::ipc::LinkOp::kDown).ok());
  ibv_async_event e{};
  ASSERT_TRUE(next_async_event(ctx_, &e));
  EXPECT_EQ(e.event_type, IBV_EVENT_PORT_ERR);
  EXPECT_EQ(e.element.port_num, 1);
  ASSERT_TRUE(ctl->link_set((*nodes)[0].index, 1, softib::ipc::LinkOp::kUp).ok());
  for (;;) {  // the SM brings the port back: Active (LID and SM events may come first)
    ASSERT_TRUE(next_async_event(ctx_, &e));
    if (e.event_type == IBV_EVENT_PORT_ACTIVE) break;
  }
  ibv_port_attr pa{};
  ASSERT_EQ(ibv_query_port(ctx_, 1, &pa), 0);
  EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
}

}  // namespace
