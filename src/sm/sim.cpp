#include "sm/sim.hpp"

#include "base/assert.hpp"

namespace softib::sm {

Result<std::unique_ptr<SimulatedSubnet>> SimulatedSubnet::create(fabric::Topology topology, SmConfig config,
                                                                 std::optional<fabric::PortRef> sm_port,
                                                                 fabric::FabricOptions options) {
  std::unique_ptr<SimulatedSubnet> s(new SimulatedSubnet());
  if (!sm_port) {
    for (uint32_t i = 0; i < topology.node_count() && !sm_port; ++i) {
      const fabric::NodeIndex n(i);
      if (topology.node(n).type == fabric::NodeType::kSwitch) continue;
      for (uint8_t p = 1; p <= topology.node(n).num_ports && !sm_port; ++p)
        if (topology.port({n, p}).peer.valid()) sm_port = fabric::PortRef{n, p};
    }
    for (uint32_t i = 0; i < topology.node_count() && !sm_port; ++i)
      if (topology.node(fabric::NodeIndex(i)).type == fabric::NodeType::kSwitch) sm_port = fabric::PortRef{fabric::NodeIndex(i), 0};
  }
  if (!sm_port) return Status(Code::kInvalidArgument, "the topology has no port for an SM");
  s->fabric_ = std::make_unique<fabric::Fabric>(std::move(topology), options);
  auto port = SimMadPort::attach(*s->fabric_, *sm_port);
  if (!port) return Err{port.error()};
  Sm first{*sm_port, std::move(*port), nullptr};
  first.sm = std::make_unique<SubnetManager>(*first.port, s->clock_, std::move(config));
  s->sms_.push_back(std::move(first));
  return s;
}

Result<size_t> SimulatedSubnet::add_sm(fabric::PortRef port, SmConfig config) {
  auto p = SimMadPort::attach(*fabric_, port);
  if (!p) return Err{p.error()};
  Sm sm{port, std::move(*p), nullptr};
  sm.sm = std::make_unique<SubnetManager>(*sm.port, clock_, std::move(config));
  sm.sm->start();
  sms_.push_back(std::move(sm));
  return sms_.size() - 1;
}

void SimulatedSubnet::stop_sm(size_t i) {
  sms_.at(i).sm.reset();
  sms_.at(i).port.reset();
}

bool SimulatedSubnet::step() {
  for (Sm& s : sms_)
    if (s.sm) s.sm->poll();
  return fabric_->pump() > 0;
}

bool SimulatedSubnet::any_sweeping() const {
  for (const Sm& s : sms_)
    if (s.sm && s.sm->sweeping()) return true;
  return false;
}

std::optional<TimePoint> SimulatedSubnet::next_deadline() {
  std::optional<TimePoint> t;
  for (Sm& s : sms_) {
    if (!s.sm) continue;
    const auto d = s.sm->next_deadline();
    if (d && (!t || *d < *t)) t = d;
  }
  return t;
}

Result<void> SimulatedSubnet::bring_up(Duration limit) {
  sms_.front().sm->start();
  return run_until_idle(limit);
}

bool SimulatedSubnet::stalled(std::optional<TimePoint> deadline, uint32_t& idle_rounds) {
  // A deadline that is already due, yet polling moves nothing: an SM asked to be woken for
  // work it does not do. Without this guard the loop would spin for ever.
  if (!deadline || *deadline > clock_.now()) {
    idle_rounds = 0;
    return false;
  }
  return ++idle_rounds > kMaxIdleRounds;
}

Result<void> SimulatedSubnet::run_until_idle(Duration limit) {
  const TimePoint end = clock_.now() + limit;
  uint32_t idle_rounds = 0;
  while (true) {
    if (step()) continue;
    if (step()) continue;  // a last look: what the final pump delivered may finish a phase
    if (!any_sweeping()) return {};
    const auto t = next_deadline();
    if (!t || *t > end)
      return Status(Code::kTimeout, "the SM's sweep did not finish in the virtual time allowed");
    if (stalled(t, idle_rounds)) return Status(Code::kInternal, "an SM keeps asking to run but does nothing");
    clock_.set(std::max(*t, clock_.now()));
  }
}

void SimulatedSubnet::run_for(Duration d) {
  const TimePoint end = clock_.now() + d;
  uint32_t idle_rounds = 0;
  while (true) {
    while (step()) {
    }
    if (step()) continue;
    const auto t = next_deadline();
    if (!t || *t > end) break;
    if (stalled(t, idle_rounds)) {
      SOFTIB_ASSERT_MSG(false, "an SM keeps asking to run but does nothing");
      break;
    }
    clock_.set(std::max(*t, clock_.now()));
  }
  clock_.set(std::max(end, clock_.now()));
  while (step()) {
  }
}

}  // namespace softib::sm
