// softib: the command-line front end. Each subcommand lives in the tools library
// (cmd_*.cpp registrars, see command.hpp); this file only assembles them.
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "tools/command.hpp"

int main(int argc, char** argv) {
  using namespace softib::tools;
  CLI::App app{"softib: InfiniBand in software"};
  app.require_subcommand(1);
  CommandContext ctx;
  if (const char* f = std::getenv("SOFTIB_FABRIC")) ctx.fabric = f;
  if (const char* h = std::getenv("SOFTIB_HOST")) ctx.host = h;
  app.add_option("--fabric", ctx.fabric, "which fabric (default: SOFTIB_FABRIC or \"default\")");
  app.add_option("--host", ctx.host, "the node this shell is on (default: SOFTIB_HOST or the fabric's first HCA)");
  register_sim(app, ctx);
  register_topo(app, ctx);
  register_daemon(app, ctx);
  register_sm(app, ctx);
  register_stat(app, ctx);
  register_query(app, ctx);
  register_control(app, ctx);
  register_saquery(app, ctx);
  register_routes(app, ctx);
  register_discover(app, ctx);
  register_diagnet(app, ctx);
  register_run(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error is status 2 (command.hpp), not CLI11's
    // own 100+ codes.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  return ctx.exit_code;
}
