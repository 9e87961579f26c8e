// softibd: the fabric daemon. See daemon/daemon.hpp; `softib up` starts it, a systemd unit
// (scripts/softibd@.service) runs it in the foreground.
#include <arpa/inet.h>

#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "daemon/daemon.hpp"
#include "sm/sm_config.hpp"

int main(int argc, char** argv) {
  using namespace softib;
  CLI::App app{"softibd: a softib fabric (its nodes, switches, SMAs/PMAs and optionally its SM)"};
  daemon::Options o;
  std::string config_file, partitions, engines;
  int priority = -1;
  app.add_option("-f,--fabric", o.fabric, "fabric name (default: SOFTIB_FABRIC or \"default\")");
  app.add_option("-t,--topology", o.topology, "a net file or a generator spec (default: switch:hosts=2)");
  app.add_flag("--sm", o.sm, "run the embedded subnet manager");
  app.add_option("-p,--sm-priority", priority, "the embedded SM's priority, 0-15")->check(CLI::Range(0, 15));
  app.add_option("-R,--routing-engine", engines, "the embedded SM's routing engines (OpenSM syntax)");
  app.add_option("-P,--partitions", partitions, "partitions.conf for the embedded SM");
  app.add_option("-F,--config", config_file, "opensm.conf for the embedded SM");
  app.add_option("--runtime-dir", o.runtime_dir, "where the socket and pid file go");
  app.add_option("--state-dir", o.state_dir, "where guid2lid and other state persist");
  app.add_option("--ready-fd", o.ready_fd, "write \"ready\\n\" to this fd once serving (and, with --sm, once up)");
  app.add_option("--seed", o.seed, "seed of the impairment randomness");
  std::string roce_net;
  app.add_flag("--roce", o.roce, "RoCE mode: Ethernet link layer, RoCE v2 GIDs from IPv4 addresses, no visible SM");
  app.add_option("--roce-net", roce_net, "RoCE mode: the /16 the ports' IPv4 addresses come from (default 127.20.0.0)");
  CLI11_PARSE(app, argc, argv);

  if (!roce_net.empty()) {
    in_addr a{};
    if (::inet_pton(AF_INET, roce_net.c_str(), &a) != 1) {
      fmt::print(stderr, "softibd: --roce-net {}: not an IPv4 address\n", roce_net);
      return 2;
    }
    o.roce_net = ntohl(a.s_addr) & 0xFFFF0000u;
    o.roce = true;
  }

  if (!config_file.empty()) {
    auto c = sm::read_sm_config(config_file, o.sm_config);
    if (!c) {
      fmt::print(stderr, "softibd: {}\n", c.error().to_string());
      return 2;
    }
    for (const auto& w : c->warnings) fmt::print(stderr, "softibd: warning: {}\n", w);
    o.sm_config = c->config;
  }
  if (priority >= 0) o.sm_config.sm_priority = static_cast<uint8_t>(priority);
  if (!engines.empty()) {
    if (auto r = sm::set_sm_option(o.sm_config, "routing_engine", engines); !r) {
      fmt::print(stderr, "softibd: {}\n", r.error().to_string());
      return 2;
    }
  }
  if (!partitions.empty()) o.sm_config.partition_config_file = partitions;
  auto d = daemon::Daemon::create(std::move(o));
  if (!d) {
    fmt::print(stderr, "softibd: {}\n", d.error().to_string());
    return d.error().code() == Code::kAlreadyExists ? 3 : 2;
  }
  if (auto r = (*d)->run(); !r) {
    fmt::print(stderr, "softibd: {}\n", r.error().to_string());
    return 1;
  }
  return 0;
}
