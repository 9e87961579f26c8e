// `softib sim`: a whole subnet in one process. Loads (or generates) a fabric, runs the SM
// against it through real MAD exchanges with the simulated SMAs, audits the result from the
// fabric's own state, and measures the routing it got.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"
#include "sm/sm_config.hpp"

namespace softib::tools {

struct SimOptions {
  std::string topology;            // a net file, or a generator spec ("ft3:radix=36")
  sm::SmConfig config;
  std::string dump_dir;            // non-empty: write OpenSM's dump files there
  bool quality = true;             // all-to-all and shift analysis
  size_t all_shifts_up_to = 2048;  // CAs up to which every cyclic shift is tried
  size_t sampled_shifts = 64;      // otherwise this many, spread evenly
  // After bring-up: take these cables down ("NODE:PORT", node ids as in the net file), let
  // the SM react to the traps, and report the re-route.
  std::vector<std::string> fail_links;
  // Measure these routes (an opensm-lfts.dump, e.g. OpenSM's on the same fabric) instead of
  // the SM's own: the quality figures then describe the dump.
  std::string evaluate_lfts;
};

// What the SM did after the links in SimOptions::fail_links went down.
struct RerouteReport {
  double seconds = 0;          // wall-clock time from the cables going down to the SM idle
  bool targeted = false;       // handled by a targeted sweep (no rediscovery)
  bool heavy = false;
  uint64_t mads = 0;
  uint32_t lft_blocks = 0;     // LFT blocks that changed and were sent
  double routing_seconds = 0;
  std::vector<std::string> link_changes;
  uint64_t routes = 0, delivered = 0;  // the audit afterwards
};

struct SimReport {
  std::string topology;
  bool generated = false;
  size_t nodes = 0, cas = 0, switches = 0, links = 0;
  std::string sm_port;  // "H-00001 port 1"
  uint16_t sm_lid = 0;

  // Bring-up: SM start until the first heavy sweep ends with every port Active.
  double load_seconds = 0;     // reading or generating the topology, building the fabric
  double bringup_seconds = 0;  // wall-clock time of the simulated bring-up
  double virtual_seconds = 0;  // how long it took in the fabric's (virtual) time
  uint64_t mads = 0;
  uint32_t lft_blocks = 0;
  std::string routing_engine;  // what routed, after any fallback
  std::vector<std::string> routing_attempts;
  std::vector<std::string> sm_problems;

  // Audit of the fabric's own state.
  size_t cabled_ports = 0, active_ports = 0, lids = 0, lid_conflicts = 0;
  uint64_t routes = 0, delivered = 0, max_switch_hops = 0;
  std::vector<std::string> audit_problems;

  // Routing quality (all-to-all among CAs, one flow per ordered pair).
  bool quality_measured = false;
  std::string quality_of;  // "softib ftree", or "opensm-lfts.dump (file)"
  uint64_t flows = 0, max_link_load = 0;
  double mean_link_load = 0;
  std::optional<uint64_t> ideal_max_link_load;  // layered fabrics (fat trees) only
  uint32_t shifts_tried = 0;
  uint64_t worst_shift_load = 0;  // 1: contention-free
  uint64_t unreachable_routes = 0, looping_routes = 0;  // of the routes measured
  bool deadlock_free = false;
  uint32_t vls = 0;
  std::string deadlock_cycle;

  std::optional<RerouteReport> reroute;
  std::vector<std::string> dumps_written;
  double peak_rss_mb = 0;

  bool ok() const {
    const bool bringup_ok = active_ports == cabled_ports && lid_conflicts == 0 && delivered == routes && sm_problems.empty();
    return bringup_ok && (!reroute || reroute->delivered == reroute->routes);
  }
};

// Errors: the topology's load/parse error (file:line), a bad generator spec, a bring-up
// that does not finish, an unwritable dump directory.
Result<SimReport> run_sim(const SimOptions& options);

nlohmann::json to_json(const SimReport& report);
std::string to_text(const SimReport& report);

}  // namespace softib::tools
