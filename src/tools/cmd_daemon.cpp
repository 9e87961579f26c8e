// softib up | down | status: the fabric daemon's life.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ipc/client.hpp"
#include "mad/sm_info.hpp"
#include "tools/command.hpp"
#include "tools/daemon_control.hpp"

namespace softib::tools {

void register_daemon(CLI::App& app, CommandContext& ctx) {
  auto o = std::make_shared<UpOptions>();
  auto no_sm = std::make_shared<bool>(false);
  auto priority = std::make_shared<int>(-1);
  auto engines = std::make_shared<std::string>();
  auto partitions = std::make_shared<std::string>();
  auto roce = std::make_shared<bool>(false);
  auto roce_net = std::make_shared<std::string>();
  CLI::App* up_cmd = app.add_subcommand("up", "Start the fabric's softibd (and its SM) and return once it is up");
  up_cmd->add_option("TOPOLOGY", o->topology, "a net file or generator spec (default: one switch, host-a and host-b)");
  up_cmd->add_flag("--no-sm", *no_sm, "do not run the embedded subnet manager (run `softib sm` yourself)");
  up_cmd->add_option("-p,--sm-priority", *priority, "the embedded SM's priority")->check(CLI::Range(0, 15));
  up_cmd->add_option("-R,--routing-engine", *engines, "the embedded SM's routing engines");
  up_cmd->add_option("-P,--partitions", *partitions, "partitions.conf for the embedded SM");
  up_cmd->add_flag("--roce", *roce, "RoCE mode: Ethernet link layer, RoCE v2 GIDs from IPv4 addresses, no SM to see");
  up_cmd->add_option("--roce-net", *roce_net, "RoCE mode: the /16 of the ports' IPv4 addresses (default 127.20.0.0)");
  up_cmd->callback([o, no_sm, priority, engines, partitions, roce, roce_net, &ctx] {
    o->fabric = ctx.fabric;
    o->sm = !*no_sm;
    if (*priority >= 0) o->extra.insert(o->extra.end(), {"--sm-priority", std::to_string(*priority)});
    if (!engines->empty()) o->extra.insert(o->extra.end(), {"--routing-engine", *engines});
    if (!partitions->empty()) o->extra.insert(o->extra.end(), {"--partitions", *partitions});
    if (*roce) o->extra.emplace_back("--roce");
    if (!roce_net->empty()) o->extra.insert(o->extra.end(), {"--roce-net", *roce_net});
    auto d = up(*o);
    if (!d) return (void)ctx.fail(d.error());
    fmt::print("softibd for fabric \"{}\" is up (pid {}, socket {})\n", d->fabric, d->pid, d->socket);
  });

  CLI::App* down_cmd = app.add_subcommand("down", "Stop the fabric's softibd");
  down_cmd->callback([&ctx] {
    if (auto r = down(ctx.fabric); !r) ctx.fail(r.error());
  });

  auto json = std::make_shared<bool>(false);
  CLI::App* status = app.add_subcommand("status", "Show the fabric's daemon: size, SM, socket");
  status->add_flag("--json", *json, "JSON output");
  status->callback([json, &ctx] {
    auto c = ipc::Connection::open(ctx.fabric, "softib status");
    if (!c) return (void)ctx.fail(c.error());
    auto f = c->fabric_info();
    if (!f) return (void)ctx.fail(f.error());
    const std::string sm = f->sm_state ? std::string(mad::to_string(static_cast<mad::SmState>(f->sm_state))) : "none";
    if (*json) {
      std::cout << nlohmann::json{{"fabric", f->name},     {"source", f->source}, {"pid", f->pid},
                                  {"socket", f->socket},   {"state_dir", f->state_dir},
                                  {"nodes", f->nodes},     {"cas", f->cas},       {"switches", f->switches},
                                  {"links", f->links},     {"embedded_sm", sm},   {"sm_lid", f->sm_lid}}
                       .dump()
                << "\n";
      return;
    }
    fmt::print("fabric     {} (from {})\ndaemon     pid {}, socket {}\nstate      {}\nsize       {} nodes: {} CAs, {} switches, {} links\nsm         {}{}\n",
               f->name, f->source, f->pid, f->socket, f->state_dir, f->nodes, f->cas, f->switches, f->links, sm,
               f->sm_lid ? fmt::format(", LID {}", f->sm_lid) : "");
  });
}

}  // namespace softib::tools
