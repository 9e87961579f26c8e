#include "tools/sim_report.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "base/file.hpp"
#include "base/format.hpp"
#include "fabric/audit.hpp"
#include "sm/opensm_dump.hpp"
#include "sm/routing_check.hpp"
#include "sm/sim.hpp"
#include "tools/topology_source.hpp"

namespace softib::tools {

namespace {

using WallClock = std::chrono::steady_clock;

double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

double peak_rss_mb() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace

Result<SimReport> run_sim(const SimOptions& options) {
  SimReport r;
  r.topology = options.topology;
  const auto load_start = WallClock::now();
  auto loaded = load_topology(options.topology);
  if (!loaded) return Err{loaded.error()};
  r.generated = loaded->generated;
  const fabric::Topology& t0 = loaded->topology;
  r.nodes = t0.node_count();
  r.cas = t0.count(fabric::NodeType::kCa);
  r.switches = t0.count(fabric::NodeType::kSwitch);
  r.links = t0.link_count();

  auto created = sm::SimulatedSubnet::create(std::move(loaded->topology), options.config);
  if (!created) return Err{created.error()};
  sm::SimulatedSubnet& sim = **created;
  r.load_seconds = seconds_since(load_start);
  const fabric::Topology& t = sim.fabric().topology();
  r.sm_port = fmt::format("{} port {}", t.node(sim.sm_port().node).id, sim.sm_port().port);

  const auto up_start = WallClock::now();
  const TimePoint virtual_start = sim.clock().now();
  if (auto up = sim.bring_up(); !up) return Err{up.error()};
  r.bringup_seconds = seconds_since(up_start);
  r.virtual_seconds = std::chrono::duration<double>(sim.clock().now() - virtual_start).count();

  const sm::SubnetManager& sm = sim.sm();
  const sm::SweepReport& sweep = sm.last_sweep();
  r.sm_lid = sm.lid().value();
  r.mads = sm.mads_sent();
  r.lft_blocks = sweep.lft_blocks_set;
  r.routing_engine = sweep.routing_engine;
  r.routing_attempts = sweep.routing_attempts;
  r.sm_problems = sweep.problems;

  const fabric::FabricAudit audit = fabric::audit_fabric(sim.fabric());
  r.cabled_ports = audit.cabled_ports;
  r.active_ports = audit.active_ports;
  r.lids = audit.lids;
  r.lid_conflicts = audit.lid_conflicts;
  r.routes = audit.routes;
  r.delivered = audit.delivered;
  r.max_switch_hops = audit.max_switch_hops;
  r.audit_problems = audit.problems;

  const sm::RoutingGraph* graph = sm.routing_graph();
  const sm::RoutingTables* tables = sm.routing();
  std::optional<sm::RoutingTables> evaluated;
  if (!options.evaluate_lfts.empty()) {
    if (!graph) return Status(Code::kInternal, "no routing graph: the SM did not route");
    auto text = read_file(options.evaluate_lfts, "LFT dump");
    if (!text) return Err{text.error()};
    auto read = sm::read_lfts_dump(*text, options.evaluate_lfts, *graph);
    if (!read) return Err{read.error()};
    evaluated = std::move(*read);
  }
  if (options.quality && graph && tables && graph->switch_count() > 0) {
    const sm::RoutingTables& measured = evaluated ? *evaluated : *tables;
    r.quality_of = evaluated ? options.evaluate_lfts : "softib " + tables->engine;
    const sm::RouteCheck check = sm::check_routes(*graph, measured);
    r.unreachable_routes = check.unreachable;
    r.looping_routes = check.loops;
    const sm::DeadlockCheck deadlock = sm::check_deadlock(*graph, measured);
    r.deadlock_free = deadlock.free;
    r.vls = deadlock.vls;
    r.deadlock_cycle = deadlock.cycle;
    const sm::LinkLoadStats load = sm::all_to_all_load(*graph, measured);
    r.quality_measured = true;
    r.flows = load.flows;
    r.max_link_load = load.max_load;
    r.mean_link_load = load.mean_load;
    r.ideal_max_link_load = sm::layered_ideal_max_load(*graph);
    const sm::ShiftContention shifts =
        sm::shift_contention(*graph, measured, options.all_shifts_up_to, options.sampled_shifts);
    r.shifts_tried = shifts.shifts_tried;
    r.worst_shift_load = shifts.worst;
  }

  if (!options.fail_links.empty()) {
    std::vector<fabric::PortRef> cables;
    for (const std::string& spec : options.fail_links) {
      const size_t colon = spec.rfind(':');
      const auto node = colon == std::string::npos ? std::nullopt : t.find(spec.substr(0, colon));
      int port = -1;
      if (node) port = std::atoi(spec.c_str() + colon + 1);
      if (!node || port < 1 || port > t.node(*node).num_ports || !t.port({*node, static_cast<uint8_t>(port)}).peer.valid())
        return Status(Code::kInvalidArgument,
                      fmt::format("--fail-link {}: want NODE:PORT naming a cabled port of the fabric", spec));
      cables.push_back({*node, static_cast<uint8_t>(port)});
    }
    const uint64_t mads_before = sim.sm().mads_sent();
    const auto start = WallClock::now();
    for (const fabric::PortRef p : cables) SOFTIB_TRY(sim.fabric().set_link_up(p, false));
    sim.run_for(std::chrono::milliseconds(1));  // the traps reach the SM
    if (auto idle = sim.run_until_idle(); !idle) return Err{idle.error()};
    RerouteReport rr;
    rr.seconds = seconds_since(start);
    const sm::SweepReport& after = sim.sm().last_sweep();
    rr.targeted = after.targeted;
    rr.heavy = after.heavy;
    rr.mads = sim.sm().mads_sent() - mads_before;
    rr.lft_blocks = after.lft_blocks_set;
    rr.routing_seconds = after.routing_seconds;
    rr.link_changes = after.link_changes;
    const fabric::FabricAudit again = fabric::audit_fabric(sim.fabric());
    rr.routes = again.routes;
    rr.delivered = again.delivered;
    r.reroute = rr;
  }

  if (!options.dump_dir.empty()) {
    if (!graph || !tables) return Status(Code::kInternal, "no routing to dump: the SM did not route");
    std::error_code ec;
    std::filesystem::create_directories(options.dump_dir, ec);
    if (ec) return Status(Code::kInvalidArgument, fmt::format("cannot create \"{}\": {}", options.dump_dir, ec.message()));
    SOFTIB_TRY(sm::write_opensm_dumps(options.dump_dir, sm.subnet(), *graph, *tables));
    // And what `smpquery pkeys` would show for every end port, from the fabric itself.
    std::map<uint64_t, std::string> pkeys;
    for (uint32_t i = 0; i < t.node_count(); ++i) {
      const fabric::NodeIndex n(i);
      const bool sw = t.node(n).type == fabric::NodeType::kSwitch;
      for (uint8_t p = sw ? 0 : 1; p <= (sw ? 0 : t.node(n).num_ports); ++p) {
        if (!sw && !t.port({n, p}).peer.valid()) continue;
        std::string line = fmt::format("0x{:016x}", t.port({n, p}).guid.value());
        for (PKey k : sim.fabric().pkeys({n, p}))
          if (k.is_valid()) line += fmt::format(" 0x{:04x}", k.value());
        pkeys[t.port({n, p}).guid.value()] = line + "\n";
      }
    }
    std::string text;
    for (const auto& [guid, line] : pkeys) text += line;
    SOFTIB_TRY(write_file_atomic(options.dump_dir + "/softib-pkeys.dump", text));
    r.dumps_written = {options.dump_dir + "/opensm-lfts.dump", options.dump_dir + "/opensm-subnet.lst",
                       options.dump_dir + "/softib-pkeys.dump"};
  }
  r.peak_rss_mb = peak_rss_mb();
  return r;
}

nlohmann::json to_json(const SimReport& r) {
  nlohmann::json j;
  j["topology"] = r.topology;
  j["generated"] = r.generated;
  j["nodes"] = r.nodes;
  j["cas"] = r.cas;
  j["switches"] = r.switches;
  j["links"] = r.links;
  j["sm_port"] = r.sm_port;
  j["sm_lid"] = r.sm_lid;
  j["load_seconds"] = r.load_seconds;
  j["bringup_seconds"] = r.bringup_seconds;
  j["virtual_seconds"] = r.virtual_seconds;
  j["mads"] = r.mads;
  j["lft_blocks"] = r.lft_blocks;
  j["routing_engine"] = r.routing_engine;
  j["routing_attempts"] = r.routing_attempts;
  j["sm_problems"] = r.sm_problems;
  j["cabled_ports"] = r.cabled_ports;
  j["active_ports"] = r.active_ports;
  j["lids"] = r.lids;
  j["lid_conflicts"] = r.lid_conflicts;
  j["routes"] = r.routes;
  j["routes_delivered"] = r.delivered;
  j["max_switch_hops"] = r.max_switch_hops;
  j["audit_problems"] = r.audit_problems;
  if (r.quality_measured) {
    nlohmann::json q;
    q["flows"] = r.flows;
    q["max_link_load"] = r.max_link_load;
    q["mean_link_load"] = r.mean_link_load;
    q["ideal_max_link_load"] = r.ideal_max_link_load ? nlohmann::json(*r.ideal_max_link_load) : nlohmann::json();
    q["max_over_mean"] = r.mean_link_load > 0 ? static_cast<double>(r.max_link_load) / r.mean_link_load : 0.0;
    q["shifts_tried"] = r.shifts_tried;
    q["worst_shift_link_load"] = r.worst_shift_load;
    q["routes_of"] = r.quality_of;
    q["unreachable_routes"] = r.unreachable_routes;
    q["looping_routes"] = r.looping_routes;
    q["deadlock_free"] = r.deadlock_free;
    q["vls"] = r.vls;
    if (!r.deadlock_cycle.empty()) q["deadlock_cycle"] = r.deadlock_cycle;
    j["routing_quality"] = q;
  }
  if (r.reroute) {
    const RerouteReport& rr = *r.reroute;
    j["reroute"] = {{"seconds", rr.seconds},       {"targeted", rr.targeted},
                    {"heavy", rr.heavy},           {"mads", rr.mads},
                    {"lft_blocks", rr.lft_blocks}, {"routing_seconds", rr.routing_seconds},
                    {"link_changes", rr.link_changes}, {"routes", rr.routes},
                    {"routes_delivered", rr.delivered}};
  }
  j["dumps"] = r.dumps_written;
  j["peak_rss_mb"] = r.peak_rss_mb;
  j["ok"] = r.ok();
  return j;
}

std::string to_text(const SimReport& r) {
  std::string out;
  auto line = [&out](std::string s) {
    out += s;
    out += '\n';
  };
  line(fmt::format("fabric   {}{}: {} nodes ({} CAs, {} switches), {} links", r.topology,
                   r.generated ? " (generated)" : "", r.nodes, r.cas, r.switches, r.links));
  line(fmt::format("sm       on {}, LID {}; routing engine {}", r.sm_port, r.sm_lid, r.routing_engine));
  if (r.routing_attempts.size() > 1)
    for (const auto& a : r.routing_attempts) line(fmt::format("         fallback: {}", a));
  line(fmt::format("bring-up {:.1f} ms{}, {} MADs, {} LFT blocks; topology load {:.1f} ms", r.bringup_seconds * 1e3,
                   r.virtual_seconds > 0 ? fmt::format(" ({:.3f} s of fabric time: timeouts)", r.virtual_seconds) : "",
                   r.mads, r.lft_blocks, r.load_seconds * 1e3));
  line(fmt::format("ports    {}/{} cabled ports Active; {} LIDs, {} conflicts", r.active_ports, r.cabled_ports,
                   r.lids, r.lid_conflicts));
  line(fmt::format("routes   {}/{} (CA port, LID) pairs delivered through the switches' LFTs, at most {} "
                   "switch-to-switch hops",
                   r.delivered, r.routes, r.max_switch_hops));
  if (r.quality_measured) {
    std::string ideal = r.ideal_max_link_load
                            ? fmt::format(", ideal {} ({:.2f}x)", *r.ideal_max_link_load,
                                          *r.ideal_max_link_load
                                              ? static_cast<double>(r.max_link_load) /
                                                    static_cast<double>(*r.ideal_max_link_load)
                                              : 0.0)
                            : std::string();
    line(fmt::format("quality  of {}: {}; {}", r.quality_of,
                     r.unreachable_routes + r.looping_routes == 0
                         ? std::string("every switch reaches every LID")
                         : fmt::format("{} unreachable, {} looping (switch, LID) routes", r.unreachable_routes,
                                       r.looping_routes),
                     r.deadlock_free ? fmt::format("deadlock-free in {} VL{}", r.vls, r.vls == 1 ? "" : "s")
                                     : "NOT deadlock-free: " + r.deadlock_cycle.substr(0, 200)));
    line(fmt::format("         all-to-all ({} flows): busiest link {}{}, mean {:.1f} (max/mean {:.2f})", r.flows,
                     r.max_link_load, ideal, r.mean_link_load,
                     r.mean_link_load > 0 ? static_cast<double>(r.max_link_load) / r.mean_link_load : 0.0));
    line(fmt::format("         cyclic shifts: {} tried, worst link carries {} flow{}{}", r.shifts_tried,
                     r.worst_shift_load, r.worst_shift_load == 1 ? "" : "s",
                     r.worst_shift_load == 1 ? " (contention-free)" : ""));
  }
  if (r.reroute) {
    const RerouteReport& rr = *r.reroute;
    line(fmt::format("re-route {:.1f} ms ({} sweep; routing {:.1f} ms), {} MADs, {} LFT blocks changed", rr.seconds * 1e3,
                     rr.targeted ? "targeted" : rr.heavy ? "heavy" : "light", rr.routing_seconds * 1e3, rr.mads,
                     rr.lft_blocks));
    for (const auto& c : rr.link_changes) line(fmt::format("         {}", c));
    line(fmt::format("         afterwards {}/{} (CA port, LID) pairs delivered", rr.delivered, rr.routes));
  }
  for (const auto& d : r.dumps_written) line(fmt::format("dump     {}", d));
  line(fmt::format("memory   peak RSS {:.0f} MB", r.peak_rss_mb));
  for (const auto& p : r.sm_problems) line(fmt::format("problem  sm: {}", p));
  for (const auto& p : r.audit_problems) line(fmt::format("problem  audit: {}", p));
  line(r.ok() ? "result   ok: every cabled port Active, every CA reaches every LID"
              : "result   FAILED (see problems above)");
  return out;
}

}  // namespace softib::tools
