// The SA's view helpers: end-port lookups, partition membership, rates and MTUs, component
// matching.
#include <algorithm>
#include <array>

#include "sm/pkey_tables.hpp"
#include "sm/sa_internal.hpp"

namespace softib::sm::sa {

// ---- rates ------------------------------------------------------------------------------------

namespace {

// PathRecord Rate codes (IBA 15.2.5.16 table 206) and their bandwidth in 100 Mb/s.
constexpr std::array<uint32_t, 23> kRateBandwidth{
    0,    0,                                     // 0, 1: reserved
    25,   100,  300,  50,   200,  400,  600,     // 2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60
    800,  1200, 140,  560,  1120, 1680, 250,     // 9: 80, 10: 120, 11: 14, 12: 56, 13: 112, 14: 168, 15: 25
    1000, 2000, 3000, 280,  500,  4000, 6000,    // 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600
};

// IBA 14.2.5.6: PortInfo CapabilityMask bit 14.
constexpr uint32_t kIsExtendedSpeedsSupported = 1u << 14;

// Lane rate of one LinkSpeedActive / LinkSpeedExtActive bit, in 100 Mb/s.
uint32_t lane_rate(const mad::PortInfo& pi, bool extended) {
  if (extended) {
    switch (pi.link_speed_ext_active) {
      case 1: return 140;   // FDR
      case 2: return 250;   // EDR
      case 4: return 500;   // HDR
      case 8: return 1000;  // NDR
      default: break;
    }
  }
  switch (pi.link_speed_active) {
    case 2: return 50;   // DDR
    case 4: return 100;  // QDR
    default: return 25;  // SDR
  }
}

uint32_t lanes(uint8_t width_active) {
  switch (width_active) {
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 1;
  }
}

}  // namespace

uint32_t rate_bandwidth(uint8_t rate) { return rate < kRateBandwidth.size() ? kRateBandwidth[rate] : 0; }

int compare_rates(uint8_t a, uint8_t b) {
  const uint32_t x = rate_bandwidth(a), y = rate_bandwidth(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

uint8_t rate_below(uint8_t rate) {
  uint8_t best = 0;
  for (uint8_t c = 2; c < kRateBandwidth.size(); ++c)
    if (kRateBandwidth[c] < rate_bandwidth(rate) && (best == 0 || kRateBandwidth[c] > kRateBandwidth[best])) best = c;
  return best;
}

uint8_t rate_above(uint8_t rate) {
  uint8_t best = 0;
  for (uint8_t c = 2; c < kRateBandwidth.size(); ++c)
    if (kRateBandwidth[c] > rate_bandwidth(rate) && (best == 0 || kRateBandwidth[c] < kRateBandwidth[best])) best = c;
  return best;
}

uint8_t port_rate(const mad::PortInfo& pi, bool extended) {
  const uint32_t bw = lanes(pi.link_width_active) * lane_rate(pi, extended);
  uint8_t best = 2;
  for (uint8_t c = 2; c < kRateBandwidth.size(); ++c)
    if (kRateBandwidth[c] <= bw && kRateBandwidth[c] > kRateBandwidth[best]) best = c;
  return best;
}

uint8_t port_mtu(const mad::PortInfo& pi, bool physical) {
  uint8_t mtu = pi.mtu_cap;
  if (physical && pi.neighbor_mtu != 0) mtu = std::min(mtu, pi.neighbor_mtu);
  return mtu;
}

// ---- components -------------------------------------------------------------------------------

namespace {

bool same_bits(wire::ByteSpan a, wire::ByteSpan b, const wire::Field& f) {
  if (f.fits_integer()) return wire::get(a, f) == wire::get(b, f);
  return std::equal(a.begin() + f.first_byte(), a.begin() + f.end_byte(), b.begin() + f.first_byte());
}

}  // namespace

bool components_match(const mad::LayoutInfo& layout, wire::ByteSpan query, wire::ByteSpan candidate,
                      uint64_t mask) {
  int component = -1;
  for (const mad::RowInfo& r : layout.rows) {
    if (!r.joins_previous) ++component;
    if (component >= 64) break;
    if ((mask >> component & 1) == 0 || r.is_reserved()) continue;
    if (!same_bits(query, candidate, r.field)) return false;
  }
  return true;
}

// ---- the view -----------------------------------------------------------------------------

SaContext::SaContext(const SaView& view) : view_(view) {}

bool SaContext::ready() const {
  if (ready_) return *ready_;
  ready_ = false;
  if (view_.subnet == nullptr || view_.graph == nullptr) return false;
  const Subnet& s = *view_.subnet;
  if (s.nodes.size() != s.topo.node_count()) return false;
  for (const Endpoint& e : view_.graph->endpoints()) {
    if (!e.owner.valid() || e.owner.node.value() >= s.nodes.size() ||
        e.owner.port > s.topo.node(e.owner.node).num_ports || s.topo.port(e.owner).lid != e.base)
      return false;
  }
  for (SwitchIndex sw = 0; sw < view_.graph->switch_count(); ++sw)
    if (view_.graph->node_of(sw).value() >= s.nodes.size() || !s.is_switch(view_.graph->node_of(sw))) return false;
  ready_ = true;
  return true;
}

const SmConfig& SaContext::config() const {
  static const SmConfig kDefaults{};
  return view_.config != nullptr ? *view_.config : kDefaults;
}

const PartitionConfig& SaContext::partitions() const {
  static const PartitionConfig kDefault = default_partitions();
  return view_.partitions != nullptr ? *view_.partitions : kDefault;
}

std::optional<uint32_t> SaContext::endpoint_by_lid(Lid lid) const {
  if (lid_index_.empty()) {
    lid_index_.assign(size_t{graph().max_lid()} + 1, 0);
    const auto& eps = graph().endpoints();
    for (uint32_t e = 0; e < eps.size(); ++e) {
      const uint32_t count = 1u << eps[e].lmc;
      for (uint32_t l = eps[e].base.value(); l < eps[e].base.value() + count && l < lid_index_.size(); ++l)
        lid_index_[l] = e + 1;
    }
  }
  if (lid.value() == 0 || lid.value() >= lid_index_.size() || lid_index_[lid.value()] == 0) return std::nullopt;
  return lid_index_[lid.value()] - 1;
}

Guid SaContext::port_guid(uint32_t e) const { return subnet().topo.port(endpoint(e).owner).guid; }

const std::vector<uint32_t>& SaContext::endpoints_by_guid() const {
  if (by_guid_.size() != graph().endpoints().size()) {
    by_guid_.resize(graph().endpoints().size());
    for (uint32_t e = 0; e < by_guid_.size(); ++e) by_guid_[e] = e;
    // OpenSM's port-GUID map order: its cl_qmap keys are GUIDs in network byte order compared
    // as host integers (so a GetTable of PathRecords lists pairs in the order OpenSM does).
    std::stable_sort(by_guid_.begin(), by_guid_.end(), [&](uint32_t a, uint32_t b) {
      return __builtin_bswap64(port_guid(a).value()) < __builtin_bswap64(port_guid(b).value());
    });
  }
  return by_guid_;
}

std::optional<uint32_t> SaContext::endpoint_by_guid(Guid port_guid_value) const {
  const auto& order = endpoints_by_guid();
  const auto it = std::lower_bound(order.begin(), order.end(), __builtin_bswap64(port_guid_value.value()),
                                   [&](uint32_t e, uint64_t g) { return __builtin_bswap64(port_guid(e).value()) < g; });
  if (it == order.end() || port_guid(*it) != port_guid_value) return std::nullopt;
  return *it;
}

std::optional<uint32_t> SaContext::endpoint_by_gid(const Gid& gid) const {
  return endpoint_by_guid(gid.interface_id());
}

const mad::PortInfo* SaContext::port_info(PortRef p) const {
  if (!p.node.valid() || p.node.value() >= subnet().nodes.size()) return nullptr;
  const SmNode& n = subnet().nodes[p.node.value()];
  if (p.port >= n.ports.size() || p.port >= n.port_read.size() || n.port_read[p.port] == 0) return nullptr;
  return &n.ports[p.port];
}

uint8_t SaContext::rate_of(PortRef p) const {
  const mad::PortInfo* pi = port_info(p);
  SOFTIB_ASSERT(pi != nullptr);
  const mad::PortInfo* caps = subnet().is_switch(p.node) ? port_info({p.node, 0}) : pi;
  return port_rate(*pi, caps != nullptr && (caps->capability_mask & kIsExtendedSpeedsSupported) != 0);
}

Lid SaContext::node_lid(PortRef p) const {
  if (subnet().is_switch(p.node)) return subnet().topo.port({p.node, 0}).lid;
  return subnet().topo.port(p).lid;
}

namespace {


}  // namespace

// The table the SM programs into an end port, cut to the port's PartitionCap.
std::vector<PKey> derive_pkey_table(const Subnet& s, PortRef port, const PartitionConfig& partitions,
                                    bool allow_both) {
  std::vector<PKey> keys = partition_keys(s, port, partitions, allow_both);
  const uint16_t cap = s.nodes[port.node.value()].info.partition_cap;
  if (cap != 0 && keys.size() > cap) keys.resize(cap);
  return keys;
}

const std::vector<PKey>& SaContext::pkeys(uint32_t e) const {
  if (pkeys_.size() != graph().endpoints().size()) pkeys_.assign(graph().endpoints().size(), std::nullopt);
  auto& slot = pkeys_[e];
  if (!slot) {
    const PortRef owner = endpoint(e).owner;
    slot = view_.pkey_table ? view_.pkey_table(owner)
                            : derive_pkey_table(subnet(), owner, partitions(), config().allow_both_pkeys);
  }
  return *slot;
}

bool SaContext::has_pkey(uint32_t e, PKey key) const {
  return std::any_of(pkeys(e).begin(), pkeys(e).end(), [&](PKey k) { return k.base() == key.base(); });
}

bool SaContext::share_pkey(uint32_t a, uint32_t b) const {
  for (PKey x : pkeys(a))
    for (PKey y : pkeys(b))
      if (pkey_match(x, y)) return true;
  return false;
}

bool SaContext::share_this_pkey(uint32_t a, uint32_t b, PKey key) const {
  for (PKey x : pkeys(a)) {
    if (x.base() != key.base()) continue;
    for (PKey y : pkeys(b))
      if (y.base() == key.base() && pkey_match(x, y)) return true;
  }
  return false;
}

std::optional<PKey> SaContext::common_pkey(uint32_t a, uint32_t b) const {
  for (PKey x : pkeys(a))
    for (PKey y : pkeys(b))
      if (pkey_match(x, y)) return x;
  return std::nullopt;
}

}  // namespace softib::sm::sa
