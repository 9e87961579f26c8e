// Fabric internals shared by fabric.cpp (state, links), transport.cpp (MAD routing),
// sma.cpp and pma.cpp. Private to the fabric module.
#pragma once

#include <deque>
#include <memory>

#include "base/ring_queue.hpp"
#include <random>
#include <unordered_map>

#include "fabric/device_model.hpp"
#include "fabric/fabric.hpp"
#include "mad/dr_smp.hpp"
#include "mad/mad_status.hpp"
#include "mad/method.hpp"

namespace softib::fabric {

struct LivePort {
  mad::PortInfo info;
  // P_Key table and GUIDInfo entries, materialised on the first Set; until then the defaults
  // (entry 0: the default full P_Key / the port GUID; the rest zero). Read them through
  // Impl::pkey() and Impl::guid().
  std::vector<PKey> pkeys;
  std::array<uint8_t, 16> sl2vl{};                   // CA/router ports and switch port 0
  // VLArbitration blocks 1..4 (low, low, high, high); allocated on the first Set, all
  // zero until then. Rarely used, so a fabric of 200,000 ports does not pay 256 bytes each.
  std::unique_ptr<std::array<mad::VLArbitrationTable, 4>> vlarb;
  std::vector<Guid> guids;
  PortTraffic traffic;
  // What PortCounters / PortCountersExtended were last reset to; allocated on the first
  // reset (until then both are zero).
  struct Baselines {
    PortTraffic pc, ext;
  };
  std::unique_ptr<Baselines> baselines;
  LinkImpairment impairment;
  bool cable_up = true;    // the operator's view of the cable
  bool disabled = false;   // PhysPortState Disabled (set by an SM or the operator)
  bool trained = false;    // the link is physically up
  std::string_view down_reason;
};

struct LiveNode {
  mad::NodeInfo info;
  mad::NodeDescription description;
  // Switches only.
  mad::SwitchInfo sw;
  std::vector<uint8_t> lft;                         // grows to the highest block set
  std::vector<uint16_t> mft;                        // [mlid index][position] port masks
  std::vector<std::array<uint8_t, 16>> sl2vl_pairs; // [in * (ports+1) + out], on first Set
  uint32_t first_port = 0;
};

struct Agent {
  PortRef port;
  MadAgent* agent = nullptr;
  std::vector<uint8_t> classes;
};

// A MAD on its way through the fabric.
struct InFlight {
  Mad mad;
  NodeIndex node;        // where it is now
  uint8_t in_port = 0;   // the port it arrived on (0: from the node's own agent or SMA)
  uint8_t origin_port = 0;  // where a locally sent MAD leaves a CA (the sender's port)
  int hops = 0;
  AgentId from = 0;      // the agent that sent it (0: an SMA/PMA or trap)
  bool dr = false;       // a directed-route SMP travelling its directed part
  mad::DrSmp smp;        // decoded, when dr
  bool lid_routed_dr = false;  // a DR SMP travelling a LID-routed part (DrDLID/DrSLID)
};

struct Fabric::Impl {
  Impl(Fabric& f, FabricOptions o) : fabric(f), options(o), rng(o.seed) {}

  Fabric& fabric;
  FabricOptions options;
  std::mt19937_64 rng;
  std::vector<LiveNode> nodes;
  std::vector<LivePort> ports;  // by Topology port slot
  std::vector<Agent> agents;    // index = AgentId - 1; agent == nullptr once detached
  RingQueue<InFlight> queue;
  // TID -> the agent awaiting its response, kept only for ports where several agents share
  // a class (elsewhere the port tells who asked).
  std::unordered_map<uint64_t, AgentId> requests;
  std::deque<uint64_t> request_order;              // bounds `requests`
  uint64_t next_trap_tid = 0x5AB0000000000000ULL;

  LivePort& port(PortRef p) { return ports[nodes[p.node.value()].first_port + p.port]; }
  // True when more than one agent is attached at p.
  bool shared_port(PortRef p) const {
    int n = 0;
    for (const Agent& a : agents) n += a.agent && a.port == p ? 1 : 0;
    return n > 1;
  }
  LiveNode& node(NodeIndex n) { return nodes[n.value()]; }
  bool is_switch(NodeIndex n) const { return nodes[n.value()].info.node_type == mad::NodeType::kSwitch; }
  const Topology& topo() const { return fabric.topo_; }

  // P_Key table entries: the switch's enforcement cap on external switch ports, NodeInfo's
  // PartitionCap elsewhere.
  size_t pkey_capacity(PortRef p) {
    return is_switch(p.node) && p.port != 0 ? kSwitchEnforceCap : node(p.node).info.partition_cap;
  }
  PKey pkey(PortRef p, size_t i) {
    const LivePort& lp = port(p);
    if (!lp.pkeys.empty()) return lp.pkeys[i];
    return i == 0 ? PKey::default_full() : PKey(0);
  }
  std::vector<PKey>& writable_pkeys(PortRef p) {
    LivePort& lp = port(p);
    if (lp.pkeys.empty()) {
      lp.pkeys.assign(pkey_capacity(p), PKey(0));
      lp.pkeys[0] = PKey::default_full();
    }
    return lp.pkeys;
  }
  Guid guid(PortRef p, size_t i) {
    const LivePort& lp = port(p);
    if (!lp.guids.empty()) return lp.guids[i];
    return i == 0 ? topo().port(p).guid : Guid(0);
  }
  std::vector<Guid>& writable_guids(PortRef p) {
    LivePort& lp = port(p);
    if (lp.guids.empty()) {
      lp.guids.assign(lp.info.guid_cap, Guid(0));
      if (!lp.guids.empty()) lp.guids[0] = topo().port(p).guid;
    }
    return lp.guids;
  }

  // fabric.cpp
  void train(PortRef p);  // re-evaluates the cable at p (both ends)
  void port_state_changed(NodeIndex sw);
  bool chance(double p);

  // transport.cpp
  void enqueue(InFlight f) { queue.push(std::move(f)); }
  void step(InFlight& f);
  bool forward(InFlight& f, PortRef out);
  void deliver(InFlight& f, PortRef at);
  void deliver_to_agent(const InFlight& f, PortRef at, bool response);
  // `response` holds the answer: decoded (dr, smp) for a directed-route request, else bytes.
  void reply(const InFlight& request, PortRef at, InFlight response);
  void send_trap(NodeIndex sw, uint16_t trap_number);
  // Trap 144 (IBA 14.2.5.1, LocalChangedEvent): the port's CapabilityMask changed.
  void send_capability_trap(PortRef end_port);

  // sma.cpp / pma.cpp: answer a request at `at`; false when there is nothing to answer.
  bool sma(InFlight& f, PortRef at, InFlight& response);
  bool pma(const InFlight& f, PortRef at, Mad& response);
};

}  // namespace softib::fabric
