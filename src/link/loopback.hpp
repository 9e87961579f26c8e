// LoopbackHub: devices of one process joined through memory, each served by its own engine
// thread. A frame sent to a LID is handed (copied) to the receiver registered for that LID's
// range and the destination QPN's range (several devices may share an HCA, each with its own
// QPN block, as processes do on the shared-memory link), which queues it for its engine. The
// in-process counterpart of the shared-memory link.
//
// Thread: attach()/detach() from any thread; sinks are used by their device's progress step
// (under that device's lock); receivers are called from the sending device's thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "base/ids.hpp"
#include "rc/frame.hpp"

namespace softib::link {

class LoopbackHub {
 public:
  using Receiver = std::function<void(const rc::FrameAddr&, wire::ByteSpan)>;

  LoopbackHub();
  ~LoopbackHub();
  // A sink for one device (one frame reserved at a time, as rc::FrameSink requires).
  rc::FrameSink& new_sink();
  // Frames to [lid, lid + 2^lmc) for QPNs in [qpn_first, qpn_last] go to `receiver`. Returns
  // a handle for detach().
  uint64_t attach(Lid lid, uint8_t lmc, Receiver receiver, uint32_t qpn_first = 0, uint32_t qpn_last = 0xFFFFFF);
  void detach(uint64_t handle);
  uint64_t unroutable() const { return unroutable_; }

 private:
  class Port;
  void route(const rc::FrameAddr& to, Qpn dest_qp, wire::ByteSpan bytes);

  struct Route {
    uint64_t handle;
    uint16_t base;
    uint16_t mask;
    uint32_t qpn_first, qpn_last;
    Receiver receiver;
  };
  uint64_t next_handle_ = 1;
  std::shared_mutex mu_;
  std::vector<Route> routes_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::atomic<uint64_t> unroutable_{0};
};

}  // namespace softib::link
