// softib diagnet: the fabric's health report, as ibdiagnet prints it (diagnet.hpp).
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "ipc/client.hpp"
#include "tools/command.hpp"
#include "tools/diagnet.hpp"
#include "tools/discovery.hpp"
#include "tools/host.hpp"
#include "tools/mad_rpc.hpp"
#include "tools/topology_source.hpp"

namespace softib::tools {

namespace {

struct DiagnetArgs {
  std::string lw, ls, topology;
  bool no_topology = false, json = false, verbose = false;
  uint32_t count = 10;
  int ca_port = 1, timeout_ms = 0;
  size_t window = 256, max_lines = 100;
};

// --lw: 1x 2x 4x 8x 12x (lanes).
std::optional<uint8_t> parse_lw(const std::string& s) {
  for (int lanes : {1, 2, 4, 8, 12})
    if (s == fmt::format("{}x", lanes) || s == fmt::format("{}", lanes)) return static_cast<uint8_t>(lanes);
  return std::nullopt;
}

// --ls: Gb/s a lane, as ibdiagnet takes it (2.5 SDR .. 100 NDR).
std::optional<uint32_t> parse_ls(const std::string& s) {
  struct Speed {
    const char* text;
    uint32_t mbps;
  };
  for (const Speed& sp : {Speed{"2.5", 2500}, Speed{"5", 5000}, Speed{"10", 10000}, Speed{"14", 14000},
                          Speed{"25", 25000}, Speed{"50", 50000}, Speed{"100", 100000}})
    if (s == sp.text) return sp.mbps;
  return std::nullopt;
}

int run(const DiagnetArgs& a, CommandContext& ctx) {
  DiagOptions o;
  if (!a.lw.empty()) {
    auto lanes = parse_lw(a.lw);
    if (!lanes) return ctx.fail(Status(Code::kInvalidArgument, fmt::format("--lw {}: expected 1x, 2x, 4x, 8x or 12x", a.lw)));
    o.min_lanes = *lanes;
  }
  if (!a.ls.empty()) {
    auto mbps = parse_ls(a.ls);
    if (!mbps) return ctx.fail(Status(Code::kInvalidArgument, fmt::format("--ls {}: expected 2.5, 5, 10, 14, 25, 50 or 100", a.ls)));
    o.min_lane_mbps = *mbps;
  }
  o.traffic = a.count;
  o.window = std::max<size_t>(a.window, 1);
  o.verbose = a.verbose;

  RpcOptions ro;
  if (a.timeout_ms > 0) ro.timeout = std::chrono::milliseconds(a.timeout_ms);
  ro.window = o.window;
  auto rpc = open_tool_port(ctx.fabric, ctx.host, static_cast<uint8_t>(a.ca_port), ro);
  if (!rpc) return ctx.fail(rpc.error());

  // The expected cabling: --topology, else the net file or spec the fabric was started from.
  std::optional<LoadedTopology> expected;
  if (!a.no_topology) {
    std::string source = a.topology;
    if (source.empty()) {
      auto info = rpc->connection().fabric_info();
      if (!info) return ctx.fail(info.error());
      source = info->source;
    }
    if (!source.empty()) {
      auto t = load_topology(source);
      if (!t) {
        if (!a.topology.empty()) return ctx.fail(t.error());  // the user's file: a usage error
        fmt::print(stderr, "softib: warning: the fabric's topology {} cannot be read ({}); cabled Down ports are not checked\n",
                   source, t.error().message());
      } else {
        expected = std::move(*t);
        o.expected = &expected->topology;
        o.expected_name = source;
      }
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  DiscoverOptions d;
  d.window = o.window;
  auto f = discover(*rpc, d);
  if (!f) {
    ctx.fail(f.error());
    return ctx.exit_code = f.error().code() == Code::kUnavailable ? 3 : 1;
  }
  const double discovery = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto report = run_diagnet(*rpc, *f, o, discovery);
  if (!report) {
    ctx.fail(report.error());
    return ctx.exit_code = report.error().code() == Code::kUnavailable ? 3 : 1;
  }
  if (a.json) {
    nlohmann::json j = report->to_json();
    j["expected_topology"] = o.expected_name;
    std::cout << j.dump(1) << "\n";
  } else {
    const std::string text = report->text(a.max_lines);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return report->errors() ? 1 : 0;
}

}  // namespace

void register_diagnet(CLI::App& app, CommandContext& ctx) {
  auto a = std::make_shared<DiagnetArgs>();
  CLI::App* c = app.add_subcommand("diagnet", "Check the whole fabric and report its problems (ibdiagnet)");
  c->add_option("--lw", a->lw, "expected link width: 1x, 2x, 4x, 8x, 12x (report every link below)");
  c->add_option("--ls", a->ls, "expected link speed in Gb/s a lane: 2.5, 5, 10, 14, 25, 50, 100");
  c->add_option("-c,--count", a->count, "MADs of traffic sent to every node between the two counter reads (default 10)");
  c->add_option("-P,--Port", a->ca_port, "the local port to use (default 1)");
  c->add_option("-t,--timeout", a->timeout_ms, "timeout per MAD in ms");
  c->add_option("-o,--outstanding", a->window, "MADs in flight (default 256)");
  c->add_option("--topology", a->topology, "the expected cabling (default: the net file the fabric was started from)");
  c->add_flag("--no-topology", a->no_topology, "do not compare the cabling with a net file");
  c->add_option("--max-lines", a->max_lines, "errors and warnings shown per stage (0: all; default 100)");
  c->add_flag("-v,--verbose", a->verbose, "list the members of every partition");
  c->add_flag("--json", a->json, "the whole report as JSON");
  c->callback([a, &ctx] { ctx.exit_code = run(*a, ctx); });
}

}  // namespace softib::tools
