// The fast paths of a one-packet message held to the general path: two devices, the same in
// everything but set_fast_paths(), take the same seeded stream of events and must agree after
// every step on the completions, the frames they send (their bytes), the counters, the QP
// state, async events and every byte of memory.
//
// The responder (Device::receive_send_only, receive_write_only): mostly SENDs and WRITEs that
// are exactly what comes next, with, at random, everything that must leave the fast path:
// duplicate and future PSNs, other QPs and transports, wrong P_Keys, TVer, PadCnt and
// truncated frames, payloads over the PMTU, multi-packet SENDs in between, missing receive
// WQEs (RNR), WQEs with bad keys or too short, several SGEs, WRITEs with a bad R_Key, out of
// the MR's bounds or whose DMA length is not their payload's, and the QP in error.
//
// The requester (Device::send_one_packet) and the completer's ACKs (Device::receive_ack):
// SENDs and WRITEs, with and without immediate, inline or not, of one SGE, several or none,
// some longer than the PMTU, some with a bad L_Key, between READs, atomics and fences; a link
// that refuses frames at random; ACKs (old, current and stale ones), NAKs and RNR NAKs from
// the peer, and timeouts that send again.
#include <arpa/inet.h>

#include <array>
#include <memory>
#include <tuple>

#include "protocol/rc_fixture.hpp"
#include "support/random.hpp"

namespace softib::testing {
namespace {

// One device and its memory, as the protocol fixture sets them up.
class Bed : public RcProtocol {
 public:
  explicit Bed(bool fast) { device.set_fast_paths(fast); }
  void TestBody() override {}
  // `n` SGEs over this bed's buffer at offsets `off` (a bad L_Key: one that was never issued).
  std::array<Sge, 4> sges(const std::array<size_t, 4>& off, const std::array<uint32_t, 4>& len, size_t n,
                          bool bad_key) const {
    std::array<Sge, 4> out{};
    for (size_t j = 0; j < n; ++j) {
      out[j] = Sge{reinterpret_cast<uint64_t>(buffer.data()) + off[j], len[j], mr->lkey};
      if (bad_key) out[j].lkey = LKey(mr->lkey.value() + 0x100);
    }
    return out;
  }
  using RcProtocol::bring_up;
  using RcProtocol::build;
  using RcProtocol::buffer;
  using RcProtocol::clock;
  using RcProtocol::connect;
  using RcProtocol::create;
  using RcProtocol::device;
  using RcProtocol::hdr;
  using RcProtocol::mr;
  using RcProtocol::pd;
  using RcProtocol::peer;
  using RcProtocol::poll;
  using RcProtocol::ack;
  using RcProtocol::addr;
  using RcProtocol::fill;
  using RcProtocol::rcq;
  using RcProtocol::scq;
  using RcProtocol::sink;
};

// Every field but the timestamp (none is taken here).
auto fields(const WorkCompletion& w) {
  return std::tie(w.wr_id, w.status, w.opcode, w.vendor_err, w.byte_len, w.imm_data, w.qp_num, w.src_qp, w.wc_flags,
                  w.pkey_index, w.slid, w.sl, w.dlid_path_bits);
}
void expect_same(const WorkCompletion& a, const WorkCompletion& b) { EXPECT_TRUE(fields(a) == fields(b)); }

void expect_same_counters(const rc::DeviceCounters& a, const rc::DeviceCounters& b) {
  auto counted = [](const rc::DeviceCounters& c) {
    return std::tie(c.rx_packets, c.tx_packets, c.rnr_naks_sent, c.seq_naks_sent, c.duplicates_replayed, c.retransmits,
                    c.drops);
  };
  EXPECT_TRUE(counted(a) == counted(b)) << "rx " << a.rx_packets << "/" << b.rx_packets << ", tx " << a.tx_packets
                                        << "/" << b.tx_packets;
}

struct Scenario {
  bool srq = false;
  Mtu mtu = Mtu::k256;
};

class FastPathAgainstGeneralPath : public ::testing::TestWithParam<Scenario> {};

TEST_P(FastPathAgainstGeneralPath, EveryStepEndsTheSame) {
  const Scenario sc = GetParam();
  TestRng rng;
  std::array<std::unique_ptr<Bed>, 2> beds{std::make_unique<Bed>(true), std::make_unique<Bed>(false)};
  std::array<rc::Qp*, 2> qps{};
  std::array<rc::Qp*, 2> ucs{};
  std::array<Srq*, 2> srqs{};
  QpOptions o;
  o.mtu = sc.mtu;
  o.rq_psn = static_cast<uint32_t>(rng.bits(24));
  o.depth = 64;
  // RESET (or a new QP) -> INIT -> RTR -> RTS against kPeerQpn, expecting `rq_psn` next.
  auto bring_up = [&](Bed& b, rc::Qp* qp, uint32_t rq_psn) {
    QpAttr at;
    at.qp_state = QpState::kReset;
    ASSERT_TRUE(b.device.modify_qp(qp, at, attr::kState).ok());
    o.rq_psn = rq_psn;
    b.bring_up(qp, o);
  };
  for (size_t i = 0; i < 2; ++i) {
    Bed& b = *beds[i];
    if (sc.srq) {
      auto srq = b.device.create_srq(b.pd, 64, 4, 8, nullptr);
      ASSERT_TRUE(srq.ok());
      srqs[i] = *srq;
    }
    QpInitAttr init;
    init.qp_type = QpType::kRc;
    init.cap = {64, 64, 4, 4, 64};
    auto qp = b.device.create_qp(b.pd, b.rcq, b.rcq, srqs[i], init, nullptr);
    ASSERT_TRUE(qp.ok());
    qps[i] = *qp;
    bring_up(b, qps[i], o.rq_psn);
    ucs[i] = b.connect(QpType::kUc, o);
  }
  const uint32_t mtu = mtu_bytes(sc.mtu);
  Psn epsn(o.rq_psn);  // what the peer believes comes next (the devices may disagree: that is the test)
  Psn confirmed = epsn;  // the last PSN an answer named
  int quiet = 0;         // steps without an answer

  auto post_recv = [&](uint64_t wr_id) {
    // The same WQE on both: one SGE mostly, sometimes several, a bad key or a short one.
    const uint32_t kind = static_cast<uint32_t>(rng.between(0, 99));
    const size_t nsge = kind < 75 ? 1 : kind < 90 ? rng.between(2, 4) : kind < 95 ? 0 : 1;
    std::array<size_t, 4> off{};
    std::array<uint32_t, 4> len{};
    for (size_t j = 0; j < nsge; ++j) {
      off[j] = rng.between(0, 48 * 1024);
      // Mostly room for any packet; sometimes too short for it (a local length error).
      len[j] = static_cast<uint32_t>(kind < 65 ? rng.between(mtu, mtu + 64)
                                     : kind < 75 ? rng.between(0, mtu)
                                                 : rng.between(mtu / 2, mtu));
    }
    const bool bad_key = kind >= 95;
    for (size_t i = 0; i < 2; ++i) {
      Bed& b = *beds[i];
      const std::array<Sge, 4> sges = b.sges(off, len, nsge, bad_key);
      RecvWr wr{wr_id, {sges.data(), nsge}};
      size_t bad = 0;
      const Status s = sc.srq ? b.device.post_srq_recv(srqs[i], std::span<const RecvWr>(&wr, 1), &bad)
                              : b.device.post_recv(qps[i], std::span<const RecvWr>(&wr, 1), &bad);
      (void)s;  // a full queue refuses on both (the tail compares what the queues did)
    }
  };

  std::vector<uint8_t> payload;
  uint64_t next_wr = 1;
  int restarts = 0;
  for (int i = 0; i < 16; ++i) post_recv(next_wr++);
  const int kSteps = 6000;
  for (int step = 0; step < kSteps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const uint32_t action = static_cast<uint32_t>(rng.between(0, 99));
    if (action < 12) {
      const uint64_t n = rng.between(1, 8);
      for (uint64_t k = 0; k < n; ++k) post_recv(next_wr++);
    } else if (action < 14) {
      const auto d = std::chrono::milliseconds(rng.between(0, 3));
      for (auto& b : beds) b->clock.advance(d);
    } else if (action == 14 && rng.between(0, 20) == 0) {
      // The QP to Error (rarely): everything flushes, and later packets are dropped.
      for (size_t i = 0; i < 2; ++i) {
        QpAttr at;
        at.qp_state = QpState::kError;
        ASSERT_TRUE(beds[i]->device.modify_qp(qps[i], at, attr::kState).ok());
      }
    } else if (action == 15) {
      const bool solicited_only = rng.coin();
      for (auto& b : beds) b->rcq->arm(solicited_only);
    } else {
      // A packet. Mostly a SEND ONLY with the PSN that comes next.
      const uint32_t op_kind = static_cast<uint32_t>(rng.between(0, 99));
      Opcode op = op_kind < 60   ? Opcode::kRcSendOnly
                  : op_kind < 72 ? Opcode::kRcSendOnlyWithImmediate
                  : op_kind < 74 ? Opcode::kRcSendFirst
                  : op_kind < 75 ? Opcode::kRcSendMiddle
                  : op_kind < 76 ? Opcode::kRcSendLast
                  : op_kind < 98 ? Opcode::kRcRdmaWriteOnly
                                 : Opcode::kUcSendOnly;
      const uint32_t psn_kind = static_cast<uint32_t>(rng.between(0, 99));
      const Psn psn = psn_kind < 85 ? epsn : psn_kind < 93 ? epsn - static_cast<uint32_t>(rng.between(1, 3))
                                                           : epsn + static_cast<uint32_t>(rng.between(1, 3));
      const uint32_t len_kind = static_cast<uint32_t>(rng.between(0, 99));
      const size_t len = op == Opcode::kRcSendFirst || op == Opcode::kRcSendMiddle ? mtu
                         : len_kind < 90                                           ? rng.between(0, mtu)
                         : len_kind < 95                                           ? mtu + 4 * rng.between(1, 8)
                                                                                   : 0;
      payload.resize(len);
      for (auto& c : payload) c = static_cast<uint8_t>(rng.next());
      // Everything random about the packet is drawn once: both devices get the same bytes.
      const uint32_t where = static_cast<uint32_t>(rng.between(0, 99));
      const bool ack_req = rng.coin();
      const bool wrong_pkey = rng.between(0, 49) == 0;
      const bool solicited = rng.between(0, 4) == 0;
      const uint32_t imm = static_cast<uint32_t>(rng.next());
      const uint32_t damage = static_cast<uint32_t>(rng.between(0, 99));
      const uint8_t pad_bits = static_cast<uint8_t>(rng.bits(2) << 4);
      const size_t cut = rng.between(1, 13);
      // A WRITE's RETH: mostly into the MR; else a bad R_Key, past the MR's end, or a DMA
      // length that is not the payload's.
      const uint32_t reth_kind = static_cast<uint32_t>(rng.between(0, 99));
      const uint32_t dma_delta = static_cast<uint32_t>(rng.between(1, 8));
      for (size_t i = 0; i < 2; ++i) {
        Bed& b = *beds[i];
        TransportHeaders h = Bed::hdr(qps[i], op, psn, ack_req);
        h.bth.dest_qp = where < 96 ? qps[i]->qpn() : where < 98 ? ucs[i]->qpn() : Qpn(0x777);
        if (wrong_pkey) h.bth.pkey = PKey(0x7123);
        h.bth.solicited = solicited;
        if (op == Opcode::kRcSendOnlyWithImmediate) h.immdt = wire::ImmDt{imm};
        if (op == Opcode::kRcRdmaWriteOnly) {
          wire::Reth reth{b.addr(60000), b.mr->rkey, static_cast<uint32_t>(len)};
          if (reth_kind >= 88 && reth_kind < 91) reth.rkey = RKey(b.mr->rkey.value() + 0x100);
          if (reth_kind >= 91 && reth_kind < 94) reth.va = b.addr(b.buffer.size() - len / 2);
          if (reth_kind >= 94 && reth_kind < 97) reth.dma_len += dma_delta;
          if (reth_kind >= 97 && len >= dma_delta) reth.dma_len -= dma_delta;
          h.reth = reth;
        }
        std::vector<uint8_t> frame = Bed::build(h, payload);
        // Damage: TVer, PadCnt, a cut.
        if (!frame.empty()) {
          if (damage == 0) frame[1] |= 0x01;
          if (damage == 1) frame[1] = static_cast<uint8_t>((frame[1] & ~0x30) | pad_bits);
          if (damage == 2) frame.resize(frame.size() - std::min(frame.size(), cut));
        }
        b.device.receive(Bed::peer(), frame);
      }
      if (psn == epsn && where < 96) epsn = epsn + 1;  // until an answer says otherwise
    }
    // Both devices step; everything they did must match.
    for (auto& b : beds) b->device.progress();
    const auto f0 = beds[0]->sink.take();
    const auto f1 = beds[1]->sink.take();
    ASSERT_EQ(f0.size(), f1.size());
    for (size_t j = 0; j < f0.size(); ++j) EXPECT_EQ(f0[j].bytes, f1[j].bytes) << "frame " << j;
    // The peer learns from the answers what to send next, as a requester would: an ACK moves
    // it on, a sequence or RNR NAK names the PSN to send again.
    for (const Sent& f : f0) {
      if (f.opcode != Opcode::kRcAcknowledge || f.h.bth.dest_qp != kPeerQpn) continue;
      const uint8_t syndrome = f.syndrome();
      if (syndrome == kAckSyndrome) epsn = f.psn() + 1;
      if (syndrome == kNakPsnSequence || (syndrome & 0xE0) == 0x20) epsn = f.psn();
      confirmed = epsn;
      quiet = 0;
    }
    // And a requester that hears nothing for a while goes back to what was last answered
    // (its retransmit timeout): a packet dropped silently after the one NAK a gap earns
    // would otherwise leave the peer ahead for good.
    if (f0.empty() && ++quiet == 8) {
      epsn = confirmed;
      quiet = 0;
    }
    const auto w0 = Bed::poll(beds[0]->rcq);
    const auto w1 = Bed::poll(beds[1]->rcq);
    ASSERT_EQ(w0.size(), w1.size());
    for (size_t j = 0; j < w0.size(); ++j) expect_same(w0[j], w1[j]);
    EXPECT_EQ(beds[0]->rcq->armed(), beds[1]->rcq->armed());
    EXPECT_EQ(qps[0]->state(), qps[1]->state());
    const auto a0 = beds[0]->device.take_async_events();
    const auto a1 = beds[1]->device.take_async_events();
    ASSERT_EQ(a0.size(), a1.size());
    for (size_t j = 0; j < a0.size(); ++j) EXPECT_EQ(a0[j].type, a1[j].type);
    expect_same_counters(beds[0]->device.counters(), beds[1]->device.counters());
    ASSERT_TRUE(beds[0]->buffer == beds[1]->buffer) << "memory differs";
    if (::testing::Test::HasFailure()) break;
    if (qps[0]->state() == QpState::kError) {
      // An error ends the connection (invalid request, a bad receive WQE, a remote access
      // error, or the step above): both QPs start again, from a new PSN, with new WQEs.
      ++restarts;
      const uint32_t rq_psn = static_cast<uint32_t>(rng.bits(24));
      for (size_t i = 0; i < 2; ++i) bring_up(*beds[i], qps[i], rq_psn);
      epsn = confirmed = Psn(rq_psn);
      for (int i = 0; i < 8; ++i) post_recv(next_wr++);
    }
  }
  EXPECT_GT(restarts, 0) << "the stream never put the QP in error";
  // The fast path ran, and often; the general bed never took it.
  EXPECT_GT(beds[0]->device.counters().fast_received, static_cast<uint64_t>(kSteps) / 4)
      << beds[0]->device.counters().rx_packets << " packets, " << restarts << " restarts, drops " << ::testing::PrintToString(beds[0]->device.counters().drops) << " rnr " << beds[0]->device.counters().rnr_naks_sent << " seq " << beds[0]->device.counters().seq_naks_sent;
  EXPECT_EQ(beds[1]->device.counters().fast_received, 0u);
}

// ---- the requester ----

// (path MTU, whether the fast bed posts through Device::post_send_now)
class RequesterFastPathAgainstGeneralPath : public ::testing::TestWithParam<std::tuple<Mtu, bool>> {};

TEST_P(RequesterFastPathAgainstGeneralPath, EveryStepEndsTheSame) {
  const Mtu path_mtu = std::get<0>(GetParam());
  const uint32_t mtu = mtu_bytes(path_mtu);
  TestRng rng;
  std::array<std::unique_ptr<Bed>, 2> beds{std::make_unique<Bed>(true), std::make_unique<Bed>(false)};
  std::array<rc::Qp*, 2> qps{};
  QpOptions o;
  o.mtu = path_mtu;
  o.sq_psn = static_cast<uint32_t>(rng.bits(24));
  o.depth = 64;
  o.timeout = 8;  // ~1 ms
  o.retry_cnt = 7;
  o.rnr_retry = 7;
  for (size_t i = 0; i < 2; ++i) qps[i] = beds[i]->connect(QpType::kRc, o);
  for (size_t i = 0; i < 2; ++i) beds[i]->fill(0, 64 * 1024, 5);
  Psn sent_high(o.sq_psn);  // the peer has seen requests up to here (exclusive)
  Psn acked(o.sq_psn);      // and acknowledged up to here (exclusive)
  int restarts = 0;

  const bool post_now = std::get<1>(GetParam());
  uint64_t posted_now = 0;
  auto post_send = [&]() {
    const uint32_t kind = static_cast<uint32_t>(rng.between(0, 99));
    const WrOpcode op = kind < 55   ? WrOpcode::kSend
                        : kind < 70 ? WrOpcode::kSendWithImm
                        : kind < 82 ? WrOpcode::kRdmaWrite
                        : kind < 90 ? WrOpcode::kRdmaWriteWithImm
                        : kind < 96 ? WrOpcode::kRdmaRead
                                    : WrOpcode::kAtomicFetchAndAdd;
    const bool atomic = op == WrOpcode::kAtomicFetchAndAdd;
    const uint32_t shape = static_cast<uint32_t>(rng.between(0, 99));
    const size_t nsge = atomic ? 1 : shape < 80 ? 1 : shape < 92 ? rng.between(2, 4) : 0;
    std::array<size_t, 4> off{};
    std::array<uint32_t, 4> len{};
    for (size_t j = 0; j < nsge; ++j) {
      off[j] = atomic ? 8 * rng.between(0, 100) : rng.between(0, 40 * 1024);
      len[j] = atomic ? 8 : static_cast<uint32_t>(rng.between(0, 100) < 85 ? rng.between(0, mtu) : rng.between(mtu, 3 * mtu));
    }
    uint64_t total = 0;
    for (size_t j = 0; j < nsge; ++j) total += len[j];
    const bool inline_data = !atomic && op != WrOpcode::kRdmaRead && total <= 64 && rng.between(0, 2) == 0;
    const bool bad_key = rng.between(0, 49) == 0;
    uint32_t flags = (rng.coin() ? send_flag::kSignaled : 0u) | (rng.between(0, 4) == 0 ? send_flag::kSolicited : 0u) |
                     (rng.between(0, 19) == 0 ? send_flag::kFence : 0u) | (inline_data ? send_flag::kInline : 0u);
    const uint64_t wr_id = rng.next();
    const uint32_t imm = static_cast<uint32_t>(rng.next());
    const uint64_t remote = rng.next() & ~uint64_t{7};
    const uint32_t rkey = static_cast<uint32_t>(rng.next());
    for (size_t i = 0; i < 2; ++i) {
      Bed& b = *beds[i];
      const std::array<Sge, 4> sges = b.sges(off, len, nsge, bad_key);
      SendWr wr;
      wr.wr_id = wr_id;
      wr.opcode = op;
      wr.send_flags = flags;
      wr.sg_list = {sges.data(), nsge};
      wr.imm_data = imm;
      wr.rdma = {remote, RKey(rkey)};
      wr.atomic.remote_addr = remote;
      wr.atomic.rkey = RKey(rkey);
      wr.atomic.compare_add = imm;
      // post_now: each post is followed by its step's first progress, as an application's
      // post is (engine::Engine::post_inline), and the fast bed sends the frame before the
      // WQE when that is all the two would do (Device::post_send_now, Engine::post_now).
      if (i == 0 && post_now) {
        if (const std::optional<Status> s = b.device.post_send_now(*qps[i], wr)) {
          EXPECT_TRUE(s->ok());
          ++posted_now;
          continue;
        }
      }
      size_t bad = 0;
      (void)b.device.post_send(qps[i], std::span<const SendWr>(&wr, 1), &bad);  // a full queue refuses on both
      if (post_now) b.device.progress(rc::Device::AckPolicy::kHoldOneStep, rc::Device::Timers::kLater);
    }
  };

  // The peer answers READs and atomics as they arrive: the responses of the requests the
  // last step sent (and of any sent again), in order.
  struct Pending {
    Opcode op;
    Psn psn;
    uint32_t dma_len;
  };
  std::vector<Pending> to_answer;
  std::vector<uint8_t> data(3 * 4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13 + 1);
  auto answer_reads = [&]() {
    for (const Pending& q : to_answer) {
      if (q.op == Opcode::kRcFetchAdd) {
        for (size_t i = 0; i < 2; ++i) {
          TransportHeaders h = Bed::ack(qps[i], q.psn, wire::Aeth::ack(0));
          h.bth.opcode = static_cast<uint8_t>(Opcode::kRcAtomicAcknowledge);
          h.atomic_ack_eth = wire::AtomicAckEth{0x1234};
          beds[i]->device.receive(Bed::peer(), Bed::build(h));
        }
        continue;
      }
      const uint32_t n = std::max<uint32_t>(1, (q.dma_len + mtu - 1) / mtu);
      for (uint32_t k = 0; k < n; ++k) {
        const Opcode op = n == 1       ? Opcode::kRcRdmaReadResponseOnly
                          : k == 0     ? Opcode::kRcRdmaReadResponseFirst
                          : k + 1 == n ? Opcode::kRcRdmaReadResponseLast
                                       : Opcode::kRcRdmaReadResponseMiddle;
        const size_t bytes = std::min<size_t>(mtu, q.dma_len - std::min<size_t>(q.dma_len, size_t{k} * mtu));
        for (size_t i = 0; i < 2; ++i) {
          TransportHeaders h = Bed::ack(qps[i], q.psn + k, wire::Aeth::ack(0));
          h.bth.opcode = static_cast<uint8_t>(op);
          if (op == Opcode::kRcRdmaReadResponseMiddle) h.aeth.reset();
          beds[i]->device.receive(Bed::peer(), Bed::build(h, wire::ByteSpan(data.data(), bytes)));
        }
      }
    }
    to_answer.clear();
  };

  const int kSteps = 5000;
  for (int step = 0; step < kSteps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    answer_reads();
    const uint32_t action = static_cast<uint32_t>(rng.between(0, 99));
    if (action < 40) {
      const uint64_t n = rng.between(1, 6);
      for (uint64_t k = 0; k < n; ++k) post_send();
    } else if (action < 48) {
      // The link refuses frames for a while, after letting some through.
      const int pass = static_cast<int>(rng.between(0, 3));
      const int refuse = static_cast<int>(rng.between(1, 4));
      for (auto& b : beds) {
        b->sink.pass = pass;
        b->sink.refuse = refuse;
      }
    } else if (action < 52) {
      const auto d = std::chrono::microseconds(rng.between(0, 3000));
      for (auto& b : beds) b->clock.advance(d);
    } else if (action < 85 && before(acked, sent_high)) {
      // The peer answers: mostly an ACK up to a PSN it has seen, sometimes a NAK.
      const uint32_t outstanding = static_cast<uint32_t>(Psn::distance(acked, sent_high));
      const Psn psn = acked + static_cast<uint32_t>(rng.between(0, outstanding - 1));
      const uint32_t answer = static_cast<uint32_t>(rng.between(0, 99));
      const wire::Aeth aeth = answer < 85   ? wire::Aeth::ack(0)
                              : answer < 92 ? wire::Aeth::nak(0, wire::NakCode::kPsnSequenceError)
                              : answer < 98 ? wire::Aeth::rnr_nak(0, 1)
                                            : wire::Aeth::nak(0, wire::NakCode::kRemoteAccessError);
      // Now and then one the requester must not take: a wrong P_Key, another QP, TVer or
      // PadCnt set, a byte too many or too few.
      const uint32_t damage = static_cast<uint32_t>(rng.between(0, 99));
      for (size_t i = 0; i < 2; ++i) {
        TransportHeaders h = Bed::ack(qps[i], psn, aeth);
        if (damage == 0) h.bth.pkey = PKey(0x7123);
        if (damage == 1) h.bth.dest_qp = Qpn(0x777);
        std::vector<uint8_t> frame = Bed::build(h);
        if (damage == 2) frame[1] |= 0x01;
        if (damage == 3) frame[1] |= 0x10;
        if (damage == 4) frame.push_back(0);
        if (damage == 5) frame.pop_back();
        beds[i]->device.receive(Bed::peer(), frame);
      }
      if (answer < 85 && damage > 5) acked = psn + 1;
    }
    for (auto& b : beds) b->device.progress();
    const auto f0 = beds[0]->sink.take();
    const auto f1 = beds[1]->sink.take();
    ASSERT_EQ(f0.size(), f1.size());
    for (size_t j = 0; j < f0.size(); ++j) {
      EXPECT_EQ(f0[j].bytes, f1[j].bytes) << "frame " << j;
      // What the peer has seen: a READ's responses take PSNs up to its last one.
      Psn end = f0[j].psn() + 1;
      if (f0[j].opcode == Opcode::kRcRdmaReadRequest) {
        end = f0[j].psn() + std::max<uint32_t>(1, (f0[j].h.reth->dma_len + mtu - 1) / mtu);
        to_answer.push_back({f0[j].opcode, f0[j].psn(), f0[j].h.reth->dma_len});
      }
      if (f0[j].opcode == Opcode::kRcFetchAdd) to_answer.push_back({f0[j].opcode, f0[j].psn(), 8});
      if (before(sent_high, end)) sent_high = end;
    }
    const auto w0 = Bed::poll(beds[0]->scq);
    const auto w1 = Bed::poll(beds[1]->scq);
    ASSERT_EQ(w0.size(), w1.size());
    for (size_t j = 0; j < w0.size(); ++j) expect_same(w0[j], w1[j]);
    EXPECT_EQ(qps[0]->state(), qps[1]->state());
    const auto a0 = beds[0]->device.take_async_events();
    const auto a1 = beds[1]->device.take_async_events();
    ASSERT_EQ(a0.size(), a1.size());
    expect_same_counters(beds[0]->device.counters(), beds[1]->device.counters());
    EXPECT_EQ(beds[0]->sink.refused, beds[1]->sink.refused);
    if (::testing::Test::HasFailure()) break;
    if (qps[0]->state() == QpState::kError) {
      // A bad L_Key, a remote access NAK or retries run out: both QPs start again.
      ++restarts;
      const uint32_t sq_psn = static_cast<uint32_t>(rng.bits(24));
      for (size_t i = 0; i < 2; ++i) {
        QpAttr at;
        at.qp_state = QpState::kReset;
        ASSERT_TRUE(beds[i]->device.modify_qp(qps[i], at, attr::kState).ok());
        o.sq_psn = sq_psn;
        beds[i]->bring_up(qps[i], o);
        beds[i]->sink.pass = beds[i]->sink.refuse = 0;
      }
      Bed::poll(beds[0]->scq);
      Bed::poll(beds[1]->scq);
      sent_high = acked = Psn(sq_psn);
      to_answer.clear();
    }
  }
  EXPECT_GT(restarts, 0) << "the stream never put the QP in error";
  EXPECT_GT(beds[0]->device.counters().fast_sent, static_cast<uint64_t>(kSteps) / 4)
      << beds[0]->device.counters().tx_packets << " packets, " << restarts << " restarts";
  EXPECT_EQ(beds[1]->device.counters().fast_sent, 0u);
  EXPECT_GT(beds[0]->device.counters().fast_received, 0u) << "ACKs by the completer's fast path";
  EXPECT_EQ(beds[1]->device.counters().fast_received, 0u);
  EXPECT_GT(beds[0]->sink.refused, 0u);
  EXPECT_GT(beds[0]->device.counters().retransmits, 0u);
  if (post_now) {
    EXPECT_GT(posted_now, static_cast<uint64_t>(kSteps) / 20) << "posts sent by post_send_now";
  }
}

INSTANTIATE_TEST_SUITE_P(Rc, RequesterFastPathAgainstGeneralPath,
                         ::testing::Combine(::testing::Values(Mtu::k256, Mtu::k1024, Mtu::k4096), ::testing::Bool()),
                         [](const auto& p) {
                           return "Mtu" + std::to_string(mtu_bytes(std::get<0>(p.param))) +
                                  (std::get<1>(p.param) ? "PostedNow" : "");
                         });

INSTANTIATE_TEST_SUITE_P(Rc, FastPathAgainstGeneralPath,
                         ::testing::Values(Scenario{false, Mtu::k256}, Scenario{false, Mtu::k1024},
                                           Scenario{false, Mtu::k4096}, Scenario{true, Mtu::k256},
                                           Scenario{true, Mtu::k2048}),
                         [](const auto& p) {
                           return std::string(p.param.srq ? "Srq" : "Rq") +
                                  std::to_string(mtu_bytes(p.param.mtu));
                         });

}  // namespace
}  // namespace softib::testing
