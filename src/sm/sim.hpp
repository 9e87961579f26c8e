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

  // More SMs (election, handover, failover): another SubnetManager on `port`, started at
  // once. Returns its index; the SM create() made is 0. Errors: as Fabric::attach.
  Result<size_t> add_sm(fabric::PortRef port, SmConfig config);
  // SM i dies: it stops answering and its port forgets it was an SM's.
  void stop_sm(size_t i);
  size_t sm_count() const { return sms_.size(); }
  bool sm_running(size_t i) const { return sms_.at(i).sm != nullptr; }

  fabric::Fabric& fabric() { return *fabric_; }
  SubnetManager& sm(size_t i = 0) { return *sms_.at(i).sm; }
  ManualClock& clock() { return clock_; }
  fabric::PortRef sm_port(size_t i = 0) const { return sms_.at(i).port_ref; }

 private:
  SimulatedSubnet() = default;
  // One round: SMs handle what arrived, fabric moves what was sent. True if anything moved.
  bool step();
  bool any_sweeping() const;
  static constexpr uint32_t kMaxIdleRounds = 10000;
  bool stalled(std::optional<TimePoint> deadline, uint32_t& idle_rounds);
  std::optional<TimePoint> next_deadline();

  struct Sm {
    fabric::PortRef port_ref;
    std::unique_ptr<SimMadPort> port;
    std::unique_ptr<SubnetManager> sm;
  };
  ManualClock clock_;
  std::unique_ptr<fabric::Fabric> fabric_;
  std::vector<Sm> sms_;
};

}  // namespace softib::sm
