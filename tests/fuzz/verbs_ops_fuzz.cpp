// Fuzzes the verbs data path from the application's side: any sequence of posts, polls,
// modifies and memory registrations, well or badly formed, on two devices joined by a
// SimFabric in virtual time (seeded loss, duplication and reordering when the input asks).
// Whatever the sequence, nothing may crash, assert, leak or touch memory outside the
// registered buffers (the fuzz build runs ASan and UBSan), and the completions must be what
// the IBA and libibverbs promise, checked against a model of every work request:
//   - a post that fails posts none of its list from `bad` on, and nothing it refused ever
//     completes;
//   - no work request completes twice, and each queue (a QP's send queue, its receive queue)
//     completes its requests in the order they were posted, on its own QP;
//   - a successful completion of an unsignaled send is never reported (sq_sig_all aside), and
//     a send's successful completion carries its opcode; a receive's byte_len fits its SGEs;
//   - at the end every QP is moved to Error: then every receive posted, every signaled send
//     and every failed unsignaled send has completed exactly once (flushed if not before).
// Moving a QP to Reset discards its queues (IBA 10.3.1): what it held may not complete after.
//
// The devices, fresh for every input (a crash reproduces from its input alone): A (LID 1)
// and B (LID 2), each with one PD, a send CQ and a receive CQ shared by four QPs (RC, UC, UD,
// and an RC QP on the side's SRQ, each connected to B's of the same kind), a 64 KiB buffer
// whose first 48 KiB are the main MR and last 16 KiB a second MR the input may deregister and
// register again, and AHs to the peer and to a LID where nothing is. Receives posted to the
// SRQ stay there when their QP is flushed or reset: the model owes them no completion, only
// order and at most one.
//
// The input:
//   byte 0   bits 0-1  path MTU 256 << n      bit 2  sq_sig_all on the RC QPs
//            bits 3-4  impairment: none, 2 % loss, 10 % loss + reordering + duplicates, 30 %
//            bit 5     A posts as the engine does (Device::post_send_now, then a step that
//                      holds ACKs), else with post_send alone
//            bits 6-7  RC timers: 0 timeout 14 retry 7 rnr 7, 1 timeout 8 retry 1 rnr 1,
//                      2 timeout 1 retry 0 rnr 0, 3 timeout 0 (infinite) retry 7 rnr 7
//   byte 1   the fabric's seed
//   then operations, each a byte (its low 3 bits the kind) and the bytes it reads; an input
//   that runs out reads zeros:
//     0 post_send    side/QP byte (bit 0 the side, bits 1-2 the QP, bit 7: all or nothing,
//                    Device::check_send then post_send, as ibv_wr_complete), chain length byte (1-4), then per work request: opcode,
//                    flags (low 5: fence, signaled, solicited, inline, IP csum), SGE count
//                    (0-5, or 6 = 33), per SGE a key choice, 2 bytes offset, 2 bytes length;
//                    remote key choice, 2 bytes remote offset, 4 bytes immediate; UD: AH,
//                    destination QP and Q_Key choices
//     1 post_recv    side/QP byte, chain length byte, per work request an SGE count and SGEs
//     2 poll         side/CQ byte, how many (1-16)
//     3 time         settle, or run the fabric 10 us / 1 ms / 20 ms / 500 ms of virtual time
//                    (none once the fabric has carried kMaxFrames)
//     4 modify_qp    side/QP byte, a choice: Error, SQD, RTS, Reset, reconnect from Reset with
//                    new PSNs, any state with any mask and attributes from the input, or
//                    destroy and create again (the peer reset and both reconnected)
//     5 memory       side byte, a choice: deregister / register the second MR, re-register
//                    the main MR with other access, or deregister and register it again
//     6 step         a device's engine-style step (hold_acks_without_progress, else progress
//                    holding ACKs, timers later)
//     7 impairment   change it, as byte 0's bits 3-4
// tests/fuzz/make_verbs_ops_corpus.py writes seeds in this format.
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/assert.hpp"
#include "base/clock.hpp"
#include "fuzz_target.hpp"
#include "link/sim_fabric.hpp"
#include "rc/device.hpp"
#include "verbs/caps.hpp"

using namespace softib;
using namespace softib::verbs;

namespace {

constexpr size_t kBufferLen = 64 * 1024;
constexpr size_t kSecondAt = 48 * 1024;  // the second MR: [kSecondAt, kBufferLen)
constexpr uint32_t kDepth = 24;
constexpr uint32_t kMaxSge = 4;
constexpr uint32_t kMaxInline = 64;
constexpr uint32_t kQkey = 0x11111111;
constexpr uint64_t kMaxFrames = 20000;
constexpr uint32_t kCqe = 4096;  // more than an input can post: no overflow to model
constexpr size_t kQps = 4;  // RC, UC, UD, and RC on the side's SRQ
constexpr size_t kSrqQp = 3;
constexpr std::array<QpType, kQps> kTypes = {QpType::kRc, QpType::kUc, QpType::kUd, QpType::kRc};
constexpr uint32_t kAllAccess = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;

// SOFTIB_FUZZ_TRACE=1: every post, its result and every completion on stderr (to read a
// crashing input).
const bool kTrace = std::getenv("SOFTIB_FUZZ_TRACE") != nullptr;

class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ >= end_; }
  uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() << 8 | u8()); }
  uint32_t u32() { return static_cast<uint32_t>(u16()) << 16 | u16(); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

rc::PortAttr port_of(Lid lid) {
  rc::PortAttr p;
  p.lid = lid;
  p.gids.push_back(Gid(Gid::kDefaultSubnetPrefix, Guid(0x0002c90300000000ULL | lid.value())));
  return p;
}

link::Impairment impairment(uint8_t level) {
  switch (level & 3) {
    case 1: return {0.02, 0, 0};
    case 2: return {0.10, 0.05, 0.10};
    case 3: return {0.30, 0, 0};
    default: return {};
  }
}

// One work request as the model follows it.
struct Posted {
  int side;
  size_t qp;
  bool recv;
  bool signaled;  // a send's completion is due on success (signaled, or sq_sig_all)
  WrOpcode opcode;
  uint64_t capacity;  // a receive's SGE bytes
  uint32_t epoch;     // the queue's epoch when posted (a Reset ends it)
  bool srq = false;   // a receive posted to the SRQ: a QP's flush leaves it there
  bool completed = false;
};

struct Node {
  Node(link::SimFabric& fabric, ManualClock& clock, Lid lid)
      : device(default_caps(), port_of(lid), fabric.sink_for(lid), clock), buffer(kBufferLen) {
    fabric.attach(lid, &device);
    pd = device.alloc_pd();
    scq = *device.create_cq(kCqe, nullptr);
    rcq = *device.create_cq(kCqe, nullptr);
    srq = *device.create_srq(pd, kDepth * 2, kMaxSge, 0, nullptr);
    for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<uint8_t>(i * 13 + lid.value());
    main = register_at(0, kSecondAt, kAllAccess);
    second = register_at(kSecondAt, kBufferLen - kSecondAt, kAllAccess);
  }
  uint64_t addr(size_t offset) const { return reinterpret_cast<uint64_t>(buffer.data()) + offset; }
  const Mr* register_at(size_t offset, size_t len, uint32_t access) {
    auto mr = device.mrs().reg(pd, buffer.data() + offset, len, addr(offset), access);
    SOFTIB_ASSERT_MSG(mr.ok(), mr.error().to_string().c_str());
    return *mr;
  }

  rc::Device device;
  std::vector<uint8_t> buffer;
  Pd* pd = nullptr;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  Srq* srq = nullptr;
  const Mr* main = nullptr;    // null while deregistered
  const Mr* second = nullptr;  // null while deregistered
  uint32_t stale_key = 0x7777;  // the last key deregistered
  Ah* to_peer = nullptr;
  Ah* to_nowhere = nullptr;
  std::array<rc::Qp*, kQps> qps{};
  std::array<uint32_t, kQps> send_epoch{};
  std::array<uint32_t, kQps> recv_epoch{};
  // Per queue, the wr_id of the last completion seen (completions come in posting order).
  std::array<uint64_t, kQps> last_send{};
  std::array<uint64_t, kQps> last_recv{};
};

class Harness {
 public:
  explicit Harness(Input& in)
      : config_(in.u8()), fabric_(clock_, in.u8()), a_(fabric_, clock_, Lid(1)), b_(fabric_, clock_, Lid(2)) {
    mtu_ = static_cast<Mtu>(1 + (config_ & 3));
    for (Node* n : {&a_, &b_}) {
      const Lid peer = n == &a_ ? Lid(2) : Lid(1);
      AhAttr ah;
      ah.dlid = peer;
      ah.port_num = 1;
      n->to_peer = *n->device.create_ah(n->pd, ah);
      ah.dlid = Lid(9);
      n->to_nowhere = *n->device.create_ah(n->pd, ah);
      for (size_t q = 0; q < kQps; ++q) n->qps[q] = create_qp(*n, q);
    }
    for (size_t q = 0; q < kQps; ++q) {
      connect(a_, q, 0x1000, 0x2000);
      connect(b_, q, 0x2000, 0x1000);
    }
    fabric_.set_impairment(impairment(static_cast<uint8_t>(config_ >> 3)));
  }

  void run(Input& in) {
    while (!in.done()) {
      const uint8_t op = in.u8();
      switch (op & 7) {
        case 0: post_send(in); break;
        case 1: post_recv(in); break;
        case 2: poll(in); break;
        case 3: time(in); break;
        case 4: modify(in); break;
        case 5: memory(in); break;
        case 6: step(in); break;
        case 7: fabric_.set_impairment(impairment(in.u8())); break;
      }
    }
    finish();
  }

 private:
  Node& side(uint8_t b) { return (b & 1) != 0 ? b_ : a_; }
  Node& peer_of(const Node& n) { return &n == &a_ ? b_ : a_; }

  rc::Qp* create_qp(Node& n, size_t q) {
    QpInitAttr init;
    init.qp_type = kTypes[q];
    init.cap = {kDepth, kDepth, kMaxSge, kMaxSge, kMaxInline};
    init.sq_sig_all = kTypes[q] == QpType::kRc && (config_ & 4) != 0;
    init.use_srq = q == kSrqQp;
    auto qp = n.device.create_qp(n.pd, n.scq, n.rcq, q == kSrqQp ? n.srq : nullptr, init, nullptr);
    SOFTIB_ASSERT_MSG(qp.ok(), qp.error().to_string().c_str());
    return *qp;
  }

  void modify_ok(Node& n, size_t q, const QpAttr& at, uint32_t mask) {
    const Status s = n.device.modify_qp(n.qps[q], at, mask);
    SOFTIB_ASSERT_MSG(s.ok(), s.to_string().c_str());
  }

  // Reset -> Init -> RTR -> RTS (UD: with its Q_Key), with the RC timers byte 0 chose.
  void connect(Node& n, size_t q, uint32_t sq_psn, uint32_t rq_psn) {
    const bool rc = kTypes[q] == QpType::kRc;
    const bool ud = kTypes[q] == QpType::kUd;
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    if (ud) {
      at.qkey = QKey(kQkey);
      modify_ok(n, q, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey);
      at = {};
      at.qp_state = QpState::kRtr;
      modify_ok(n, q, at, attr::kState);
      at.qp_state = QpState::kRts;
      at.sq_psn = Psn(sq_psn);
      modify_ok(n, q, at, attr::kState | attr::kSqPsn);
      return;
    }
    at.qp_access_flags = rc ? access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic : access::kRemoteWrite;
    modify_ok(n, q, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
    at = {};
    at.qp_state = QpState::kRtr;
    at.path_mtu = mtu_;
    at.dest_qp_num = peer_of(n).qps[q]->qpn();
    at.rq_psn = Psn(rq_psn);
    at.ah_attr.dlid = &n == &a_ ? Lid(2) : Lid(1);
    at.ah_attr.port_num = 1;
    at.max_dest_rd_atomic = 4;
    at.min_rnr_timer = 1;
    uint32_t mask = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn;
    if (rc) mask |= attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
    modify_ok(n, q, at, mask);
    at = {};
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(sq_psn);
    static constexpr std::array<std::array<uint8_t, 3>, 4> kTimers = {{{14, 7, 7}, {8, 1, 1}, {1, 0, 0}, {0, 7, 7}}};
    const auto& t = kTimers[config_ >> 6];
    at.timeout = t[0];
    at.retry_cnt = t[1];
    at.rnr_retry = t[2];
    at.max_rd_atomic = 4;
    mask = attr::kState | attr::kSqPsn;
    if (rc) mask |= attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic;
    modify_ok(n, q, at, mask);
  }

  // A key of `n`'s (its L_Key, or its R_Key when `remote`): the main MR's, the second's, the
  // last one deregistered, or any.
  static uint32_t key(const Node& n, uint8_t choice, Input& in, bool remote) {
    if ((choice & 3) == 3) return in.u32();
    const Mr* mr = (choice & 3) == 0 ? n.main : (choice & 3) == 1 ? n.second : nullptr;
    if (mr == nullptr) return n.stale_key;
    return remote ? mr->rkey.value() : mr->lkey.value();
  }
  // A length: small, up to a page, up to 64 KiB, or near 4 GiB.
  static uint32_t length(uint16_t v) {
    const uint32_t base = v & 0x3fff;
    switch (v >> 14) {
      case 0: return base % 65;
      case 1: return base % 4097;
      case 2: return base * 4;
      default: return 0xffffffffu - base;
    }
  }
  static size_t sge_count(uint8_t b) { return b % 7 == 6 ? size_t{33} : size_t{b} % 7; }

  // SGEs from the input. Inline data is read at the post from wherever the SGEs point, with
  // no key (as libibverbs does): those stay inside the buffer, as a correct program's do.
  std::vector<Sge> sges(Node& n, size_t count, bool in_buffer, Input& in) {
    std::vector<Sge> out(count);
    for (Sge& s : out) {
      const uint8_t choice = in.u8();
      const uint32_t offset = in.u16() * 2u;
      uint32_t len = length(in.u16());
      s.lkey = LKey(key(n, choice, in, false));
      if (in_buffer) {
        const uint32_t at = offset % kBufferLen;
        len = std::min<uint32_t>(len, static_cast<uint32_t>(kBufferLen - at));
        s.addr = n.addr(at);
      } else {
        s.addr = n.addr(offset);  // up to 128 KiB in: past the buffer's end too
      }
      s.length = len;
    }
    return out;
  }

  Posted& track(uint64_t id, Posted p) { return posted_.emplace(id, p).first->second; }

  void post_send(Input& in) {
    const uint8_t which = in.u8();
    Node& n = side(which);
    Node& peer = peer_of(n);
    const size_t q = (which >> 1) % kQps;
    rc::Qp* qp = n.qps[q];
    const size_t chain = 1 + in.u8() % 4;
    std::vector<std::vector<Sge>> lists(chain);
    std::vector<SendWr> wrs(chain);
    for (size_t i = 0; i < chain; ++i) {
      SendWr& wr = wrs[i];
      wr.wr_id = ++next_id_;
      wr.opcode = static_cast<WrOpcode>(in.u8() % 10);
      wr.send_flags = in.u8() & 0x1f;
      const bool inline_data = (wr.send_flags & send_flag::kInline) != 0;
      lists[i] = sges(n, sge_count(in.u8()), inline_data, in);
      wr.sg_list = lists[i];
      const uint8_t rk = in.u8();
      const uint64_t remote = peer.addr(0) + in.u16() * 2u;
      wr.imm_data = in.u32();
      if (wr.opcode == WrOpcode::kAtomicCmpAndSwp || wr.opcode == WrOpcode::kAtomicFetchAndAdd) {
        wr.atomic.rkey = RKey(key(peer, rk, in, true));
        wr.atomic.remote_addr = remote & ~uint64_t{(rk & 4) != 0 ? 0u : 7u};  // some unaligned
        wr.atomic.compare_add = wr.imm_data;
        wr.atomic.swap = ~uint64_t{wr.imm_data};
      } else {
        wr.rdma.rkey = RKey(key(peer, rk, in, true));
        wr.rdma.remote_addr = remote;
      }
      if (kTypes[q] == QpType::kUd) {
        const uint8_t u = in.u8();
        wr.ud.ah = (u & 3) == 0 ? n.to_peer : (u & 3) == 1 ? n.to_nowhere : (u & 3) == 2 ? nullptr : n.to_peer;
        wr.ud.remote_qpn = (u & 12) == 0 ? peer.qps[q]->qpn() : (u & 12) == 4 ? peer.qps[0]->qpn() : Qpn(in.u32() & Qpn::kMask);
        wr.ud.remote_qkey = QKey((u & 16) == 0 ? kQkey : in.u32());
      }
    }
    size_t bad = 0;
    Status s;
    const bool engine_style = (config_ & 0x20) != 0 && &n == &a_;
    if ((which & 0x80) != 0) {
      // All or nothing (ibv_wr_complete): what check_send passes, post_send must take whole.
      s = n.device.check_send(*qp, wrs, &bad);
      if (s.ok()) {
        s = n.device.post_send(qp, wrs, &bad);
        SOFTIB_ASSERT_MSG(s.ok() && bad == chain, "post_send refused a list check_send passed");
      } else {
        bad = 0;  // nothing posted
      }
      if (kTrace) std::fprintf(stderr, "post_send whole: %s\n", s.ok() ? "posted" : "refused");
    } else if (engine_style && chain == 1) {
      // As engine::Engine::post: the fast path first, else post_send with the QP made active
      // by the caller, then the step's progress (ACKs held, timers later).
      if (std::optional<Status> now = n.device.post_send_now(*qp, wrs[0])) {
        s = *now;
        bad = s.ok() ? 1 : 0;
      } else {
        s = n.device.post_send(qp, wrs, &bad, rc::Device::PostNotice::kCallerActivates);
        n.device.activate(*qp);
      }
      n.device.progress(rc::Device::AckPolicy::kHoldOneStep, rc::Device::Timers::kLater);
    } else {
      s = n.device.post_send(qp, wrs, &bad);
    }
    SOFTIB_ASSERT(s.ok() ? bad == chain : bad < chain);
    if (kTrace) {
      for (size_t i = 0; i < chain; ++i)
        std::fprintf(stderr, "post_send %c qp%zu wr %llu %s flags %#x sges %zu%s\n", &n == &a_ ? 'A' : 'B', q,
                     static_cast<unsigned long long>(wrs[i].wr_id), std::string(to_string(wrs[i].opcode)).c_str(),
                     wrs[i].send_flags, wrs[i].sg_list.size(), i < bad ? "" : i == bad ? " REFUSED" : " not posted");
    }
    for (size_t i = 0; i < bad; ++i) {
      const bool signaled = (wrs[i].send_flags & send_flag::kSignaled) != 0 || (kTypes[q] == QpType::kRc && (config_ & 4) != 0);
      track(wrs[i].wr_id, {&n == &a_ ? 0 : 1, q, false, signaled, wrs[i].opcode, 0, n.send_epoch[q]});
    }
  }

  void post_recv(Input& in) {
    const uint8_t which = in.u8();
    Node& n = side(which);
    const size_t q = (which >> 1) % kQps;
    const size_t chain = 1 + in.u8() % 4;
    std::vector<std::vector<Sge>> lists(chain);
    std::vector<RecvWr> wrs(chain);
    for (size_t i = 0; i < chain; ++i) {
      lists[i] = sges(n, sge_count(in.u8()), false, in);
      wrs[i] = {++next_id_, lists[i]};
    }
    size_t bad = 0;
    const Status s = q == kSrqQp ? n.device.post_srq_recv(n.srq, wrs, &bad) : n.device.post_recv(n.qps[q], wrs, &bad);
    SOFTIB_ASSERT(s.ok() ? bad == chain : bad < chain);
    if (kTrace) {
      for (size_t i = 0; i < chain; ++i)
        std::fprintf(stderr, "post_recv %c qp%zu wr %llu%s\n", &n == &a_ ? 'A' : 'B', q,
                     static_cast<unsigned long long>(wrs[i].wr_id), i < bad ? "" : i == bad ? " REFUSED" : " not posted");
    }
    for (size_t i = 0; i < bad; ++i) {
      uint64_t capacity = 0;
      for (const Sge& g : lists[i]) capacity += g.length;
      track(wrs[i].wr_id, {&n == &a_ ? 0 : 1, q, true, true, WrOpcode::kSend, capacity, n.recv_epoch[q], q == kSrqQp});
    }
  }

  // Checks one completion against the model.
  void check(Node& n, bool recv_cq, const WorkCompletion& wc) {
    if (kTrace)
      std::fprintf(stderr, "  completion %c %s wr %llu qpn %#x %s\n", &n == &a_ ? 'A' : 'B', recv_cq ? "rcq" : "scq",
                   static_cast<unsigned long long>(wc.wr_id), wc.qp_num.value(), std::string(to_string(wc.status)).c_str());
    auto it = posted_.find(wc.wr_id);
    SOFTIB_ASSERT_MSG(it != posted_.end(), "a completion for a work request never posted (or refused)");
    Posted& p = it->second;
    SOFTIB_ASSERT_MSG(!p.completed, "a work request completed twice");
    p.completed = true;
    SOFTIB_ASSERT(&side(static_cast<uint8_t>(p.side)) == &n && p.recv == recv_cq);
    SOFTIB_ASSERT_MSG(wc.qp_num == n.qps[p.qp]->qpn(), "a completion on the wrong QP");
    const uint32_t epoch = p.recv ? n.recv_epoch[p.qp] : n.send_epoch[p.qp];
    SOFTIB_ASSERT_MSG(p.epoch == epoch || p.srq, "a work request completed after its QP was reset");
    uint64_t& last = p.recv ? n.last_recv[p.qp] : n.last_send[p.qp];
    SOFTIB_ASSERT_MSG(wc.wr_id > last, "a queue completed out of order");
    last = wc.wr_id;
    SOFTIB_ASSERT(static_cast<uint8_t>(wc.status) <= static_cast<uint8_t>(WcStatus::kTmRndvIncomplete));
    if (wc.status != WcStatus::kSuccess) return;
    if (p.recv) {
      SOFTIB_ASSERT(wc.opcode == WcOpcode::kRecv || wc.opcode == WcOpcode::kRecvRdmaWithImm);
      const uint64_t grh = kTypes[p.qp] == QpType::kUd ? 40 : 0;
      SOFTIB_ASSERT_MSG(wc.byte_len <= p.capacity + grh || wc.opcode == WcOpcode::kRecvRdmaWithImm,
                        "a receive longer than its SGEs");
    } else {
      SOFTIB_ASSERT_MSG(p.signaled, "a successful unsignaled send was reported");
      SOFTIB_ASSERT(wc.opcode == wc_opcode_of(p.opcode));
    }
  }

  size_t drain(Node& n, Cq* cq, size_t max) {
    std::array<WorkCompletion, 16> wc;
    size_t total = 0;
    while (total < max) {
      const size_t got = cq->poll(std::span(wc).first(std::min(wc.size(), max - total)));
      if (got == 0) break;
      for (size_t i = 0; i < got; ++i) check(n, cq == n.rcq, wc[i]);
      total += got;
    }
    return total;
  }

  void poll(Input& in) {
    const uint8_t b = in.u8();
    Node& n = side(b);
    drain(n, (b & 2) != 0 ? n.rcq : n.scq, 1 + (b >> 2) % 16);
  }

  void time(Input& in) {
    static constexpr std::array<Duration, 4> kRun = {std::chrono::microseconds(10), std::chrono::milliseconds(1),
                                                     std::chrono::milliseconds(20), std::chrono::milliseconds(500)};
    const uint8_t b = in.u8();
    if (kTrace) std::fprintf(stderr, "time %d\n", b & 7);
    // A budget of frames per input: an RNR wait retried for ever (rnr_retry 7) resends every
    // 10 us, and a fuzzer needs its runs short (the final flush needs no time).
    if (fabric_.frames_sent() > kMaxFrames) return;
    if ((b & 4) == 0) {
      fabric_.settle();
    } else {
      fabric_.run_until([this] { return fabric_.frames_sent() > kMaxFrames; }, kRun[b & 3]);
    }
  }

  // Moving a QP to Reset ends its queues' epochs: what they held is gone. Its completions
  // already in the CQs are taken first (they may be polled after the Reset, legitimately).
  void reset(Node& n, size_t q, const QpAttr& at, uint32_t mask) {
    drain(n, n.scq, kCqe);
    drain(n, n.rcq, kCqe);
    if (n.device.modify_qp(n.qps[q], at, mask).ok()) {
      ++n.send_epoch[q];
      ++n.recv_epoch[q];
    }
  }

  void modify(Input& in) {
    const uint8_t which = in.u8();
    Node& n = side(which);
    const size_t q = (which >> 1) % kQps;
    rc::Qp* qp = n.qps[q];
    QpAttr at;
    const uint8_t choice = in.u8() % 7;
    if (kTrace) std::fprintf(stderr, "modify %c qp%zu choice %d (in %s)\n", &n == &a_ ? 'A' : 'B', q, choice,
                             std::string(to_string(qp->state())).c_str());
    switch (choice) {
      case 0: at.qp_state = QpState::kError; (void)n.device.modify_qp(qp, at, attr::kState); break;
      case 1: at.qp_state = QpState::kSqd; (void)n.device.modify_qp(qp, at, attr::kState); break;
      case 2: at.qp_state = QpState::kRts; (void)n.device.modify_qp(qp, at, attr::kState); break;
      case 3: at.qp_state = QpState::kReset; reset(n, q, at, attr::kState); break;
      case 4: {
        at.qp_state = QpState::kReset;
        reset(n, q, at, attr::kState);
        const uint32_t sq = in.u32() & Psn::kMask, rq = in.u32() & Psn::kMask;
        connect(n, q, sq, rq);
        break;
      }
      case 6: {
        // Destroyed with whatever it holds and created again; the peer reset, and both ends
        // connected anew with PSNs no frame still in flight carries (a QPN handed out again
        // could take those).
        Node& peer = peer_of(n);
        drain(n, n.scq, kCqe);
        drain(n, n.rcq, kCqe);
        const Status s = n.device.destroy_qp(qp);
        SOFTIB_ASSERT_MSG(s.ok(), s.to_string().c_str());
        ++n.send_epoch[q];
        ++n.recv_epoch[q];
        n.qps[q] = create_qp(n, q);
        at.qp_state = QpState::kReset;
        reset(peer, q, at, attr::kState);
        const uint32_t psn = 0x400000 + (++generation_ * 0x10000) % 0x400000;
        connect(n, q, psn, psn + 0x8000);
        connect(peer, q, psn + 0x8000, psn);
        break;
      }
      default: {
        // Anything: libibverbs passes the mask and attributes through, and so does the drop-in.
        at.qp_state = static_cast<QpState>(in.u8() % 8);
        at.cur_qp_state = static_cast<QpState>(in.u8() % 8);
        const uint32_t mask = in.u32() & 0x23fffff;
        at.path_mtu = static_cast<Mtu>(in.u8() % 8);
        at.qkey = QKey(in.u32());
        at.rq_psn = Psn(in.u32() & Psn::kMask);
        at.sq_psn = Psn(in.u32() & Psn::kMask);
        const uint8_t d = in.u8();
        at.dest_qp_num = (d & 1) == 0 ? peer_of(n).qps[q]->qpn() : Qpn(in.u32() & Qpn::kMask);
        at.qp_access_flags = in.u8();
        at.cap = {in.u8(), in.u8(), in.u8() % 8u, in.u8() % 8u, in.u8()};
        at.ah_attr.dlid = Lid(in.u8() % 4);
        at.ah_attr.port_num = in.u8() % 3;
        at.ah_attr.is_global = (d & 2) != 0;
        at.ah_attr.grh.sgid_index = static_cast<uint8_t>(d >> 2 & 3);
        at.ah_attr.grh.hop_limit = 64;
        at.alt_ah_attr = at.ah_attr;
        at.pkey_index = in.u8() % 3;
        at.alt_pkey_index = at.pkey_index;
        at.en_sqd_async_notify = in.u8() & 1;
        at.max_rd_atomic = in.u8() % 20;
        at.max_dest_rd_atomic = in.u8() % 20;
        at.min_rnr_timer = in.u8() % 32;
        at.port_num = in.u8() % 3;
        at.timeout = in.u8() % 32;
        at.retry_cnt = in.u8() % 9;
        at.rnr_retry = in.u8() % 9;
        at.path_mig_state = static_cast<MigState>(in.u8() % 4);
        if (at.qp_state == QpState::kReset && (mask & attr::kState) != 0) {
          reset(n, q, at, mask);
        } else {
          const QpState before = qp->state();
          if (n.device.modify_qp(qp, at, mask).ok() && before != QpState::kReset && qp->state() == QpState::kReset) {
            SOFTIB_ASSERT_MSG(false, "a modify that did not ask for Reset reset the QP");
          }
        }
        break;
      }
    }
  }

  void memory(Input& in) {
    Node& n = side(in.u8());
    const uint8_t choice = in.u8() % 4;
    if (kTrace) std::fprintf(stderr, "memory %c choice %d\n", &n == &a_ ? 'A' : 'B', choice);
    switch (choice) {
      case 0:
        if (n.second != nullptr) {
          n.stale_key = n.second->lkey.value();
          SOFTIB_ASSERT(n.device.mrs().dereg(n.second->lkey).ok());
          n.second = nullptr;
        }
        break;
      case 1:
        if (n.second == nullptr) n.second = n.register_at(kSecondAt, kBufferLen - kSecondAt, (in.u8() & 0xf) | access::kLocalWrite);
        break;
      case 2:
        if (n.main != nullptr) {
          const uint32_t access = (in.u8() & 0xf) | access::kLocalWrite;
          auto mr = n.device.mrs().rereg(n.main->lkey, n.pd, n.buffer.data(), kSecondAt, n.addr(0), access);
          SOFTIB_ASSERT_MSG(mr.ok(), mr.error().to_string().c_str());
          n.main = *mr;
        }
        break;
      default:
        if (n.main != nullptr) {
          n.stale_key = n.main->lkey.value();
          SOFTIB_ASSERT(n.device.mrs().dereg(n.main->lkey).ok());
        }
        n.main = n.register_at(0, kSecondAt, kAllAccess);
        break;
    }
  }

  void step(Input& in) {
    Node& n = side(in.u8());
    if (!n.device.hold_acks_without_progress())
      n.device.progress(rc::Device::AckPolicy::kHoldOneStep, rc::Device::Timers::kLater);
  }

  // Every QP (but one in Reset) to Error, the fabric run until nothing is left, every CQ drained: then whatever
  // is owed a completion has had exactly one.
  void finish() {
    for (Node* n : {&a_, &b_})
      for (size_t q = 0; q < kQps; ++q) {
        if (n->qps[q]->state() == QpState::kReset) continue;  // holds nothing (and may not go to Error)
        QpAttr at;
        at.qp_state = QpState::kError;
        const Status s = n->device.modify_qp(n->qps[q], at, attr::kState);
        SOFTIB_ASSERT_MSG(s.ok(), s.to_string().c_str());
      }
    fabric_.run_until([] { return false; }, std::chrono::seconds(10));
    for (Node* n : {&a_, &b_}) {
      drain(*n, n->scq, kCqe);
      drain(*n, n->rcq, kCqe);
    }
    for (const auto& [id, p] : posted_) {
      const Node& n = p.side == 0 ? a_ : b_;
      if (p.srq || p.epoch != (p.recv ? n.recv_epoch[p.qp] : n.send_epoch[p.qp])) continue;
      if ((p.recv || p.signaled) && !p.completed) {
        std::fprintf(stderr, "work request %llu (side %d, QP %zu, %s) never completed\n",
                     static_cast<unsigned long long>(id), p.side, p.qp, p.recv ? "receive" : "send");
        SOFTIB_ASSERT_MSG(false, "a work request owed a completion never had one");
      }
    }
  }

  uint8_t config_;
  Mtu mtu_ = Mtu::k1024;
  ManualClock clock_;
  link::SimFabric fabric_;
  Node a_;
  Node b_;
  std::unordered_map<uint64_t, Posted> posted_;
  uint64_t next_id_ = 0;
  uint32_t generation_ = 0;  // QPs created again (their PSNs)
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  Harness h(in);
  h.run(in);
  return 0;
}
