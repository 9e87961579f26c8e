// The Performance Management Agent of every node (IBA 16.1): ClassPortInfo, PortCounters and
// PortCountersExtended for any port (PortSelect; 0xFF = all ports, AllPortSelect). Counters
// run 64 bits wide underneath; PortCounters saturates them into its narrow fields (IBA
// 16.1.3.5: counters stop at all ones), and each attribute has its own reset baseline, so
// clearing one view does not clear the other.
#include <algorithm>
#include <limits>

#include "fabric/fabric_impl.hpp"
#include "mad/attribute_id.hpp"
#include "mad/class_port_info.hpp"
#include "mad/pma_mad.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_counters_extended.hpp"

namespace softib::fabric {

namespace {

using mad::InvalidField;
using mad::MadStatus;
using mad::Method;

const PortTraffic kZero{};

LivePort::Baselines& baselines(LivePort& lp) {
  if (!lp.baselines) lp.baselines = std::make_unique<LivePort::Baselines>();
  return *lp.baselines;
}

// ClassPortInfo.CapabilityMask bits of the PerfMgt class (IBA 16.1.3.1).
constexpr uint16_t kAllPortSelect = 1u << 8;
constexpr uint16_t kExtendedWidth = 1u << 9;
constexpr uint16_t kPortXmitWait = 1u << 12;

template <class T>
T saturate(uint64_t v, uint64_t max) {
  return static_cast<T>(std::min(v, max));
}

size_t index(ErrorCounter c) { return static_cast<size_t>(c); }

PortTraffic difference(const PortTraffic& now, const PortTraffic& base) {
  PortTraffic d;
  d.xmit_data = now.xmit_data - base.xmit_data;
  d.rcv_data = now.rcv_data - base.rcv_data;
  d.xmit_pkts = now.xmit_pkts - base.xmit_pkts;
  d.rcv_pkts = now.rcv_pkts - base.rcv_pkts;
  d.unicast_xmit_pkts = now.unicast_xmit_pkts - base.unicast_xmit_pkts;
  d.unicast_rcv_pkts = now.unicast_rcv_pkts - base.unicast_rcv_pkts;
  d.multicast_xmit_pkts = now.multicast_xmit_pkts - base.multicast_xmit_pkts;
  d.multicast_rcv_pkts = now.multicast_rcv_pkts - base.multicast_rcv_pkts;
  for (size_t i = 0; i < d.errors.size(); ++i) d.errors[i] = now.errors[i] - base.errors[i];
  return d;
}

PortTraffic sum(const PortTraffic& a, const PortTraffic& b) {
  PortTraffic s = a;
  s.xmit_data += b.xmit_data;
  s.rcv_data += b.rcv_data;
  s.xmit_pkts += b.xmit_pkts;
  s.rcv_pkts += b.rcv_pkts;
  s.unicast_xmit_pkts += b.unicast_xmit_pkts;
  s.unicast_rcv_pkts += b.unicast_rcv_pkts;
  s.multicast_xmit_pkts += b.multicast_xmit_pkts;
  s.multicast_rcv_pkts += b.multicast_rcv_pkts;
  for (size_t i = 0; i < s.errors.size(); ++i) s.errors[i] += b.errors[i];
  return s;
}

mad::PortCounters narrow(const PortTraffic& t) {
  mad::PortCounters pc;
  const auto e = [&](ErrorCounter c) { return t.errors[index(c)]; };
  pc.symbol_error_counter = saturate<uint16_t>(e(ErrorCounter::kSymbolError), 0xFFFF);
  pc.link_error_recovery_counter = saturate<uint8_t>(e(ErrorCounter::kLinkErrorRecovery), 0xFF);
  pc.link_downed_counter = saturate<uint8_t>(e(ErrorCounter::kLinkDowned), 0xFF);
  pc.port_rcv_errors = saturate<uint16_t>(e(ErrorCounter::kRcvErrors), 0xFFFF);
  pc.port_rcv_remote_physical_errors = saturate<uint16_t>(e(ErrorCounter::kRcvRemotePhysicalErrors), 0xFFFF);
  pc.port_rcv_switch_relay_errors = saturate<uint16_t>(e(ErrorCounter::kRcvSwitchRelayErrors), 0xFFFF);
  pc.port_xmit_discards = saturate<uint16_t>(e(ErrorCounter::kXmitDiscards), 0xFFFF);
  pc.port_xmit_constraint_errors = saturate<uint8_t>(e(ErrorCounter::kXmitConstraintErrors), 0xFF);
  pc.port_rcv_constraint_errors = saturate<uint8_t>(e(ErrorCounter::kRcvConstraintErrors), 0xFF);
  pc.local_link_integrity_errors = saturate<uint8_t>(e(ErrorCounter::kLocalLinkIntegrityErrors), 0xF);
  pc.excessive_buffer_overrun_errors = saturate<uint8_t>(e(ErrorCounter::kExcessiveBufferOverrunErrors), 0xF);
  pc.vl15_dropped = saturate<uint16_t>(e(ErrorCounter::kVl15Dropped), 0xFFFF);
  pc.port_xmit_data = saturate<uint32_t>(t.xmit_data, 0xFFFFFFFF);
  pc.port_rcv_data = saturate<uint32_t>(t.rcv_data, 0xFFFFFFFF);
  pc.port_xmit_pkts = saturate<uint32_t>(t.xmit_pkts, 0xFFFFFFFF);
  pc.port_rcv_pkts = saturate<uint32_t>(t.rcv_pkts, 0xFFFFFFFF);
  pc.port_xmit_wait = saturate<uint32_t>(e(ErrorCounter::kXmitWait), 0xFFFFFFFF);
  return pc;
}

mad::PortCountersExtended wide(const PortTraffic& t) {
  mad::PortCountersExtended x;
  x.port_xmit_data = t.xmit_data;
  x.port_rcv_data = t.rcv_data;
  x.port_xmit_pkts = t.xmit_pkts;
  x.port_rcv_pkts = t.rcv_pkts;
  x.port_unicast_xmit_pkts = t.unicast_xmit_pkts;
  x.port_unicast_rcv_pkts = t.unicast_rcv_pkts;
  x.port_multicast_xmit_pkts = t.multicast_xmit_pkts;
  x.port_multicast_rcv_pkts = t.multicast_rcv_pkts;
  return x;
}

// PortCounters CounterSelect bit -> what a reset clears (IBA 16.1.3.5).
void reset_selected(PortTraffic& base, const PortTraffic& now, uint16_t select, uint8_t select2) {
  static constexpr ErrorCounter kBits[] = {
      ErrorCounter::kSymbolError,          ErrorCounter::kLinkErrorRecovery,
      ErrorCounter::kLinkDowned,           ErrorCounter::kRcvErrors,
      ErrorCounter::kRcvRemotePhysicalErrors, ErrorCounter::kRcvSwitchRelayErrors,
      ErrorCounter::kXmitDiscards,         ErrorCounter::kXmitConstraintErrors,
      ErrorCounter::kRcvConstraintErrors,  ErrorCounter::kLocalLinkIntegrityErrors,
      ErrorCounter::kExcessiveBufferOverrunErrors, ErrorCounter::kVl15Dropped};
  for (size_t bit = 0; bit < std::size(kBits); ++bit)
    if (select & (1u << bit)) base.errors[index(kBits[bit])] = now.errors[index(kBits[bit])];
  if (select & (1u << 12)) base.xmit_data = now.xmit_data;
  if (select & (1u << 13)) base.rcv_data = now.rcv_data;
  if (select & (1u << 14)) base.xmit_pkts = now.xmit_pkts;
  if (select & (1u << 15)) base.rcv_pkts = now.rcv_pkts;
  if (select2 & 1u) base.errors[index(ErrorCounter::kXmitWait)] = now.errors[index(ErrorCounter::kXmitWait)];
}

// PortCountersExtended CounterSelect bits 0..7.
void reset_selected_ext(PortTraffic& base, const PortTraffic& now, uint16_t select) {
  if (select & 1u) base.xmit_data = now.xmit_data;
  if (select & 2u) base.rcv_data = now.rcv_data;
  if (select & 4u) base.xmit_pkts = now.xmit_pkts;
  if (select & 8u) base.rcv_pkts = now.rcv_pkts;
  if (select & 16u) base.unicast_xmit_pkts = now.unicast_xmit_pkts;
  if (select & 32u) base.unicast_rcv_pkts = now.unicast_rcv_pkts;
  if (select & 64u) base.multicast_xmit_pkts = now.multicast_xmit_pkts;
  if (select & 128u) base.multicast_rcv_pkts = now.multicast_rcv_pkts;
}

}  // namespace

bool Fabric::Impl::pma(const InFlight& f, PortRef at, Mad& response) {
  auto req = mad::decode<mad::PmaMad>(f.mad.bytes);
  if (!req) {
    fabric.drops_.inc(Drop::kMalformed);
    return false;
  }
  mad::PmaMad r = *req;
  r.header.method = mad::response_to(req->header.method);
  const auto attr = static_cast<mad::PmaAttr>(req->header.attribute_id);
  const bool get = req->header.method == Method::kGet;
  const uint8_t num_ports = topo().node(at.node).num_ports;
  MadStatus status;

  // The ports a PortSelect names: one port, or every port for 0xFF.
  const auto selected = [&](uint8_t select) -> std::optional<std::vector<PortRef>> {
    std::vector<PortRef> out;
    if (select == 0xFF) {
      if (!is_switch(at.node)) return std::nullopt;  // AllPortSelect is a switch PMA's (below)
      for (uint8_t p = 1; p <= num_ports; ++p) out.push_back({at.node, p});
      return out;
    }
    if (select > num_ports || (select == 0 && !is_switch(at.node))) return std::nullopt;
    out.push_back({at.node, select});
    return out;
  };

  if (req->header.class_version != 1) {
    status = MadStatus::from(InvalidField::kBadVersion);
  } else if (!get && req->header.method != Method::kSet) {
    status = MadStatus::from(InvalidField::kMethodUnsupported);
  } else if (attr == mad::PmaAttr::kClassPortInfo) {
    if (!get) {
      status = MadStatus::from(InvalidField::kMethodAttributeUnsupported);
    } else {
      mad::ClassPortInfo cpi;
      // AllPortSelect (PortSelect 0xFF) on switches only, as ibsim's PMA answers: a CA's
      // tools read its ports one by one (perfquery -a emulates the sum).
      cpi.capability_mask = static_cast<uint16_t>((is_switch(at.node) ? kAllPortSelect : 0) | kExtendedWidth | kPortXmitWait);
      cpi.resp_time_value = 18;
      r.data.fill(0);
      mad::encode(cpi, wire::MutByteSpan(r.data));
    }
  } else if (attr == mad::PmaAttr::kPortCounters) {
    auto pc = mad::decode<mad::PortCounters>(wire::ByteSpan(req->data));
    auto targets = pc ? selected(pc->port_select) : std::nullopt;
    if (!targets) {
      status = MadStatus::from(InvalidField::kInvalidAttributeValue);
    } else {
      PortTraffic total;
      for (PortRef p : *targets) {
        LivePort& lp = port(p);
        if (!get) reset_selected(baselines(lp).pc, lp.traffic, pc->counter_select, pc->counter_select2);
        total = sum(total, difference(lp.traffic, lp.baselines ? lp.baselines->pc : kZero));
      }
      mad::PortCounters out = narrow(total);
      out.port_select = pc->port_select;
      out.counter_select = pc->counter_select;
      out.counter_select2 = pc->counter_select2;
      r.data.fill(0);
      mad::encode(out, wire::MutByteSpan(r.data));
    }
  } else if (attr == mad::PmaAttr::kPortCountersExtended) {
    auto x = mad::decode<mad::PortCountersExtended>(wire::ByteSpan(req->data));
    auto targets = x ? selected(x->port_select) : std::nullopt;
    if (!targets) {
      status = MadStatus::from(InvalidField::kInvalidAttributeValue);
    } else {
      PortTraffic total;
      for (PortRef p : *targets) {
        LivePort& lp = port(p);
        if (!get) reset_selected_ext(baselines(lp).ext, lp.traffic, x->counter_select);
        total = sum(total, difference(lp.traffic, lp.baselines ? lp.baselines->ext : kZero));
      }
      mad::PortCountersExtended out = wide(total);
      out.port_select = x->port_select;
      out.counter_select = x->counter_select;
      r.data.fill(0);
      mad::encode(out, wire::MutByteSpan(r.data));
    }
  } else {
    status = MadStatus::from(InvalidField::kMethodAttributeUnsupported);
  }
  r.header.status = status;
  mad::encode(r, wire::MutByteSpan(response.bytes));
  return true;
}

}  // namespace softib::fabric
