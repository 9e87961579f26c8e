// Protocol tests of the RC/UC/UD transport (style.md: "hand-built packets into one state
// machine"): ONE rc::Device, no link and no peer. A capturing FrameSink records every frame
// the device sends, parsed with PacketView so a test asserts opcode, PSN, AETH, RETH and
// payload; the test plays the imaginary peer (QPN kPeerQpn at LID 2) by building requests and
// responses with packet::build_transport and handing them to Device::receive. Time is a
// ManualClock: advance it and call progress() to fire the ACK and RNR timers.
//
// Thread: the tests are single-threaded, so the device's lock() is not taken.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "packet/builder.hpp"
#include "packet/packet_view.hpp"
#include "rc/device.hpp"
#include "verbs/caps.hpp"

namespace softib::testing {

using namespace softib::verbs;
using packet::Opcode;
using packet::TransportHeaders;

// One frame the device sent, parsed.
struct Sent {
  rc::FrameAddr to;
  std::vector<uint8_t> bytes;
  Opcode opcode{};
  TransportHeaders h;
  std::vector<uint8_t> payload;

  Psn psn() const { return h.bth.psn; }
  // REQUIRES: the opcode carries an AETH.
  uint8_t syndrome() const { return h.aeth->syndrome; }
  uint32_t msn() const { return h.aeth->msn; }
};

class CaptureSink final : public rc::BufferedSink {
 public:
  // Frames are built in the sink's buffer (rc::BufferedSink) and checked on commit. Flow
  // control (a full ring): after `pass` more frames, the next `refuse` frames are refused.
  int pass = 0;
  int refuse = 0;
  uint64_t refused = 0;
  bool accept(const rc::FrameAddr& /*to*/, size_t /*len*/) override {
    if (pass > 0) {
      --pass;
      return true;
    }
    if (refuse <= 0) return true;
    --refuse;
    ++refused;
    return false;
  }
  void deliver(const rc::FrameAddr& to, Qpn /*dest_qp*/, wire::ByteSpan transport) override {
    Sent s;
    s.to = to;
    s.bytes.assign(transport.begin(), transport.end());
    auto view = packet::PacketView::parse_roce_v2_transport(s.bytes);
    if (!view.ok()) {
      ADD_FAILURE() << "the device sent a frame PacketView refuses: " << view.error().to_string();
    } else {
      s.opcode = view->opcode();
      s.h = view->headers();
      s.payload.assign(view->payload().begin(), view->payload().end());
      // The requester writes its packets' headers straight from the WQE
      // (rc/requester.cpp): every frame must still be the builder's bytes for what it says.
      std::vector<uint8_t> rebuilt(packet::transport_length(*s.h.info(), s.payload.size()));
      auto n = packet::build_transport(s.h, s.payload, rebuilt);
      if (!n.ok()) {
        ADD_FAILURE() << "the builder refuses a frame the device sent: " << n.error().to_string();
      } else {
        rebuilt.resize(*n);
        EXPECT_EQ(rebuilt, s.bytes) << "a frame the device sent is not the builder's bytes for its headers";
      }
    }
    frames.push_back(std::move(s));
  }
  // Everything sent since the last take().
  std::vector<Sent> take() { return std::exchange(frames, {}); }

  std::vector<Sent> frames;
};

// The QP attributes a test starts from (the imaginary peer's side is implied).
struct QpOptions {
  Mtu mtu = Mtu::k256;
  uint8_t timeout = 10;       // 4.19 ms
  uint8_t retry_cnt = 2;
  uint8_t rnr_retry = 2;
  uint8_t min_rnr_timer = 14; // 1.28 ms
  uint8_t max_rd_atomic = 4;
  uint8_t max_dest_rd_atomic = 4;
  uint32_t access = access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
  uint32_t rq_psn = 0x100;    // the responder's first expected PSN
  uint32_t sq_psn = 0x500;    // the requester's first PSN
  uint32_t depth = 256;
};

inline constexpr Qpn kPeerQpn{0x99};
inline constexpr Lid kLocalLid{1};
inline constexpr Lid kPeerLid{2};
inline constexpr uint32_t kMtu = 256;

class RcProtocol : public ::testing::Test {
 protected:
  RcProtocol() : device(default_caps(), port_attr(), sink, clock), buffer(64 * 1024) {
    pd = device.alloc_pd();
    scq = *device.create_cq(1024, nullptr);
    rcq = *device.create_cq(1024, nullptr);
    mr = *device.mrs().reg(pd, buffer.data(), buffer.size(), addr(0),
                           access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
  }

  static rc::PortAttr port_attr() {
    rc::PortAttr p;
    p.lid = kLocalLid;
    p.gids.push_back(Gid(Gid::kDefaultSubnetPrefix, Guid(0x0002c90300000001ULL)));
    return p;
  }

  uint64_t addr(size_t offset) const { return reinterpret_cast<uint64_t>(buffer.data()) + offset; }
  Sge sge(size_t offset, uint32_t length) const { return Sge{addr(offset), length, mr->lkey}; }
  void fill(size_t offset, size_t len, uint8_t seed) {
    for (size_t i = 0; i < len; ++i) buffer[offset + i] = static_cast<uint8_t>(seed + i * 7);
  }
  uint64_t load64(size_t offset) const {
    uint64_t v;
    std::memcpy(&v, &buffer[offset], 8);
    return v;
  }
  void store64(size_t offset, uint64_t v) { std::memcpy(&buffer[offset], &v, 8); }

  rc::Qp* create(QpType type, uint32_t depth = 256) {
    QpInitAttr init;
    init.qp_type = type;
    init.cap = {depth, depth, 4, 4, 64};
    auto qp = device.create_qp(pd, scq, rcq, nullptr, init, nullptr);
    EXPECT_TRUE(qp.ok()) << qp.error().to_string();
    return *qp;
  }

  // RESET -> INIT -> RTR -> RTS against kPeerQpn at kPeerLid (the ibv_rc_pingpong sequence;
  // UC without the RC-only attributes).
  rc::Qp* connect(QpType type = QpType::kRc, const QpOptions& o = {}) {
    rc::Qp* qp = create(type, o.depth);
    bring_up(qp, o);
    return qp;
  }
  // The transitions of connect() for a QP in RESET (a new one, or one moved back there).
  void bring_up(rc::Qp* qp, const QpOptions& o) {
    const bool rc = qp->type() == QpType::kRc;
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qp_access_flags = o.access & (rc ? ~0u : access::kRemoteWrite);
    EXPECT_TRUE(device.modify_qp(qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags).ok());
    at = {};
    at.qp_state = QpState::kRtr;
    at.path_mtu = o.mtu;
    at.dest_qp_num = kPeerQpn;
    at.rq_psn = Psn(o.rq_psn);
    at.ah_attr.dlid = kPeerLid;
    at.ah_attr.port_num = 1;
    at.max_dest_rd_atomic = o.max_dest_rd_atomic;
    at.min_rnr_timer = o.min_rnr_timer;
    uint32_t mask = attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn;
    if (rc) mask |= attr::kMaxDestRdAtomic | attr::kMinRnrTimer;
    Status s = device.modify_qp(qp, at, mask);
    EXPECT_TRUE(s.ok()) << s.to_string();
    at = {};
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(o.sq_psn);
    at.timeout = o.timeout;
    at.retry_cnt = o.retry_cnt;
    at.rnr_retry = o.rnr_retry;
    at.max_rd_atomic = o.max_rd_atomic;
    mask = attr::kState | attr::kSqPsn;
    if (rc) mask |= attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry | attr::kMaxQpRdAtomic;
    s = device.modify_qp(qp, at, mask);
    EXPECT_TRUE(s.ok()) << s.to_string();
  }

  rc::Qp* ready_ud(uint32_t qkey) {
    rc::Qp* qp = create(QpType::kUd);
    QpAttr at;
    at.qp_state = QpState::kInit;
    at.port_num = 1;
    at.qkey = QKey(qkey);
    EXPECT_TRUE(device.modify_qp(qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kQkey).ok());
    at.qp_state = QpState::kRtr;
    EXPECT_TRUE(device.modify_qp(qp, at, attr::kState).ok());
    at.qp_state = QpState::kRts;
    at.sq_psn = Psn(0);
    EXPECT_TRUE(device.modify_qp(qp, at, attr::kState | attr::kSqPsn).ok());
    return qp;
  }

  // ---- the imaginary peer ----

  static rc::FrameAddr peer() {
    rc::FrameAddr a;
    a.slid = kPeerLid;
    a.dlid = kLocalLid;
    return a;
  }

  // A packet for `qp` (BTH only; the test adds the extension headers of the opcode).
  static TransportHeaders hdr(const rc::Qp* qp, Opcode op, Psn psn, bool ack_req = false) {
    TransportHeaders h;
    h.bth.opcode = static_cast<uint8_t>(op);
    h.bth.pkey = PKey::default_full();
    h.bth.dest_qp = qp->qpn();
    h.bth.psn = psn;
    h.bth.ack_req = ack_req;
    return h;
  }
  static TransportHeaders ack(const rc::Qp* qp, Psn psn, wire::Aeth aeth) {
    TransportHeaders h = hdr(qp, Opcode::kRcAcknowledge, psn);
    h.aeth = aeth;
    return h;
  }

  static std::vector<uint8_t> build(const TransportHeaders& h, wire::ByteSpan payload = {}) {
    std::vector<uint8_t> out(packet::transport_length(*h.info(), payload.size()));
    auto n = packet::build_transport(h, payload, out);
    EXPECT_TRUE(n.ok()) << n.error().to_string();
    out.resize(n.ok() ? *n : 0);
    return out;
  }
  void deliver(const TransportHeaders& h, wire::ByteSpan payload = {}, const rc::FrameAddr& from = peer()) {
    const auto bytes = build(h, payload);
    device.receive(from, bytes);
  }
  // `len` bytes of the buffer from `offset`, as a payload.
  wire::ByteSpan bytes(size_t offset, size_t len) const { return wire::ByteSpan(buffer.data() + offset, len); }

  std::vector<Sent> progress() {
    device.progress();
    return sink.take();
  }

  // ---- verbs ----

  void post_recv(rc::Qp* qp, uint64_t wr_id, size_t offset, uint32_t len) {
    Sge s = sge(offset, len);
    RecvWr wr{wr_id, {&s, 1}};
    size_t bad = 0;
    Status st = device.post_recv(qp, std::span<const RecvWr>(&wr, 1), &bad);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  void post_send(rc::Qp* qp, SendWr wr) {
    size_t bad = 0;
    Status st = device.post_send(qp, std::span<const SendWr>(&wr, 1), &bad);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  // A signaled SEND of buffer[offset, offset + len).
  void post_send(rc::Qp* qp, uint64_t wr_id, size_t offset, uint32_t len, uint32_t flags = send_flag::kSignaled) {
    Sge s = sge(offset, len);
    SendWr wr;
    wr.wr_id = wr_id;
    wr.opcode = WrOpcode::kSend;
    wr.send_flags = flags;
    wr.sg_list = {&s, 1};
    post_send(qp, wr);
  }
  // A signaled READ of remote_addr into buffer[offset, offset + len).
  void post_read(rc::Qp* qp, uint64_t wr_id, size_t offset, uint32_t len, uint64_t remote_addr, RKey rkey) {
    Sge s = sge(offset, len);
    SendWr wr;
    wr.wr_id = wr_id;
    wr.opcode = WrOpcode::kRdmaRead;
    wr.send_flags = send_flag::kSignaled;
    wr.sg_list = {&s, 1};
    wr.rdma = {remote_addr, rkey};
    post_send(qp, wr);
  }

  // The one frame sent, which must be an acknowledgement to the peer.
  static Sent only_ack(const std::vector<Sent>& sent) {
    EXPECT_EQ(sent.size(), 1u);
    if (sent.empty()) return {};
    const Sent& s = sent[0];
    EXPECT_EQ(s.opcode, Opcode::kRcAcknowledge);
    EXPECT_EQ(s.h.bth.dest_qp, kPeerQpn);
    EXPECT_EQ(s.to.dlid, kPeerLid);
    EXPECT_TRUE(s.h.aeth.has_value());
    return s;
  }

  static std::vector<WorkCompletion> poll(Cq* cq) {
    std::vector<WorkCompletion> out;
    WorkCompletion wc[64];
    size_t n;
    while ((n = cq->poll(wc)) > 0) out.insert(out.end(), wc, wc + n);
    return out;
  }

  ManualClock clock;
  CaptureSink sink;
  rc::Device device;
  std::vector<uint8_t> buffer;
  Pd* pd = nullptr;
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  const Mr* mr = nullptr;
};

// AETH syndromes as the wire carries them (IBA 9.3.5 table 42).
inline constexpr uint8_t kAckSyndrome = 0x1F;         // ACK, credits invalid
inline constexpr uint8_t kNakPsnSequence = 0x60;
inline constexpr uint8_t kNakInvalidRequest = 0x61;
inline constexpr uint8_t kNakRemoteAccess = 0x62;
inline constexpr uint8_t kNakRemoteOperational = 0x63;
constexpr uint8_t rnr_syndrome(uint8_t timer) { return static_cast<uint8_t>(0x20 | timer); }

}  // namespace softib::testing
