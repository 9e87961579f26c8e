// SimFabric: devices joined by simulated links in virtual time, for protocol and fabric tests
// (the QUICHE simulator's idea: loss, reordering and duplication are properties of the link,
// deterministic under a seed, and the protocol code has no test hooks).
//
// Each attached device gets a FrameSink; a frame sent to a LID is delivered to the device
// holding that LID after the link latency (plus jitter, which reorders), unless the
// impairment drops it; it may also arrive twice. run_until() alternates device progress,
// deliveries and jumps of the ManualClock to the next event, so a test that retransmits
// after a 500 ms timeout takes microseconds.
//
// Thread: single-threaded; the test drives it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <vector>

#include "base/clock.hpp"
#include "rc/device.hpp"
#include "rc/frame.hpp"

namespace softib::link {

struct Impairment {
  double loss = 0;        // probability a frame is dropped
  double duplicate = 0;   // probability a frame is delivered twice
  double reorder = 0;     // probability a frame is delayed by up to `jitter` more
  Duration latency = std::chrono::microseconds(1);
  Duration jitter = std::chrono::microseconds(20);
};

class SimFabric {
 public:
  SimFabric(ManualClock& clock, uint64_t seed);
  ~SimFabric();

  // The sink to give the device at `lid` (create the device with it, then attach()).
  rc::FrameSink& sink_for(Lid lid);
  void attach(Lid lid, rc::Device* device);

  void set_impairment(const Impairment& i) { impairment_ = i; }
  // Drops every frame whose transport bytes make `filter` return true (a targeted loss).
  void set_filter(std::function<bool(const rc::FrameAddr&, wire::ByteSpan)> filter) { filter_ = std::move(filter); }

  // Progress every device and deliver every due frame until nothing is left to do now.
  // Returns true when anything happened.
  bool settle();
  // settle(), then jump the clock to the next frame or device timer, until `done` holds or
  // `limit` of virtual time passed. Returns done().
  bool run_until(const std::function<bool()>& done, Duration limit = std::chrono::seconds(60));

  uint64_t frames_sent() const { return sent_; }
  uint64_t frames_lost() const { return lost_; }
  uint64_t frames_duplicated() const { return duplicated_; }
  uint64_t seed() const { return seed_; }

 private:
  class Port;
  struct InFlight {
    TimePoint at;
    uint64_t seq;
    rc::FrameAddr addr;
    std::vector<uint8_t> bytes;
    bool operator>(const InFlight& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void send(const rc::FrameAddr& to, wire::ByteSpan bytes);
  bool deliver_due();

  ManualClock& clock_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  Impairment impairment_{};
  std::function<bool(const rc::FrameAddr&, wire::ByteSpan)> filter_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<std::pair<Lid, rc::Device*>> devices_;
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> in_flight_;
  uint64_t seq_ = 0;
  uint64_t sent_ = 0, lost_ = 0, duplicated_ = 0;
};

}  // namespace softib::link
