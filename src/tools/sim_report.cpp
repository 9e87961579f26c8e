#include "tools/sim_report.hpp"

#include <sys/resource.h>

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

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
  if (options.quality && graph && tables && graph->switch_count() > 0) {
    const sm::LinkLoadStats load = sm::all_to_all_load(*graph, *tables);
    r.quality_measured = true;
    r.flows = load.flows;
    r.max_link_load = load.max_load;
    r.mean_link_load = load.mean_load;
    r.ideal_max_link_load = sm::layered_ideal_max_load(*graph);
    const sm::ShiftContention shifts =
        sm::shift_contention(*graph, *tables, options.all_shifts_up_to, options.sampled_shifts);
    r.shifts_tried = shifts.shifts_tried;
    r.worst_shift_load = shifts.worst;
  }

  if (!options.dump_dir.empty()) {
    if (!graph || !tables) return Status(Code::kInternal, "no routing to dump: the SM did not route");
    std::error_code ec;
    std::filesystem::create_directories(options.dump_dir, ec);
    if (ec) return Status(Code::kInvalidArgument, fmt::format("cannot create \"{}\": {}", options.dump_dir, ec.message()));
    SOFTIB_TRY(sm::write_opensm_dumps(options.dump_dir, sm.subnet(), *graph, *tables));
    r.dumps_written = {options.dump_dir + "/opensm-lfts.dump", options.dump_dir + "/opensm-subnet.lst"};
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
    j["routing_quality"] = q;
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
    line(fmt::format("quality  all-to-all ({} flows): busiest link {}{}, mean {:.1f} (max/mean {:.2f})", r.flows,
                     r.max_link_load, ideal, r.mean_link_load,
                     r.mean_link_load > 0 ? static_cast<double>(r.max_link_load) / r.mean_link_load : 0.0));
    line(fmt::format("         cyclic shifts: {} tried, worst link carries {} flow{}{}", r.shifts_tried,
                     r.worst_shift_load, r.worst_shift_load == 1 ? "" : "s",
                     r.worst_shift_load == 1 ? " (contention-free)" : ""));
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
