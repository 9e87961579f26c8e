// The Subnet Administrator (IBA 15): answers SA queries (class SubnAdm) from what the SM
// learned in its last sweep, keeps the SA's own databases (multicast groups, service
// records, event subscriptions), and sends multi-record answers with RMPP (IBA 13.6).
//
// The SubnetManager owns one and hands it every SubnAdm MAD its MadPort receives; the SA
// sends its answers through the same port. Like the SM it is a state machine: no threads,
// no I/O of its own, time from the SM's clock (RMPP retransmission timers, service leases,
// Report retries).
//
// What a request gets (OpenSM 3.3.23 is the behavioural reference; src/sm/README.md lists
// the choices made where the IBA leaves room):
//   - Get: one record (GetResp), ERR_NO_RECORDS for none, ERR_TOO_MANY_RECORDS for several.
//   - GetTable: every matching record as an RMPP transfer (GetTableResp, RMPP active even
//     for one segment or none, as OpenSM's answers through the kernel's RMPP sender).
//   - Set/Delete: MCMemberRecord join/leave, ServiceRecord register/remove, InformInfo
//     subscribe/unsubscribe; one record back (GetResp/DeleteResp).
//   - An unknown attribute, or a method the attribute does not take: MAD status
//     MethodAttributeUnsupported; an unknown method: MethodUnsupported; ClassVersion other
//     than 2: BadVersion. Malformed MADs (bad BaseVersion, inconsistent RMPP header), MADs
//     with a foreign SM_Key and stray responses are dropped. Every case is counted.
//
// Thread: the SM's thread only.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/counters.hpp"
#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/notice.hpp"
#include "mad/sm_info.hpp"
#include "sm/mad_port.hpp"
#include "sm/partitions.hpp"
#include "sm/routing_engine.hpp"
#include "sm/routing_graph.hpp"
#include "sm/sm_config.hpp"
#include "sm/subnet.hpp"

namespace softib::sm {

// What the SA answers from: the SM's view after its last completed heavy sweep. Pointers
// may be null before the first sweep completes (the SA then answers with no records, or
// with the IBA status for "no records"). `graph` must have been built from `subnet->topo`
// and `tables` from `graph`.
struct SaView {
  const Subnet* subnet = nullptr;
  const RoutingGraph* graph = nullptr;
  const RoutingTables* tables = nullptr;
  const SmConfig* config = nullptr;
  const PartitionConfig* partitions = nullptr;  // null: the default partition only
  Lid sm_lid;
  // The P_Key table the SM programs into an end port (CA/router port or switch port 0).
  // Empty: the SA derives it from `partitions` (partition_keys, sm/pkey_tables.hpp).
  std::function<std::vector<PKey>(PortRef end_port)> pkey_table;
  // SMInfoRecord: this SM's SMInfo (ActCount: the SMPs it sent) and what the other SMs it
  // found last said of themselves, by their port's LID.
  mad::SMInfo own_sm_info;
  std::vector<std::pair<Lid, mad::SMInfo>> other_sms;
};

// A multicast group (IBA 15.2.5.17): created by the first join (or by the SM for a
// partition's IPoIB broadcast group), removed when its last member leaves.
struct McGroup {
  Gid mgid;
  Lid mlid;  // 0xC000..0xFFFE
  PKey pkey;
  QKey qkey;
  uint8_t mtu = 0, rate = 0, sl = 0, tclass = 0, scope = 0;
  uint32_t flow_label = 0;
  uint8_t hop_limit = 0;
  uint8_t packet_life_time = 0;
  struct Member {
    Gid port_gid;
    uint8_t join_state = 0;  // FullMember 1, NonMember 2, SendOnlyNonMember 4, SendOnlyFullMember 8
    bool proxy = false;
  };
  std::vector<Member> members;
  bool well_known = false;  // created by the SM from partitions.conf; kept with no members
};

// JoinState bits (IBA 15.2.5.17).
inline constexpr uint8_t kJoinFull = 1, kJoinNon = 2, kJoinSendOnlyNon = 4, kJoinSendOnlyFull = 8;
// Members that receive the group's packets (the send-only ones only send).
constexpr bool receives(uint8_t join_state) { return (join_state & (kJoinFull | kJoinNon)) != 0; }

// What the SA counts (SubnetAdministrator::counters()).
enum class SaCounter : uint8_t {
  kReceived,            // every MAD handed to handle()
  kRequests,            // requests processed (answered with records or a status)
  kErrorStatus,         // ... of which answered with a non-zero status
  kDropBaseVersion,     // BaseVersion other than 1
  kDropMalformed,       // does not decode as an SA MAD (RMPP header rules, ...)
  kDropSmKey,           // non-zero SM_Key other than the SM's (C15-0.1.5)
  kDropResponse,        // a response the SA did not ask for
  kDropRmppUnknown,     // ACK/STOP/ABORT for no transfer of ours
  kDropRmppRequest,     // a multi-segment RMPP request (answered with ABORT)
  kRmppTransfers,       // GetTable answers started
  kRmppCompleted,       // ... fully acknowledged
  kRmppRetransmitted,   // DATA segments sent again after an ACK timeout
  kRmppAbortedByPeer,   // the requester sent ABORT
  kRmppStoppedByPeer,   // the requester sent STOP
  kRmppAbortedBySa,     // the SA gave up (retries, bad ACK, restart): sent ABORT
  kReportsSent,         // Report(Notice) MADs sent, retries included
  kReportsAcknowledged, // ReportResp received
  kReportsAbandoned,    // no ReportResp after every retry
  kCount
};
std::string_view to_string(SaCounter c);

struct SaOptions {
  // RMPP sender (IBA 13.6.5): the Linux kernel's sender waits at most 2 s for an ACK and
  // OpenSM sends with 3 retries.
  Duration rmpp_ack_timeout = std::chrono::seconds(2);
  uint32_t rmpp_retries = 3;
  // Concurrent GetTable transfers; beyond this a GetTable is answered ERR_NO_RESOURCES.
  size_t max_transfers = 256;
};

class SubnetAdministrator {
 public:
  SubnetAdministrator(MadPort& port, const Clock& clock, SaOptions options = {});
  ~SubnetAdministrator();
  SubnetAdministrator(const SubnetAdministrator&) = delete;
  SubnetAdministrator& operator=(const SubnetAdministrator&) = delete;

  // A SubnAdm MAD arrived (a request, an RMPP ACK/STOP/ABORT for a transfer we send, or a
  // ReportResp). Anything else of another class is dropped and counted.
  void handle(const Mad& mad, const SaView& view);
  // RMPP retransmissions and transfer timeouts, Report retries and service lease expiry
  // that are due.
  void poll();
  std::optional<TimePoint> next_deadline() const;

  // Creates (or refreshes) the groups partitions.conf asks for: each ipoib partition's
  // broadcast group and every mgid line. Call after loading partitions. A group an earlier
  // configuration created and this one does not name stops being well known (and goes when
  // it has no member).
  void create_partition_groups(const PartitionConfig& partitions, const SmConfig& config);

  // Multicast state for the SM: groups by MLID. `mcast_changed()` is true after a join or
  // leave changed membership (the SM then reprograms MFTs and calls clear_mcast_changed()).
  const std::map<uint16_t, McGroup>& groups() const;
  bool mcast_changed() const;
  void clear_mcast_changed();

  // Forwards a notice (a trap the SM received, or one it generates: 64/65 GID in/out of
  // service) as a Report to every InformInfo subscriber whose subscription matches and who
  // may see the notice's source (shares a partition with it, o13-17.1.1).
  void report(const mad::Notice& notice, const SaView& view);

  const CounterSet<SaCounter>& counters() const;
  size_t transfers_in_progress() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Per switch, the MulticastForwardingTable port masks for every group: a tree spanning the
// switches that lead to the group's members, each receiving member port included, no
// loops. Indexed [SwitchIndex][mlid - 0xC000] -> port mask (bit p = port p), sized to the
// highest MLID. The tree (OpenSM's approach, made deterministic): the root is the switch
// whose farthest member is nearest (members on a CA count one hop more; ties go to the
// lower SwitchIndex); the tree is the union of the breadth-first-search paths from the root
// to every switch with a member. A switch member (port 0) gets bit 0.
std::vector<std::vector<std::array<uint64_t, 4>>> multicast_tables(const RoutingGraph& graph,
                                                                   const Subnet& subnet,
                                                                   const std::map<uint16_t, McGroup>& groups);

}  // namespace softib::sm
