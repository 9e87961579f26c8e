#include "link/loopback.hpp"

#include <mutex>

namespace softib::link {

class LoopbackHub::Port final : public rc::BufferedSink {
 public:
  explicit Port(LoopbackHub& hub) : hub_(hub) {}

 private:
  void deliver(const rc::FrameAddr& to, Qpn /*dest_qp*/, wire::ByteSpan bytes) override { hub_.route(to, bytes); }
  LoopbackHub& hub_;
};

LoopbackHub::LoopbackHub() = default;
LoopbackHub::~LoopbackHub() = default;

rc::FrameSink& LoopbackHub::new_sink() {
  std::unique_lock lock(mu_);
  return *ports_.emplace_back(std::make_unique<Port>(*this));
}

void LoopbackHub::attach(Lid lid, uint8_t lmc, Receiver receiver) {
  std::unique_lock lock(mu_);
  routes_.push_back(Route{lid.value(), static_cast<uint16_t>(~((1u << lmc) - 1)), std::move(receiver)});
}

void LoopbackHub::route(const rc::FrameAddr& to, wire::ByteSpan bytes) {
  std::shared_lock lock(mu_);
  for (const Route& r : routes_) {
    if ((to.dlid.value() & r.mask) == r.base) {
      r.receiver(to, bytes);
      return;
    }
  }
  unroutable_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace softib::link
