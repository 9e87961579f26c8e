#include "tools/diag_common.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "fabric/device_model.hpp"
#include "tools/host.hpp"

namespace softib::tools {

std::string ca_name(size_t index) { return fmt::format("softib{}", index); }

Result<std::vector<LocalCa>> local_cas(ipc::Connection& c, std::string_view host) {
  auto nodes = c.list_nodes();
  if (!nodes) return Err{nodes.error()};
  auto node = this_host(*nodes, host);
  if (!node) return Err{node.error()};
  // A net-file node is one HCA: the host's devices are its CA nodes, one here.
  LocalCa ca;
  ca.name = ca_name(0);
  ca.node = *node;
  for (uint8_t p = 1; p <= node->num_ports; ++p) {
    auto st = c.query_port(node->index, p);
    if (!st) return Err{st.error()};
    auto pi = mad::decode<mad::PortInfo>(st->port_info);
    if (!pi) return Status(Code::kParseError, fmt::format("PortInfo of port {}: {}", p, pi.error().to_string()));
    ca.ports.push_back(LocalPort{p, *st, *pi});
  }
  return std::vector<LocalCa>{std::move(ca)};
}

namespace {

int width_lanes(uint8_t link_width_active) {
  switch (link_width_active) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

bool extended_speed(const mad::PortInfo& pi) {
  return (pi.capability_mask & fabric::capmask::kIsExtendedSpeedsSupported) && pi.link_speed_ext_active != 0;
}

}  // namespace

PortRate port_rate(const mad::PortInfo& pi) {
  // The kernel's rate_show (drivers/infiniband/core/sysfs.c): lane rate in tenths of Gb/s
  // times the lanes.
  PortRate r;
  uint32_t lane = 25;
  if (extended_speed(pi)) {
    switch (pi.link_speed_ext_active) {
      case 1: lane = 140, r.speed = " FDR"; break;
      case 2: lane = 250, r.speed = " EDR"; break;
      case 4: lane = 500, r.speed = " HDR"; break;
      case 8: lane = 1000, r.speed = " NDR"; break;
      default: break;
    }
  } else {
    switch (pi.link_speed_active) {
      case 2: lane = 50, r.speed = " DDR"; break;
      case 4: lane = 100, r.speed = " QDR"; break;
      default: break;
    }
  }
  r.width = width_lanes(pi.link_width_active);
  r.tenths_gbps = lane * static_cast<uint32_t>(r.width);
  return r;
}

std::string PortRate::to_string() const {
  return fmt::format("{}{} Gb/sec ({}X{})", tenths_gbps / 10, tenths_gbps % 10 ? ".5" : "", width, speed);
}

uint8_t verbs_active_speed(const mad::PortInfo& pi) {
  if (extended_speed(pi)) {
    switch (pi.link_speed_ext_active) {
      case 1: return 16;   // IB_SPEED_FDR
      case 2: return 32;   // IB_SPEED_EDR
      case 4: return 64;   // IB_SPEED_HDR
      case 8: return 128;  // IB_SPEED_NDR
      default: break;
    }
  }
  switch (pi.link_speed_active) {
    case 2: return 2;
    case 4: return 4;
    default: return 1;
  }
}

void ibwarn(std::string_view function, std::string_view message) {
  std::fflush(stdout);
  fmt::print(stderr, "ibwarn: [{}] {}: {}\n", ::getpid(), function, message);
}

int ibpanic(std::string_view function, std::string_view message, std::string_view strerror_text) {
  std::fflush(stdout);
  fmt::print(stderr, "ibpanic: [{}] {}: {}: {}\n", ::getpid(), function, message, strerror_text);
  return kDiagFailure;
}

int iberror(std::string_view prog, std::string_view message) {
  fmt::print("{}: iberror: failed: {}\n", prog, message);
  std::fflush(stdout);
  return kDiagFailure;
}

void warn_rpc_failure(std::string_view function, const Status& s, const Destination& to) {
  // libibmad prints only transport failures (timeouts); an error status is silent unless
  // its error reporting is on.
  if (s.code() == Code::kTimeout || s.code() == Code::kUnavailable)
    ibwarn(function, fmt::format("_do_madrpc failed; dport ({})", to.to_string()));
}

Result<DiagSession, OpenFailure> open_diag_session(CommandContext& ctx, std::string_view prog,
                                                   std::string_view ca, int port, int timeout_ms) {
  auto c = ipc::Connection::open(ctx.fabric, std::string(prog));
  if (!c) return OpenFailure{ctx.fail(c.error())};
  DiagSession s;
  auto nodes = c->list_nodes();
  if (!nodes) return OpenFailure{ctx.fail(nodes.error())};
  s.nodes = *nodes;
  auto cas = local_cas(*c, ctx.host);
  if (!cas) return OpenFailure{ctx.fail(cas.error())};
  const LocalCa* chosen = nullptr;
  for (const auto& one : *cas)
    if (ca.empty() || one.name == ca) chosen = chosen ? chosen : &one;
  auto open_failed = [&] {
    ibwarn("umad_get_port", fmt::format("can't open UMAD port ({},{})", ca.empty() ? "(null)" : std::string(ca), port));
    return OpenFailure{iberror(prog, fmt::format("Failed to open '{}' port '{}'", ca.empty() ? "(null)" : std::string(ca), port))};
  };
  if (!chosen) return open_failed();
  s.ca = *chosen;
  if (port < 0 || port > static_cast<int>(s.ca.ports.size())) return open_failed();
  if (port == 0) {
    // umad's choice for port 0: the first Active port, else the first with a physical link.
    const LocalPort* pick = nullptr;
    for (const auto& p : s.ca.ports)
      if (!pick && p.info.port_state == mad::PortState::kActive) pick = &p;
    for (const auto& p : s.ca.ports)
      if (!pick && p.info.port_physical_state == mad::PhysPortState::kLinkUp) pick = &p;
    if (!pick && !s.ca.ports.empty()) pick = &s.ca.ports.front();
    if (!pick) return open_failed();
    s.port = *pick;
  } else {
    s.port = s.ca.ports[static_cast<size_t>(port - 1)];
  }
  RpcOptions o;
  if (timeout_ms > 0) o.timeout = std::chrono::milliseconds(timeout_ms);
  auto rpc = MadRpc::attach(std::move(*c), s.ca.node.index, s.port.number, o);
  if (!rpc) return OpenFailure{ctx.fail(rpc.error())};
  s.rpc.emplace(std::move(*rpc));
  return s;
}

}  // namespace softib::tools
