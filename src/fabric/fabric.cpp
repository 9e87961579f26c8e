#include "fabric/fabric.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "base/log.hpp"
#include "fabric/device_model.hpp"
#include "fabric/fabric_impl.hpp"

namespace softib::fabric {

std::string_view to_string(Drop d) {
  switch (d) {
    case Drop::kDirectedRoute: return "directed_route";
    case Drop::kLinkDown: return "link_down";
    case Drop::kNoLftEntry: return "no_lft_entry";
    case Drop::kWrongDestination: return "wrong_destination";
    case Drop::kHopLimit: return "hop_limit";
    case Drop::kNoAgent: return "no_agent";
    case Drop::kLoss: return "loss";
    case Drop::kCorruption: return "corruption";
    case Drop::kMalformed: return "malformed";
    case Drop::kMKey: return "m_key";
    case Drop::kCount: break;
  }
  return "?";
}

namespace {
constexpr std::string_view kErrorCounterNames[] = {
    "SymbolErrorCounter",        "LinkErrorRecoveryCounter",   "LinkDownedCounter",
    "PortRcvErrors",             "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",          "PortXmitConstraintErrors",    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",  "ExcessiveBufferOverrunErrors", "VL15Dropped",
    "PortXmitWait"};
static_assert(std::size(kErrorCounterNames) == static_cast<size_t>(ErrorCounter::kCount));
}  // namespace

std::string_view to_string(ErrorCounter c) { return kErrorCounterNames[static_cast<size_t>(c)]; }

std::optional<ErrorCounter> parse_error_counter(std::string_view name) {
  for (size_t i = 0; i < std::size(kErrorCounterNames); ++i)
    if (kErrorCounterNames[i] == name) return static_cast<ErrorCounter>(i);
  return std::nullopt;
}

Fabric::Fabric(Topology topology, FabricOptions options)
    : topo_(std::move(topology)), impl_(std::make_unique<Impl>(*this, options)) {
  Impl& im = *impl_;
  im.nodes.resize(topo_.node_count());
  size_t slots = 0;
  for (const TopoNode& n : topo_.nodes()) slots = std::max<size_t>(slots, n.first_port + n.num_ports + 1);
  im.ports.resize(slots);
  for (uint32_t i = 0; i < topo_.node_count(); ++i) {
    const NodeIndex n(i);
    const TopoNode& tn = topo_.node(n);
    LiveNode& ln = im.node(n);
    ln.first_port = tn.first_port;
    ln.info = default_node_info(tn);
    ln.description = mad::NodeDescription::from(tn.description);
    const bool sw = tn.type == NodeType::kSwitch;
    if (sw) ln.sw = default_switch_info(tn);
    for (uint8_t p = 0; p <= tn.num_ports; ++p) {
      LivePort& lp = im.port({n, p});
      const TopoPort& tp = topo_.port({n, p});
      lp.info = default_port_info(tn, p, tp);
      // P_Key tables start with the default full member key in entry 0 (IBA 10.9.1.1);
      // they and GUIDInfo are materialised on first Set (Impl::writable_pkeys).
    }
  }
  for (uint32_t i = 0; i < topo_.node_count(); ++i) {
    const NodeIndex n(i);
    for (uint8_t p = 1; p <= topo_.node(n).num_ports; ++p) im.train({n, p});
  }
}

Fabric::~Fabric() = default;

bool Fabric::Impl::chance(double p) {
  if (p <= 0) return false;
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

// A cable trains when both ends are cabled, enabled and share a width and a speed. Training
// moves both ends to LinkUp/Initialize; losing it moves them to Down and Polling (or Disabled)
// and counts LinkDowned. Switches note the change for the SM (PortStateChange, trap 128).
void Fabric::Impl::train(PortRef p) {
  const TopoPort& tp = topo().port(p);
  LivePort& a = port(p);
  if (!tp.peer.valid()) {
    a.trained = false;
    a.down_reason = "";
    a.info.port_state = mad::PortState::kDown;
    a.info.port_physical_state = a.disabled ? mad::PhysPortState::kDisabled : mad::PhysPortState::kPolling;
    return;
  }
  LivePort& b = port(tp.peer);
  std::optional<ActiveRate> rate;
  std::string_view reason;
  if (!a.cable_up || !b.cable_up) {
    reason = "link down";
  } else if (a.disabled || b.disabled) {
    reason = "disabled";
  } else {
    LinkCaps ca{a.info.link_width_enabled, a.info.link_speed_enabled, a.info.link_speed_ext_enabled,
                topo().port(p).caps.fdr10_enabled};
    LinkCaps cb{b.info.link_width_enabled, b.info.link_speed_enabled, b.info.link_speed_ext_enabled,
                topo().port(tp.peer).caps.fdr10_enabled};
    const TrainResult r = fabric::train(ca, cb);
    rate = r.rate;
    reason = r.reason;
  }
  const bool was_up = a.trained;
  for (auto [end, lp] : {std::pair{p, &a}, std::pair{tp.peer, &b}}) {
    lp->down_reason = rate ? std::string_view{} : reason;
    if (rate) {
      lp->info.link_width_active = rate->width;
      lp->info.link_speed_active = rate->speed;
      lp->info.link_speed_ext_active = rate->ext_speed;
      lp->info.link_speed_ext_supported = lp->info.link_speed_ext_enabled ? ext_speed::kAll : 0;
      lp->info.port_physical_state = mad::PhysPortState::kLinkUp;
      if (!lp->trained) lp->info.port_state = mad::PortState::kInitialize;
    } else {
      if (lp->trained) ++lp->traffic.errors[static_cast<size_t>(ErrorCounter::kLinkDowned)];
      lp->info.port_state = mad::PortState::kDown;
      lp->info.port_physical_state = lp->disabled ? mad::PhysPortState::kDisabled : mad::PhysPortState::kPolling;
    }
    lp->trained = rate.has_value();
    (void)end;
  }
  if (was_up != rate.has_value()) {
    for (PortRef end : {p, tp.peer})
      if (is_switch(end.node)) port_state_changed(end.node);
  }
}

void Fabric::Impl::port_state_changed(NodeIndex sw) {
  LiveNode& n = node(sw);
  if (n.sw.port_state_change) return;  // already pending: one trap until the SM clears it
  n.sw.port_state_change = true;
  send_trap(sw, 128);
}

const mad::NodeInfo& Fabric::node_info(NodeIndex n) const { return impl_->nodes.at(n.value()).info; }
const mad::PortInfo& Fabric::port_info(PortRef p) const { return impl_->port(p).info; }
const mad::SwitchInfo& Fabric::switch_info(NodeIndex n) const { return impl_->nodes.at(n.value()).sw; }
std::string_view Fabric::node_description(NodeIndex n) const {
  const auto& d = impl_->nodes.at(n.value()).description.node_string;
  const auto end = std::find(d.begin(), d.end(), uint8_t{0});
  return {reinterpret_cast<const char*>(d.data()), static_cast<size_t>(end - d.begin())};
}
uint8_t Fabric::lft_port(NodeIndex sw, Lid lid) const {
  const auto& lft = impl_->nodes.at(sw.value()).lft;
  return lid.value() < lft.size() ? lft[lid.value()] : uint8_t{0xFF};
}
std::vector<uint8_t> Fabric::mft_ports(NodeIndex sw, Lid mlid) const {
  std::vector<uint8_t> out;
  const LiveNode& ln = impl_->nodes.at(sw.value());
  if (ln.info.node_type != mad::NodeType::kSwitch || mlid.value() < 0xC000) return out;
  const size_t positions = size_t{ln.info.num_ports} / 16 + 1;
  const size_t index = mlid.value() - 0xC000u;
  for (size_t pos = 0; pos < positions; ++pos) {
    const size_t at = index * positions + pos;
    const uint16_t mask = at < ln.mft.size() ? ln.mft[at] : 0;
    for (unsigned bit = 0; bit < 16; ++bit)
      if ((mask >> bit) & 1 && pos * 16 + bit <= ln.info.num_ports) out.push_back(static_cast<uint8_t>(pos * 16 + bit));
  }
  return out;
}

std::array<uint8_t, 16> Fabric::sl_to_vl(PortRef in, uint8_t out) const {
  const LiveNode& ln = impl_->nodes.at(in.node.value());
  if (ln.info.node_type != mad::NodeType::kSwitch) return impl_->port(in).sl2vl;
  if (ln.sl2vl_pairs.empty()) return {};
  const size_t n = size_t{ln.info.num_ports} + 1;
  return ln.sl2vl_pairs.at(in.port * n + out);
}

std::span<const PKey> Fabric::pkeys(PortRef p) const {
  const LivePort& lp = impl_->port(p);
  if (!lp.pkeys.empty()) return lp.pkeys;
  static const auto kDefault = [] {
    std::array<PKey, kMaxPKeyCapacity> a{};
    a[0] = PKey::default_full();
    return a;
  }();
  return std::span<const PKey>(kDefault).first(impl_->pkey_capacity(p));
}
const PortTraffic& Fabric::traffic(PortRef p) const { return impl_->port(p).traffic; }
std::string_view Fabric::link_down_reason(PortRef p) const { return impl_->port(p).down_reason; }

namespace {
Result<void> check_external(const Topology& t, PortRef p) {
  if (!p.valid() || p.node.value() >= t.node_count())
    return Status(Code::kInvalidArgument, "no such node");
  if (p.port == 0 || p.port > t.node(p.node).num_ports)
    return Status(Code::kInvalidArgument,
                  fmt::format("\"{}\" has no port {} (ports 1..{})", t.node(p.node).id, p.port, t.node(p.node).num_ports));
  return {};
}
}  // namespace

Result<void> Fabric::set_link_up(PortRef p, bool up) {
  SOFTIB_TRY(check_external(topo_, p));
  if (!topo_.port(p).peer.valid())
    return Status(Code::kInvalidArgument, fmt::format("\"{}\" port {} has no cable", topo_.node(p.node).id, p.port));
  impl_->port(p).cable_up = up;
  impl_->port(topo_.port(p).peer).cable_up = up;
  impl_->train(p);
  return {};
}

Result<void> Fabric::set_port_disabled(PortRef p, bool disabled) {
  SOFTIB_TRY(check_external(topo_, p));
  impl_->port(p).disabled = disabled;
  impl_->train(p);
  return {};
}

Result<void> Fabric::set_impairment(PortRef p, LinkImpairment impairment) {
  SOFTIB_TRY(check_external(topo_, p));
  if (impairment.loss < 0 || impairment.loss > 1 || impairment.corruption < 0 || impairment.corruption > 1)
    return Status(Code::kInvalidArgument, "loss and corruption are probabilities (0..1)");
  impl_->port(p).impairment = impairment;
  if (topo_.port(p).peer.valid()) impl_->port(topo_.port(p).peer).impairment = impairment;
  return {};
}

Result<void> Fabric::add_errors(PortRef p, ErrorCounter counter, uint64_t amount) {
  SOFTIB_TRY(check_external(topo_, p));
  impl_->port(p).traffic.errors[static_cast<size_t>(counter)] += amount;
  return {};
}

Result<void> Fabric::set_is_sm(PortRef p, bool is_sm) {
  if (!p.valid() || p.node.value() >= topo_.node_count() || p.port > topo_.node(p.node).num_ports ||
      (topo_.node(p.node).type == NodeType::kSwitch) != (p.port == 0))
    return Status(Code::kInvalidArgument, "IsSM is set on a CA port or a switch's port 0");
  uint32_t& mask = impl_->port(p).info.capability_mask;
  const uint32_t before = mask;
  mask = is_sm ? (mask | capmask::kIsSm) : (mask & ~capmask::kIsSm);
  if (mask != before) impl_->send_capability_trap(p);  // tells the master an SM came or went
  return {};
}

Result<AgentId> Fabric::attach(PortRef port, MadAgent* agent, std::vector<uint8_t> classes) {
  if (!port.valid() || port.node.value() >= topo_.node_count() || port.port > topo_.node(port.node).num_ports)
    return Status(Code::kInvalidArgument, "no such port");
  const bool sw = topo_.node(port.node).type == NodeType::kSwitch;
  if (sw != (port.port == 0))
    return Status(Code::kInvalidArgument, "agents attach to CA/router ports or to a switch's port 0");
  SOFTIB_TRY(check_classes(port, classes, 0));
  // Reuse a detached slot, so that a long-running daemon's clients coming and going do not
  // grow the table.
  for (size_t i = 0; i < impl_->agents.size(); ++i)
    if (impl_->agents[i].agent == nullptr) {
      impl_->agents[i] = Agent{port, agent, std::move(classes)};
      return static_cast<AgentId>(i + 1);
    }
  impl_->agents.push_back(Agent{port, agent, std::move(classes)});
  return static_cast<AgentId>(impl_->agents.size());
}

Result<void> Fabric::check_classes(PortRef port, const std::vector<uint8_t>& classes, AgentId except) const {
  for (size_t i = 0; i < impl_->agents.size(); ++i) {
    const Agent& a = impl_->agents[i];
    if (a.agent == nullptr || !(a.port == port) || i + 1 == except) continue;
    for (uint8_t c : classes)
      if (std::find(a.classes.begin(), a.classes.end(), c) != a.classes.end())
        return Status(Code::kAlreadyExists, fmt::format("management class {:#04x} is already served on this port", c));
  }
  return {};
}

Result<void> Fabric::set_classes(AgentId id, std::vector<uint8_t> classes) {
  if (id == 0 || id > impl_->agents.size() || impl_->agents[id - 1].agent == nullptr)
    return Status(Code::kInvalidArgument, "no such agent");
  SOFTIB_TRY(check_classes(impl_->agents[id - 1].port, classes, id));
  impl_->agents[id - 1].classes = std::move(classes);
  return {};
}

void Fabric::detach(AgentId id) {
  if (id == 0 || id > impl_->agents.size()) return;
  impl_->agents[id - 1].agent = nullptr;
}

PortRef Fabric::agent_port(AgentId id) const { return impl_->agents.at(id - 1).port; }

}  // namespace softib::fabric
