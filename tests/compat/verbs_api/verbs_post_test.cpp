// Chains of work requests through the drop-in libibverbs' two post paths (one request at a
// time, and lists converted in batches): fixed chains with several SGEs and a bad request,
// and seeded random chains of every opcode, flag, SGE count, key and bound. The fixture and the
// private fabric are verbs_api_fixture.hpp's.
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compat/verbs_api/verbs_api_fixture.hpp"
#include "support/random.hpp"

namespace {

using softib::verbs_api_test::Verbs;

// Chains of work requests longer than the drop-in converts at a time (16) and with several
// SGEs each: every request is posted, completes once, in order, its bytes scattered and
// gathered where its SGEs say; a poll for many completions drains them across its internal
// batches. A chain with a bad request posts those before it and points bad_wr at it.
TEST_F(Verbs, ChainsOfWorkRequestsPostWholeAndStopAtTheFirstBadOne) {
  ibv_cq* cq = nullptr;
  ibv_qp *a = nullptr, *b = nullptr;
  ASSERT_NO_FATAL_FAILURE(connected_pair(256, {64, 64, 4, 4, 0}, &cq, &a, &b));
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
  ibv_cq* cq = nullptr;
  ibv_qp *a = nullptr, *b = nullptr;
  ASSERT_NO_FATAL_FAILURE(connected_pair(4096, {128, 128, 4, 4, 64}, &cq, &a, &b));
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

}  // namespace
