// softib port set | link show | link set: fault injection and link state, in the manner of
// iproute2's `rdma link` ("link softib0/1 subnet_prefix ... state ACTIVE physical_state
// LINK_UP"). Faults go through softibd (Connection::link_set / port_errors), so every tool
// and the SM see them: a downed port reads Down/Polling in `softib stat`, injected errors
// count in perfquery.
#include <charconv>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fabric/fabric.hpp"
#include "ipc/client.hpp"
#include "mad/port_info.hpp"
#include "tools/command.hpp"
#include "tools/diag_common.hpp"
#include "tools/host.hpp"

namespace softib::tools {

namespace {

std::string_view link_state(mad::PortState s) {
  static constexpr std::string_view kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE"};
  const auto v = static_cast<size_t>(s);
  return v < std::size(kNames) ? kNames[v] : "UNKNOWN";
}

std::string_view phys_state(mad::PhysPortState s) {
  static constexpr std::string_view kNames[] = {"NOP",     "SLEEP",   "POLLING",            "DISABLED",
                                                "PORT_CONFIGURATION_TRAINING", "LINK_UP", "LINK_ERROR_RECOVER",
                                                "PHY_TEST"};
  const auto v = static_cast<size_t>(s);
  return v < std::size(kNames) ? kNames[v] : "UNKNOWN";
}

Result<uint8_t> parse_port(std::string_view text, const ipc::NodeEntry& n) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return Status(Code::kInvalidArgument, fmt::format("bad port number \"{}\"", text));
  const unsigned first = n.type == 2 ? 0 : 1;
  if (v < first || v > n.num_ports)
    return Status(Code::kNotFound, fmt::format("{} has no port {} (ports {}-{})", n.id, v, first, n.num_ports));
  return static_cast<uint8_t>(v);
}

// A node as a user names it here: this host's device name (softib0), or find_node's id,
// description or GUID.
Result<ipc::NodeEntry> resolve_node(const std::vector<ipc::NodeEntry>& nodes, std::string_view which,
                                    std::string_view host) {
  if (which == ca_name(0)) return this_host(nodes, host);
  return find_node(nodes, which);
}

// ---- port set ----

struct PortSetArgs {
  std::string node, port, action, counter;
  uint64_t amount = 0;
  bool json = false;
};

int run_port_set(const PortSetArgs& a, CommandContext& ctx) {
  std::optional<ipc::LinkOp> op;
  if (a.action == "down") op = ipc::LinkOp::kDown;
  else if (a.action == "up") op = ipc::LinkOp::kUp;
  else if (a.action == "disable") op = ipc::LinkOp::kDisable;
  else if (a.action == "enable") op = ipc::LinkOp::kEnable;
  else if (a.action != "errors")
    return ctx.fail(Status(Code::kInvalidArgument,
                           fmt::format("unknown action \"{}\": down, up, disable, enable or errors COUNTER N", a.action)));
  std::optional<fabric::ErrorCounter> counter;
  if (!op) {
    if (a.counter.empty())
      return ctx.fail(Status(Code::kInvalidArgument, "errors needs a counter and an amount: errors SymbolErrorCounter 5"));
    counter = fabric::parse_error_counter(a.counter);
    if (!counter) {
      std::string names;
      for (size_t i = 0; i < static_cast<size_t>(fabric::ErrorCounter::kCount); ++i)
        names += fmt::format("{}{}", i ? ", " : "", fabric::to_string(static_cast<fabric::ErrorCounter>(i)));
      return ctx.fail(Status(Code::kInvalidArgument, fmt::format("no error counter \"{}\" (one of {})", a.counter, names)));
    }
  } else if (!a.counter.empty()) {
    return ctx.fail(Status(Code::kInvalidArgument, fmt::format("\"{}\" takes no further arguments", a.action)));
  }
  auto c = ipc::Connection::open(ctx.fabric, "softib port");
  if (!c) return ctx.fail(c.error());
  auto nodes = c->list_nodes();
  if (!nodes) return ctx.fail(nodes.error());
  auto node = resolve_node(*nodes, a.node, ctx.host);
  if (!node) return ctx.fail(node.error());
  auto port = parse_port(a.port, *node);
  if (!port) return ctx.fail(port.error());
  Result<void> done = op ? c->link_set(node->index, *port, *op)
                         : c->port_errors(node->index, *port, static_cast<uint8_t>(*counter), a.amount);
  if (!done) return ctx.fail(done.error());
  if (a.json) {
    nlohmann::json j{{"node", node->id}, {"port", *port}, {"action", a.action}};
    if (counter) {
      j["counter"] = a.counter;
      j["amount"] = a.amount;
    }
    std::cout << j.dump() << "\n";
  }
  return 0;
}

// ---- link show / set ----

struct LinkArgs {
  std::string target, what, value;
  bool json = false;
};

int run_link_show(const LinkArgs& a, CommandContext& ctx) {
  auto c = ipc::Connection::open(ctx.fabric, "softib link");
  if (!c) return ctx.fail(c.error());
  auto nodes = c->list_nodes();
  if (!nodes) return ctx.fail(nodes.error());
  // Which node and name: no argument is this host's CA, softib0.
  std::string node_text = a.target, port_text;
  if (const size_t slash = a.target.find('/'); slash != std::string::npos) {
    node_text = a.target.substr(0, slash);
    port_text = a.target.substr(slash + 1);
  }
  auto node = node_text.empty() ? this_host(*nodes, ctx.host) : resolve_node(*nodes, node_text, ctx.host);
  if (!node) return ctx.fail(node.error());
  auto me = this_host(*nodes, ctx.host);
  const std::string name = me && me->index == node->index ? ca_name(0) : node->id;
  std::vector<uint8_t> ports;
  if (!port_text.empty()) {
    auto p = parse_port(port_text, *node);
    if (!p) return ctx.fail(p.error());
    ports.push_back(*p);
  } else {
    for (uint8_t p = node->type == 2 ? 0 : 1; p <= node->num_ports; ++p) ports.push_back(p);
  }
  nlohmann::json out = nlohmann::json::array();
  for (uint8_t p : ports) {
    auto st = c->query_port(node->index, p);
    if (!st) return ctx.fail(st.error());
    auto pi = mad::decode<mad::PortInfo>(st->port_info);
    if (!pi) return ctx.fail(Status(Code::kParseError, pi.error().to_string()));
    const uint64_t g = pi->gid_prefix;
    const std::string prefix =
        fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xffff, (g >> 32) & 0xffff, (g >> 16) & 0xffff, g & 0xffff);
    if (st->link_layer == 2) {
      // A RoCE port: rdma link shows no InfiniBand addressing for it (it would name its netdev).
      if (a.json) {
        out.push_back({{"ifname", name}, {"node", node->id}, {"port", p}, {"state", link_state(pi->port_state)},
                       {"physical_state", phys_state(pi->port_physical_state)}});
      } else {
        fmt::print("link {}/{} state {} physical_state {}\n", name, p, link_state(pi->port_state),
                   phys_state(pi->port_physical_state));
      }
      continue;
    }
    if (a.json) {
      out.push_back({{"ifname", name},
                     {"node", node->id},
                     {"port", p},
                     {"subnet_prefix", prefix},
                     {"lid", pi->lid.value()},
                     {"sm_lid", pi->master_sm_lid.value()},
                     {"lmc", pi->lmc},
                     {"state", link_state(pi->port_state)},
                     {"physical_state", phys_state(pi->port_physical_state)}});
      continue;
    }
    fmt::print("link {}/{} subnet_prefix {} lid {} sm_lid {} lmc {} state {} physical_state {}\n", name, p, prefix,
               pi->lid.value(), pi->master_sm_lid.value(), pi->lmc, link_state(pi->port_state),
               phys_state(pi->port_physical_state));
  }
  if (a.json) std::cout << out.dump() << "\n";
  return 0;
}

int run_link_set(const LinkArgs& a, CommandContext& ctx) {
  const size_t slash = a.target.find('/');
  if (slash == std::string::npos)
    return ctx.fail(Status(Code::kInvalidArgument, fmt::format("\"{}\": give the link as NODE/PORT", a.target)));
  if (a.what != "state" || (a.value != "up" && a.value != "down"))
    return ctx.fail(Status(Code::kInvalidArgument, "usage: softib link set NODE/PORT state up|down"));
  PortSetArgs p;
  p.node = a.target.substr(0, slash);
  p.port = a.target.substr(slash + 1);
  p.action = a.value;
  p.json = a.json;
  return run_port_set(p, ctx);
}

}  // namespace

void register_control(CLI::App& app, CommandContext& ctx) {
  CLI::App* port = app.add_subcommand("port", "Inject faults on a port: take it down or up, disable it, count errors");
  port->require_subcommand(1);
  auto ps = std::make_shared<PortSetArgs>();
  CLI::App* set = port->add_subcommand("set", "port set NODE PORT down|up|disable|enable|errors COUNTER N");
  set->add_option("node", ps->node, "a node: its id, description or GUID (softib0: this host)")->required();
  set->add_option("port", ps->port, "the port number")->required();
  set->add_option("action", ps->action, "down, up, disable, enable or errors")->required();
  set->add_option("counter", ps->counter, "errors: the PortCounters name (SymbolErrorCounter, ...)");
  set->add_option("amount", ps->amount, "errors: how many to add");
  set->add_flag("--json", ps->json, "JSON output");
  set->callback([ps, &ctx] { ctx.exit_code = run_port_set(*ps, ctx); });

  CLI::App* link = app.add_subcommand("link", "Links' state, as iproute2's `rdma link` shows and sets it");
  link->require_subcommand(1);
  auto ls = std::make_shared<LinkArgs>();
  CLI::App* show = link->add_subcommand("show", "link show [NODE[/PORT]] (default: this host's CA)");
  show->add_option("link", ls->target, "NODE or NODE/PORT");
  show->add_flag("-j,--json", ls->json, "JSON output");
  show->callback([ls, &ctx] { ctx.exit_code = run_link_show(*ls, ctx); });
  auto lset = std::make_shared<LinkArgs>();
  CLI::App* lsetc = link->add_subcommand("set", "link set NODE/PORT state up|down");
  lsetc->add_option("link", lset->target, "NODE/PORT")->required();
  lsetc->add_option("what", lset->what, "state")->required();
  lsetc->add_option("value", lset->value, "up or down")->required();
  lsetc->add_flag("-j,--json", lset->json, "JSON output");
  lsetc->callback([lset, &ctx] { ctx.exit_code = run_link_set(*lset, ctx); });
}

}  // namespace softib::tools
