// Frames: what the transport hands to a link and takes from one. A frame is the transport
// part of a packet (BTH ... pad, exactly the bytes packet::build_transport writes and
// PacketView::parse_roce_v2_transport reads) plus the addressing a native IB packet's LRH and
// GRH would carry. Links between processes of one host move these as they are; a link that
// leaves the host frames them (RoCE v2: IP/UDP and the ICRC; native IB: LRH, ICRC, VCRC).
// No CRC is computed for a frame that never leaves memory.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "base/assert.hpp"
#include "base/copy.hpp"
#include "base/gid.hpp"
#include "base/ids.hpp"
#include "wire/bytes.hpp"

namespace softib::rc {

struct FrameAddr {
  Lid slid{};
  Lid dlid{};
  uint8_t sl = 0;
  bool global = false;  // a GRH: the fields below are valid
  Gid sgid{};
  Gid dgid{};
  uint32_t flow_label = 0;
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 0;
};

// Segmentation offload, for links that carry a frame whole or not at all (shared memory):
// one frame stands for `packets` consecutive packets of one message, as a NIC hands a TSO
// super-packet to its wire or a GRO one to its host. The frame's transport bytes are the
// first packet's headers (a FIRST or MIDDLE opcode, no pad) followed by the payload of every
// packet in order (no pad); the rest of what the packets' own headers would say rides here.
// PSNs, segmentation to the path MTU and acknowledgements stay those of the packets it
// stands for: a receiver that cannot take the burst whole processes its packets one by one.
struct Burst {
  uint16_t packets = 1;     // >= 2 for a burst
  uint8_t mtu = 0;          // the sender's path MTU code (verbs::Mtu): the packets' size
  uint8_t last_opcode = 0;  // the last packet's opcode (MIDDLE, or LAST with what it carries)
  bool last_ack_req = false;
  bool last_solicited = false;
  uint32_t last_ext = 0;    // the last packet's ImmDt, IETH R_Key, or (read responses) AETH
  // By reference (single copy between processes): the payload is not in the frame; after the
  // first packet's headers come RefSegments naming it in the sender's memory, and the
  // receiver copies it from there (process_vm_readv) straight into the target. The sender
  // sets by_reference; the receiving link sets ref_pid, the sender's process as softibd's
  // directory knows it (never a value from the frame).
  bool by_reference = false;
  int32_t ref_pid = 0;
  // A second pair of hands for a by-reference copy (nullptr: none): the receiving link may
  // let the sending process write part of the payload in while the receiver reads the rest.
  class CopyHelp* help = nullptr;
};

// Two processes copy a large by-reference payload faster than one: each copies its part on
// its own core, from and into its own caches (process_vm_readv of 1 MiB here: 16 GB/s alone,
// ~49 GB/s with the sender writing half in at the same time). The receiver, which validated
// where the bytes go, offers a part (where it is in the sender, where it goes here) to the
// sending process, copies the rest itself, and then either withdraws the offer (nobody took
// it: it copies that part too) or waits until the sender has written it. The sender takes
// offers when it polls (link/shm_link.hpp). Thread: the receiving device's step.
//
// A sender that took the offer and then stops (SIGSTOP, a debugger, a long preemption) would
// hold the receiver's whole device while it waits; instead the wait is bounded and the copy
// ends later (kLater): the device leaves the burst as if it had not come, and the link
// delivers the same frame again once the sender has written its part. On that delivery the
// same offer is made (the split is the same) and finish() answers from the first one.
class CopyHelp {
 public:
  enum class End {
    kWritten,     // the sender wrote every byte of the offer
    kNotWritten,  // withdrawn before the sender took it, or its copy failed: the caller copies it
    kLater,       // the sender is still writing: the caller changes nothing (the frame comes again)
  };
  virtual ~CopyHelp() = default;
  // Offers the copy of `remote` (in the sender) into `local` (here, equally long); false
  // when nothing can be offered now (the caller copies it all).
  virtual bool offer(std::span<const iovec> local, std::span<const iovec> remote) = 0;
  // Ends the offer made last. Never kWritten or kNotWritten while the sender may still be
  // writing. REQUIRES: offer() returned true.
  virtual End finish() = 0;
};
struct RefSegment {
  uint64_t addr;
  uint64_t len;
};
inline constexpr size_t kMaxRefSegments = 64;

// Where a device's outgoing frames go. The transport builds each frame in place: reserve()
// lends it room for one frame's transport bytes (a ring slot, a buffer), it writes headers and
// payload there, and commit() sends the first `len` bytes. One frame is reserved at a time; a
// reservation that is not committed is simply reused.
//
// Flow control. InfiniBand links are lossless: a sender waits for credits rather than drop
// (IBA 7.9). A sink that cannot take a frame now (a full shared-memory ring) returns an empty
// span, and the transport keeps the frame's work for a later progress step. A frame the sink
// takes but cannot deliver (no such LID or QP on the fabric) is lost, as on a wire.
//
// Called from the device's progress step; the sink must not call back into the device.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  // Room for `len` transport bytes of a frame to `to` whose BTH names `dest_qp`, or empty.
  virtual wire::MutByteSpan reserve(const FrameAddr& to, Qpn dest_qp, size_t len) = 0;
  virtual void commit(size_t len) = 0;
  // A connected QP now names `to` and `dest_qp` (modify_qp to RTR or RTS): a link that sets
  // up a way to a destination at its first frame may do it now, outside the data path.
  virtual void prepare(const FrameAddr& /*to*/, Qpn /*dest_qp*/) {}
  // The largest payload one burst may carry (0: the link takes packets only).
  virtual size_t max_burst_bytes() const { return 0; }
  // Whether another process may still be writing into the memory of QP `qp`'s work: a burst
  // to it whose shared copy ended later (CopyHelp::End::kLater) and whose writer lives. Its
  // response is not lost, so its requester spends no retry on it (Device::run_timers).
  virtual bool copy_later_into(Qpn /*qp*/) { return false; }
  // The largest payload a burst to `to` may carry by reference (0: never; rc/frame.hpp Burst).
  virtual size_t max_reference_bytes(const FrameAddr& /*to*/, Qpn /*dest_qp*/) { return 0; }
  // Room for a frame that commit_burst() will send: never packed with other frames (a burst by
  // reference is small). REQUIRES: max_burst_bytes() != 0.
  virtual wire::MutByteSpan reserve_burst(const FrameAddr& to, Qpn dest_qp, size_t len) {
    return reserve(to, dest_qp, len);
  }
  // Commits the frame reserve_burst() lent as a burst. REQUIRES: max_burst_bytes() != 0.
  virtual void commit_burst(size_t /*len*/, const Burst& /*burst*/) {
    SOFTIB_ASSERT_MSG(false, "commit_burst on a link without segmentation offload");
  }

  // A run of frames the transport sends in one go (one step's WQEs of one QP): between the
  // two calls a link may carry several frames together (ShmLink packs small frames to one
  // peer into one ring record), and when end_batch() returns every frame committed since
  // begin_batch() is on its way. Frames keep their order. Not nested.
  virtual void begin_batch() {}
  virtual void end_batch() {}
  // Copies `n` payload bytes into the reserved frame: small ones with memcpy, large ones
  // (kStreamingCopyMin and up) as the link chooses (copy_large; base/copy.hpp).
  void copy_payload(uint8_t* dst, const uint8_t* src, size_t n) {
    copy_for_peer(dst, src, n, [this](void* d, const void* s, size_t k) { copy_large(d, s, k); });
  }

  // reserve + copy + commit, for frames built elsewhere. False when the sink refused it.
  bool send(const FrameAddr& to, Qpn dest_qp, wire::ByteSpan transport) {
    wire::MutByteSpan out = reserve(to, dest_qp, transport.size());
    if (out.size() < transport.size()) return false;
    std::copy(transport.begin(), transport.end(), out.begin());
    commit(transport.size());
    return true;
  }

 protected:
  // A large payload copy: non-temporal by default; a link whose frames another core reads
  // next may choose per peer.
  virtual void copy_large(void* dst, const void* src, size_t n) { copy_streaming(dst, src, n); }
};

// A sink that builds each frame in a buffer of its own and hands the finished bytes to
// deliver(): for links and tests that copy frames anyway. accept() may refuse a frame (flow
// control), as a full ring would.
class BufferedSink : public FrameSink {
 public:
  wire::MutByteSpan reserve(const FrameAddr& to, Qpn dest_qp, size_t len) override {
    if (!accept(to, len)) return {};
    if (buf_.size() < len) buf_.resize(len);
    to_ = to;
    dest_qp_ = dest_qp;
    return wire::MutByteSpan(buf_.data(), len);
  }
  void commit(size_t len) override { deliver(to_, dest_qp_, wire::ByteSpan(buf_.data(), len)); }

 protected:
  virtual bool accept(const FrameAddr& /*to*/, size_t /*len*/) { return true; }
  // The frame being built (for sinks that inspect it at commit).
  const std::vector<uint8_t>& buffer() const { return buf_; }
  virtual void deliver(const FrameAddr& to, Qpn dest_qp, wire::ByteSpan transport) = 0;

 private:
  std::vector<uint8_t> buf_;
  FrameAddr to_;
  Qpn dest_qp_{};
};

}  // namespace softib::rc
