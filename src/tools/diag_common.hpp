// What softib's diagnostic commands share, as infiniband-diags share ibdiag_common and
// libibumad: the CAs of the node this shell is on (softib0, softib1, ... as umad names a
// host's devices), their ports' state as the kernel's sysfs would show it (rate, state
// names), the session a MAD-speaking tool opens on a local port, and the real tools' ways
// of failing (ibwarn/ibpanic lines on stderr, "prog: iberror: failed: ..." on stdout, exit
// status 255 from exit(-1)).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "ipc/client.hpp"
#include "mad/port_info.hpp"
#include "tools/command.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

// ibdiags' failure status: exit(-1).
inline constexpr int kDiagFailure = 255;

struct LocalPort {
  uint8_t number = 0;
  ipc::PortStateMsg state;
  mad::PortInfo info;
  // A RoCE fabric's port (softibd --roce): Ethernet, no LID or SM to show (its PortInfo's
  // LIDs are the shared-memory link's internal addresses).
  bool ethernet() const { return state.link_layer == 2; }
  uint16_t lid() const { return ethernet() ? 0 : info.lid.value(); }
  uint16_t sm_lid() const { return ethernet() ? 0 : info.master_sm_lid.value(); }
  uint8_t lmc() const { return ethernet() ? 0 : info.lmc; }
  std::string_view link_layer() const { return ethernet() ? "Ethernet" : "InfiniBand"; }
};

struct LocalCa {
  std::string name;  // softib0, ...
  ipc::NodeEntry node;
  std::vector<LocalPort> ports;  // 1..num_ports
};

// The CAs of the node `host` names (this_host rules). Errors: the daemon's, NotFound.
Result<std::vector<LocalCa>> local_cas(ipc::Connection& c, std::string_view host);

// "softib<i>".
std::string ca_name(size_t index);

// The port's rate as the kernel's sysfs `rate` file gives it (IBA width x lane speed):
// tenths of Gb/s, and the "(4X EDR)" part.
struct PortRate {
  uint32_t tenths_gbps = 0;  // 1000 for 4X EDR
  int width = 0;             // lanes: 1, 2, 4, 8, 12 (0: unknown)
  std::string speed;         // "", " DDR", " QDR", " FDR", " EDR", " HDR", " NDR"
  std::string to_string() const;  // "100 Gb/sec (4X EDR)"
};
PortRate port_rate(const mad::PortInfo& pi);

// IBA 14.2.5.6 LinkWidth / verbs ibv_port_attr.active_speed encodings of the active link.
uint8_t verbs_active_speed(const mad::PortInfo& pi);

// libibmad's diagnostics. ibwarn("mad_rpc", "...") prints "ibwarn: [pid] mad_rpc: ...".
void ibwarn(std::string_view function, std::string_view message);
// "ibpanic: [pid] function: message: strerror" on stderr; returns kDiagFailure.
int ibpanic(std::string_view function, std::string_view message, std::string_view strerror_text);
// ibexit: "prog: iberror: failed: message" on stdout; returns kDiagFailure.
int iberror(std::string_view prog, std::string_view message);

// A MAD session on one of this host's ports, as mad_rpc_open_port(ca, port) opens it.
// `ca` empty: the first CA; `port` 0: its first port that is up (LinkUp), else port 1.
struct DiagSession {
  LocalCa ca;
  LocalPort port;
  std::optional<MadRpc> rpc;
  std::vector<ipc::NodeEntry> nodes;
};
// Errors come back already reported: the exit status to return (3 no daemon, 255 for what
// the real tool fails with).
struct OpenFailure {
  int exit_code = kDiagFailure;
};
Result<DiagSession, OpenFailure> open_diag_session(CommandContext& ctx, std::string_view prog,
                                                   std::string_view ca, int port, int timeout_ms);

// The text a MAD call failure leaves on stderr as libibmad's mad_rpc would print it, for
// the destination `to`: "_do_madrpc failed; dport (Lid 999)" after a timeout, "MAD
// completed with error status 0x..." for an error status.
void warn_rpc_failure(std::string_view function, const Status& s, const Destination& to);

}  // namespace softib::tools
