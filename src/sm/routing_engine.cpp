#include "sm/routing_engine.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/log.hpp"
#include "sm/routing_engines.hpp"

namespace softib::sm {

RoutingTables empty_tables(const RoutingGraph& graph, std::string engine) {
  RoutingTables t;
  t.engine = std::move(engine);
  t.lft.assign(graph.switch_count(), std::vector<PortNum>(size_t{graph.max_lid()} + 1, kDropPort));
  return t;
}

std::unique_ptr<RoutingEngine> make_engine(std::string_view name) {
  if (name == "minhop") return make_minhop();
  if (name == "updn") return make_updn();
  if (name == "ftree") return make_ftree();
  if (name == "dor") return make_dor();
  if (name == "auto") return make_auto();
  return nullptr;
}

std::vector<std::string_view> engine_names() { return {"auto", "ftree", "dor", "updn", "minhop"}; }

bool is_opensm_only_engine(std::string_view name) {
  for (std::string_view n : {"dnup", "file", "lash", "torus-2QoS", "nue", "dfsssp", "sssp", "chain"})
    if (n == name) return true;
  return false;
}

Result<void> check_engine_chain(std::span<const std::string> chain) {
  for (const std::string& name : chain)
    if (!make_engine(name) && !is_opensm_only_engine(name))
      return Status(Code::kInvalidArgument, fmt::format("unknown routing engine \"{}\" (known: {})", name,
                                                        fmt::join(engine_names(), ", ")));
  return {};
}

Result<RoutingOutcome> route_with_fallback(const RoutingGraph& graph, std::span<const std::string> chain) {
  std::vector<std::string> names(chain.begin(), chain.end());
  if (names.empty() || names.back() != "minhop") names.emplace_back("minhop");
  RoutingOutcome out;
  Status last;
  for (const std::string& name : names) {
    auto engine = make_engine(name);
    if (!engine) {
      if (!is_opensm_only_engine(name)) SOFTIB_TRY(check_engine_chain(std::span(&name, 1)));
      // An OpenSM engine softib does not have: reported and skipped like a failed one.
      out.attempts.push_back(fmt::format("{}: an OpenSM engine softib does not implement", name));
      log(LogLevel::kWarn, "sm", "routing engine {} is not implemented by softib; trying the next", name);
      continue;
    }
    auto tables = engine->route(graph);
    if (tables.ok()) {
      out.attempts.push_back(fmt::format("{}: ok", tables->engine));
      out.tables = std::move(*tables);
      if (out.fell_back())
        log(LogLevel::kWarn, "sm", "routing fell back to {} after: {}", out.tables.engine, out.attempts.front());
      return out;
    }
    out.attempts.push_back(fmt::format("{}: {}", name, tables.error().message()));
    log(LogLevel::kWarn, "sm", "routing engine {} failed: {}", name, tables.error().message());
    last = tables.error();
  }
  return last;
}

}  // namespace softib::sm
