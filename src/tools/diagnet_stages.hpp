// diagnet's stages and what they share (private to tools): the fabric as the stages see it
// (Ctx: discovered nodes and ports, MAD queries, labels), and one function per stage.
// diagnet_fabric.cpp: Discovery, Lids Check, Links Check, Subnet Manager, Port Counters, Nodes
// Information; diagnet_config.cpp: Speed / Width checks, Partition Keys, Alias GUIDs, IPoIB
// subnets; diagnet.cpp runs them in order and writes the report.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabric/link_rate.hpp"
#include "mad/codec.hpp"
#include "tools/diagnet.hpp"
#include "tools/fabric_diff.hpp"

namespace softib::tools::diag {

using Clock = std::chrono::steady_clock;

inline constexpr uint8_t kSmpLid = 0x01, kPma = 0x04;
inline constexpr uint8_t kGet = 0x01, kGetTable = 0x12;
constexpr uint16_t kAttrNodeInfo = 0x0011, kAttrGuidInfo = 0x0014, kAttrPKeyTable = 0x0016, kAttrSmInfo = 0x0020,
                   kAttrPortCounters = 0x0012, kAttrMcMemberRecord = 0x0038;
constexpr uint32_t kCapIsSm = 1u << 1;             // PortInfo.CapabilityMask.IsSM
constexpr uint32_t kCapHasExtSpeeds = 1u << 14;    // ... IsExtendedSpeedsSupported
constexpr size_t kMadDataOffset = 64;              // SMP and PMA data areas

// IBA table 226 (PathRecord/MCMemberRecord Rate): bandwidth of each code in 100 Mb/s.
constexpr std::array<uint32_t, 23> kRateBandwidth{
    0,   0,                                   // 0, 1: reserved
    25,  100, 300, 50,  200, 400, 600,        // 2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60
    800, 1200, 140, 560, 1120, 1680, 250,     // 9: 80, 10: 120, 11: 14, 12: 56, 13: 112, 14: 168, 15: 25
    1000, 2000, 3000, 280, 500, 4000, 6000,   // 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600
};

inline uint32_t rate_bandwidth(uint8_t code) { return code < kRateBandwidth.size() ? kRateBandwidth[code] : 0; }

inline std::string gbps(uint32_t hundred_mbps) {
  return hundred_mbps % 10 ? fmt::format("{}.{} Gb/s", hundred_mbps / 10, hundred_mbps % 10)
                           : fmt::format("{} Gb/s", hundred_mbps / 10);
}

inline uint32_t mtu_bytes(uint8_t code) { return code >= 1 && code <= 5 ? 128u << code : 0; }

inline uint8_t lanes_of(uint8_t width_bit) {
  switch (width_bit) {
    case fabric::width::k1x: return 1;
    case fabric::width::k2x: return 2;
    case fabric::width::k4x: return 4;
    case fabric::width::k8x: return 8;
    case fabric::width::k12x: return 12;
    default: return 0;
  }
}

// ---- the fabric as the stages see it -------------------------------------------------------

struct Ctx {
  MadRpc& rpc;
  const DiscoveredFabric& f;
  const DiagOptions& o;
  std::optional<ExpectedFabric> expected;
  uint64_t mads = 0;

  const DiscoveredNode& node(int i) const { return f.nodes[static_cast<size_t>(i)]; }
  const DiscoveredPort* port(int i, uint8_t p) const {
    const auto& n = node(i);
    return p < n.ports.size() && n.ports[p] ? &*n.ports[p] : nullptr;
  }
  // The PortInfo whose CapabilityMask speaks for a port: port 0's on a switch.
  const mad::PortInfo* cap_info(int i, const DiscoveredPort& p) const {
    if (node(i).type != 2) return &p.info;
    const DiscoveredPort* p0 = port(i, 0);
    return p0 && p0->have_info ? &p0->info : nullptr;
  }
  bool extended(int i, const DiscoveredPort& p) const {
    const mad::PortInfo* c = cap_info(i, p);
    return c && (c->capability_mask & kCapHasExtSpeeds) && p.info.link_speed_ext_active != 0;
  }
  uint32_t lane_mbps(int i, const DiscoveredPort& p) const {
    if (extended(i, p)) {
      switch (p.info.link_speed_ext_active) {
        case fabric::ext_speed::kFdr: return 14000;
        case fabric::ext_speed::kEdr: return 25000;
        case fabric::ext_speed::kHdr: return 50000;
        case fabric::ext_speed::kNdr: return 100000;
        default: return 0;
      }
    }
    switch (p.info.link_speed_active) {
      case fabric::speed::kSdr: return 2500;
      case fabric::speed::kDdr: return 5000;
      case fabric::speed::kQdr: return 10000;
      default: return 0;
    }
  }
  std::string speed_text(int i, const DiscoveredPort& p) const {
    return std::string(extended(i, p) ? fabric::ext_speed_name(p.info.link_speed_ext_active)
                                      : fabric::speed_name(p.info.link_speed_active));
  }
  // The IBA rate code of the port's active width x speed (the highest not above it).
  uint8_t rate_code(int i, const DiscoveredPort& p) const {
    const uint32_t bw = lanes_of(p.info.link_width_active) * lane_mbps(i, p) / 100;
    uint8_t best = 2;
    for (uint8_t c = 2; c < kRateBandwidth.size(); ++c)
      if (kRateBandwidth[c] <= bw && kRateBandwidth[c] > kRateBandwidth[best]) best = c;
    return best;
  }

  std::string node_label(int i) const {
    const auto& n = node(i);
    return fmt::format("\"{}\" 0x{:016x}", n.description, n.guid);
  }
  std::string port_label(int i, uint8_t p) const {
    return fmt::format("{} port {} lid {}", node_label(i), p, node(i).lid_of(p));
  }
  nlohmann::json port_json(int i, uint8_t p) const {
    const auto& n = node(i);
    return {{"node_guid", fmt::format("0x{:016x}", n.guid)}, {"description", n.description}, {"port", p},
            {"lid", n.lid_of(p)}};
  }
  // Every external port of every node, in discovery's listing order.
  template <class F>
  void for_each_port(F&& fn) const {
    for (int i : f.listing())
      for (uint8_t p = 1; p <= node(i).num_ports; ++p)
        if (const DiscoveredPort* dp = port(i, p)) fn(i, *dp);
  }
  // End ports: switch port 0, CA and router ports.
  template <class F>
  void for_each_end_port(F&& fn) const {
    for (int i : f.listing()) {
      if (node(i).type == 2) {
        if (const DiscoveredPort* dp = port(i, 0); dp && dp->have_info) fn(i, *dp);
        continue;
      }
      for (uint8_t p = 1; p <= node(i).num_ports; ++p)
        if (const DiscoveredPort* dp = port(i, p); dp && dp->have_info) fn(i, *dp);
    }
  }
  // The CA ports that answer LID-routed SMPs: Active with a LID.
  template <class F>
  void for_each_active_ca_port(F&& fn) const {
    for (int i : f.listing()) {
      if (node(i).type == 2) continue;
      for (uint8_t p = 1; p <= node(i).num_ports; ++p)
        if (const DiscoveredPort* dp = port(i, p);
            dp && dp->have_info && dp->base_lid != 0 && dp->info.port_state == mad::PortState::kActive)
          fn(i, *dp);
    }
  }

  Result<std::vector<Result<MadBytes>>> query(const std::vector<MadRequest>& rs) {
    mads += rs.size();
    return rpc.call_many(rs);  // o.window in flight: the RPC was opened with it
  }
};

inline MadRequest smp_get(uint16_t lid, uint16_t attr, uint32_t modifier) {
  MadRequest r;
  r.to = Destination::to_lid(lid);
  r.mgmt_class = kSmpLid;
  r.method = kGet;
  r.attribute_id = attr;
  r.attribute_modifier = modifier;
  return r;
}

inline uint16_t mad_status(const MadBytes& m) { return static_cast<uint16_t>(((m[4] & 0x7F) << 8) | m[5]); }

inline std::span<const uint8_t> data_of(const MadBytes& m, size_t size) { return {m.data() + kMadDataOffset, size}; }

// The answer's data when it came with status 0; else the reason for a message.
template <class T>
Result<T> answer_as(const Result<MadBytes>& r) {
  if (!r) return Err{r.error()};
  if (const uint16_t s = mad_status(*r); s != 0) return Status(Code::kInvalidArgument, fmt::format("MAD status 0x{:04x}", s));
  auto v = mad::decode<T>(data_of(*r, mad::wire_size<T>));
  if (!v) return Status(Code::kParseError, v.error().to_string());
  return *v;
}

inline std::string reason(const Status& s) { return s.message().empty() ? s.to_string() : s.message(); }

struct PortPKeys {
  int node;
  uint8_t port;
  std::vector<PKey> pkeys;  // the valid entries
};

void stage_discovery(Ctx& c, StageReport& s, double seconds);
void stage_lids(Ctx& c, StageReport& s);
void stage_links(Ctx& c, StageReport& s);
Result<void> stage_sm(Ctx& c, StageReport& s);
Result<void> stage_counters(Ctx& c, StageReport& s);
void stage_nodes(Ctx& c, StageReport& s);
void stage_speed_width(Ctx& c, StageReport& s);
Result<std::vector<PortPKeys>> stage_pkeys(Ctx& c, StageReport& s, bool verbose);
Result<void> stage_alias_guids(Ctx& c, StageReport& s);
Result<void> stage_ipoib(Ctx& c, StageReport& s, const std::vector<PortPKeys>& ports);

}  // namespace softib::tools::diag
