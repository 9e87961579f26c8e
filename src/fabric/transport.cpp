// Moving MADs through the fabric: directed-route SMPs along their path (the SMI rules of
// mad/dr_route.hpp at every node), everything else hop by hop through switch LFTs, with
// link state, impairment, port counters and a drop counter for every way a MAD can die.
#include <algorithm>

#include "base/log.hpp"
#include "fabric/fabric_impl.hpp"
#include "mad/dr_route.hpp"
#include "mad/mad_header.hpp"
#include "mad/notice.hpp"
#include "mad/smp.hpp"
#include "mad/trap128_details.hpp"
#include "mad/trap144_details.hpp"

namespace softib::fabric {

namespace {

constexpr size_t kMaxRemembered = 1 << 20;  // outstanding request TIDs tracked for responses
// Bytes on the wire for a MAD packet: LRH + BTH + DETH + MAD + ICRC + VCRC, in 4-byte words
// as the PMA counts data.
constexpr uint64_t kMadPacketWords = (8 + 12 + 8 + kMadSize + 4 + 2 + 3) / 4;

bool lid_in_range(Lid base, uint8_t lmc, Lid lid) {
  return base.value() != 0 && lid.value() >= base.value() &&
         lid.value() < base.value() + (1u << lmc);
}

uint64_t tid_of(const Mad& m) { return wire::load_be64(&m.bytes[8]); }
bool is_request(const Mad& m) { return !mad::is_response(static_cast<mad::Method>(m.bytes[3])); }

}  // namespace

void Fabric::send(AgentId from, const Mad& mad) {
  Impl& im = *impl_;
  if (from == 0 || from > im.agents.size() || im.agents[from - 1].agent == nullptr) return;
  const PortRef at = im.agents[from - 1].port;
  InFlight f;
  f.mad = mad;
  f.from = from;
  f.node = at.node;
  f.in_port = 0;
  f.origin_port = at.port;
  f.mad.slid = im.port(at).info.lid;
  if (is_request(mad) && im.shared_port(at)) {
    const uint64_t tid = tid_of(mad);
    if (im.requests.size() >= kMaxRemembered) {
      im.requests.erase(im.request_order.front());
      im.request_order.pop_front();
    }
    im.requests[tid] = from;
    im.request_order.push_back(tid);
  }
  if (mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnDirected)) {
    auto smp = mad::decode<mad::DrSmp>(mad.bytes);
    if (!smp) {
      drops_.inc(Drop::kMalformed);
      return;
    }
    f.dr = true;
    f.smp = *smp;
  }
  im.enqueue(std::move(f));
}

size_t Fabric::pump() {
  Impl& im = *impl_;
  const uint64_t before = delivered_;
  while (!im.queue.empty()) {
    InFlight f = im.queue.pop();
    im.step(f);
  }
  return delivered_ - before;
}

// Runs one MAD from where it was queued to its destination (or a drop).
void Fabric::Impl::step(InFlight& f) {
  const auto node_kind = [&](NodeIndex n) {
    return mad::DrNode{is_switch(n), topo().node(n).num_ports};
  };
  // The port a node's agent or SMA sits on, for delivery at node n after arriving on p.
  const auto local_port = [&](NodeIndex n, uint8_t arrived_on) -> PortRef {
    if (is_switch(n)) return {n, 0};
    if (arrived_on != 0) return {n, arrived_on};
    return {n, f.origin_port != 0 ? f.origin_port : uint8_t{1}};
  };

  bool originating = f.in_port == 0 && f.hops == 0;
  while (true) {
    if (f.hops > Fabric::kMaxHops) {
      fabric.drops_.inc(Drop::kHopLimit);
      return;
    }
    if (f.dr && !f.lid_routed_dr) {
      const mad::DrDecision d = originating ? mad::dr_send(f.smp) : mad::dr_receive(f.smp, node_kind(f.node), f.in_port);
      switch (d.action) {
        case mad::DrAction::kDiscard:
          fabric.drops_.inc(Drop::kDirectedRoute);
          return;
        case mad::DrAction::kDeliver:
          deliver(f, local_port(f.node, f.in_port));
          return;
        case mad::DrAction::kForward: {
          // A CA's SMI sends only through the port its QP0 belongs to.
          if (originating && !is_switch(f.node) && f.from && agents[f.from - 1].port.port != d.port) {
            fabric.drops_.inc(Drop::kDirectedRoute);
            return;
          }
          const PortRef out{f.node, d.port};
          if (!forward(f, out)) return;
          break;
        }
        case mad::DrAction::kLidRoute:
          f.lid_routed_dr = true;
          f.mad.dlid = f.smp.direction ? f.smp.dr_slid : f.smp.dr_dlid;
          break;
      }
      originating = false;
      continue;
    }

    // LID routing.
    const Lid dlid = f.mad.dlid;
    const NodeIndex n = f.node;
    if (is_switch(n)) {
      const mad::PortInfo& p0 = port({n, 0}).info;
      uint8_t out = 0;
      if (!dlid.is_permissive() && !lid_in_range(p0.lid, p0.lmc, dlid)) {
        const auto& lft = node(n).lft;
        out = dlid.value() < lft.size() ? lft[dlid.value()] : uint8_t{0xFF};
        if (out == 0xFF || dlid.is_multicast() || out > topo().node(n).num_ports) {
          fabric.drops_.inc(Drop::kNoLftEntry);
          return;
        }
      }
      if (out == 0) {
        if (f.lid_routed_dr) {  // the LID-routed part ends here: resume the directed part
          f.lid_routed_dr = false;
          originating = false;
          continue;
        }
        deliver(f, {n, 0});
        return;
      }
      if (!forward(f, {n, out})) return;
      originating = false;
      continue;
    }
    // A CA or router: on arrival the DLID must be one of the port's LIDs (or permissive).
    if (f.in_port != 0) {
      const mad::PortInfo& pi = port({n, f.in_port}).info;
      if (!dlid.is_permissive() && !lid_in_range(pi.lid, pi.lmc, dlid)) {
        fabric.drops_.inc(Drop::kWrongDestination);
        return;
      }
      if (f.lid_routed_dr) {
        f.lid_routed_dr = false;
        originating = false;
        continue;
      }
      deliver(f, {n, f.in_port});
      return;
    }
    // Leaving a CA: loop back to its own port, or out of it.
    const PortRef self = local_port(n, 0);
    const mad::PortInfo& pi = port(self).info;
    if (lid_in_range(pi.lid, pi.lmc, dlid)) {
      deliver(f, self);
      return;
    }
    if (!forward(f, self)) return;
    originating = false;
  }
}

// Sends f out of `out` to the node at the other end. False when the MAD died on the way.
bool Fabric::Impl::forward(InFlight& f, PortRef out) {
  const TopoPort& tp = topo().port(out);
  LivePort& from = port(out);
  if (!tp.peer.valid() || !from.trained) {
    fabric.drops_.inc(Drop::kLinkDown);
    return false;
  }
  LivePort& to = port(tp.peer);
  // Only SMPs (VL15) cross links that are not Active (IBA 7.2: Init and Armed ports take
  // subnet management packets only).
  const bool smp = f.mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnLid) ||
                   f.mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnDirected);
  if (!smp && (from.info.port_state != mad::PortState::kActive || to.info.port_state != mad::PortState::kActive)) {
    fabric.drops_.inc(Drop::kLinkDown);
    return false;
  }
  from.traffic.xmit_pkts++;
  from.traffic.unicast_xmit_pkts++;
  from.traffic.xmit_data += kMadPacketWords;
  if (chance(from.impairment.loss)) {
    to.traffic.errors[static_cast<size_t>(ErrorCounter::kSymbolError)]++;
    fabric.drops_.inc(Drop::kLoss);
    return false;
  }
  if (chance(from.impairment.corruption)) {
    to.traffic.errors[static_cast<size_t>(ErrorCounter::kRcvErrors)]++;
    fabric.drops_.inc(Drop::kCorruption);
    return false;
  }
  to.traffic.rcv_pkts++;
  to.traffic.unicast_rcv_pkts++;
  to.traffic.rcv_data += kMadPacketWords;
  f.node = tp.peer.node;
  f.in_port = tp.peer.port;
  ++f.hops;
  return true;
}

void Fabric::Impl::deliver(InFlight& f, PortRef at) {
  const uint8_t cls = f.mad.mgmt_class();
  // The source LID a receiver sees: the sending port's LID (set at the first hop).
  if (f.dr) {
    // The SMI updated the decoded SMP; put it back into the bytes an agent reads.
    mad::encode(f.smp, wire::MutByteSpan(f.mad.bytes));
  }
  const auto method = static_cast<mad::Method>(f.mad.bytes[3]);
  const bool response = mad::is_response(method);
  const bool smp = cls == static_cast<uint8_t>(mad::MgmtClass::kSubnLid) ||
                   cls == static_cast<uint8_t>(mad::MgmtClass::kSubnDirected);
  if (smp && !response && method != mad::Method::kTrap) {
    const uint16_t attr = wire::load_be16(&f.mad.bytes[16]);
    if (attr != static_cast<uint16_t>(mad::SmpAttr::kSMInfo)) {
      InFlight answer;
      if (sma(f, at, answer)) reply(f, at, std::move(answer));
      return;
    }
  }
  if (cls == static_cast<uint8_t>(mad::MgmtClass::kPerfMgt) && !response) {
    InFlight answer;
    if (pma(f, at, answer.mad)) reply(f, at, std::move(answer));
    return;
  }
  deliver_to_agent(f, at, response);
}

void Fabric::Impl::deliver_to_agent(const InFlight& f, PortRef at, bool response) {
  const uint8_t cls = f.mad.mgmt_class();
  Agent* target = nullptr;
  // RMPP (IBA 13.6): a response may come in several DATA segments, all for the requester;
  // the requester's ACK/STOP/ABORT carry the same TID and a response method but belong to
  // the transfer's sender, the agent serving the class here (found below).
  const bool rmpp_active = f.mad.bytes[24] != 0 && (f.mad.bytes[26] & 0x1) != 0;
  const bool rmpp_control = rmpp_active && f.mad.bytes[25] >= 2 && f.mad.bytes[25] <= 4;
  const bool more_segments = rmpp_active && f.mad.bytes[25] == 1 && (f.mad.bytes[26] & 0x4) == 0;
  if (response && !rmpp_control && !requests.empty()) {
    auto it = requests.find(tid_of(f.mad));
    if (it != requests.end() && agents[it->second - 1].agent && agents[it->second - 1].port == at) {
      target = &agents[it->second - 1];
      if (!more_segments) requests.erase(it);
    }
  }
  if (!target) {
    Agent* only = nullptr;  // a response goes to the port's agent when it has just one
    int at_port = 0;
    for (Agent& a : agents) {
      if (!a.agent || !(a.port == at)) continue;
      ++at_port;
      only = &a;
      if (std::find(a.classes.begin(), a.classes.end(), cls) != a.classes.end()) {
        target = &a;
        break;
      }
    }
    if (!target && response && at_port == 1) target = only;
  }
  if (!target) {
    fabric.drops_.inc(Drop::kNoAgent);
    return;
  }
  Mad m = f.mad;
  ++fabric.delivered_;
  target->agent->on_mad(at, m);
}

// Queues `response` from `at` back to the requester: a directed-route response turns round
// on its path, anything else goes to the request's source LID.
void Fabric::Impl::reply(const InFlight& request, PortRef at, InFlight r) {
  ++fabric.delivered_;
  r.node = at.node;
  r.in_port = 0;
  r.hops = 0;
  r.origin_port = at.port;
  r.from = 0;
  if (request.dr) {
    // The responder's SMI turns it round (C14-13:1/3), from the node that answered.
    const mad::DrDecision d = mad::dr_send(r.smp);
    switch (d.action) {
      case mad::DrAction::kDiscard:
        fabric.drops_.inc(Drop::kDirectedRoute);
        return;
      case mad::DrAction::kDeliver: {
        r.in_port = request.in_port;
        const PortRef requester = request.from ? agents[request.from - 1].port : at;
        deliver(r, requester);
        return;
      }
      case mad::DrAction::kForward:
        if (!forward(r, {at.node, d.port})) return;
        enqueue(std::move(r));  // continues at the next node
        return;
      case mad::DrAction::kLidRoute:
        r.lid_routed_dr = true;
        r.mad.dlid = r.smp.dr_slid;
        r.in_port = at.port;
        enqueue(std::move(r));
        return;
    }
    return;
  }
  r.mad.dlid = request.mad.slid;
  r.mad.slid = port(at).info.lid;
  r.mad.remote_qp = request.mad.remote_qp;
  if (request.from != 0 && request.hops == 0) {  // a loop-back request: answer in place
    deliver_to_agent(r, agents[request.from - 1].port, true);
    return;
  }
  enqueue(std::move(r));
}

// Trap 128 from a switch to its master SM (IBA 14.2.5.1), when the SM told the switch where
// it is (port 0 MasterSMLID) and the switch has a LID to send from.
void Fabric::Impl::send_capability_trap(PortRef end_port) {
  const mad::PortInfo& pi = port(end_port).info;
  if (pi.master_sm_lid.value() == 0 || pi.lid.value() == 0) return;
  if (!(pi.capability_mask & capmask::kIsCapabilityMaskNoticeSupported) && !is_switch(end_port.node)) return;
  mad::SmpNotice n;
  n.notice.is_generic = true;
  n.notice.type = static_cast<uint8_t>(mad::NoticeType::kInfo);
  n.notice.producer_type_or_vendor_id = static_cast<uint32_t>(node(end_port.node).info.node_type);
  n.notice.trap_number_or_device_id = 144;
  n.notice.issuer_lid = pi.lid;
  mad::Trap144Details d;
  d.lid = pi.lid;
  d.capability_mask = pi.capability_mask;
  n.notice.set_details(d);
  mad::Smp smp = mad::make_smp(mad::Method::kTrap, n, 0, ++next_trap_tid);
  InFlight f;
  mad::encode(smp, wire::MutByteSpan(f.mad.bytes));
  f.mad.dlid = pi.master_sm_lid;
  f.mad.slid = pi.lid;
  f.node = end_port.node;
  f.in_port = 0;
  f.origin_port = end_port.port;
  f.from = 0;
  enqueue(std::move(f));
}

void Fabric::Impl::send_trap(NodeIndex sw, uint16_t trap_number) {
  const mad::PortInfo& p0 = port({sw, 0}).info;
  if (p0.master_sm_lid.value() == 0 || p0.lid.value() == 0) return;
  mad::SmpNotice n;
  n.notice.is_generic = true;
  n.notice.type = static_cast<uint8_t>(mad::NoticeType::kUrgent);
  n.notice.producer_type_or_vendor_id = static_cast<uint32_t>(mad::NodeType::kSwitch);
  n.notice.trap_number_or_device_id = trap_number;
  n.notice.issuer_lid = p0.lid;
  n.notice.set_details(mad::Trap128Details{p0.lid});
  mad::Smp smp = mad::make_smp(mad::Method::kTrap, n, 0, ++next_trap_tid);
  InFlight f;
  mad::encode(smp, wire::MutByteSpan(f.mad.bytes));
  f.mad.dlid = p0.master_sm_lid;
  f.mad.slid = p0.lid;
  f.node = sw;
  f.in_port = 0;
  f.from = 0;
  // Leaving the switch: routed by its own LFT (step() treats in_port 0 at a switch as local).
  enqueue(std::move(f));
}

}  // namespace softib::fabric
