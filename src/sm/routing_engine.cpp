#include "sm/routing_engine.hpp"

#include <fmt/format.h>

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

Result<RoutingOutcome> route_with_fallback(const RoutingGraph& graph, std::span<const std::string> chain) {
  std::vector<std::string> names(chain.begin(), chain.end());
  if (names.empty() || names.back() != "minhop") names.emplace_back("minhop");
  RoutingOutcome out;
  Status last;
  for (const std::string& name : names) {
    auto engine = make_engine(name);
    if (!engine)
      return Status(Code::kInvalidArgument,
                    fmt::format("unknown routing engine \"{}\" (known: auto, ftree, dor, updn, minhop)", name));
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
