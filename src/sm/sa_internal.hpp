// Internals of the Subnet Administrator shared by its files (sa.cpp: dispatch and answers;
// sa_records.cpp: records read from the subnet; sa_path.cpp: PathRecord; sa_mcast.cpp:
// multicast groups and MFTs; sa_services.cpp: ServiceRecord, InformInfo and Reports).
// Not part of the module's interface.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "mad/codec.hpp"
#include "mad/inform_info.hpp"
#include "mad/mad_status.hpp"
#include "mad/mc_member_record.hpp"
#include "mad/port_info.hpp"
#include "mad/sa_mad.hpp"
#include "mad/service_record.hpp"
#include "sm/sa.hpp"
#include "sm/sa_rmpp.hpp"

namespace softib::sm::sa {

// ---- rates and MTUs (IBA 15.2.5.16 tables 205-206) -----------------------------------------

inline constexpr uint8_t kMinMtu = 1, kMaxMtu = 5;  // 256 .. 4096
constexpr bool mtu_valid(uint8_t mtu) { return mtu >= kMinMtu && mtu <= kMaxMtu; }
// Bandwidth of a PathRecord rate code in 100 Mb/s units; 0 for codes the IBA does not define
// (0, 1, 23 and up).
uint32_t rate_bandwidth(uint8_t rate);
constexpr bool rate_valid(uint8_t rate) { return rate >= 2 && rate <= 22; }
// <0, 0, >0 as a's bandwidth is below, equal to or above b's.
int compare_rates(uint8_t a, uint8_t b);
// The defined rate just below / above `rate` in bandwidth; 0 when there is none.
uint8_t rate_below(uint8_t rate);
uint8_t rate_above(uint8_t rate);
// The rate a port runs at: LinkWidthActive lanes x (LinkSpeedExtActive when `extended`
// (IsExtendedSpeedsSupported) and an extended speed is active, else LinkSpeedActive). Falls
// to the nearest defined code below for products the IBA has no code for; 2 (2.5 Gb/s)
// when nothing is active.
uint8_t port_rate(const mad::PortInfo& pi, bool extended);
// The MTU a port can carry: MTUCap, and NeighborMTU when the port is a physical one the
// SM configured (NeighborMTU is what it sends on its link).
uint8_t port_mtu(const mad::PortInfo& pi, bool physical);

// PathRecord/MCMemberRecord selectors (IBA 15.2.5.16): what a query asks of a value.
enum Selector : uint8_t { kGreaterThan = 0, kLessThan = 1, kExactly = 2, kLargest = 3 };

// ---- component masks (IBA 15.2.4.1) -----------------------------------------------------------

// True when `candidate` equals `query` in every component `mask` selects. Components are
// the layout's rows counted as codec.hpp counts them; a block counted as one component
// compares as a whole; reserved components match anything.
bool components_match(const mad::LayoutInfo& layout, wire::ByteSpan query, wire::ByteSpan candidate,
                      uint64_t mask);

template <class R>
constexpr uint64_t bit(std::string_view component) {
  return uint64_t{1} << mad::component_bit<R>(component);
}

// The P_Key table partitions.conf gives an end port, as the SM programs it (used when the
// view has no pkey_table of the SM's).
std::vector<PKey> derive_pkey_table(const Subnet& s, PortRef port, const PartitionConfig& partitions,
                                    bool allow_both);

// ---- the view, with lookups built on demand --------------------------------------------------

class SaContext {
 public:
  explicit SaContext(const SaView& view);

  // The subnet and its routing graph are known (the first sweep completed) and agree: every
  // endpoint of the graph is a port of the subnet with the endpoint's LID. (A view caught
  // between sweeps, a new Subnet with the last sweep's graph, is treated as no view.)
  bool ready() const;
  const SaView& view() const { return view_; }
  const Subnet& subnet() const { return *view_.subnet; }
  const RoutingGraph& graph() const { return *view_.graph; }
  const SmConfig& config() const;
  const PartitionConfig& partitions() const;
  uint64_t subnet_prefix() const { return config().subnet_prefix; }

  // End ports are the routing graph's endpoints (CA/router ports and switch port 0), as
  // indices into graph().endpoints(). REQUIRES: ready().
  std::optional<uint32_t> endpoint_by_lid(Lid lid) const;
  std::optional<uint32_t> endpoint_by_guid(Guid port_guid) const;
  std::optional<uint32_t> endpoint_by_gid(const Gid& gid) const;  // any subnet prefix
  const Endpoint& endpoint(uint32_t e) const { return graph().endpoints()[e]; }
  Guid port_guid(uint32_t e) const;
  Gid port_gid(uint32_t e) const { return Gid(subnet_prefix(), port_guid(e)); }
  // Endpoints in OpenSM's port-GUID map order (GUIDs compared in network byte order, as its
  // cl_qmap does): a GetTable of PathRecords iterates them so.
  const std::vector<uint32_t>& endpoints_by_guid() const;
  // What the SM read of a port (and set since); null when it never read it.
  const mad::PortInfo* port_info(PortRef p) const;
  // The port's rate (port_rate). A switch's CapabilityMask is port 0's (IBA 14.2.5.6), so
  // port 0 says whether its external ports have extended speeds. REQUIRES: port_info(p).
  uint8_t rate_of(PortRef p) const;
  // The LID the SA reports for a node's port: the port's own for CA/router ports, port 0's
  // for every port of a switch.
  Lid node_lid(PortRef p) const;

  // An end port's P_Key table (the view's pkey_table, else derive_pkey_table); the
  // full-member bit says the membership.
  const std::vector<PKey>& pkeys(uint32_t e) const;
  // The port is in the partition of `key` (either membership; OpenSM's osm_physp_has_pkey).
  bool has_pkey(uint32_t e, PKey key) const;
  // Some partition holds both ports, one of them as a full member (IBA 10.9.3).
  bool share_pkey(uint32_t a, uint32_t b) const;
  // The partition of `key` holds both ports, one of them as a full member.
  bool share_this_pkey(uint32_t a, uint32_t b, PKey key) const;
  // The first of a's P_Keys (table order) that matches one of b's: a's entry.
  std::optional<PKey> common_pkey(uint32_t a, uint32_t b) const;

 private:
  const SaView& view_;
  mutable std::optional<bool> ready_;
  mutable std::vector<uint32_t> lid_index_;  // LID -> endpoint + 1 (0: none)
  mutable std::vector<uint32_t> by_guid_;
  mutable std::vector<std::optional<std::vector<PKey>>> pkeys_;
};

// ---- requests and the SA's state -----------------------------------------------------------

struct Request {
  const Mad& mad;
  mad::SaMad sa;
  SaContext& ctx;
  bool trusted = false;

  mad::Method method() const { return sa.header.method; }
  uint64_t mask() const { return sa.component_mask; }
  std::optional<uint32_t> requester() const {
    return ctx.ready() ? ctx.endpoint_by_lid(mad.slid) : std::nullopt;
  }
};

struct ServiceEntry {
  mad::ServiceRecord record;
  std::optional<TimePoint> expires;  // none: infinite lease
};

struct Subscription {
  mad::InformInfo info;  // as subscribed (QPN: the subscriber's QP)
  Lid lid;               // the Report goes here,
  Qpn qp;                // to this QP
  Gid subscriber_gid;
};

struct PendingReport {
  Mad mad;
  TimePoint deadline;
  uint32_t retries_left = 0;
  Duration timeout{};
};

}  // namespace softib::sm::sa

namespace softib::sm {

struct SubnetAdministrator::Impl {
  Impl(MadPort& p, const Clock& c, SaOptions o) : mad_port(p), clock(c), options(o), rmpp(p, counters, o) {}

  MadPort& mad_port;
  const Clock& clock;
  SaOptions options;
  CounterSet<SaCounter> counters;
  RmppSender rmpp;

  std::map<uint16_t, McGroup> groups;
  bool mcast_changed = false;
  uint32_t mgid_counter = 0;  // SA-assigned MGIDs (signature 0xA01B)
  std::vector<sa::ServiceEntry> services;
  std::vector<sa::Subscription> subscriptions;
  std::map<uint64_t, sa::PendingReport> reports;  // by TID
  uint64_t next_report_tid = 0x02DAB000;          // OpenSM's first trap-forwarding TID

  void handle(const Mad& mad, const SaView& view);
  void dispatch(sa::Request& r);

  // Answers. `records` holds `count` records of `record_size` bytes each (unpadded).
  void answer(const sa::Request& r, wire::ByteSpan records, size_t count, size_t record_size);
  template <class R>
  void answer(const sa::Request& r, const std::vector<R>& records) {
    constexpr size_t size = mad::wire_size<R>;
    std::vector<uint8_t> bytes(records.size() * size);
    for (size_t i = 0; i < records.size(); ++i)
      mad::encode(records[i], wire::MutByteSpan(bytes.data() + i * size, size));
    answer(r, wire::ByteSpan(bytes), records.size(), size);
  }
  void fail(const sa::Request& r, mad::MadStatus status);
  void fail(const sa::Request& r, mad::SaStatus status) { fail(r, mad::MadStatus::from(status)); }
  void send_mad(const mad::SaMad& m, Lid to, Qpn qp);

  // Attributes (one handler each; each checks its methods). get_or_table answers
  // MethodAttributeUnsupported for the others and returns false.
  bool get_or_table(const sa::Request& r);
  void class_port_info(sa::Request& r);
  void node_records(sa::Request& r);
  void port_info_records(sa::Request& r);
  void link_records(sa::Request& r);
  void switch_info_records(sa::Request& r);
  void lft_records(sa::Request& r);
  void pkey_table_records(sa::Request& r);
  void path_records(sa::Request& r);
  void mc_member_records(sa::Request& r);
  void service_records(sa::Request& r);
  void inform_info(sa::Request& r);
  void inform_info_records(sa::Request& r);
  void sm_info_records(sa::Request& r);
  void guid_info_records(sa::Request& r);
  void sl2vl_records(sa::Request& r);
  void vl_arb_records(sa::Request& r);
  void mft_records(sa::Request& r);

  // Multicast (sa_mcast.cpp).
  void mc_join(sa::Request& r, const mad::MCMemberRecord& q);
  void mc_leave(sa::Request& r, const mad::MCMemberRecord& q);
  void mc_query(sa::Request& r, const mad::MCMemberRecord& q);
  const McGroup* find_group(const Gid& mgid) const;
  McGroup* find_group(const Gid& mgid);
  std::optional<uint16_t> allocate_mlid(const sa::SaContext& ctx, std::optional<uint16_t> wanted) const;
  void group_notice(const McGroup& g, uint16_t trap, const SaView& view);

  // Reports (sa_services.cpp).
  void report(const mad::Notice& notice, const SaView& view);
  void report_response(const Mad& mad);
  void poll_reports(TimePoint now);
  void expire_services(TimePoint now);
};

}  // namespace softib::sm
