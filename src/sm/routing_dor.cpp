// dor: dimension-order routing for 2D/3D tori and meshes. A route corrects the x coordinate
// first, then y, then z; in a torus ring it goes the short way round (exact halves
// alternate by destination coordinate, so both directions carry the same load).
//
// Deadlock freedom (Dally & Seitz): in each torus ring a dateline sits on the wrap-around
// cable. A path that crosses the dateline in dimension d travels on VL 1 for all its hops in
// d, every other path on VL 0: VL 0 channels never include the dateline, and the VL 1
// dependencies of minimal paths that cross it cannot close the ring. Dimension order makes
// the dimensions acyclic among themselves. The SL of a path carries its crossing bits
// (bit d: crosses in dimension d), switches map SL to VL per output port: 2 VLs, 8 SLs.
//
// The grid is recognised from the port convention of softib's generator (and OpenSM's torus
// examples): inter-switch cables start at the same port b on every switch, port b + 2d goes
// in the +d direction and b + 2d + 1 in the -d direction. Anything else is Unsupported.
#include <array>
#include <map>

#include <fmt/format.h>

#include "base/format.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

namespace {

constexpr int kMaxDims = 3;
using Coord = std::array<int, kMaxDims>;

class DimensionOrder final : public RoutingEngine {
 public:
  std::string_view name() const override { return "dor"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    const size_t n = g.switch_count();
    if (n < 2) return Status(Code::kUnsupported, "fewer than two switches: not a torus or mesh");
    SOFTIB_TRY(recognise(g));

    RoutingTables out = empty_tables(g, "dor");
    for (SwitchIndex t = 0; t < n; ++t) {
      for (uint32_t e : g.endpoints_at(t)) {
        const Endpoint& ep = g.endpoints()[e];
        for (uint32_t j = 0; j < (1u << ep.lmc); ++j) {
          const uint16_t lid = static_cast<uint16_t>(ep.base.value() + j);
          for (SwitchIndex s = 0; s < n; ++s) out.lft[s][lid] = s == t ? ep.port : next_port(s, t);
        }
      }
    }

    // SL -> VL: on a port of dimension d, VL = bit d of the SL; elsewhere VL 0.
    RoutingTables::VlPlan plan;
    bool any_torus = false;
    for (int d = 0; d < dims_; ++d) any_torus = any_torus || torus_[static_cast<size_t>(d)];
    plan.vls = any_torus ? 2 : 1;
    plan.sl2vl.assign(n, {});
    for (SwitchIndex s = 0; s < n; ++s) {
      plan.sl2vl[s].assign(size_t{g.port_count(s)} + 1, std::array<uint8_t, 16>{});
      for (const SwitchLink& l : g.links(s)) {
        const int d = (l.port - base_port_) / 2;
        for (uint8_t sl = 0; sl < 16; ++sl) plan.sl2vl[s][l.port][sl] = static_cast<uint8_t>((sl >> d) & 1);
      }
    }
    std::vector<SwitchIndex> switch_of_lid(size_t{g.max_lid()} + 1, kNoSwitch);
    for (const Endpoint& ep : g.endpoints())
      for (uint32_t j = 0; j < (1u << ep.lmc); ++j) switch_of_lid[ep.base.value() + j] = ep.sw;
    plan.path_sl = [coord = coord_, size = size_, torus = torus_, dims = dims_,
                    switch_of_lid = std::move(switch_of_lid)](Lid source, Lid destination) -> uint8_t {
      if (source.value() >= switch_of_lid.size() || destination.value() >= switch_of_lid.size()) return 0;
      const SwitchIndex s = switch_of_lid[source.value()], t = switch_of_lid[destination.value()];
      if (s == kNoSwitch || t == kNoSwitch) return 0;
      uint8_t sl = 0;
      for (int d = 0; d < dims; ++d) {
        const auto k = static_cast<size_t>(d);
        if (!torus[k] || coord[s][k] == coord[t][k]) continue;
        const bool plus = plus_direction(coord[s][k], coord[t][k], size[k], true);
        const bool crosses = plus ? coord[s][k] > coord[t][k] : coord[s][k] < coord[t][k];
        if (crosses) sl = static_cast<uint8_t>(sl | (1u << d));
      }
      return sl;
    };
    out.vl_plan = std::move(plan);
    out.notes.push_back(fmt::format("dor: {}D {} {}", dims_, any_torus ? "torus" : "mesh",
                                    fmt::join(std::vector<int>(size_.begin(), size_.begin() + dims_), "x")));
    return out;
  }

 private:
  // Which way round the ring from a to b (a != b): the short way; an exact half goes +
  // for even destinations and - for odd ones.
  static bool plus_direction(int a, int b, int size, bool torus) {
    if (!torus) return b > a;
    const int forward = ((b - a) % size + size) % size;
    if (2 * forward != size) return 2 * forward < size;
    return b % 2 == 0;
  }

  PortNum next_port(SwitchIndex s, SwitchIndex t) const {
    for (int d = 0; d < dims_; ++d) {
      const auto k = static_cast<size_t>(d);
      if (coord_[s][k] == coord_[t][k]) continue;
      const bool plus = plus_direction(coord_[s][k], coord_[t][k], size_[k], torus_[k]);
      return static_cast<PortNum>(base_port_ + 2 * d + (plus ? 0 : 1));
    }
    return kDropPort;
  }

  Result<void> recognise(const RoutingGraph& g) {
    const size_t n = g.switch_count();
    base_port_ = 0xFF;
    int top = 0;
    for (SwitchIndex s = 0; s < n; ++s)
      for (const SwitchLink& l : g.links(s)) {
        base_port_ = std::min<int>(base_port_, l.port);
        top = std::max<int>(top, l.port);
      }
    if (base_port_ == 0xFF) return Status(Code::kUnsupported, "no inter-switch cables");
    dims_ = (top - base_port_) / 2 + 1;
    if (dims_ < 1 || dims_ > kMaxDims)
      return Status(Code::kUnsupported, fmt::format("inter-switch ports span {} dimensions", dims_));
    // Neighbour in each direction; + on port b+2d must meet - (b+2d+1) on the far side.
    std::vector<std::array<SwitchIndex, 2 * kMaxDims>> step(n);
    for (auto& a : step) a.fill(kNoSwitch);
    for (SwitchIndex s = 0; s < n; ++s)
      for (const SwitchLink& l : g.links(s)) {
        const int rel = l.port - base_port_;
        const int expect = rel % 2 == 0 ? l.port + 1 : l.port - 1;
        if (l.neighbor_port != expect || step[s][static_cast<size_t>(rel)] != kNoSwitch)
          return Status(Code::kUnsupported,
                        fmt::format("switch {} port {} meets port {}: not the torus/mesh port convention",
                                    g.guid_of(s), l.port, l.neighbor_port));
        step[s][static_cast<size_t>(rel)] = l.neighbor;
      }
    // Ring sizes from switch 0: walk + until back (torus) or to the end, - likewise (mesh).
    size_.fill(1);
    torus_.fill(false);
    for (int d = 0; d < dims_; ++d) {
      const auto plus = static_cast<size_t>(2 * d), minus = plus + 1;
      SwitchIndex s = 0;
      int forward = 0;
      while (step[s][plus] != kNoSwitch && step[s][plus] != 0 && forward <= static_cast<int>(n)) {
        s = step[s][plus];
        ++forward;
      }
      if (step[s][plus] == 0) {
        torus_[static_cast<size_t>(d)] = true;
        size_[static_cast<size_t>(d)] = forward + 1;
      } else {
        int backward = 0;
        for (s = 0; step[s][minus] != kNoSwitch && backward <= static_cast<int>(n); s = step[s][minus]) ++backward;
        size_[static_cast<size_t>(d)] = forward + backward + 1;
      }
    }
    // Coordinates by BFS from switch 0 at the origin (mesh origin: the - end).
    Coord origin{};
    for (int d = 0; d < dims_; ++d) {
      if (torus_[static_cast<size_t>(d)]) continue;
      int backward = 0;
      for (SwitchIndex s = 0; step[s][static_cast<size_t>(2 * d + 1)] != kNoSwitch && backward <= static_cast<int>(n);
           s = step[s][static_cast<size_t>(2 * d + 1)])
        ++backward;
      origin[static_cast<size_t>(d)] = backward;
    }
    coord_.assign(n, Coord{-1, -1, -1});
    coord_[0] = origin;
    std::vector<SwitchIndex> queue{0};
    std::map<Coord, SwitchIndex> seen{{origin, 0}};
    for (size_t head = 0; head < queue.size(); ++head) {
      const SwitchIndex s = queue[head];
      for (int d = 0; d < dims_; ++d)
        for (int dir = 0; dir < 2; ++dir) {
          const SwitchIndex next = step[s][static_cast<size_t>(2 * d + dir)];
          if (next == kNoSwitch) continue;
          Coord c = coord_[s];
          const auto k = static_cast<size_t>(d);
          c[k] += dir == 0 ? 1 : -1;
          if (torus_[k]) c[k] = (c[k] + size_[k]) % size_[k];
          if (c[k] < 0 || c[k] >= size_[k])
            return Status(Code::kUnsupported, "grid coordinates run off the mesh");
          if (coord_[next][0] < 0) {
            auto [it, fresh] = seen.emplace(c, next);
            if (!fresh)
              return Status(Code::kUnsupported,
                            fmt::format("switches {} and {} land on the same grid position",
                                        g.guid_of(it->second), g.guid_of(next)));
            coord_[next] = c;
            queue.push_back(next);
          } else if (coord_[next] != c) {
            return Status(Code::kUnsupported, fmt::format("switch {} has inconsistent grid coordinates", g.guid_of(next)));
          }
        }
    }
    if (queue.size() != n) return Status(Code::kUnsupported, "not every switch is on the grid");
    size_t expect = 1;
    for (int d = 0; d < dims_; ++d) expect *= static_cast<size_t>(size_[static_cast<size_t>(d)]);
    if (expect != n)
      return Status(Code::kUnsupported, fmt::format("{} switches do not fill a {}-dimensional grid", n, dims_));
    return {};
  }

  int base_port_ = 0;
  int dims_ = 0;
  std::array<int, kMaxDims> size_{};
  std::array<bool, kMaxDims> torus_{};
  std::vector<Coord> coord_;
};

// auto: the engine that suits the topology: ftree on fat trees, dor on tori and meshes,
// updn (deadlock-free on anything) otherwise.
class Auto final : public RoutingEngine {
 public:
  std::string_view name() const override { return "auto"; }

  Result<RoutingTables> route(const RoutingGraph& g) override {
    std::vector<std::string> tried;
    for (auto make : {make_ftree, make_dor, make_updn}) {
      auto engine = make();
      auto tables = engine->route(g);
      if (tables.ok()) {
        for (const std::string& t : tried) tables->notes.insert(tables->notes.begin(), t);
        tables->notes.insert(tables->notes.begin(), fmt::format("auto: chose {}", engine->name()));
        return tables;
      }
      if (tables.error().code() != Code::kUnsupported) return tables;
      tried.push_back(fmt::format("auto: {} does not fit: {}", engine->name(), tables.error().message()));
    }
    return Status(Code::kUnsupported, "no engine fits this topology");
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> make_dor() { return std::make_unique<DimensionOrder>(); }
std::unique_ptr<RoutingEngine> make_auto() { return std::make_unique<Auto>(); }

}  // namespace softib::sm
