// softib topo gen|show: see topo_command.hpp. softib topo diff: the live fabric against a
// net file (fabric_diff.hpp).
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "base/file.hpp"
#include "tools/command.hpp"
#include "tools/discovery.hpp"
#include "tools/fabric_diff.hpp"
#include "tools/host.hpp"
#include "tools/mad_rpc.hpp"
#include "tools/topo_command.hpp"
#include "tools/topology_source.hpp"

namespace softib::tools {

void register_topo(CLI::App& app, CommandContext& ctx) {
  auto spec = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto source = std::make_shared<std::string>();
  CLI::App* topo = app.add_subcommand("topo", "Generate and describe fabrics (net files)");
  topo->require_subcommand(1);
  CLI::App* gen = topo->add_subcommand("gen", "Write a generated fabric as a net file");
  gen->add_option("SPEC", *spec,
                  "ft2[:radix=36,leaves=,spines=,hosts=,parallel=]  ft3[:radix=,pods=,hosts=]  "
                  "torus:8x8[,hosts=4]  mesh:4x4x4[,hosts=2]  b2b  switch[:hosts=2]")
      ->required();
  gen->add_option("-o,--output", *out, "file to write (default: standard output)");
  gen->callback([spec, out, &ctx] {
    auto text = topo_gen(*spec);
    if (!text) return (void)ctx.fail(text.error());
    if (out->empty()) {
      std::cout << *text;
      return;
    }
    if (auto w = write_file_atomic(*out, *text); !w) ctx.fail(w.error());
  });
  CLI::App* show = topo->add_subcommand("show", "Describe a fabric: nodes, links, rates");
  show->add_option("TOPOLOGY", *source, "a net file or a generator spec")->required();
  show->callback([source, &ctx] {
    auto text = topo_show(*source);
    if (!text) return (void)ctx.fail(text.error());
    std::cout << *text;
  });

  auto expected = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* diff = topo->add_subcommand("diff", "Compare the live fabric with a net file: nodes, links, cabling");
  diff->add_option("FILE", *expected, "the expected topology (a net file, or a generator spec)")->required();
  diff->add_flag("--json", *json, "JSON output");
  diff->callback([expected, json, &ctx] {
    auto loaded = load_topology(*expected);
    if (!loaded) return (void)ctx.fail(loaded.error());  // file:line and the reason; exit 2
    auto rpc = open_tool_port(ctx.fabric, ctx.host, 1, RpcOptions{});
    if (!rpc) return (void)ctx.fail(rpc.error());
    auto live = discover(*rpc);
    if (!live) {
      ctx.fail(live.error());
      if (ctx.exit_code != 3) ctx.exit_code = 1;
      return;
    }
    const ExpectedFabric want(loaded->topology);
    const TopoDiff d = diff_topology(*live, want);
    if (*json) {
      nlohmann::json j = d.to_json();
      j["file"] = *expected;
      std::cout << j.dump(1) << "\n";
    } else {
      std::string lines;
      for (const DiffEntry& e : d.entries) lines += e.text + "\n";
      lines += d.summary();
      std::fwrite(lines.data(), 1, lines.size(), stdout);
    }
    ctx.exit_code = d.entries.empty() ? 0 : 1;
  });
}

}  // namespace softib::tools
