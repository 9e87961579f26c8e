#include "link/sim_fabric.hpp"

#include <algorithm>

namespace softib::link {

class SimFabric::Port final : public rc::BufferedSink {
 public:
  explicit Port(SimFabric& fabric) : fabric_(fabric) {}

 private:
  void deliver(const rc::FrameAddr& to, Qpn /*dest_qp*/, wire::ByteSpan bytes) override { fabric_.send(to, bytes); }
  SimFabric& fabric_;
};

SimFabric::SimFabric(ManualClock& clock, uint64_t seed) : clock_(clock), seed_(seed), rng_(seed) {}
SimFabric::~SimFabric() = default;

rc::FrameSink& SimFabric::sink_for(Lid /*lid*/) { return *ports_.emplace_back(std::make_unique<Port>(*this)); }

void SimFabric::attach(Lid lid, rc::Device* device) { devices_.emplace_back(lid, device); }

void SimFabric::send(const rc::FrameAddr& to, wire::ByteSpan bytes) {
  ++sent_;
  if (filter_ && filter_(to, bytes)) {
    ++lost_;
    return;
  }
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (impairment_.loss > 0 && u(rng_) < impairment_.loss) {
    ++lost_;
    return;
  }
  const int copies = impairment_.duplicate > 0 && u(rng_) < impairment_.duplicate ? 2 : 1;
  if (copies == 2) ++duplicated_;
  for (int c = 0; c < copies; ++c) {
    Duration delay = impairment_.latency;
    if (impairment_.reorder > 0 && u(rng_) < impairment_.reorder) {
      std::uniform_int_distribution<int64_t> j(1, std::max<int64_t>(1, impairment_.jitter.count()));
      delay += Duration(j(rng_));
    }
    in_flight_.push(InFlight{clock_.now() + delay, seq_++, to, std::vector<uint8_t>(bytes.begin(), bytes.end())});
  }
}

bool SimFabric::deliver_due() {
  bool did = false;
  while (!in_flight_.empty() && in_flight_.top().at <= clock_.now()) {
    InFlight f = in_flight_.top();
    in_flight_.pop();
    did = true;
    for (auto& [lid, dev] : devices_) {
      // A device answers to its LID range (LMC), as a port does (IBA 7.11.1).
      const uint16_t base = lid.value(), mask = static_cast<uint16_t>(~((1u << dev->port().lmc) - 1));
      if ((f.addr.dlid.value() & mask) == base) dev->receive(f.addr, f.bytes);
    }
  }
  return did;
}

bool SimFabric::settle() {
  bool any = false;
  for (int rounds = 0; rounds < 1'000'000; ++rounds) {
    bool did = false;
    for (auto& [lid, dev] : devices_) did |= dev->progress();
    did |= deliver_due();
    if (!did) break;
    any = true;
  }
  return any;
}

bool SimFabric::run_until(const std::function<bool()>& done, Duration limit) {
  const TimePoint end = clock_.now() + limit;
  for (;;) {
    settle();
    if (done()) return true;
    std::optional<TimePoint> next;
    if (!in_flight_.empty()) next = in_flight_.top().at;
    for (auto& [lid, dev] : devices_)
      if (auto d = dev->next_deadline(); d && (!next || *d < *next)) next = d;
    if (!next || *next > end) return done();
    if (*next > clock_.now()) clock_.set(*next);
  }
}

}  // namespace softib::link
