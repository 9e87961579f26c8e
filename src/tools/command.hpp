// How `softib` subcommands plug into the one CLI: each cmd_*.cpp has a registrar that adds
// its subcommand(s) to the app with a callback; the callback leaves the exit status in the
// shared context. Exit statuses: 0 ok, 1 the command ran and found a problem (or a tool's
// own failure status, as the real tool would return), 2 bad usage or input, 3 nothing to
// talk to (no daemon).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "base/status.hpp"

namespace softib::tools {

struct CommandContext {
  int exit_code = 0;
  std::string fabric;  // --fabric / SOFTIB_FABRIC
  std::string host;    // --host / SOFTIB_HOST: the node this shell is "on"
  // Prints "softib: <message>" to stderr; returns the exit status for the error's kind.
  int fail(const Status& s);
};

void register_sim(CLI::App& app, CommandContext& ctx);
void register_topo(CLI::App& app, CommandContext& ctx);
void register_daemon(CLI::App& app, CommandContext& ctx);
void register_sm(CLI::App& app, CommandContext& ctx);
void register_stat(CLI::App& app, CommandContext& ctx);       // stat, devices, devinfo
void register_query(CLI::App& app, CommandContext& ctx);      // sminfo, perfquery, ping
void register_control(CLI::App& app, CommandContext& ctx);    // port set, link show|set
void register_saquery(CLI::App& app, CommandContext& ctx);    // saquery
void register_routes(CLI::App& app, CommandContext& ctx);     // tracert, routes
void register_discover(CLI::App& app, CommandContext& ctx);   // hosts, switches, nodes, netdiscover, linkinfo
void register_diagnet(CLI::App& app, CommandContext& ctx);    // diagnet
void register_run(CLI::App& app, CommandContext& ctx);        // run (rdma-core programs on softib)

}  // namespace softib::tools
