#include "fabric/generators.hpp"

#include <charconv>
#include <map>

#include <fmt/format.h>

#include "fabric/link_rate.hpp"

namespace softib::fabric {

namespace {

constexpr uint64_t kFirstCaGuid = 0x100000;
constexpr uint64_t kFirstSwitchGuid = 0x200000;

// Builds a fabric in the conventional order: every CA is added before any switch is
// cabled, so GUIDs come out as ibsim's counters assign them in file order.
class Builder {
 public:
  Result<NodeIndex> host(int number, std::string_view description = {}) {
    std::string desc = description.empty() ? fmt::format("h{:05d} HCA-1", number) : std::string(description);
    auto n = topo_.add_node(NodeType::kCa, fmt::format("H-{:05d}", number), std::move(desc),
                            Guid(ca_guid_), 1);
    ca_guid_ += 2;
    if (n) set_caps(*n);
    return n;
  }
  Result<NodeIndex> named_host(std::string id, std::string description) {
    auto n = topo_.add_node(NodeType::kCa, std::move(id), std::move(description), Guid(ca_guid_), 1);
    ca_guid_ += 2;
    if (n) set_caps(*n);
    return n;
  }
  Result<NodeIndex> switch_node(std::string id, std::string description, int radix) {
    auto n = topo_.add_node(NodeType::kSwitch, std::move(id), std::move(description),
                            Guid(switch_guid_++), static_cast<uint8_t>(radix));
    if (n) {
      topo_.node(*n).enhanced_port0 = true;
      set_caps(*n);
    }
    return n;
  }
  Result<void> cable(NodeIndex a, int pa, NodeIndex b, int pb) {
    return topo_.connect({a, static_cast<uint8_t>(pa)}, {b, static_cast<uint8_t>(pb)});
  }
  Topology take() { return std::move(topo_); }

 private:
  void set_caps(NodeIndex n) {
    static const LinkCaps k4xEdr = *caps_from_annotation("4xEDR");
    for (uint8_t p = 0; p <= topo_.node(n).num_ports; ++p) topo_.port({n, p}).caps = k4xEdr;
  }
  Topology topo_;
  uint64_t ca_guid_ = kFirstCaGuid;
  uint64_t switch_guid_ = kFirstSwitchGuid;
};

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

Result<void> check_radix(int radix) {
  if (radix < 2 || radix > kMaxPorts) return invalid(fmt::format("radix {} out of range 2..{}", radix, kMaxPorts));
  return {};
}

}  // namespace

Result<Topology> generate(const FatTree2& spec) {
  SOFTIB_TRY(check_radix(spec.radix));
  const int parallel = spec.parallel;
  if (parallel < 1) return invalid("parallel must be >= 1");
  const int leaves = spec.leaves ? spec.leaves : spec.radix;
  const int spines = spec.spines ? spec.spines : spec.radix / 2 / parallel;
  const int hosts = spec.hosts_per_leaf ? spec.hosts_per_leaf : spec.radix / 2;
  if (leaves < 1 || spines < 1 || hosts < 0) return invalid("ft2 needs at least one leaf and one spine");
  if (hosts + spines * parallel > spec.radix)
    return invalid(fmt::format("a leaf needs {} hosts + {} uplinks > radix {}", hosts,
                               spines * parallel, spec.radix));
  if (leaves * parallel > spec.radix)
    return invalid(fmt::format("a spine needs {} downlinks > radix {}", leaves * parallel, spec.radix));

  Builder b;
  std::vector<NodeIndex> host_nodes, leaf_nodes, spine_nodes;
  for (int h = 1; h <= leaves * hosts; ++h) {
    auto n = b.host(h);
    if (!n) return Err{n.error()};
    host_nodes.push_back(*n);
  }
  for (int l = 1; l <= leaves; ++l) {
    auto n = b.switch_node(fmt::format("S-L{:04d}", l), fmt::format("leaf-{:04d}", l), spec.radix);
    if (!n) return Err{n.error()};
    leaf_nodes.push_back(*n);
  }
  for (int s = 1; s <= spines; ++s) {
    auto n = b.switch_node(fmt::format("S-S{:04d}", s), fmt::format("spine-{:04d}", s), spec.radix);
    if (!n) return Err{n.error()};
    spine_nodes.push_back(*n);
  }
  for (int l = 0; l < leaves; ++l) {
    for (int h = 0; h < hosts; ++h)
      SOFTIB_TRY(b.cable(leaf_nodes[static_cast<size_t>(l)], h + 1,
                         host_nodes[static_cast<size_t>(l * hosts + h)], 1));
    for (int s = 0; s < spines; ++s)
      for (int j = 0; j < parallel; ++j)
        SOFTIB_TRY(b.cable(leaf_nodes[static_cast<size_t>(l)], hosts + s * parallel + j + 1,
                           spine_nodes[static_cast<size_t>(s)], l * parallel + j + 1));
  }
  return b.take();
}

Result<Topology> generate(const FatTree3& spec) {
  SOFTIB_TRY(check_radix(spec.radix));
  if (spec.radix % 2) return invalid("ft3 needs an even radix");
  const int half = spec.radix / 2;
  const int pods = spec.pods ? spec.pods : spec.radix;
  const int hosts = spec.hosts_per_edge ? spec.hosts_per_edge : half;
  if (pods < 1 || pods > spec.radix) return invalid(fmt::format("pods must be 1..{}", spec.radix));
  if (hosts < 0 || hosts > half) return invalid(fmt::format("hosts per edge switch must be 0..{}", half));

  Builder b;
  std::vector<NodeIndex> host_nodes, edges, aggs, cores;
  const int host_count = pods * half * hosts;
  host_nodes.reserve(static_cast<size_t>(host_count));
  for (int h = 1; h <= host_count; ++h) {
    auto n = b.host(h);
    if (!n) return Err{n.error()};
    host_nodes.push_back(*n);
  }
  for (int e = 1; e <= pods * half; ++e) {
    auto n = b.switch_node(fmt::format("S-L{:04d}", e), fmt::format("leaf-{:04d}", e), spec.radix);
    if (!n) return Err{n.error()};
    edges.push_back(*n);
  }
  for (int a = 1; a <= pods * half; ++a) {
    auto n = b.switch_node(fmt::format("S-A{:04d}", a), fmt::format("spine-{:04d}", a), spec.radix);
    if (!n) return Err{n.error()};
    aggs.push_back(*n);
  }
  for (int c = 1; c <= half * half; ++c) {
    auto n = b.switch_node(fmt::format("S-C{:04d}", c), fmt::format("core-{:04d}", c), spec.radix);
    if (!n) return Err{n.error()};
    cores.push_back(*n);
  }
  const auto at = [](const std::vector<NodeIndex>& v, int i) { return v[static_cast<size_t>(i)]; };
  for (int p = 0; p < pods; ++p) {
    for (int e = 0; e < half; ++e) {
      const NodeIndex edge = at(edges, p * half + e);
      for (int h = 0; h < hosts; ++h) SOFTIB_TRY(b.cable(edge, h + 1, at(host_nodes, (p * half + e) * hosts + h), 1));
      for (int a = 0; a < half; ++a) SOFTIB_TRY(b.cable(edge, half + a + 1, at(aggs, p * half + a), e + 1));
    }
    for (int a = 0; a < half; ++a)
      for (int j = 0; j < half; ++j)
        SOFTIB_TRY(b.cable(at(aggs, p * half + a), half + j + 1, at(cores, a * half + j), p + 1));
  }
  return b.take();
}

Result<Topology> generate(const Grid& spec) {
  SOFTIB_TRY(check_radix(spec.radix));
  const size_t dims = spec.dims.size();
  if (dims != 2 && dims != 3) return invalid("a torus or mesh has 2 or 3 dimensions");
  for (int d : spec.dims)
    if (d < 1 || d > 99) return invalid(fmt::format("dimension size {} out of range 1..99", d));
  if (spec.hosts_per_switch < 0) return invalid("hosts per switch must be >= 0");
  if (spec.hosts_per_switch + 2 * static_cast<int>(dims) > spec.radix)
    return invalid(fmt::format("{} hosts + {} grid ports > radix {}", spec.hosts_per_switch, 2 * dims, spec.radix));

  const int nx = spec.dims[0], ny = spec.dims[1], nz = dims == 3 ? spec.dims[2] : 1;
  const int switches = nx * ny * nz;
  const auto index = [&](int x, int y, int z) { return (x * ny + y) * nz + z; };
  Builder b;
  std::vector<NodeIndex> host_nodes, sw;
  for (int h = 1; h <= switches * spec.hosts_per_switch; ++h) {
    auto n = b.host(h);
    if (!n) return Err{n.error()};
    host_nodes.push_back(*n);
  }
  const char* kind = spec.torus ? "torus" : "mesh";
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y)
      for (int z = 0; z < nz; ++z) {
        const std::string id = dims == 3 ? fmt::format("S-T{:02d}-{:02d}-{:02d}", x, y, z)
                                         : fmt::format("S-T{:02d}-{:02d}", x, y);
        const std::string desc = dims == 3 ? fmt::format("{}-{}-{}-{}", kind, x, y, z)
                                           : fmt::format("{}-{}-{}", kind, x, y);
        auto n = b.switch_node(id, desc, spec.radix);
        if (!n) return Err{n.error()};
        sw.push_back(*n);
      }
  const int h = spec.hosts_per_switch;
  for (int s = 0; s < switches; ++s)
    for (int i = 0; i < h; ++i)
      SOFTIB_TRY(b.cable(sw[static_cast<size_t>(s)], i + 1, host_nodes[static_cast<size_t>(s * h + i)], 1));
  // Cable each switch's +d port to the next switch's -d port.
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y)
      for (int z = 0; z < nz; ++z) {
        const int coord[3] = {x, y, z};
        for (size_t d = 0; d < dims; ++d) {
          const int size = spec.dims[d];
          if (size == 1) continue;
          int next[3] = {x, y, z};
          next[d] = coord[d] + 1;
          if (next[d] == size) {
            if (!spec.torus) continue;
            next[d] = 0;
          }
          const int plus = h + 2 * static_cast<int>(d) + 1;
          SOFTIB_TRY(b.cable(sw[static_cast<size_t>(index(x, y, z))], plus,
                             sw[static_cast<size_t>(index(next[0], next[1], next[2]))], plus + 1));
        }
      }
  return b.take();
}

Topology back_to_back() {
  Builder b;
  const NodeIndex a = *b.named_host("host-a", "host-a HCA-1");
  const NodeIndex c = *b.named_host("host-b", "host-b HCA-1");
  (void)b.cable(a, 1, c, 1);
  return b.take();
}

Result<Topology> single_switch(int hosts, int radix) {
  SOFTIB_TRY(check_radix(radix));
  if (hosts < 1 || hosts > radix) return invalid(fmt::format("hosts must be 1..{}", radix));
  Builder b;
  std::vector<NodeIndex> host_nodes;
  for (int h = 0; h < hosts; ++h) {
    Result<NodeIndex> n = hosts <= 26
                              ? b.named_host(fmt::format("host-{}", static_cast<char>('a' + h)),
                                             fmt::format("host-{} HCA-1", static_cast<char>('a' + h)))
                              : b.host(h + 1);
    if (!n) return Err{n.error()};
    host_nodes.push_back(*n);
  }
  auto s = b.switch_node("S-switch", "switch", radix);
  if (!s) return Err{s.error()};
  for (int h = 0; h < hosts; ++h) SOFTIB_TRY(b.cable(*s, h + 1, host_nodes[static_cast<size_t>(h)], 1));
  return b.take();
}

namespace {

// "radix=36,leaves=2" -> {radix:36, leaves:2}; also "8x8" as the key "dims".
Result<std::map<std::string, std::string, std::less<>>> parse_params(std::string_view s) {
  std::map<std::string, std::string, std::less<>> out;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (item.find_first_not_of("0123456789x") != std::string_view::npos)
        return invalid(fmt::format("\"{}\": expected key=value or dimensions like 8x8", item));
      out.emplace("dims", std::string(item));
    } else {
      out.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  }
  return out;
}

Result<int> take_int(std::map<std::string, std::string, std::less<>>& params, std::string_view key, int fallback) {
  auto it = params.find(key);
  if (it == params.end()) return fallback;
  int v = 0;
  const std::string& text = it->second;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return invalid(fmt::format("{}={}: not a number", key, text));
  params.erase(it);
  return v;
}

Result<void> no_leftovers(const std::map<std::string, std::string, std::less<>>& params, std::string_view kind) {
  if (params.empty()) return {};
  return invalid(fmt::format("{}: unknown parameter \"{}\"", kind, params.begin()->first));
}

}  // namespace

Result<Topology> generate(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  auto parsed = parse_params(colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1));
  if (!parsed) return Err{parsed.error()};
  auto& params = *parsed;
  const auto get = [&](std::string_view key, int fallback) { return take_int(params, key, fallback); };

  if (kind == "ft2") {
    FatTree2 s;
    auto radix = get("radix", s.radix), leaves = get("leaves", 0), spines = get("spines", 0),
         hosts = get("hosts", 0), parallel = get("parallel", 1);
    for (auto* r : {&radix, &leaves, &spines, &hosts, &parallel})
      if (!r->ok()) return Err{r->error()};
    SOFTIB_TRY(no_leftovers(params, kind));
    return generate(FatTree2{*radix, *leaves, *spines, *hosts, *parallel});
  }
  if (kind == "ft3") {
    auto radix = get("radix", 36), pods = get("pods", 0), hosts = get("hosts", 0);
    for (auto* r : {&radix, &pods, &hosts})
      if (!r->ok()) return Err{r->error()};
    SOFTIB_TRY(no_leftovers(params, kind));
    return generate(FatTree3{*radix, *pods, *hosts});
  }
  if (kind == "torus" || kind == "mesh") {
    Grid g;
    g.torus = kind == "torus";
    auto dims = params.find("dims");
    if (dims == params.end()) return invalid(fmt::format("{} needs dimensions, e.g. {}:8x8", kind, kind));
    std::string_view d = dims->second;
    while (!d.empty()) {
      const size_t x = d.find('x');
      const std::string_view part = d.substr(0, x);
      int v = 0;
      auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (ec != std::errc() || end != part.data() + part.size())
        return invalid(fmt::format("bad dimensions \"{}\"", dims->second));
      g.dims.push_back(v);
      d = x == std::string_view::npos ? std::string_view{} : d.substr(x + 1);
    }
    params.erase(dims);
    auto hosts = get("hosts", 1), radix = get("radix", 36);
    for (auto* r : {&hosts, &radix})
      if (!r->ok()) return Err{r->error()};
    SOFTIB_TRY(no_leftovers(params, kind));
    g.hosts_per_switch = *hosts;
    g.radix = *radix;
    return generate(g);
  }
  if (kind == "b2b") {
    SOFTIB_TRY(no_leftovers(params, kind));
    return back_to_back();
  }
  if (kind == "switch") {
    auto hosts = get("hosts", 2), radix = get("radix", 36);
    for (auto* r : {&hosts, &radix})
      if (!r->ok()) return Err{r->error()};
    SOFTIB_TRY(no_leftovers(params, kind));
    return single_switch(*hosts, *radix);
  }
  return invalid(fmt::format("unknown generator \"{}\" (ft2, ft3, torus, mesh, b2b, switch)", kind));
}

}  // namespace softib::fabric
