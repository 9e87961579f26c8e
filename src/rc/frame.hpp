// Frames: what the transport hands to a link and takes from one. A frame is the transport
// part of a packet (BTH ... pad, exactly the bytes packet::build_transport writes and
// PacketView::parse_roce_v2_transport reads) plus the addressing a native IB packet's LRH and
// GRH would carry. Links between processes of one host move these as they are; a link that
// leaves the host frames them (RoCE v2: IP/UDP and the ICRC; native IB: LRH, ICRC, VCRC).
// No CRC is computed for a frame that never leaves memory.
#pragma once

#include <algorithm>
#include <cstdint>

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

// Where a device's outgoing frames go. The transport builds each frame in place: reserve()
// lends it room for one frame's transport bytes (a ring slot, a buffer), it writes headers and
// payload there, and commit() sends the first `len` bytes to `to`. One frame is reserved at a
// time; a reservation that is not committed is simply reused. Called from the device's
// progress step; the sink must not call back into the device.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual wire::MutByteSpan reserve(size_t len) = 0;
  virtual void commit(const FrameAddr& to, size_t len) = 0;

  // reserve + copy + commit, for frames built elsewhere.
  void send(const FrameAddr& to, wire::ByteSpan transport) {
    wire::MutByteSpan out = reserve(transport.size());
    std::copy(transport.begin(), transport.end(), out.begin());
    commit(to, transport.size());
  }
};

}  // namespace softib::rc
