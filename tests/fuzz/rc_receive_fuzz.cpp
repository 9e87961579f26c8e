// Fuzzes the transport's receive path: frames from a hostile or broken peer into one
// rc::Device. Whatever arrives, the device must not crash, assert, leak or hang, and every
// frame it sends in reply must be one PacketView accepts (style rule 6: peer misbehaviour is
// data).
//
// The device, fresh for every input (so a crash reproduces from its input alone):
//   QPN 0x11  RC, RTS, to QPN 0x99 at LID 2, rq_psn 0, sq_psn 0, path MTU 256, all remote
//             access; a 3-packet SEND (PSNs 0-2), a 600-byte READ (3-5), a FETCH_ADD (6) and a
//             300-byte WRITE (7-8) are outstanding, so ACKs, NAKs, read responses and atomic
//             acknowledgements find work to complete
//   QPN 0x12  UC, RTS, the same peer and PSNs, REMOTE_WRITE
//   QPN 0x13  UD, RTS, Q_Key 0x11111111
//   one MR of kBufferLen bytes at iova kIova, L_Key = R_Key = 0x101 (the first key a fresh
//   MrTable hands out); receive WQEs are kept posted on every QP.
//
// The input is a sequence of frames, each
//   byte 0   flags  bits 0-1  rewrite BTH.DestQP: 0 keep, 1 RC 0x11, 2 UC 0x12, 3 UD 0x13
//                   bit 2     the frame arrives with a GRH (FrameAddr.global)
//                   bits 3-4  post on the RC QP first: 0 nothing, 1 SEND (300 bytes), 2 READ
//                             (200 bytes: one response), 3 FETCH_ADD
//                   bits 5-6  advance the clock after the frame, before progress(): 0 not at
//                             all, 1 10 us (RNR timer code 1), 2 1.28 ms (code 14), 3 5 ms
//                             (beyond the 4.19 ms ACK timeout)
//                   bit 7     do not post receive WQEs again afterwards (so that RNR NAKs and
//                             UC/UD drops for a missing WQE are reachable)
//   bytes 1-2  length, big-endian (cut to what is left of the input)
//   then       the transport part of the frame, BTH ... pad (as PacketView::parse_roce_v2_transport)
// tests/fuzz/make_rc_receive_corpus.py writes seeds in this format.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/assert.hpp"
#include "base/clock.hpp"
#include "fuzz_target.hpp"
#include "packet/packet_view.hpp"
#include "rc/device.hpp"
#include "verbs/caps.hpp"

using namespace softib;
using namespace softib::verbs;

namespace {

constexpr uint64_t kIova = 0x10000;
constexpr size_t kBufferLen = 16 * 1024;
constexpr Qpn kPeerQpn{0x99};
constexpr uint32_t kQkey = 0x11111111;
constexpr uint32_t kRecvDepth = 4;
constexpr size_t kMaxFrames = 256;

// Checks every frame the device sends (and drops it: the peer is imaginary).
class CheckingSink final : public rc::BufferedSink {
 public:
  // Frames are built in the sink's buffer (rc::BufferedSink) and checked on commit. The fuzz
  // input may make the sink refuse frames (flow control).
  bool refusing = false;
  bool accept(const rc::FrameAddr& /*to*/, size_t /*len*/) override { return !refusing; }
  void deliver(const rc::FrameAddr& /*to*/, Qpn /*dest_qp*/, wire::ByteSpan transport) override {
    auto view = packet::PacketView::parse_roce_v2_transport(transport);
    SOFTIB_ASSERT_MSG(view.ok(), "the device sent a frame PacketView refuses");
  }
  // Bursts (segmentation offload) of up to 1 KiB: the first packet — its headers and one
  // path MTU of payload — must parse, and the rest must split into whole packets.
  size_t max_burst_bytes() const override { return 1024; }
  void commit_burst(size_t len, const rc::Burst& b) override {
    SOFTIB_ASSERT(b.packets >= 2 && verbs::mtu_valid(b.mtu) && len <= last_reserve_);
    const wire::ByteSpan t(buffer().data(), len);
    const packet::OpcodeInfo* info = packet::find_opcode(t[0]);
    SOFTIB_ASSERT(info != nullptr && packet::find_opcode(b.last_opcode) != nullptr);
    const size_t mtu = verbs::mtu_bytes(static_cast<verbs::Mtu>(b.mtu));
    SOFTIB_ASSERT(len > info->header_length() + (b.packets - 1u) * mtu && len <= info->header_length() + b.packets * mtu);
    auto view = packet::PacketView::parse_roce_v2_transport(t.first(info->header_length() + mtu));
    SOFTIB_ASSERT_MSG(view.ok(), "the device sent a burst whose first packet PacketView refuses");
  }
  wire::MutByteSpan reserve(const rc::FrameAddr& to, Qpn dest_qp, size_t len) override {
    last_reserve_ = len;
    return rc::BufferedSink::reserve(to, dest_qp, len);
  }

 private:
  size_t last_reserve_ = 0;
};

class Harness {
 public:
  Harness() : device_(default_caps(), port(), sink_, clock_), buffer_(kBufferLen) {
    for (size_t i = 0; i < buffer_.size(); ++i) buffer_[i] = static_cast<uint8_t>(i * 31 + 7);
    pd_ = device_.alloc_pd();
    cq_ = *device_.create_cq(256, nullptr);
    auto mr = device_.mrs().reg(pd_, buffer_.data(), buffer_.size(), kIova,
                                access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
    SOFTIB_ASSERT_MSG(mr.ok(), mr.error().to_string().c_str());
    mr_ = *mr;
    SOFTIB_ASSERT(mr_->lkey == LKey(0x101) && mr_->rkey == RKey(0x101));
    rc_ = create(QpType::kRc);
    uc_ = create(QpType::kUc);
    ud_ = create(QpType::kUd);
    SOFTIB_ASSERT(rc_->qpn() == Qpn(0x11) && uc_->qpn() == Qpn(0x12) && ud_->qpn() == Qpn(0x13));
    connect(rc_);
    connect(uc_);
    ready_ud();
    top_up();
    post(rc_, WrOpcode::kSend, 0, 600);
    post(rc_, WrOpcode::kRdmaRead, 4096, 600);
    post(rc_, WrOpcode::kAtomicFetchAndAdd, 8192, 8);
    post(rc_, WrOpcode::kRdmaWrite, 0, 300);
    post(uc_, WrOpcode::kSend, 0, 100);
    step();
  }

  void frame(uint8_t flags, wire::ByteSpan bytes) {
    const uint8_t qp_sel = flags & 3;
    const bool global = (flags & 4) != 0;
    const uint8_t post_sel = (flags >> 3) & 3;
    const uint8_t k = (flags >> 5) & 3;
    const bool top_up_receives = (flags & 0x80) == 0;
    if (post_sel == 1) post(rc_, WrOpcode::kSend, 512, 300);
    if (post_sel == 2) post(rc_, WrOpcode::kRdmaRead, 4096 + 1024, 200);
    if (post_sel == 3) post(rc_, WrOpcode::kAtomicFetchAndAdd, 8192 + 8, 8);

    frame_.assign(bytes.begin(), bytes.end());
    if (qp_sel != 0 && frame_.size() >= wire::Bth::kLen) {
      const uint32_t qpn = 0x10 + qp_sel;  // BTH.DestQP: bytes 5-7
      frame_[5] = static_cast<uint8_t>(qpn >> 16);
      frame_[6] = static_cast<uint8_t>(qpn >> 8);
      frame_[7] = static_cast<uint8_t>(qpn);
    }
    rc::FrameAddr from;
    from.slid = Lid(2);
    from.dlid = Lid(1);
    if (global) {
      from.global = true;
      from.sgid = Gid(Gid::kDefaultSubnetPrefix, Guid(2));
      from.dgid = Gid(Gid::kDefaultSubnetPrefix, Guid(1));
      from.hop_limit = 64;
    }
    // Flow control: some inputs make the link refuse every frame for this step (a frame
    // length of 3 mod 7, so the fuzzer controls it without a flag bit of its own).
    sink_.refusing = bytes.size() % 7 == 3;
    // Bursts: a frame length of 1 mod 5 makes the input a burst whose fields come from its
    // last bytes (shapes that add up and shapes that do not).
    rc::Burst burst;
    if (frame_.size() % 5 == 1 && frame_.size() >= 16) {
      const uint8_t* tail = frame_.data() + frame_.size() - 4;
      burst.packets = static_cast<uint16_t>(2 + tail[0] % 7);
      burst.mtu = static_cast<uint8_t>(tail[1] % 7);
      burst.last_opcode = tail[2];
      burst.last_ack_req = (tail[3] & 1) != 0;
      burst.last_solicited = (tail[3] & 2) != 0;
      burst.last_ext = wire::load_be32(frame_.data() + frame_.size() - 8);
      // By reference: the segments name addresses in this process (as a peer's would name its
      // own); most are nowhere (EFAULT: the burst is lost), some are real memory.
      burst.by_reference = (tail[3] & 4) != 0;
      if (burst.by_reference) burst.ref_pid = ::getpid();
    }
    device_.receive(from, frame_, burst);
    constexpr std::array<std::chrono::microseconds, 4> kAdvance = {
        std::chrono::microseconds(0), std::chrono::microseconds(10), std::chrono::microseconds(1280),
        std::chrono::microseconds(5000)};
    clock_.advance(kAdvance[k]);
    step(top_up_receives);
  }

 private:
  static rc::PortAttr port() {
    rc::PortAttr p;
    p.lid = Lid(1);
    p.gids.push_back(Gid(Gid::kDefaultSubnetPrefix, Guid(1)));
    return p;
  }

  rc::Qp* create(QpType type) {
    QpInitAttr init;
    init.qp_type = type;
    init.cap = {16, kRecvDepth, 2, 2, 16};
    auto qp = device_.create_qp(pd_, cq_, cq_, nullptr, init, nullptr);
    SOFTIB_ASSERT(qp.ok());
    return *qp;
  }

  void modify(rc::Qp* qp, const QpAttr& at, uint32_t mask) { SOFTIB_ASSERT(device_.modify_qp(qp, at, mask).ok()); }

  void connect(rc::Qp* qp) {
    const bool rc = qp->type() == QpType::kRc;
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qp_access_flags = rc ? access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic : access::kRemoteWrite;
    modify(qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
    at = {};
    at.qp_state = QpState::kRtr;
    at.path_mtu = Mtu::k256;
    at.dest_qp_num = kPeerQpn;
    at.rq_psn = Psn(0);
    at.ah_attr.dlid = Lid(2);
    at.ah_attr.port_num = 1;
    at.max_dest_rd_atomic = 4;
    at.min_rnr_timer = 1;
    uint32_t mask = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn;
    if (rc) mask |= attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
    modify(qp, at, mask);
    at = {};
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0);
    at.timeout = 10;  // 4.19 ms
    at.retry_cnt = 2;
    at.rnr_retry = 2;
    at.max_rd_atomic = 4;
    mask = attr::kState | attr::kSqPsn;
    if (rc) mask |= attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic;
    modify(qp, at, mask);
  }

  void ready_ud() {
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qkey = QKey(kQkey);
    modify(ud_, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey);
    at.qp_state = QpState::kRtr;
    modify(ud_, at, attr::kState);
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0);
    modify(ud_, at, attr::kState | attr::kSqPsn);
  }

  // Keeps kRecvDepth receive WQEs of 1200 bytes posted on every QP (two SGEs each, so scatter
  // crosses from one to the other).
  void top_up() {
    for (rc::Qp* qp : {rc_, uc_, ud_}) {
      while (qp->rq().size() < kRecvDepth) {
        const std::array<Sge, 2> sges = {Sge{kIova + 12288, 600, mr_->lkey}, Sge{kIova + 12288 + 1024, 600, mr_->lkey}};
        const RecvWr wr{next_wr_id_++, sges};
        size_t bad = 0;
        SOFTIB_ASSERT(device_.post_recv(qp, std::span<const RecvWr>(&wr, 1), &bad).ok());
      }
    }
  }

  // Posts one signaled WR of `length` bytes at buffer offset `offset` (READ: into it); the
  // remote side is the peer's memory at the same iova (the peer is imaginary).
  void post(rc::Qp* qp, WrOpcode op, size_t offset, uint32_t length) {
    const Sge s{kIova + offset, length, mr_->lkey};
    SendWr wr;
    wr.wr_id = next_wr_id_++;
    wr.opcode = op;
    wr.send_flags = send_flag::kSignaled;
    wr.sg_list = {&s, 1};
    wr.rdma = {kIova + offset, mr_->rkey};
    wr.atomic = {kIova + 8192, 1, 0, mr_->rkey};
    size_t bad = 0;
    // A full send queue is ENOMEM, a QP in Error flushes: both are fine here.
    (void)device_.post_send(qp, std::span<const SendWr>(&wr, 1), &bad);
  }

  void step(bool top_up_receives = true) {
    device_.progress();
    WorkCompletion wc[32];
    while (cq_->poll(wc) > 0) {
    }
    if (top_up_receives) top_up();
    device_.progress();
    (void)device_.take_async_events();
  }

  ManualClock clock_;
  CheckingSink sink_;
  rc::Device device_;
  std::vector<uint8_t> buffer_;
  std::vector<uint8_t> frame_;
  Pd* pd_ = nullptr;
  Cq* cq_ = nullptr;
  const Mr* mr_ = nullptr;
  rc::Qp* rc_ = nullptr;
  rc::Qp* uc_ = nullptr;
  rc::Qp* ud_ = nullptr;
  uint64_t next_wr_id_ = 1;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness h;
  size_t at = 0;
  for (size_t n = 0; n < kMaxFrames && at + 3 <= size; ++n) {
    const uint8_t flags = data[at];
    const size_t len = std::min<size_t>(size_t{data[at + 1]} << 8 | data[at + 2], size - at - 3);
    h.frame(flags, wire::ByteSpan(data + at + 3, len));
    at += 3 + len;
  }
  return 0;
}
