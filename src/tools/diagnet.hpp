// softib diagnet: an ibdiagnet-style health report of the whole fabric. One discovery (the
// tools' DR discovery) gives every node, port and link; the stages then check what it found
// and read what it did not (PortCounters twice around a burst of MAD traffic, SMInfo,
// P_Key tables, GUIDInfo, the SA's IPoIB groups) with many MADs in flight.
//
// Each stage reports info lines, warnings and errors; the summary has a row per stage as
// ibdiagnet prints it. Errors make the exit status 1.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.hpp"
#include "fabric/topology.hpp"
#include "tools/discovery.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

struct DiagOptions {
  uint8_t min_lanes = 0;          // --lw: 1, 4, 8, 12 lanes (0: no check)
  uint32_t min_lane_mbps = 0;     // --ls in Mb/s per lane: 2500, 5000, 10000, 14000, ... (0: no check)
  uint32_t traffic = 10;          // -c: MADs sent to every node between the counter reads
  size_t window = 256;            // MADs in flight
  bool verbose = false;           // list every partition's members
  // The expected cabling (the fabric's own net file by default): tells a Down port with a
  // cable from an empty one. Null: no such check.
  const fabric::Topology* expected = nullptr;
  std::string expected_name;      // for messages
};

enum class Severity : uint8_t { kInfo, kWarning, kError };

struct Finding {
  Severity severity = Severity::kInfo;
  std::string text;
  nlohmann::json json;  // the structured form (always has "message")
};

struct StageReport {
  std::string name;
  std::string comment;  // the summary's Comment column ("skipped: ...")
  std::vector<Finding> findings;
  nlohmann::json data = nlohmann::json::object();  // the stage's structured results
  double seconds = 0;
  size_t warnings() const;
  size_t errors() const;
  void info(std::string text, nlohmann::json j = nlohmann::json::object());
  void warn(std::string text, nlohmann::json j = nlohmann::json::object());
  void error(std::string text, nlohmann::json j = nlohmann::json::object());
};

struct DiagReport {
  std::vector<StageReport> stages;
  uint64_t mads = 0;  // MADs sent, discovery's included
  double seconds = 0;
  size_t errors() const;
  size_t warnings() const;
  // ibdiagnet's layout: every stage's lines (at most `max_lines` findings each, 0: all),
  // then the Summary table.
  std::string text(size_t max_lines) const;
  nlohmann::json to_json() const;
};

// Runs every stage on `fabric` (discovered through `rpc`). Errors: only the connection's
// (the daemon went away); what a stage cannot read is one of its findings.
Result<DiagReport> run_diagnet(MadRpc& rpc, const DiscoveredFabric& fabric, const DiagOptions& options,
                               double discovery_seconds);

}  // namespace softib::tools
