// SubnetManager: brings a subnet up and keeps it up, reaching the fabric only through a
// MadPort. A heavy sweep is a sequence of idempotent passes over the subnet (OpenSM's
// design): discover by directed route, assign LIDs, route, program switches (only the LFT
// blocks that changed), configure end ports (LIDs, SM LID, MTU, VLs), then Arm and Activate
// every port. Periodic light sweeps read each switch's PortStateChange; traps 128 from
// switches and changed state start a new heavy sweep.
//
// The SM is a state machine with no thread and no I/O of its own: poll() consumes what the
// MadPort received and what time made due; next_deadline() says when poll() needs calling
// next. The same code runs in virtual time (tests, `softib sim`) and real time (softibd).
//
// Thread: one thread owns a SubnetManager and its MadPort.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/clock.hpp"
#include "mad/sm_info.hpp"
#include "mad/codec.hpp"
#include "sm/guid2lid.hpp"
#include "sm/mad_port.hpp"
#include "sm/partitions.hpp"
#include "sm/routing_engine.hpp"
#include "sm/routing_graph.hpp"
#include "sm/sa.hpp"
#include "sm/sm_config.hpp"
#include "sm/subnet.hpp"
#include "sm/transactions.hpp"

namespace softib::sm {

struct SweepReport {
  bool heavy = false;
  // A targeted sweep: traps named switches whose ports changed; only those were read, and
  // the subnet re-routed and reprogrammed from the model (no rediscovery).
  bool targeted = false;
  std::vector<std::string> link_changes;  // "S-L0001 port 9: down", for targeted sweeps
  TimePoint started, finished;
  uint64_t mads = 0;            // requests sent in this sweep, retries included
  size_t nodes = 0, switches = 0, end_ports = 0, links = 0;
  uint32_t lft_blocks_set = 0;  // LFT blocks that changed and were sent
  uint32_t port_infos_set = 0;
  uint32_t pkey_blocks_set = 0;
  uint32_t sl2vl_tables_set = 0;
  uint32_t mft_blocks_set = 0;
  std::string routing_engine;   // the engine that routed, after any fallback
  double routing_seconds = 0;   // host CPU time spent building the graph and routing
  std::vector<std::string> routing_attempts;
  std::vector<std::string> problems;  // unreachable ports, failed Sets, ...
};

// Another SM found on the subnet (IBA 14.4): what its SMInfo said and how to reach it.
struct RemoteSm {
  Guid guid;  // its port GUID
  uint8_t priority = 0;
  mad::SmState state = mad::SmState::kNotActive;
  uint32_t act_count = 0;
  Lid lid;
  mad::DrPath path;
};

class SubnetManager {
 public:
  SubnetManager(MadPort& port, const Clock& clock, SmConfig config);
  ~SubnetManager();

  // Starts the first heavy sweep.
  void start();
  // Handles every MAD the port received and every timer that is due.
  void poll();
  // When poll() must run next even if no MAD arrives; nullopt: only on MADs.
  std::optional<TimePoint> next_deadline();
  // Asks for a sweep as soon as the current one (if any) ends.
  void request_sweep(bool heavy);

  // True once a heavy sweep finished: every reachable port Active, LFTs programmed.
  bool subnet_up() const { return subnet_up_; }
  bool sweeping() const;
  const Subnet& subnet() const { return *subnet_; }
  const RoutingTables* routing() const { return tables_ ? &*tables_ : nullptr; }
  const RoutingGraph* routing_graph() const { return graph_.get(); }
  const SweepReport& last_sweep() const { return report_; }
  uint64_t mads_sent() const { return transactions_.sent(); }
  const SmConfig& config() const { return config_; }
  Lid lid() const { return sm_lid_; }
  const Guid2Lid& guid2lid() const { return guid2lid_; }
  const PartitionConfig& partitions() const { return partitions_; }
  // Election (IBA 14.4.1): this SM's state, and the other SMs its last discovery found.
  mad::SmState state() const { return state_; }
  const std::vector<RemoteSm>& other_sms() const { return other_sms_; }
  // The master this standby polls (its port GUID), when standby.
  std::optional<Guid> master() const;
  const SubnetAdministrator& sa() const { return sa_; }

 private:
  static constexpr uint32_t kMaxUncleanSweeps = 10;
  enum class Phase : uint8_t { kIdle, kDiscover, kTargeted, kProgram, kArm, kActivate, kLight, kMulticast };
  enum Op : uint8_t {
    kNodeInfo, kNodeDescription, kSwitchInfo, kPortInfo,
    kSetSwitchInfo, kSetLft, kSetPortInfo, kArmPort, kActivatePort, kLightSwitchInfo, kTrapRepress,
    kTrapPortInfo, kSetPKeys, kSetSl2Vl, kGetSmInfo, kPollMaster, kSmInfoControl, kSetMft
  };

  void begin_heavy_sweep();
  void begin_light_sweep();
  // Targeted sweeps (sweep_targeted.cpp): a trap 128 from a known switch marks it dirty; the
  // sweep reads only the dirty switches' PortInfo, applies link losses to the model, and
  // re-routes and reprograms from it. Anything it cannot handle (a new link, a node cut off,
  // an unanswered request) falls back to a heavy sweep.
  void mark_dirty(NodeIndex sw);
  void begin_targeted_sweep();
  void targeted_port_info(const Transactions::Context& c, const mad::DrSmp& smp);
  bool targeted_apply();
  // Directed routes to every node over the model's cables, breadth first from the SM's port.
  // False when a node can no longer be reached.
  bool recompute_paths();
  // True when the directed route to `n` crosses the cable at `a`.
  bool path_crosses(NodeIndex n, PortRef a) const;
  std::optional<NodeIndex> switch_with_lid(Lid lid) const;
  // election (sm_election.cpp)
  mad::SMInfo own_sminfo() const;
  // Our SMInfo as an answer to a request carrying `request_data` (SM_Key hidden unless known).
  mad::SMInfo sminfo_for(std::span<const uint8_t> request_data) const;
  void query_sm(NodeIndex n, uint8_t port);
  void remote_sm_info(const Transactions::Context& c, const mad::DrSmp& smp);
  // After discovery: true when this SM is (still) master and goes on to configure.
  bool elect();
  void become_standby(const RemoteSm& master);
  void become_master(std::string_view why);
  void handle_sminfo_request(const Mad& mad);
  void send_sminfo_control(const mad::DrPath& path, uint32_t modifier);
  void poll_master();
  bool outranks(const RemoteSm& other) const;
  void next_phase();
  void begin_programming();
  void finish_sweep();
  void handle(const Mad& mad);
  void handle_trap(const Mad& mad);
  void handle_failure(const Transactions::Failed& f);

  // discovery (sweep_discover.cpp)
  void discover(const Transactions::Context& c, const mad::DrSmp& smp);
  void explore(NodeIndex n, uint8_t port);
  // configuration (sweep_program.cpp)
  bool assign_lids_and_route();
  void program_switches();
  void configure_ports();
  void set_port_states(mad::PortState from, mad::PortState to, Op op);
  // partitions and VLs (sweep_partitions.cpp)
  void load_partitions();
  std::vector<PKey> pkey_table_for(PortRef end_port) const;
  void program_pkeys();
  void program_sl2vl();
  void table_programmed(const Transactions::Context& c);
  // SA and multicast (sweep_multicast.cpp)
  SaView sa_view() const;
  void handle_sa(const Mad& mad);
  void program_mfts();
  void begin_multicast_update();
  void report_gid_changes();
  // Where an acknowledged MFT block is remembered in programmed_tables_.
  static uint64_t mft_table_key(Guid node, uint32_t block, uint32_t position);
  // A pass over every (node, port): visit(n, p) sends at most one request and says whether
  // it did.
  template <class Visit>
  void port_pass(Visit visit);
  void configured(const Transactions::Context& c, const mad::DrSmp& smp);

  void send_dr(const mad::DrPath& path, mad::Method method, uint16_t attribute, uint32_t modifier,
                   const std::array<uint8_t, 64>* data, Transactions::Context c);
  template <class A>
  void set_dr(const mad::DrPath& path, const A& value, uint32_t modifier, Transactions::Context c);

  MadPort& port_;
  const Clock& clock_;
  SmConfig config_;
  Transactions transactions_;
  Guid2Lid guid2lid_;
  std::unique_ptr<Subnet> subnet_;
  std::optional<RoutingTables> tables_;
  std::unique_ptr<RoutingGraph> graph_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> programmed_;  // switch GUID -> LFT block hashes
  // P_Key blocks and SL-to-VL tables: (port, block) key -> hash of what the port acknowledged,
  // and of what was sent and not yet acknowledged.
  std::unordered_map<uint64_t, uint64_t> programmed_tables_, pending_tables_;
  PartitionConfig partitions_;
  SubnetAdministrator sa_;
  std::vector<Mad> sa_waiting_;  // SA requests that arrived during a sweep
  std::unordered_set<uint64_t> in_service_;  // end-port GUIDs at the last sweep (traps 64/65)
  bool gids_reported_ = false;
  std::string partition_error_;
  Phase phase_ = Phase::kIdle;
  bool subnet_up_ = false;
  bool sweep_wanted_ = false, heavy_wanted_ = false;
  bool targeted_wanted_ = false;
  std::vector<uint32_t> dirty_;     // switches whose traps wait for a targeted sweep
  bool model_changed_ = false;      // the targeted sweep removed cables
  std::optional<TimePoint> next_sweep_;
  Lid sm_lid_;
  mad::SmState state_ = mad::SmState::kDiscovering;
  std::vector<RemoteSm> other_sms_;
  std::optional<RemoteSm> master_;   // standby: whom it polls
  std::optional<TimePoint> next_poll_;
  uint32_t missed_polls_ = 0;
  bool handover_sent_ = false;
  uint64_t mads_at_start_ = 0;
  uint64_t timeouts_at_start_ = 0;
  uint32_t unclean_sweeps_ = 0;  // heavy sweeps in a row that lost requests
  bool unclean_ = false;         // this sweep lost a request that mattered
  SweepReport report_;
};

template <class A>
void SubnetManager::set_dr(const mad::DrPath& path, const A& value, uint32_t modifier, Transactions::Context c) {
  std::array<uint8_t, 64> data{};
  mad::encode(value, wire::MutByteSpan(data));
  send_dr(path, mad::Method::kSet, static_cast<uint16_t>(mad::Layout<A>::kAttributeId), modifier, &data, c);
}

template <class Visit>
void SubnetManager::port_pass(Visit visit) {
  transactions_.add_source([this, visit, n = uint32_t{0}, p = uint32_t{0}]() mutable {
    const Subnet& s = *subnet_;
    for (; n < s.nodes.size(); ++n, p = 0)
      while (p <= s.nodes[n].info.num_ports)
        if (visit(NodeIndex(n), static_cast<uint8_t>(p++))) return true;
    return false;
  });
}

}  // namespace softib::sm
