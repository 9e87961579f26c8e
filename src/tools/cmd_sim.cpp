// softib sim: see sim_report.hpp.
#include <iostream>

#include "sm/sm_config.hpp"
#include "tools/command.hpp"
#include "tools/sim_report.hpp"

namespace softib::tools {

void register_sim(CLI::App& app, CommandContext& ctx) {
  struct Args {
    SimOptions sim;
    std::string engines, config_file, partitions;
    int lmc = -1, wire_smps = -1;
    bool json = false, no_quality = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("sim", "Bring a fabric up with the subnet manager, in one process, and report how it went");
  cmd->add_option("TOPOLOGY", a->sim.topology, "a net file, or a generator spec (ft2, ft3:radix=8, torus:8x8,hosts=4, ...)")
      ->required();
  cmd->add_option("-R,--routing-engine", a->engines, "routing engines to try in order (OpenSM's syntax: ftree,updn)");
  cmd->add_option("--lmc", a->lmc, "LID mask control, 0-7")->check(CLI::Range(0, 7));
  cmd->add_option("-F,--config", a->config_file, "an opensm.conf to read first");
  cmd->add_option("-P,--partitions", a->partitions, "a partitions.conf (OpenSM syntax)");
  cmd->add_option("--max-wire-smps", a->wire_smps, "SMPs the SM keeps outstanding (OpenSM: max_wire_smps)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--dump-dir", a->sim.dump_dir, "write opensm-lfts.dump, opensm-subnet.lst, softib-pkeys.dump there");
  cmd->add_flag("--json", a->json, "one JSON object instead of text");
  cmd->add_flag("--no-quality", a->no_quality, "skip the routing-quality analysis");
  cmd->add_option("--evaluate-lfts", a->sim.evaluate_lfts,
                  "measure the routes of this opensm-lfts.dump (e.g. OpenSM's) instead of softib's");
  cmd->add_option("--fail-link", a->sim.fail_links,
                  "after bring-up, take this cable down (NODE:PORT, node ids as in the net file; repeatable) "
                  "and report the re-route");
  cmd->callback([a, &ctx] {
    SimOptions& sim = a->sim;
    if (!a->config_file.empty()) {
      auto c = sm::read_sm_config(a->config_file, sim.config);
      if (!c) return (void)ctx.fail(c.error());
      sim.config = c->config;
      for (const auto& w : c->warnings) std::cerr << "softib: warning: " << w << "\n";
    }
    sim.config.cache_dir.clear();  // a simulation never touches the system's guid2lid
    if (!a->engines.empty()) {
      if (auto r = sm::set_sm_option(sim.config, "routing_engine", a->engines); !r) return (void)ctx.fail(r.error());
    }
    if (a->lmc >= 0) sim.config.lmc = static_cast<uint8_t>(a->lmc);
    if (a->wire_smps > 0) sim.config.max_wire_smps = static_cast<uint32_t>(a->wire_smps);
    if (!a->partitions.empty()) sim.config.partition_config_file = a->partitions;
    sim.quality = !a->no_quality;
    auto report = run_sim(sim);
    if (!report) return (void)ctx.fail(report.error());
    if (a->json) {
      std::cout << to_json(*report).dump() << '\n';
    } else {
      std::cout << to_text(*report);
    }
    ctx.exit_code = report->ok() ? 0 : 1;
  });
}

}  // namespace softib::tools
