#include "tools/diagnet.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tools/diagnet_stages.hpp"

namespace softib::tools {

using namespace diag;

namespace {
const char* tag(Severity s) { return s == Severity::kError ? "-E-" : s == Severity::kWarning ? "-W-" : "-I-"; }
}  // namespace

// ---- the report ------------------------------------------------------------------------------

size_t StageReport::warnings() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kWarning; }));
}
size_t StageReport::errors() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; }));
}
static void add(StageReport& s, Severity sev, std::string text, nlohmann::json j) {
  if (!j.is_object()) j = nlohmann::json::object();
  j["message"] = text;
  s.findings.push_back({sev, std::move(text), std::move(j)});
}
void StageReport::info(std::string text, nlohmann::json j) { add(*this, Severity::kInfo, std::move(text), std::move(j)); }
void StageReport::warn(std::string text, nlohmann::json j) { add(*this, Severity::kWarning, std::move(text), std::move(j)); }
void StageReport::error(std::string text, nlohmann::json j) { add(*this, Severity::kError, std::move(text), std::move(j)); }

size_t DiagReport::errors() const {
  size_t n = 0;
  for (const auto& s : stages) n += s.errors();
  return n;
}
size_t DiagReport::warnings() const {
  size_t n = 0;
  for (const auto& s : stages) n += s.warnings();
  return n;
}

std::string DiagReport::text(size_t max_lines) const {
  std::string o;
  for (const StageReport& s : stages) {
    o += "-------------------------------------------------\n" + s.name + "\n";
    size_t shown = 0, hidden = 0;
    for (const Finding& f : s.findings) {
      if (f.severity != Severity::kInfo && max_lines && shown >= max_lines) {
        ++hidden;
        continue;
      }
      if (f.severity != Severity::kInfo) ++shown;
      o += fmt::format("{} {}\n", tag(f.severity), f.text);
    }
    if (hidden) o += fmt::format("-I- ... and {} more (--max-lines 0 or --json shows them all)\n", hidden);
    if (s.errors() || s.warnings())
      o += fmt::format("{} {} finished with {} errors and {} warnings\n", s.errors() ? "-E-" : "-W-", s.name, s.errors(), s.warnings());
    else
      o += fmt::format("-I- {} finished successfully\n", s.name);
    o += "\n";
  }
  o += "-------------------------------------------------\nSummary\n";
  o += fmt::format("-I- {:<26}{:<11}{:<11}{}\n", "Stage", "Warnings", "Errors", "Comment");
  for (const StageReport& s : stages) {
    std::string line = fmt::format("-I- {:<26}{:<11}{:<11}{}", s.name, s.warnings(), s.errors(), s.comment);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o += line + "\n";
  }
  o += fmt::format("\n-I- {} errors, {} warnings; {} MADs in {:.2f} s\n", errors(), warnings(), mads, seconds);
  return o;
}

nlohmann::json DiagReport::to_json() const {
  nlohmann::json st = nlohmann::json::array(), summary = nlohmann::json::array();
  for (const StageReport& s : stages) {
    nlohmann::json msgs = nlohmann::json::array();
    for (const Finding& f : s.findings) {
      nlohmann::json j = f.json;
      j["severity"] = f.severity == Severity::kError ? "error" : f.severity == Severity::kWarning ? "warning" : "info";
      msgs.push_back(std::move(j));
    }
    st.push_back({{"stage", s.name}, {"warnings", s.warnings()}, {"errors", s.errors()}, {"comment", s.comment},
                  {"seconds", s.seconds}, {"messages", std::move(msgs)}, {"data", s.data}});
    summary.push_back({{"stage", s.name}, {"warnings", s.warnings()}, {"errors", s.errors()}, {"comment", s.comment}});
  }
  return {{"stages", std::move(st)}, {"summary", std::move(summary)}, {"errors", errors()}, {"warnings", warnings()},
          {"mads", mads}, {"seconds", seconds}};
}

Result<DiagReport> run_diagnet(MadRpc& rpc, const DiscoveredFabric& fabric, const DiagOptions& options,
                               double discovery_seconds) {
  const auto start = Clock::now();
  Ctx c{rpc, fabric, options, std::nullopt, fabric.mads};
  if (options.expected) c.expected.emplace(*options.expected);
  DiagReport r;
  auto timed = [&](const char* name, auto&& fn) -> Result<void> {
    StageReport s;
    s.name = name;
    const auto t0 = Clock::now();
    if constexpr (std::is_void_v<decltype(fn(s))>) {
      fn(s);
    } else {
      auto got = fn(s);
      if (!got) return Err{got.error()};
    }
    s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.stages.push_back(std::move(s));
    return {};
  };
  std::vector<PortPKeys> pkeys;
  SOFTIB_TRY(timed("Discovery", [&](StageReport& s) { stage_discovery(c, s, discovery_seconds); }));
  r.stages.back().seconds = discovery_seconds;
  SOFTIB_TRY(timed("Lids Check", [&](StageReport& s) { stage_lids(c, s); }));
  SOFTIB_TRY(timed("Links Check", [&](StageReport& s) { stage_links(c, s); }));
  SOFTIB_TRY(timed("Subnet Manager", [&](StageReport& s) { return stage_sm(c, s); }));
  SOFTIB_TRY(timed("Port Counters", [&](StageReport& s) { return stage_counters(c, s); }));
  SOFTIB_TRY(timed("Nodes Information", [&](StageReport& s) { stage_nodes(c, s); }));
  SOFTIB_TRY(timed("Speed / Width checks", [&](StageReport& s) { stage_speed_width(c, s); }));
  SOFTIB_TRY(timed("Partition Keys", [&](StageReport& s) -> Result<void> {
    auto got = stage_pkeys(c, s, options.verbose);
    if (!got) return Err{got.error()};
    pkeys = std::move(*got);
    return {};
  }));
  SOFTIB_TRY(timed("Alias GUIDs", [&](StageReport& s) { return stage_alias_guids(c, s); }));
  SOFTIB_TRY(timed("IPoIB subnets", [&](StageReport& s) { return stage_ipoib(c, s, pkeys); }));
  r.mads = c.mads;
  r.seconds = discovery_seconds + std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace softib::tools
