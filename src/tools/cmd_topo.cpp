// softib topo gen|show: see topo_command.hpp.
#include <iostream>

#include "base/file.hpp"
#include "tools/command.hpp"
#include "tools/topo_command.hpp"

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
}

}  // namespace softib::tools
