// A whole subnet in one process and in virtual time: a Fabric built from a topology, a
// SubnetManager on one of its ports (through a SimMadPort), and a ManualClock that jumps to
// the next timer whenever nothing else can happen. Deterministic: the same topology, options
// and seed give the same run.
#pragma once

#include <memory>
#include <optional>

#include "base/clock.hpp"
#include "fabric/fabric.hpp"
#include "sm/mad_port.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

class SimulatedSubnet {
 public:
  // sm_port: where the SM runs; default the first cabled CA port in node order (as ibsim
  // attaches to the first port of its file), or a switch's port 0 when there is no CA.
  static Result<std::unique_ptr<SimulatedSubnet>> create(fabric::Topology topology, SmConfig config,
                                                         std::optional<fabric::PortRef> sm_port = {},
                                                         fabric::FabricOptions options = {});

  // Starts the SM and runs until its first sweep ends. Errors: Timeout when virtual time
  // passes `limit` first.
  Result<void> bring_up(Duration limit = std::chrono::minutes(10));
  // Runs until no sweep is in progress and nothing is in flight (timers may remain).
  Result<void> run_until_idle(Duration limit = std::chrono::minutes(10));
  // Lets `d` of virtual time pass, handling everything that happens meanwhile (periodic
  // sweeps, traps, re-sweeps).
  void run_for(Duration d);

  fabric::Fabric& fabric() { return *fabric_; }
  SubnetManager& sm() { return *sm_; }
  ManualClock& clock() { return clock_; }
  fabric::PortRef sm_port() const { return sm_port_; }

 private:
  SimulatedSubnet() = default;
  // One round: SM handles what arrived, fabric moves what was sent. True if anything moved.
  bool step();

  ManualClock clock_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::unique_ptr<SimMadPort> port_;
  std::unique_ptr<SubnetManager> sm_;
  fabric::PortRef sm_port_;
};

}  // namespace softib::sm
