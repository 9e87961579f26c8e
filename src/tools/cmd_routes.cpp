// softib tracert | routes: infiniband-diags' ibtracert and ibroute through softibd. ibroute
// reads a switch's LinearForwardingTable / MulticastForwardingTable with LID-routed SMPs and
// names each destination with NodeDescription, PortInfo and NodeInfo; ibtracert walks the
// forwarding tables hop by hop with directed-route SMPs from this host. Output, messages and
// exit statuses (255 for IBEXIT) are the real tools'. Where they take a LID, softib also
// takes a node's name.
#include <unistd.h>

#include <cctype>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/command.hpp"
#include "tools/host.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

namespace {

using nlohmann::json;

// SMP attributes (IBA 14.2.5) and where their fields sit in the SMP data.
constexpr uint16_t kNodeDesc = 0x0010, kNodeInfo = 0x0011, kSwitchInfo = 0x0012, kPortInfo = 0x0015,
                   kLft = 0x0019, kMft = 0x001B;
constexpr size_t kSmpData = 64;
constexpr int kIbExit = 255;  // IBEXIT / IBPANIC
constexpr int kMaxHops = 63;

uint64_t be(const MadBytes& m, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | m[kSmpData + at + i];
  return v;
}

std::string desc_of(const MadBytes& m) {
  std::string s;
  for (size_t i = 0; i < 64 && m[kSmpData + i] != 0; ++i)
    s += std::isprint(m[kSmpData + i]) ? static_cast<char>(m[kSmpData + i]) : ' ';
  return s;
}

// A Get of one SMP attribute; nullopt (after libibmad's warning) when it fails.
std::optional<MadBytes> smp_get(MadRpc& rpc, const Destination& to, uint16_t attr, uint32_t mod = 0) {
  MadRequest r;
  r.to = to;
  r.mgmt_class = 0x01;
  r.method = 0x01;
  r.attribute_id = attr;
  r.attribute_modifier = mod;
  auto got = rpc.call(r);
  if (!got) {
    fmt::print(stderr, "ibwarn: [{}] mad_rpc: _do_madrpc failed; dport ({})\n", ::getpid(), to.to_string());
    return std::nullopt;
  }
  const uint16_t status = static_cast<uint16_t>(((*got)[4] << 8 | (*got)[5]) & 0x7fff);  // D bit aside
  if (status != 0) return std::nullopt;
  return *got;
}

// ---- ibroute ---------------------------------------------------------------------------------

struct RoutesArgs {
  std::vector<std::string> args;  // <dest> [<startlid> [<endlid>]]
  bool all = false, multicast = false, brief = false, json = false;
  int timeout = 1000;
};

struct Switch {
  unsigned nports = 0;
  uint64_t guid = 0;
  std::string desc;
  MadBytes sw{};
};

const char* check_switch(MadRpc& rpc, const Destination& to, Switch& s) {
  auto ni = smp_get(rpc, to, kNodeInfo);
  if (!ni) {
    fmt::print(stderr, "nodeinfo\n");
    for (int l = 0; l < 4; ++l) fmt::print(stderr, "0000 0000 0000 0000 0000 0000 0000 0000\n");
    return "node info failed: valid addr?";
  }
  auto nd = smp_get(rpc, to, kNodeDesc);
  if (!nd) return "node desc failed";
  if (be(*ni, 2, 1) != 2) return "not a switch";
  s.nports = static_cast<unsigned>(be(*ni, 3, 1));
  s.guid = be(*ni, 12, 8);
  s.desc = desc_of(*nd);
  auto sw = smp_get(rpc, to, kSwitchInfo);
  if (!sw) return "switch info failed: is a switch node?";
  s.sw = *sw;
  return nullptr;
}

class LidNamer {  // ibroute's dump_lid, with its memory of the last LMC range
 public:
  explicit LidNamer(MadRpc& rpc) : rpc_(rpc) {}
  std::string name(unsigned lid, bool valid, json& j) {
    if (static_cast<int>(lid) <= last_port_lid_) {
      if (!valid) return fmt::format(": (path #{} - illegal port)", static_cast<int>(lid) - base_port_lid_);
      if (portguid_ == 0)
        return fmt::format(": (path #{} out of {})", static_cast<int>(lid) - base_port_lid_ + 1,
                           last_port_lid_ - base_port_lid_ + 1);
      return fmt::format(": (path #{} out of {}: portguid 0x{:016x})", static_cast<int>(lid) - base_port_lid_ + 1,
                         last_port_lid_ - base_port_lid_ + 1, portguid_);
    }
    if (!valid) return ": (illegal port)";
    portguid_ = 0;
    const RpcOptions keep = rpc_.options();
    rpc_.set_timeout(std::chrono::milliseconds(100));  // ibroute asks each LID with 100 ms
    const Destination to = Destination::to_lid(static_cast<uint16_t>(lid));
    auto nd = smp_get(rpc_, to, kNodeDesc);
    auto pi = nd ? smp_get(rpc_, to, kPortInfo) : std::nullopt;
    auto ni = pi ? smp_get(rpc_, to, kNodeInfo) : std::nullopt;
    rpc_.set_timeout(keep.timeout);
    if (!ni) return ": (unknown node and type)";
    portguid_ = be(*ni, 20, 8);
    const unsigned type = static_cast<unsigned>(be(*ni, 2, 1));
    const int baselid = static_cast<int>(be(*pi, 16, 2));
    const int lmc = static_cast<int>(be(*pi, 34, 1) & 0x7);
    if (lmc > 0) {
      base_port_lid_ = baselid;
      last_port_lid_ = baselid + (1 << lmc) - 1;
    }
    static const char* kTypes[] = {"Unknown", "Channel Adapter", "Switch", "Router"};
    j["type"] = type <= 3 ? kTypes[type] : "Unknown";
    j["port_guid"] = fmt::format("0x{:016x}", portguid_);
    j["description"] = desc_of(*nd);
    return fmt::format(": ({} portguid 0x{:016x}: '{}')", type <= 3 ? kTypes[type] : "Unknown", portguid_, desc_of(*nd));
  }

 private:
  MadRpc& rpc_;
  int last_port_lid_ = 0, base_port_lid_ = 0;
  uint64_t portguid_ = 0;
};

const char* dump_unicast(MadRpc& rpc, const Destination& to, const RoutesArgs& a, unsigned startlid, unsigned endlid,
                         std::string& out, json& j) {
  Switch s;
  if (const char* e = check_switch(rpc, to, s)) return e;
  const unsigned top = static_cast<unsigned>(be(s.sw, 6, 2));
  if (endlid == 0 || endlid > top) endlid = top;
  if (endlid > 0xBFFF) endlid = 0xBFFF;
  out += fmt::format("Unicast lids [0x{:x}-0x{:x}] of switch {} guid 0x{:016x} ({}):\n", startlid, endlid,
                     to.to_string(), s.guid, s.desc);
  out += "  Lid  Out   Destination\n       Port     Info \n";
  j["switch"] = {{"guid", fmt::format("0x{:016x}", s.guid)}, {"description", s.desc}, {"linear_fdb_top", top}};
  json routes = json::array();
  LidNamer namer(rpc);
  int n = 0;
  const unsigned startblock = startlid / 64, endblock = (endlid + 63) / 64;
  for (unsigned block = startblock; block < endblock; ++block) {
    auto lft = smp_get(rpc, to, kLft, block);
    if (!lft) {
      fmt::print(stderr, "SubnGet() failed; MAD status 0x0 AM 0x{:x}\n", block);
      return nullptr;
    }
    unsigned i = std::max(block * 64, startlid);
    const unsigned e = std::min(block * 64 + 64, endlid + 1);
    for (; i < e; ++i) {
      const unsigned port = (*lft)[kSmpData + i % 64];
      const bool valid = port <= s.nports;
      if (!valid && !a.all) continue;
      json r = {{"lid", i}, {"port", port}};
      const std::string info = a.brief ? "" : namer.name(i, valid, r);
      out += fmt::format("0x{:04x} {:03} {}\n", i, port, info);
      routes.push_back(r);
      ++n;
    }
  }
  out += fmt::format("{} {}lids dumped \n", n, a.all ? "" : "valid ");
  j["routes"] = routes;
  return nullptr;
}

const char* dump_multicast(MadRpc& rpc, const Destination& to, const RoutesArgs& a, unsigned startlid,
                           unsigned endlid, std::string& out, json& j) {
  Switch s;
  if (const char* e = check_switch(rpc, to, s)) return e;
  const unsigned cap = static_cast<unsigned>(be(s.sw, 4, 2)), top = static_cast<unsigned>(be(s.sw, 18, 2));
  if (endlid == 0 || endlid > 0xC000 + cap - 1) endlid = 0xC000 + cap - 1;
  if (!a.all && top != 0 && top < endlid) {
    if (top < 0xC000 - 1) fmt::print(stderr, "ibwarn: [{}] dump_multicast_tables: illegal top mlid {:x}\n", ::getpid(), top);
    else endlid = top;
  }
  if (startlid == 0) startlid = 0xC000;
  else if (startlid < 0xC000) startlid = 0xC000;
  if (endlid > 0xFFFE) endlid = 0xFFFE;
  out += fmt::format("Multicast mlids [0x{:x}-0x{:x}] of switch {} guid 0x{:016x} ({}):\n", startlid, endlid,
                     to.to_string(), s.guid, s.desc);
  if (a.brief) {
    out += " MLid       Port Mask\n";
  } else {
    std::string l1, l2;
    for (unsigned i = 0; i <= s.nports; ++i) {
      l1 += (i % 10) ? ' ' : static_cast<char>('0' + i / 10);
      l1 += ' ';
      l2 += fmt::format("{} ", i % 10);
    }
    if (s.nports > 9) out += "            " + l1 + "\n";
    out += "     Ports: " + l2 + "\n MLid\n";
  }
  const unsigned chunks = (s.nports + 1 + 15) / 16;
  const unsigned startblock = startlid / 32, lastblock = endlid / 32;
  std::vector<MadRequest> reqs;
  for (unsigned block = startblock; block <= lastblock; ++block)
    for (unsigned c = 0; c < chunks; ++c) {
      MadRequest r;
      r.to = to;
      r.attribute_id = kMft;
      r.attribute_modifier = (block - 0xC000 / 32) | (c << 28);
      reqs.push_back(r);
    }
  auto many = rpc.call_many(reqs);
  if (!many) {
    fmt::print(stderr, "softib: {}\n", many.error().message());
    return nullptr;
  }
  auto& got = *many;
  json groups = json::array();
  int n = 0;
  for (unsigned block = startblock, k = 0; block <= lastblock; ++block, k += chunks) {
    for (unsigned c = 0; c < chunks; ++c)
      if (!got[k + c]) {
        fmt::print(stderr, "SubnGet() failed; MAD status 0x0 AM 0x{:x}\n", reqs[k + c].attribute_modifier);
        return nullptr;
      }
    for (unsigned i = std::max(block * 32, startlid); i < std::min(block * 32 + 32, endlid + 1); ++i) {
      auto mask = [&](unsigned chunk) { return static_cast<unsigned>(be(*got[k + chunk], 2 * (i % 32), 2)); };
      std::string str;
      bool nonzero = false;
      json ports = json::array();
      if (a.brief) {
        for (unsigned c = 0; c < chunks; ++c) {
          nonzero |= mask(c) != 0;
          str += fmt::format("{:04x}", mask(c));
        }
      } else {
        for (unsigned p = 0; p <= s.nports; ++p) {
          const unsigned m = mask(p / 16);
          nonzero |= m != 0;
          const bool on = (m >> (p % 16)) & 1;
          str += on ? "x " : "  ";
          if (on) ports.push_back(p);
        }
      }
      if (!nonzero && !a.all) continue;
      out += fmt::format("0x{:04x}      {}\n", i, str);
      groups.push_back({{"mlid", i}, {"ports", ports}});
      ++n;
    }
  }
  out += fmt::format("{} {}mlids dumped \n", n, a.all ? "" : "valid ");
  j["switch"] = {{"guid", fmt::format("0x{:016x}", s.guid)}, {"description", s.desc}};
  j["mlids"] = groups;
  return nullptr;
}

// ---- ibtracert -------------------------------------------------------------------------------

struct TracertArgs {
  std::vector<std::string> args;  // <src> <dest>
  bool brief = false, force = false, json = false;
  int timeout = 1000;
};

struct Node {
  uint64_t guid = 0, portguid = 0;
  unsigned type = 0, numports = 0;
  int portnum = 0, lid = 0, lmc = 0, state = 0;
  std::string desc;
};

// A place ibtracert reaches: a directed route from this host (no hops: this host itself).
struct Place {
  std::vector<uint8_t> hops;
};

class Tracer {
 public:
  Tracer(MadRpc& rpc, bool force) : rpc_(rpc), force_(force) {}
  std::string out;
  json hops = json::array();

  Destination dest(const Place& p) const {
    return p.hops.empty() ? Destination::to_lid(rpc_.local_lid()) : Destination::route(p.hops);
  }
  bool get_node(const Destination& to, Node& n) {
    auto ni = smp_get(rpc_, to, kNodeInfo);
    if (!ni) return false;
    auto nd = smp_get(rpc_, to, kNodeDesc);
    if (!nd) return false;
    auto pi = smp_get(rpc_, to, kPortInfo);
    if (!pi) return false;
    n.guid = be(*ni, 12, 8);
    n.type = static_cast<unsigned>(be(*ni, 2, 1));
    n.numports = static_cast<unsigned>(be(*ni, 3, 1));
    n.portguid = be(*ni, 20, 8);
    n.portnum = static_cast<int>(be(*ni, 36, 1));
    n.lid = static_cast<int>(be(*pi, 16, 2));
    n.lmc = static_cast<int>(be(*pi, 34, 1) & 0x7);
    n.state = static_cast<int>(be(*pi, 32, 1) & 0xf);
    n.desc = desc_of(*nd);
    return true;
  }
  // switch_lookup: the out port for `lid`, -1 when the table has none; sets enhsp0/top.
  int switch_lookup(const Destination& at, int lid) {
    auto si = smp_get(rpc_, at, kSwitchInfo);
    if (!si) return -1;
    const int cap = static_cast<int>(be(*si, 0, 2));
    top_ = static_cast<int>(be(*si, 6, 2));
    enhsp0_ = (be(*si, 16, 1) >> 3) & 1;
    if (lid >= cap && lid > top_) return -1;
    auto lft = smp_get(rpc_, at, kLft, static_cast<uint32_t>(lid / 64));
    if (!lft) return -1;
    return (*lft)[kSmpData + static_cast<size_t>(lid % 64)];
  }
  static const char* type_str(unsigned t) {
    static const char* kTypes[] = {"???", "ca", "switch", "router"};
    return t <= 3 ? kTypes[t] : "???";
  }
  void endnode(int dump, const char* prompt, const Node& n) {
    if (dump == 0) return;
    const int portnum = n.type == 2 ? 0 : n.portnum;
    if (dump == 1) out += fmt::format("{} {{0x{:016x}}}[{}]\n", prompt, n.guid, portnum);
    else
      out += fmt::format("{} {} {{0x{:016x}}} portnum {} lid {}-{} \"{}\"\n", prompt, type_str(n.type), n.guid, portnum,
                         n.lid, n.lid + (1 << n.lmc) - 1, n.desc);
    hops.push_back({{"where", prompt}, {"type", type_str(n.type)}, {"guid", fmt::format("0x{:016x}", n.guid)},
                    {"port", portnum}, {"lid", n.lid}, {"description", n.desc}});
  }
  void route(int dump, const Node& n, int outport) {
    if (dump == 0) return;
    if (dump == 1) out += fmt::format("[{}] -> {{0x{:016x}}}[{}]\n", outport, n.portguid, n.portnum);
    else
      out += fmt::format("[{}] -> {} port {{0x{:016x}}}[{}] lid {}-{} \"{}\"\n", outport, type_str(n.type), n.portguid,
                         n.portnum, n.lid, n.lid + (1 << n.lmc) - 1, n.desc);
    hops.push_back({{"out_port", outport}, {"type", type_str(n.type)}, {"port_guid", fmt::format("0x{:016x}", n.portguid)},
                    {"port", n.portnum}, {"lid", n.lid}, {"description", n.desc}});
  }
  void warn(const std::string& what) { fmt::print(stderr, "ibwarn: [{}] find_route: {}\n", ::getpid(), what); }

  // ibtracert's find_route from `from` to the port with `to_lid`.
  bool find_route(Place& from, uint16_t to_lid, int dump) {
    Node fromnode, tonode, node, next;
    if (!get_node(dest(from), fromnode) || !get_node(Destination::to_lid(to_lid), tonode)) {
      warn("can't reach to/from ports");
      if (!force_) return false;
      tonode.lid = to_lid;
    }
    auto same = [&](const Node& a, const Node& b) { return a.portguid == b.portguid || (force_ && a.lid == b.lid); };
    node = fromnode;
    int portnum = node.portnum, outport = 255, next_out = 255;
    endnode(dump, "From", node);
    auto badtbl = [&](const Node& n, int port) {
      warn(fmt::format("Bad forwarding table entry found at: node \"{}\" lid entry {} is {} (top {})", n.desc, to_lid, port,
                       top_));
      return false;
    };
    if (node.type == 2) {
      next_out = switch_lookup(dest(from), to_lid);
      if (next_out < 0 || next_out > static_cast<int>(node.numports)) return badtbl(node, next_out);
    }
    int maxhops = kMaxHops;
    while (maxhops--) {
      if (node.state != 4 && (node.type != 2 || enhsp0_)) {
        warn(fmt::format("Bad port state found: node \"{}\" port {} state {}", node.desc, portnum, node.state));
        return false;
      }
      if (same(node, tonode)) break;
      if (node.type == 2) {
        outport = next_out;
        if (from.hops.size() + 2 >= 64) return warn("Direct path too long!"), false;
        from.hops.push_back(static_cast<uint8_t>(outport));
        if (!get_node(dest(from), next)) return warn("can't reach port at " + dest(from).to_string()), false;
        if (outport == 0) {
          if (!same(next, tonode)) return badtbl(node, outport);
          break;
        }
      } else {
        bool ca_src = false;
        outport = portnum;
        if (!same(node, fromnode)) {
          warn(fmt::format("can't continue: reached CA or router port {:x}, lid {}", node.portguid, node.lid));
          return false;
        }
        uint8_t back = 0;
        if (!from.hops.empty()) {
          back = from.hops.back();
          from.hops.pop_back();
        } else {
          ca_src = true;
          if (portnum) from.hops.push_back(static_cast<uint8_t>(portnum));
        }
        if (!get_node(dest(from), next)) return warn("can't reach port at " + dest(from).to_string()), false;
        if (!ca_src) next.portnum = back;
      }
      if (next.type == 2) {
        next_out = switch_lookup(dest(from), to_lid);
        if (next_out < 0 || next_out > static_cast<int>(next.numports)) return badtbl(next, next_out);
      }
      if (next.state != 4 && (next.type != 2 || enhsp0_)) {
        warn(fmt::format("Bad out port state found: node \"{}\" outport {} state {}", next.desc, outport, next.state));
        return false;
      }
      node = next;
      portnum = node.portnum;
      route(dump, node, outport);
    }
    if (maxhops <= 0) return warn(fmt::format("no route found after {} hops", kMaxHops)), false;
    endnode(dump, "To", node);
    return true;
  }

 private:
  MadRpc& rpc_;
  bool force_;
  int top_ = 0;
  uint64_t enhsp0_ = 0;
};

// Opens the RPC on this host's first port and lists the nodes (for names in LID places).
struct Session {
  std::vector<ipc::NodeEntry> nodes;
  std::optional<MadRpc> rpc;
};
std::optional<Session> open_session(CommandContext& ctx, int timeout_ms) {
  Session s;
  RpcOptions o;
  o.timeout = std::chrono::milliseconds(timeout_ms);
  auto rpc = open_tool_port(ctx.fabric, ctx.host, 1, o, &s.nodes);
  if (!rpc) return ctx.fail(rpc.error()), std::nullopt;
  s.rpc.emplace(std::move(*rpc));
  return s;
}

int ibexit(const char* tool, const std::string& msg, CommandContext& ctx) {
  std::cout << fmt::format("{}: iberror: failed: {}\n", tool, msg);
  std::cout.flush();
  return ctx.exit_code = kIbExit;
}

void run_routes(const RoutesArgs& a, CommandContext& ctx) {
  auto s = open_session(ctx, a.timeout);
  if (!s) return;
  auto to = parse_destination(a.args[0], false, false, &s->nodes, &*s->rpc);
  if (!to) return (void)ibexit("ibroute", fmt::format("can't resolve destination port {}", a.args[0]), ctx);
  const unsigned startlid = a.args.size() > 1 ? static_cast<unsigned>(std::strtoul(a.args[1].c_str(), nullptr, 0)) : 0;
  const unsigned endlid = a.args.size() > 2 ? static_cast<unsigned>(std::strtoul(a.args[2].c_str(), nullptr, 0)) : 0;
  std::string out;
  json j = {{"destination", to->to_string()}};
  const char* err = a.multicast ? dump_multicast(*s->rpc, *to, a, startlid, endlid, out, j)
                                : dump_unicast(*s->rpc, *to, a, startlid, endlid, out, j);
  if (a.json) {
    if (err) j["error"] = fmt::format("dump tables: {}", err);
    std::cout << j.dump(2) << "\n";
    std::cout.flush();
    if (err) ctx.exit_code = kIbExit;
    return;
  }
  std::cout << out;
  if (err) ibexit("ibroute", fmt::format("dump tables: {}", err), ctx);
}

void run_tracert(const TracertArgs& a, CommandContext& ctx) {
  auto s = open_session(ctx, a.timeout);
  if (!s) return;
  MadRpc& rpc = *s->rpc;
  auto fail = [&](const std::string& why) {
    fmt::print(stderr, "ibwarn: [{}] get_route: {}\n", ::getpid(), why);
    if (a.json) {
      std::cout << json{{"error", "Failed to get route information"}, {"reason", why}}.dump(2) << "\n";
      std::cout.flush();
      ctx.exit_code = kIbExit;
      return;
    }
    ibexit("ibtracert", "Failed to get route information", ctx);
  };
  auto src = parse_destination(a.args[0], false, false, &s->nodes, &rpc);
  if (!src) return fail(fmt::format("can't resolve source port {}", a.args[0]));
  auto dst = parse_destination(a.args[1], false, false, &s->nodes, &rpc);
  if (!dst) return fail(fmt::format("can't resolve destination port {}", a.args[1]));
  Tracer t(rpc, a.force);
  Place here;
  if (!t.find_route(here, src->lid, 0)) return fail("can't find a route to the src port");
  if (!t.find_route(here, dst->lid, a.brief ? 1 : 2)) return fail("can't find a route from src to dest");
  if (a.json) {
    std::cout << json{{"source", src->lid}, {"destination", dst->lid}, {"hops", t.hops}}.dump(2) << "\n";
  } else {
    std::cout << t.out;
  }
  std::cout.flush();
}

}  // namespace

void register_routes(CLI::App& app, CommandContext& ctx) {
  auto r = std::make_shared<RoutesArgs>();
  CLI::App* routes = app.add_subcommand("routes", "A switch's forwarding tables (infiniband-diags ibroute)");
  routes->add_option("DEST", r->args, "<switch lid|name> [<startlid> [<endlid>]]")->required()->expected(1, 3);
  routes->add_flag("-a,--all", r->all, "show all lids, even invalid entries");
  routes->add_flag("-n,--no_dests", r->brief, "do not try to resolve destinations");
  routes->add_flag("-M,--Multicast", r->multicast, "show multicast forwarding tables");
  routes->add_option("-t,--timeout", r->timeout, "timeout per try, ms (default 1000)");
  routes->add_flag("--json", r->json, "print the table as JSON");
  routes->callback([r, &ctx] { run_routes(*r, ctx); });

  auto t = std::make_shared<TracertArgs>();
  CLI::App* tracert = app.add_subcommand("tracert", "The route between two ports (infiniband-diags ibtracert)");
  tracert->add_option("ADDR", t->args, "<src lid|name> <dest lid|name>")->required()->expected(2);
  tracert->add_flag("-n,--no_info", t->brief, "simple format");
  tracert->add_flag("-f,--force", t->force, "force");
  tracert->add_option("-t,--timeout", t->timeout, "timeout per try, ms (default 1000)");
  tracert->add_flag("--json", t->json, "print the route as JSON");
  tracert->callback([t, &ctx] { run_tracert(*t, ctx); });
}

}  // namespace softib::tools
