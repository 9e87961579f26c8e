// The drop-in libibverbs.so.1 through libibverbs' own C API, as a program linked with
// -libverbs sees it: this test includes only <infiniband/verbs.h> for the verbs and links the
// drop-in library (not the system's). It covers what the pingpongs and perftest do not reach:
// the extended API (query_device_ex, the sized query_port and the exported legacy one,
// query_gid_ex / _table, ibv_cq_ex polling with timestamps, ibv_qp_ex wr_* posting,
// reg_mr_iova2), completion channels, asynchronous events, and libibverbs' error returns.
// Chains of work requests, fixed and random, are verbs_post_test.cpp's.
#include <infiniband/verbs.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "compat/verbs_api/verbs_api_fixture.hpp"
#include "ipc/client.hpp"

namespace {

using softib::verbs_api_test::Env;
using softib::verbs_api_test::next_async_event;
using softib::verbs_api_test::Verbs;

const auto* const env = ::testing::AddGlobalTestEnvironment(new Env);

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
