#include "link/loopback.hpp"

#include <mutex>

namespace softib::link {

class LoopbackHub::Port final : public rc::BufferedSink {
 public:
  explicit Port(LoopbackHub& hub) : hub_(hub) {}

 private:
  void deliver(const rc::FrameAddr& to, Qpn dest_qp, wire::ByteSpan bytes) override { hub_.route(to, dest_qp, bytes); }
  LoopbackHub& hub_;
};

LoopbackHub::LoopbackHub() = default;
LoopbackHub::~LoopbackHub() = default;

rc::FrameSink& LoopbackHub::new_sink() {
  std::unique_lock lock(mu_);
  return *ports_.emplace_back(std::make_unique<Port>(*this));
}

uint64_t LoopbackHub::attach(Lid lid, uint8_t lmc, Receiver receiver, uint32_t qpn_first, uint32_t qpn_last) {
  std::unique_lock lock(mu_);
  const uint64_t h = next_handle_++;
  routes_.push_back(Route{h, lid.value(), static_cast<uint16_t>(~((1u << lmc) - 1)), qpn_first, qpn_last,
                          std::move(receiver)});
  return h;
}

void LoopbackHub::detach(uint64_t handle) {
  std::unique_lock lock(mu_);
  std::erase_if(routes_, [&](const Route& r) { return r.handle == handle; });
}

void LoopbackHub::route(const rc::FrameAddr& to, Qpn dest_qp, wire::ByteSpan bytes) {
  std::shared_lock lock(mu_);
  for (const Route& r : routes_) {
    if ((to.dlid.value() & r.mask) == r.base && dest_qp.value() >= r.qpn_first && dest_qp.value() <= r.qpn_last) {
      r.receiver(to, bytes);
      return;
    }
  }
  unroutable_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace softib::link
