// softib: the command-line front end. Each subcommand is a function of the tools library;
// this file only parses arguments and maps results to output and exit codes
// (0 ok, 1 the command ran and found a problem, 2 bad usage or input).
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/file.hpp"
#include "sm/sm_config.hpp"
#include "tools/sim_report.hpp"
#include "tools/topo_command.hpp"

namespace {

using namespace softib;

int fail(const Status& s) {
  fmt::print(stderr, "softib: {}\n", s.to_string());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"softib: InfiniBand in software"};
  app.require_subcommand(1);

  // ---- sim ----
  tools::SimOptions sim;
  std::string engines, config_file, partitions;
  int lmc = -1, wire_smps = -1;
  bool json = false, no_quality = false;
  CLI::App* sim_cmd = app.add_subcommand(
      "sim", "Bring a fabric up with the subnet manager, in one process, and report how it went");
  sim_cmd->add_option("TOPOLOGY", sim.topology, "a net file, or a generator spec (ft2, ft3:radix=8, torus:8x8,hosts=4, ...)")
      ->required();
  sim_cmd->add_option("-R,--routing-engine", engines, "routing engines to try in order (OpenSM's syntax: ftree,updn)");
  sim_cmd->add_option("--lmc", lmc, "LID mask control, 0-7")->check(CLI::Range(0, 7));
  sim_cmd->add_option("-F,--config", config_file, "an opensm.conf to read first");
  sim_cmd->add_option("-P,--partitions", partitions, "a partitions.conf (OpenSM syntax)");
  sim_cmd->add_option("--max-wire-smps", wire_smps, "SMPs the SM keeps outstanding (OpenSM: max_wire_smps)")
      ->check(CLI::Range(1, 65536));
  sim_cmd->add_option("--dump-dir", sim.dump_dir, "write opensm-lfts.dump and opensm-subnet.lst there");
  sim_cmd->add_flag("--json", json, "one JSON object instead of text");
  sim_cmd->add_flag("--no-quality", no_quality, "skip the routing-quality analysis");
  sim_cmd->add_option("--evaluate-lfts", sim.evaluate_lfts,
                      "measure the routes of this opensm-lfts.dump (e.g. OpenSM's) instead of softib's");
  sim_cmd->add_option("--fail-link", sim.fail_links,
                      "after bring-up, take this cable down (NODE:PORT, node ids as in the net file; repeatable) "
                      "and report the re-route");

  // ---- topo ----
  CLI::App* topo = app.add_subcommand("topo", "Generate and describe fabrics (net files)");
  topo->require_subcommand(1);
  std::string gen_spec, gen_out, show_source;
  CLI::App* gen = topo->add_subcommand("gen", "Write a generated fabric as a net file");
  gen->add_option("SPEC", gen_spec,
                  "ft2[:radix=36,leaves=,spines=,hosts=,parallel=]  ft3[:radix=,pods=,hosts=]  "
                  "torus:8x8[,hosts=4]  mesh:4x4x4[,hosts=2]  b2b  switch[:hosts=2]")
      ->required();
  gen->add_option("-o,--output", gen_out, "file to write (default: standard output)");
  CLI::App* show = topo->add_subcommand("show", "Describe a fabric: nodes, links, rates");
  show->add_option("TOPOLOGY", show_source, "a net file or a generator spec")->required();

  CLI11_PARSE(app, argc, argv);

  if (sim_cmd->parsed()) {
    if (!config_file.empty()) {
      auto c = sm::read_sm_config(config_file, sim.config);
      if (!c) return fail(c.error());
      sim.config = c->config;
      for (const auto& w : c->warnings) fmt::print(stderr, "softib: warning: {}\n", w);
    }
    sim.config.cache_dir.clear();  // a simulation never touches the system's guid2lid
    if (!engines.empty()) {
      if (auto r = sm::set_sm_option(sim.config, "routing_engine", engines); !r) return fail(r.error());
    }
    if (lmc >= 0) sim.config.lmc = static_cast<uint8_t>(lmc);
    if (wire_smps > 0) sim.config.max_wire_smps = static_cast<uint32_t>(wire_smps);
    if (!partitions.empty()) sim.config.partition_config_file = partitions;
    sim.quality = !no_quality;
    auto report = tools::run_sim(sim);
    if (!report) return fail(report.error());
    if (json) {
      std::cout << tools::to_json(*report).dump() << '\n';
    } else {
      std::cout << tools::to_text(*report);
    }
    return report->ok() ? 0 : 1;
  }
  if (gen->parsed()) {
    auto text = tools::topo_gen(gen_spec);
    if (!text) return fail(text.error());
    if (gen_out.empty()) {
      std::cout << *text;
      return 0;
    }
    if (auto w = softib::write_file_atomic(gen_out, *text); !w) return fail(w.error());
    return 0;
  }
  if (show->parsed()) {
    auto text = tools::topo_show(show_source);
    if (!text) return fail(text.error());
    std::cout << *text;
    return 0;
  }
  return 2;
}
