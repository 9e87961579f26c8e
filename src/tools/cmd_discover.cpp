// softib netdiscover | hosts | switches | nodes | linkinfo: the fabric as discovery by
// directed-route SMPs sees it, printed as ibnetdiscover, ibhosts, ibswitches, ibnodes and
// iblinkinfo print it (infiniband-diags v44), line for line.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "mad/printer.hpp"
#include "tools/command.hpp"
#include "tools/discovery.hpp"
#include "tools/host.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

namespace {

constexpr uint32_t kCapHasExtSpeeds = 1u << 14;  // PortInfo.CapabilityMask.IsExtendedSpeedsSupported

struct DiscoverArgs {
  int timeout_ms = 0;
  int ca_port = 1;
  size_t outstanding = 0;
  bool json = false;
};

void add_common(CLI::App* c, DiscoverArgs& a) {
  c->add_option("-t,--timeout", a.timeout_ms, "timeout per MAD in ms");
  c->add_option("-P,--Port", a.ca_port, "the local port to use (default 1)");
  c->add_option("-o,--outstanding_smps", a.outstanding, "SMPs in flight during the scan");
  c->add_flag("--json", a.json, "JSON output");
}

Result<DiscoveredFabric> run_discovery(const CommandContext& ctx, const DiscoverArgs& a) {
  RpcOptions o;
  if (a.timeout_ms > 0) o.timeout = std::chrono::milliseconds(a.timeout_ms);
  auto rpc = open_tool_port(ctx.fabric, ctx.host, static_cast<uint8_t>(a.ca_port), o);
  if (!rpc) return Err{rpc.error()};
  DiscoverOptions d;
  if (a.outstanding > 0) d.window = a.outstanding;
  return discover(*rpc, d);
}

// ---- the shared vocabulary of the printers --------------------------------------------------

const DiscoveredPort* port_of(const DiscoveredFabric& f, int node, uint8_t p) {
  const auto& n = f.nodes[static_cast<size_t>(node)];
  return p < n.ports.size() && n.ports[p] ? &*n.ports[p] : nullptr;
}

const DiscoveredPort* remote_of(const DiscoveredFabric& f, const DiscoveredPort& p) {
  return p.remote_node < 0 ? nullptr : port_of(f, p.remote_node, p.remote_port);
}

// The PortInfo whose capability mask speaks for a port: port 0's on a switch.
const mad::PortInfo* cap_info(const DiscoveredFabric& f, int node, const DiscoveredPort& p) {
  const auto& n = f.nodes[static_cast<size_t>(node)];
  if (n.type == 2) {
    const DiscoveredPort* p0 = port_of(f, node, 0);
    return p0 && p0->have_info ? &p0->info : nullptr;
  }
  return &p.info;
}

uint8_t ext_speed(const DiscoveredFabric& f, int node, const DiscoveredPort& p) {
  const mad::PortInfo* c = cap_info(f, node, p);
  return c && (c->capability_mask & kCapHasExtSpeeds) ? p.info.link_speed_ext_active : 0;
}

const char* width_compat(uint32_t w) {
  switch (w) {
    case 1: return "1x";
    case 2: return "4x";
    case 4: return "8x";
    case 8: return "12x";
    case 16: return "2x";
    default: return "??";
  }
}

const char* speed_compat(uint32_t s) {
  switch (s) {
    case 1: return "SDR";
    case 2: return "DDR";
    case 4: return "QDR";
    default: return "???";
  }
}

const char* speed_ext_compat(uint32_t e, uint32_t s) {
  switch (e) {
    case 0: return speed_compat(s);
    case 1: return "FDR";
    case 2: return "EDR";
    case 4: return "HDR";
    case 8: return "NDR";
    default: return "???";
  }
}

std::string rate_compat(uint32_t s, uint32_t e) { return (s != 4 && !e) ? speed_compat(s) : speed_ext_compat(e, s); }

// ibnetdiscover's "S-000...", "H-000..." (with the quotes).
std::string node_name(const DiscoveredNode& n) {
  const char t = n.type == 2 ? 'S' : n.type == 1 ? 'H' : n.type == 3 ? 'R' : '?';
  return fmt::format("\"{}-{:016x}\"", t, n.guid);
}

// infiniband-diags' clean_nodedesc: what is not printable becomes a space.
std::string clean(const std::string& d) {
  std::string out = d;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = ' ';
  return out;
}

const char* type_word(uint8_t t) { return t == 2 ? "Switch" : t == 1 ? "Ca" : t == 3 ? "Router" : "???"; }

// ---- ibnetdiscover ---------------------------------------------------------------------------

void out_ids(std::string& o, const DiscoveredNode& n) {
  o += fmt::format("\nvendid=0x{:x}\ndevid=0x{:x}\n", n.info.vendor_id, n.info.device_id);
  if (n.info.system_image_guid.value() != 0) o += fmt::format("sysimgguid=0x{:x}\n", n.info.system_image_guid.value());
}

std::string topology(const DiscoveredFabric& f, bool group, bool full) {
  std::string o;
  const std::time_t t = std::time(nullptr);
  char when[64] = {};
  ctime_r(&t, when);
  o += fmt::format("#\n# Topology file: generated on {}#\n", when);
  const DiscoveredNode& from = f.nodes[static_cast<size_t>(f.from_node)];
  o += fmt::format("# Initiated from node {:016x} port {:016x}\n", from.guid, from.info.port_guid.value());
  if (group) o += "\nNon-Chassis Nodes\n";
  auto link_rate = [&](int node, const DiscoveredPort& p) {
    std::string s = fmt::format("{}{}", width_compat(p.info.link_width_active),
                                rate_compat(p.info.link_speed_active, ext_speed(f, node, p)));
    if (full) s += fmt::format(" s={} w={} v={}", p.info.link_speed_active, p.info.link_width_active, p.info.vl_cap);
    return s;
  };
  for (int i : f.listing(2)) {
    const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
    out_ids(o, n);
    o += fmt::format("switchguid=0x{:x}({:x})", n.guid, n.info.port_guid.value());
    if (group) o += "\t# ";
    o += "\n";
    o += fmt::format("Switch\t{} {}\t\t# \"{}\" {} port 0 lid {} lmc {}\n", n.num_ports, node_name(n), n.description,
                     n.enhanced_port0 ? "enhanced" : "base", n.sma_lid, n.sma_lmc);
    for (uint8_t p = 1; p <= n.num_ports; ++p) {
      const DiscoveredPort* port = port_of(f, i, p);
      const DiscoveredPort* rp = port ? remote_of(f, *port) : nullptr;
      if (!rp) continue;
      const DiscoveredNode& rn = f.nodes[static_cast<size_t>(port->remote_node)];
      o += fmt::format("[{}]\t{}[{}]", p, node_name(rn), rp->num);
      if (rn.type != 2) o += fmt::format("({:x}) ", rp->guid);
      o += fmt::format("\t\t# \"{}\" lid {} {}\n", rn.description, rn.type == 2 ? rn.sma_lid : rp->base_lid, link_rate(i, *port));
    }
  }
  for (uint8_t type : {uint8_t{1}, uint8_t{3}}) {
    for (int i : f.listing(type)) {
      const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
      out_ids(o, n);
      o += fmt::format("{}guid=0x{:x}\n", type == 1 ? "ca" : "rt", n.guid);
      o += fmt::format("{}\t{} {}\t\t# \"{}\"\n", type == 1 ? "Ca" : "Rt", n.num_ports, node_name(n), clean(n.description));
      for (uint8_t p = 1; p <= n.num_ports; ++p) {
        const DiscoveredPort* port = port_of(f, i, p);
        const DiscoveredPort* rp = port ? remote_of(f, *port) : nullptr;
        if (!rp) continue;
        const DiscoveredNode& rn = f.nodes[static_cast<size_t>(port->remote_node)];
        o += fmt::format("[{}]({:x}) \t{}[{}]", p, port->guid, node_name(rn), rp->num);
        if (rn.type != 2) o += fmt::format(" ({:x}) ", rp->guid);
        o += fmt::format("\t\t# lid {} lmc {} \"{}\" lid {} {}\n", port->base_lid, port->lmc, rn.description,
                         rn.type == 2 ? rn.sma_lid : rp->base_lid, link_rate(i, *port));
      }
    }
  }
  return o;
}

std::string list_nodes(const DiscoveredFabric& f, bool cas, bool switches, bool routers) {
  std::string o;
  auto one = [&](uint8_t type) {
    for (int i : f.listing(type)) {
      const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
      o += fmt::format("{}\t : 0x{:016x} ports {} devid 0x{:x} vendid 0x{:x} \"{}\"\n", type_word(n.type), n.guid,
                       n.num_ports, n.info.device_id, n.info.vendor_id, n.description);
    }
  };
  if (cas) one(1);
  if (switches) one(2);
  if (routers) one(3);
  return o;
}

std::string ports_report(const DiscoveredFabric& f) {
  std::string o;
  auto nt = [](uint8_t t) { return t == 2 ? "SW" : t == 1 ? "CA" : t == 3 ? "RT" : "??"; };
  for (int i : f.listing()) {
    const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
    for (uint8_t p = n.num_ports; p > 0; --p) {
      const DiscoveredPort* port = port_of(f, i, p);
      if (!port) continue;
      uint32_t width = port->info.link_width_active, speed = port->info.link_speed_active, ext = 0;
      if (const mad::PortInfo* c = cap_info(f, i, *port)) {
        ext = (c->capability_mask & kCapHasExtSpeeds) ? port->info.link_speed_ext_active : 0;
      } else {
        width = speed = 0;
      }
      o += fmt::format("{:>2} {:5} {:2} 0x{:016x} {} {}", nt(n.type), n.type == 2 ? n.sma_lid : port->base_lid, p,
                       port->guid, width_compat(width), rate_compat(speed, ext));
      if (const DiscoveredPort* rp = remote_of(f, *port)) {
        const DiscoveredNode& rn = f.nodes[static_cast<size_t>(port->remote_node)];
        o += fmt::format(" - {:>2} {:5} {:2} 0x{:016x} ( '{}' - '{}' )\n", nt(rn.type),
                         rn.type == 2 ? rn.sma_lid : rp->base_lid, rp->num, rp->guid, n.description, rn.description);
      } else {
        o += fmt::format("{:36}'{}'\n", "", n.description);
      }
    }
  }
  return o;
}

nlohmann::json fabric_json(const DiscoveredFabric& f) {
  nlohmann::json nodes = nlohmann::json::array();
  for (int i : f.listing()) {
    const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
    nlohmann::json ports = nlohmann::json::array();
    for (uint8_t p = n.type == 2 ? 0 : 1; p <= n.num_ports; ++p) {
      const DiscoveredPort* port = port_of(f, i, p);
      if (!port) continue;
      nlohmann::json j{{"port", p},
                       {"guid", fmt::format("0x{:016x}", port->guid)},
                       {"lid", n.type == 2 ? n.sma_lid : port->base_lid},
                       {"state", mad::format_integer(mad::Printer::kPortState, 4, static_cast<uint64_t>(port->info.port_state))},
                       {"physical_state", mad::format_integer(mad::Printer::kPhysPortState, 4, static_cast<uint64_t>(port->info.port_physical_state))}};
      if (p != 0 && port->info.port_state != mad::PortState::kDown) {
        j["width"] = mad::format_integer(mad::Printer::kLinkWidth, 8, port->info.link_width_active);
        const uint8_t e = ext_speed(f, i, *port);
        j["speed"] = e ? mad::format_integer(mad::Printer::kLinkSpeedExt, 4, e)
                       : mad::format_integer(mad::Printer::kLinkSpeed, 4, port->info.link_speed_active);
      }
      if (const DiscoveredPort* rp = remote_of(f, *port)) {
        const DiscoveredNode& rn = f.nodes[static_cast<size_t>(port->remote_node)];
        j["remote"] = {{"node_guid", fmt::format("0x{:016x}", rn.guid)}, {"description", rn.description}, {"port", rp->num}};
      }
      ports.push_back(std::move(j));
    }
    nodes.push_back({{"type", n.type == 2 ? "switch" : n.type == 1 ? "ca" : "router"},
                     {"guid", fmt::format("0x{:016x}", n.guid)},
                     {"description", n.description},
                     {"ports", n.num_ports},
                     {"vendor_id", n.info.vendor_id},
                     {"device_id", n.info.device_id},
                     {"lid", n.type == 2 ? n.sma_lid : n.lid_of(1)},
                     {"dr_path", n.path},
                     {"port_info", std::move(ports)}});
  }
  return {{"nodes", std::move(nodes)}, {"mads", f.mads}, {"max_hops", f.max_hops}};
}

// ---- ibhosts / ibswitches / ibnodes ----------------------------------------------------------

std::string host_lines(const DiscoveredFabric& f) {
  std::string o;
  for (int i : f.listing(1)) {
    const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
    o += fmt::format("Ca\t: 0x{:016x} ports {} \"{}\"\n", n.guid, n.num_ports, clean(n.description));
  }
  return o;
}

std::string switch_lines(const DiscoveredFabric& f) {
  std::string o;
  for (int i : f.listing(2)) {
    const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
    o += fmt::format("Switch\t: 0x{:016x} ports {} \"{}\" {} port 0 lid {} lmc {}\n", n.guid, n.num_ports, n.description,
                     n.enhanced_port0 ? "enhanced" : "base", n.sma_lid, n.sma_lmc);
  }
  return o;
}

// ---- iblinkinfo ------------------------------------------------------------------------------

struct LinkInfoArgs {
  bool down_only = false, line = false, additional = false, switches_only = false, cas_only = false;
  std::string guid;
};

std::string fmt_field(mad::Printer p, uint32_t bits, uint64_t v) { return mad::format_integer(p, bits, v); }

// get_max_msg: "Could be ..." when the two ends support more than is active.
std::pair<std::string, std::string> could_be(const DiscoveredFabric& f, int node, const DiscoveredPort& p,
                                             const DiscoveredPort& r) {
  std::string width_msg, speed_msg;
  auto max_width = [](uint32_t num) {
    unsigned e = 0;
    if (num & 8) e = 3;
    else if (num & 4) e = 2;
    else if (num & 2) e = 1;
    else if (num & 0x10) e = 4;
    return 1u << e;
  };
  auto max_bit = [](uint32_t num) {
    unsigned e = 0;
    while (num >>= 1) ++e;
    return 1u << e;
  };
  const uint32_t mw = max_width(uint32_t{p.info.link_width_supported} & r.info.link_width_supported);
  if ((mw & p.info.link_width_active) == 0) width_msg = "Could be " + fmt_field(mad::Printer::kLinkWidth, 8, mw);
  const mad::PortInfo* c = cap_info(f, node, p);
  const mad::PortInfo* rc = cap_info(f, p.remote_node, r);
  const bool ext = c && rc && (c->capability_mask & kCapHasExtSpeeds) && (rc->capability_mask & kCapHasExtSpeeds) &&
                   p.info.link_speed_ext_supported != 0 && r.info.link_speed_ext_supported != 0;
  if (ext) {
    const uint32_t ms = max_bit(uint32_t{p.info.link_speed_ext_supported} & r.info.link_speed_ext_supported);
    if ((ms & p.info.link_speed_ext_active) == 0) speed_msg = "Could be " + fmt_field(mad::Printer::kLinkSpeedExt, 4, ms);
  } else {
    const uint32_t ms = max_bit(uint32_t{p.info.link_speed_supported} & r.info.link_speed_supported);
    if ((ms & p.info.link_speed_active) == 0) speed_msg = "Could be " + fmt_field(mad::Printer::kLinkSpeed, 4, ms);
  }
  return {width_msg, speed_msg};
}

void print_link_port(std::string& o, const DiscoveredFabric& f, int node, const DiscoveredPort& p, const LinkInfoArgs& a) {
  const DiscoveredNode& n = f.nodes[static_cast<size_t>(node)];
  const mad::PortInfo* c = cap_info(f, node, p);
  uint32_t width = p.info.link_width_active, speed = p.info.link_speed_active, ext = 0;
  if (c) ext = (c->capability_mask & kCapHasExtSpeeds) ? p.info.link_speed_ext_active : 0;
  else width = speed = 0;
  const auto state = static_cast<uint64_t>(p.info.port_state);
  const auto phys = static_cast<uint64_t>(p.info.port_physical_state);
  const std::string st = fmt_field(mad::Printer::kPortState, 4, state);
  const std::string ph = fmt_field(mad::Printer::kPhysPortState, 4, phys);
  std::string link;
  const bool down = p.info.port_state == mad::PortState::kDown;
  if (!down) {
    const std::string sp = ext ? fmt_field(mad::Printer::kLinkSpeedExt, 4, ext) : fmt_field(mad::Printer::kLinkSpeed, 4, speed);
    link = fmt::format("({:>3} {:>18} {:>6}/{:>8})", fmt_field(mad::Printer::kLinkWidth, 8, width), sp, st, ph);
    if (a.additional) link += fmt::format(" (HOQ:{} VL_Stall:{})", p.info.hoq_life, p.info.vl_stall_count);
  } else {
    link = fmt::format("(              {:>6}/{:>8})", st, ph);
  }
  std::string remote;
  if (const DiscoveredPort* r = remote_of(f, p)) {
    const DiscoveredNode& rn = f.nodes[static_cast<size_t>(p.remote_node)];
    const auto [wm, sm] = could_be(f, node, p, *r);
    remote = fmt::format("{}{:6} {:4}[{:>2}] \"{}\" ({} {})\n", a.line ? fmt::format("0x{:016x} ", r->guid) : "",
                         r->base_lid ? r->base_lid : rn.sma_lid, r->num, "", rn.description, wm, sm);
  } else {
    remote = down ? "           [  ] \"\" ( )\n" : "    \"Port not available\"\n";
  }
  if (a.line) o += fmt::format("0x{:016x} \"{:>30}\" ", p.guid, n.description);
  else o += "      ";
  if (n.type != 2) {
    if (!a.line) o += fmt::format("0x{:016x} ", p.guid);
    o += fmt::format("{:6} {:4}[{:>2}] =={}==>  {}", p.base_lid, p.num, "", link, remote);
  } else {
    o += fmt::format("{:6} {:4}[{:>2}] =={}==>  {}", n.sma_lid, p.num, "", link, remote);
  }
}

std::string linkinfo(const DiscoveredFabric& f, const LinkInfoArgs& a, const std::vector<int>& which) {
  std::string o;
  for (int i : which) {
    const DiscoveredNode& n = f.nodes[static_cast<size_t>(i)];
    bool header = false;
    for (uint8_t p = 1; p <= n.num_ports; ++p) {
      const DiscoveredPort* port = port_of(f, i, p);
      if (!port) continue;
      if (a.down_only && port->info.port_state != mad::PortState::kDown) continue;
      if (!header && !a.line) {
        if (n.type == 2) {
          const DiscoveredPort* p0 = port_of(f, i, 0);
          o += fmt::format("Switch: 0x{:016x} {}:\n", p0 ? p0->guid : n.info.port_guid.value(), n.description);
        } else {
          o += fmt::format("{}: {}:\n", n.type == 1 ? "CA" : "Router", n.description);
        }
        header = true;
      }
      print_link_port(o, f, i, *port, a);
    }
  }
  return o;
}

// The real tools' message and status when discovery fails (3 when there is no daemon).
void discovery_failed(CommandContext& ctx, const Status& s, std::string_view prefix, int status) {
  fmt::print(stderr, "{}: {}\n", prefix, s.message());
  ctx.exit_code = s.code() == Code::kUnavailable ? 3 : status;
}

void write_out(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

void register_discover(CLI::App& app, CommandContext& ctx) {
  // ---- netdiscover ----
  {
    auto a = std::make_shared<DiscoverArgs>();
    auto flags = std::make_shared<std::array<bool, 7>>();  // l H S R p g f
    auto file = std::make_shared<std::string>();
    CLI::App* c = app.add_subcommand("netdiscover", "Discover the fabric and print its topology (ibnetdiscover)");
    add_common(c, *a);
    c->add_flag("-l,--list", (*flags)[0], "list of connected nodes");
    c->add_flag("-H,--Hca_list", (*flags)[1], "list of connected CAs");
    c->add_flag("-S,--Switch_list", (*flags)[2], "list of connected switches");
    c->add_flag("-R,--Router_list", (*flags)[3], "list of connected routers");
    c->add_flag("-p,--ports", (*flags)[4], "obtain a ports report");
    c->add_flag("-g,--grouping", (*flags)[5], "show grouping");
    c->add_flag("-f,--full", (*flags)[6], "show full information (ports' speed and width, vlcap)");
    c->add_option("topology-file", *file, "write the topology here instead of to stdout");
    c->callback([a, flags, file, &ctx] {
      auto f = run_discovery(ctx, *a);
      if (!f) return discovery_failed(ctx, f.error(), "ibnetdiscover: iberror: failed: discover failed", 255);
      const auto& [l, h, s, r, p, g, full] = *flags;
      std::string text;
      if (a->json) text = fabric_json(*f).dump(1) + "\n";
      else if (p) text = ports_report(*f);
      else if (l || h || s || r) text = list_nodes(*f, l || h, l || s, l || r);
      else text = topology(*f, g, full);
      if (!file->empty() && !p && !(l || h || s || r)) {
        std::ofstream out(*file);
        if (!(out << text)) {
          fmt::print(stderr, "ibnetdiscover: iberror: failed: can't open file {} for writing\n", *file);
          ctx.exit_code = 255;
        }
        return;
      }
      write_out(text);
    });
  }
  // ---- hosts / switches / nodes ----
  struct Lister {
    const char* name;
    const char* help;
    bool cas, switches;
  };
  for (const Lister& l : {Lister{"hosts", "List the fabric's CAs (ibhosts)", true, false},
                          Lister{"switches", "List the fabric's switches (ibswitches)", false, true},
                          Lister{"nodes", "List the fabric's nodes (ibnodes)", true, true}}) {
    auto a = std::make_shared<DiscoverArgs>();
    CLI::App* c = app.add_subcommand(l.name, l.help);
    add_common(c, *a);
    c->callback([a, l, &ctx] {
      auto f = run_discovery(ctx, *a);
      if (!f) return discovery_failed(ctx, f.error(), "ibnetdiscover: iberror: failed: discover failed", 255);
      if (a->json) {
        nlohmann::json all = fabric_json(*f)["nodes"], out = nlohmann::json::array();
        for (auto& n : all)
          if ((l.cas && n["type"] == "ca") || (l.switches && n["type"] == "switch")) out.push_back(n);
        write_out(out.dump(1) + "\n");
        return;
      }
      write_out((l.cas ? host_lines(*f) : "") + (l.switches ? switch_lines(*f) : ""));
    });
  }
  // ---- linkinfo ----
  {
    auto a = std::make_shared<DiscoverArgs>();
    auto li = std::make_shared<LinkInfoArgs>();
    CLI::App* c = app.add_subcommand("linkinfo", "Every link's state, width and speed (iblinkinfo)");
    add_common(c, *a);
    c->add_flag("-d,--down", li->down_only, "print only down links");
    c->add_flag("-l,--line", li->line, "print all information for each link on a single line");
    c->add_flag("-p,--additional", li->additional, "print additional port settings (HoqLife, VLStallCount)");
    c->add_flag("--switches-only", li->switches_only, "output only switches");
    c->add_flag("--cas-only", li->cas_only, "output only CAs");
    c->add_option("-S,-G,--port-guid", li->guid, "print only the node with this port GUID");
    c->callback([a, li, &ctx] {
      auto f = run_discovery(ctx, *a);
      if (!f) return discovery_failed(ctx, f.error(), "discover failed", 1);
      std::vector<int> which;
      if (!li->guid.empty()) {
        uint64_t g = 0;
        try {
          g = std::stoull(li->guid, nullptr, 0);
        } catch (...) {
          g = 0;
        }
        for (int i : f->listing())
          for (const auto& p : f->nodes[static_cast<size_t>(i)].ports)
            if (p && p->guid == g && which.empty()) which.push_back(i);
        if (which.empty()) {
          fmt::print(stderr, "Failed to find port: {}\n", li->guid);
          return;
        }
      } else {
        which = f->listing(li->switches_only ? 2 : li->cas_only ? 1 : 0);
      }
      if (a->json) {
        nlohmann::json all = fabric_json(*f)["nodes"], out = nlohmann::json::array();
        for (int i : which) {
          const std::string g = fmt::format("0x{:016x}", f->nodes[static_cast<size_t>(i)].guid);
          for (auto& n : all)
            if (n["guid"] == g) out.push_back(n);
        }
        write_out(out.dump(1) + "\n");
        return;
      }
      write_out(linkinfo(*f, *li, which));
    });
  }
}

}  // namespace softib::tools
