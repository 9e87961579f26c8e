// Fabric: a live InfiniBand subnet in one process. Every node answers management datagrams
// as hardware does — an SMA for SMPs (LID-routed and directed-route, IBA 14.2) and a PMA for
// performance MADs (IBA 16.1) — and switches forward LID-routed MADs hop by hop through
// their LFTs. Agents (an SM, a diagnostic tool) attach to a port and exchange 256-byte MADs
// with the fabric the way umad clients do.
//
// Thread: a Fabric is owned by one thread. send() only queues; pump() moves every queued MAD
// to its destination (running SMAs/PMAs and calling agents' on_mad), so an agent may send
// from inside on_mad without recursion. Impairment randomness comes from a seeded RNG:
// runs are deterministic.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "base/counters.hpp"
#include "base/ids.hpp"
#include "base/result.hpp"
#include "fabric/link_rate.hpp"
#include "fabric/topology.hpp"
#include "mad/mgmt_class.hpp"
#include "mad/node_description.hpp"
#include "mad/node_info.hpp"
#include "mad/port_info.hpp"
#include "mad/switch_info.hpp"
#include "mad/vl_arbitration_table.hpp"

namespace softib::fabric {

inline constexpr size_t kMadSize = 256;

// A MAD and its addressing, as umad's ib_user_mad carries them.
struct Mad {
  std::array<uint8_t, kMadSize> bytes{};
  Lid slid;           // source LID (filled in by the fabric on delivery)
  Lid dlid;           // destination LID; ignored for directed-route SMPs
  Qpn remote_qp{0};   // send: destination QP; receive: source QP (0 for SMPs, 1 for GMPs)
  uint8_t sl = 0;
  PKey pkey = PKey::default_full();
  QKey qkey{0x80010000};  // the GSI's well-known Q_Key (IBA 13.5.3.1)

  uint8_t mgmt_class() const { return bytes[1]; }
};

class MadAgent {
 public:
  virtual ~MadAgent() = default;
  // A MAD arrived at the agent's port. Thread: the fabric's owner, inside pump().
  virtual void on_mad(PortRef at, const Mad& mad) = 0;
};

using AgentId = uint32_t;

// Why the fabric dropped a MAD (every drop is counted).
enum class Drop : uint8_t {
  kDirectedRoute,   // a DR SMP broke C14-9/C14-13 (bad hop pointer, port, node type)
  kLinkDown,        // the next link is not up (or not Active, for non-SMPs)
  kNoLftEntry,      // a switch has no LFT entry for the DLID
  kWrongDestination,// the DLID reached a CA port whose LIDs do not match
  kHopLimit,        // forwarded more than kMaxHops times (a loop)
  kNoAgent,         // nobody listens for this class at the destination
  kLoss,            // an impaired link lost it
  kCorruption,      // an impaired link corrupted it (the receiver's CRC check failed)
  kMalformed,       // not a MAD the SMA/PMA can parse
  kMKey,            // an SMP whose M_Key did not match the protected port's
  kCount
};
std::string_view to_string(Drop d);

// Per-port error counters an operator can inject (PortCounters names).
enum class ErrorCounter : uint8_t {
  kSymbolError,
  kLinkErrorRecovery,
  kLinkDowned,
  kRcvErrors,
  kRcvRemotePhysicalErrors,
  kRcvSwitchRelayErrors,
  kXmitDiscards,
  kXmitConstraintErrors,
  kRcvConstraintErrors,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
  kVl15Dropped,
  kXmitWait,
  kCount
};
std::string_view to_string(ErrorCounter c);
std::optional<ErrorCounter> parse_error_counter(std::string_view name);

struct LinkImpairment {
  double loss = 0;        // probability a MAD crossing the link is lost
  double corruption = 0;  // probability it arrives corrupted (and is dropped, counted)
};

struct FabricOptions {
  uint64_t seed = 1;  // impairment randomness
};

// What the PMA counts for a port: 64-bit, saturated into PortCounters' narrow fields.
struct PortTraffic {
  uint64_t xmit_data = 0, rcv_data = 0;  // in 4-byte words, as the PMA reports
  uint64_t xmit_pkts = 0, rcv_pkts = 0;
  uint64_t unicast_xmit_pkts = 0, unicast_rcv_pkts = 0;
  uint64_t multicast_xmit_pkts = 0, multicast_rcv_pkts = 0;
  std::array<uint64_t, static_cast<size_t>(ErrorCounter::kCount)> errors{};
};

class Fabric {
 public:
  static constexpr int kMaxHops = 64;

  explicit Fabric(Topology topology, FabricOptions options = {});
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;
  ~Fabric();

  const Topology& topology() const { return topo_; }

  // ---- live state (what an SMA would answer) ----
  const mad::NodeInfo& node_info(NodeIndex n) const;
  const mad::PortInfo& port_info(PortRef p) const;
  const mad::SwitchInfo& switch_info(NodeIndex n) const;
  std::string_view node_description(NodeIndex n) const;
  // The port's LFT entry for `lid` (switches; kDropPort 0xFF when unset).
  uint8_t lft_port(NodeIndex sw, Lid lid) const;
  // The ports a switch's MFT sends multicast LID `mlid` (0xC000..) out of, ascending.
  std::vector<uint8_t> mft_ports(NodeIndex sw, Lid mlid) const;
  std::span<const PKey> pkeys(PortRef p) const;
  // The SL-to-VL table a packet uses: on a switch, arriving on `in` and leaving on `out`; on
  // a CA or router port, `in` is the port and `out` is ignored.
  std::array<uint8_t, 16> sl_to_vl(PortRef in, uint8_t out) const;
  const PortTraffic& traffic(PortRef p) const;
  // Why a cabled port is not up ("", "disabled", "no common link width enabled", ...).
  std::string_view link_down_reason(PortRef p) const;

  // ---- operator controls (fault injection) ----
  // Takes the cable at `p` down (both ends Down/Polling) or back up; "disable" also sets the
  // port's PhysPortState to Disabled. Switch ends send trap 128 to the SM.
  Result<void> set_link_up(PortRef p, bool up);
  Result<void> set_port_disabled(PortRef p, bool disabled);
  Result<void> set_impairment(PortRef p, LinkImpairment impairment);  // both directions
  Result<void> add_errors(PortRef p, ErrorCounter counter, uint64_t amount);
  // PortInfo.CapabilityMask.IsSM on an end port: what opening the issm device does for an SM
  // (other SMs find it by this bit). Errors: InvalidArgument for a port that is not an end
  // port.
  Result<void> set_is_sm(PortRef p, bool is_sm);

  // ---- MAD transport ----
  // Attaches an agent to a CA/router port, or a switch's port 0, for the management
  // classes it serves (requests of those classes addressed there) and for responses to the
  // requests it sends. Errors: InvalidArgument for another port; AlreadyExists when another
  // agent serves one of the classes there.
  Result<AgentId> attach(PortRef port, MadAgent* agent, std::vector<uint8_t> classes);
  void detach(AgentId id);
  // Replaces the classes an agent serves. Errors: as attach; InvalidArgument for no agent.
  Result<void> set_classes(AgentId id, std::vector<uint8_t> classes);
  PortRef agent_port(AgentId id) const;
  // Queues a MAD from the agent's port: directed-route SMPs follow their path, everything
  // else goes by DLID. Never blocks.
  void send(AgentId from, const Mad& mad);
  // Delivers everything queued, including what deliveries send. Returns MADs delivered.
  size_t pump();

  const CounterSet<Drop>& drops() const { return drops_; }
  uint64_t delivered() const { return delivered_; }

 private:
  friend class Sma;  // the SMA (sma.cpp) works on Impl
  Result<void> check_classes(PortRef port, const std::vector<uint8_t>& classes, AgentId except) const;
  struct Impl;
  Topology topo_;
  std::unique_ptr<Impl> impl_;
  CounterSet<Drop> drops_;
  uint64_t delivered_ = 0;
};

}  // namespace softib::fabric
