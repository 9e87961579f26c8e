#include "sm/sim.hpp"

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
  s->sm_port_ = *sm_port;
  s->fabric_ = std::make_unique<fabric::Fabric>(std::move(topology), options);
  auto port = SimMadPort::attach(*s->fabric_, *sm_port);
  if (!port) return Err{port.error()};
  s->port_ = std::move(*port);
  s->sm_ = std::make_unique<SubnetManager>(*s->port_, s->clock_, std::move(config));
  return s;
}

bool SimulatedSubnet::step() {
  sm_->poll();
  return fabric_->pump() > 0;
}

Result<void> SimulatedSubnet::bring_up(Duration limit) {
  sm_->start();
  return run_until_idle(limit);
}

Result<void> SimulatedSubnet::run_until_idle(Duration limit) {
  const TimePoint end = clock_.now() + limit;
  while (true) {
    if (step()) continue;
    sm_->poll();  // a last look: what the final pump delivered may finish a phase
    if (fabric_->pump() > 0) continue;
    if (!sm_->sweeping()) return {};
    const auto t = sm_->next_deadline();
    if (!t || *t > end)
      return Status(Code::kTimeout, "the SM's sweep did not finish in the virtual time allowed");
    clock_.set(std::max(*t, clock_.now()));
  }
}

void SimulatedSubnet::run_for(Duration d) {
  const TimePoint end = clock_.now() + d;
  while (true) {
    while (step()) {
    }
    sm_->poll();
    if (fabric_->pump() > 0) continue;
    const auto t = sm_->next_deadline();
    if (!t || *t > end) break;
    clock_.set(std::max(*t, clock_.now()));
  }
  clock_.set(std::max(end, clock_.now()));
  sm_->poll();
  while (step()) {
  }
}

}  // namespace softib::sm
