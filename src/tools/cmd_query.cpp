// softib sminfo | perfquery | ping: infiniband-diags' sminfo, perfquery and ibping (rdma-core
// infiniband-diags/sminfo.c, perfquery.c, ibping.c) over softibd, from a port of the node
// this shell is on. Output, messages and exit statuses are the real tools'.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/clock.hpp"
#include "mad/class_port_info.hpp"
#include "mad/codec.hpp"
#include "mad/mgmt_class.hpp"
#include "mad/node_info.hpp"
#include "mad/pma_mad.hpp"
#include "mad/port_counters.hpp"
#include "mad/port_counters_extended.hpp"
#include "mad/sm_info.hpp"
#include "mad/switch_info.hpp"
#include "mad/vendor_mad.hpp"
#include "tools/command.hpp"
#include "tools/diag_common.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

namespace {

constexpr uint8_t kSmpClass = 0x01, kPmaClass = 0x04;
constexpr uint8_t kGet = 0x01, kSet = 0x02;
constexpr size_t kSmpData = 64, kPmaData = 64, kVendorData = 40;
constexpr uint16_t kNodeInfoAttr = 0x0011, kSwitchInfoAttr = 0x0012, kSmInfoAttr = 0x0020;
constexpr uint16_t kClassPortInfoAttr = 0x0001, kPortCountersAttr = 0x0012, kPortCountersExtAttr = 0x001D;
// PerfMgt ClassPortInfo.CapabilityMask (IBA 16.1.3.1, libibmad IB_PM_*).
constexpr uint16_t kAllPortSelect = 1u << 8, kExtWidth = 1u << 9, kExtWidthNoIetf = 1u << 10;
constexpr uint16_t kXmitWaitSupported = 1u << 12, kQp1DropSupported = 1u << 14;
constexpr uint32_t kAddlPortCtrsExt = 1u << 1;  // CapabilityMask2 (after the >> 5)
constexpr int kAllPorts = 0xFF;

std::span<const uint8_t> data_of(const MadBytes& m, size_t at) { return std::span<const uint8_t>(m).subspan(at); }

uint16_t mad_status(const MadBytes& m) { return static_cast<uint16_t>((m[4] << 8) | m[5]); }

// A call as libibmad's mad_rpc makes it: a transport failure is warned about; an error
// status is a (silent) failure too.
std::optional<MadBytes> rpc_call(MadRpc& rpc, const MadRequest& r, std::string_view function) {
  auto got = rpc.call(r);
  if (!got) {
    warn_rpc_failure(function, got.error(), r.to);
    return std::nullopt;
  }
  // SMPs: the status without the D bit's neighbour (IB_DRSMP_STATUS_F is 15 bits).
  const uint16_t status = mad_status(*got) & (r.mgmt_class == kSmpClass ? 0x7FFF : 0xFFFF);
  if (status != 0) return std::nullopt;
  return *got;
}

bool parse_uint(std::string_view s, unsigned long& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  const std::string t(s);
  errno = 0;
  v = std::strtoul(t.c_str(), &end, 0);
  return errno == 0 && end && *end == '\0';
}

// ---- sminfo ----

struct CommonArgs {
  std::string ca;
  int port = 0;
  int timeout_ms = 0;
  bool directed = false, guid = false, lid = false, json = false;
};

void add_common(CLI::App* cmd, CommonArgs& c, bool with_directed) {
  cmd->add_option("-C,--Ca", c.ca, "CA name to use (softib0, ...)");
  cmd->add_option("-P,--Port", c.port, "CA port number to use");
  cmd->add_option("-t,--timeout", c.timeout_ms, "timeout in ms");
  if (with_directed) cmd->add_flag("-D,--Direct", c.directed, "use Direct address argument");
  cmd->add_flag("-G,--Guid", c.guid, "use GUID address argument");
  cmd->add_flag("-L,--Lid", c.lid, "use LID address argument (default)");
  cmd->add_flag("--json", c.json, "JSON output");
}

// resolve_portid_str: the destination or IBEXIT("can't resolve destination port ...").
std::optional<Destination> resolve(DiagSession& s, const CommonArgs& c, std::string_view text, std::string_view prog,
                                   int& exit_code) {
  auto d = parse_destination(text, c.directed, c.guid, &s.nodes, &*s.rpc);
  if (d) return *d;
  if (c.guid && (d.error().code() == Code::kTimeout || d.error().code() == Code::kUnavailable)) {
    // ib_path_query_via's SA call failed.
    if (d.error().code() == Code::kTimeout)
      ibwarn("mad_rpc_rmpp", fmt::format("_do_madrpc failed; dport (Lid {})", s.rpc->sm_lid()));
    ibwarn("ib_path_query_via", "sa call path_query failed");
  }
  exit_code = iberror(prog, fmt::format("can't resolve destination port {}", text));
  return std::nullopt;
}

struct SminfoArgs {
  CommonArgs c;
  std::string dest, modifier;
  int state = 2, priority = 0;
  unsigned activity = 0;
};

int run_sminfo(const SminfoArgs& a, CommandContext& ctx) {
  auto s = open_diag_session(ctx, "sminfo", a.c.ca, a.c.port, a.c.timeout_ms);
  if (!s) return s.error().exit_code;
  Destination to;
  if (!a.dest.empty()) {
    int rc = 0;
    auto d = resolve(*s, a.c, a.dest, "sminfo", rc);
    if (!d) return rc;
    to = *d;
  } else {
    (void)s->rpc->refresh_port();
    if (s->rpc->sm_lid() == 0) return iberror("sminfo", "can't resolve sm port (null)");
    to = Destination::to_lid(s->rpc->sm_lid());
  }
  const int mod = a.modifier.empty() ? 0 : std::atoi(a.modifier.c_str());
  MadRequest r;
  r.to = to;
  r.mgmt_class = kSmpClass;
  r.attribute_id = kSmInfoAttr;
  r.attribute_modifier = static_cast<uint32_t>(mod);
  if (mod) {
    mad::SMInfo set;
    set.act_count = a.activity;
    set.priority = static_cast<uint8_t>(a.priority & 0xF);
    set.sm_state = static_cast<mad::SmState>(a.state & 0xF);
    r.method = kSet;
    r.data = mad::encode(set);
  } else {
    r.method = kGet;
  }
  auto got = rpc_call(*s->rpc, r, "mad_rpc");
  if (!got) return iberror("sminfo", "query");
  auto info = mad::decode<mad::SMInfo>(data_of(*got, kSmpData));
  if (!info) return iberror("sminfo", "query");
  const unsigned state = static_cast<unsigned>(info->sm_state);
  static constexpr std::string_view kStates[] = {"SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"};
  const std::string_view state_text = state < std::size(kStates) ? kStates[state] : "???";
  if (a.c.json) {
    std::cout << nlohmann::json{{"sm_lid", to.lid},
                                {"sm_guid", fmt::format("0x{:x}", info->guid.value())},
                                {"activity_count", info->act_count},
                                {"priority", info->priority},
                                {"state", state},
                                {"state_name", state_text}}
                     .dump()
              << "\n";
    return 0;
  }
  fmt::print("sminfo: sm lid {} sm guid 0x{:x}, activity count {} priority {} state {} {}\n", to.lid,
             info->guid.value(), info->act_count, info->priority, state, state_text);
  return 0;
}

// ---- perfquery ----

struct PerfArgs {
  CommonArgs c;
  std::vector<std::string> positional;  // [lid|guid [port(s) [reset_mask]]]
  bool extended = false, all_ports = false, loop_ports = false, reset = false, reset_only = false;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    out.push_back(text.substr(at, nl - at + 1));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

// dump_perfcounters_ext: the traffic counters; the unicast/multicast ones when ExtWidth is
// supported; CounterSelect2 and the error counters when CapabilityMask2 says so.
std::string dump_ext(std::span<const uint8_t> raw, uint16_t cap, uint32_t cap2) {
  const auto lines = lines_of(mad::dump<mad::PortCountersExtended>(raw));
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i < 6 || (i < 10 && (cap & kExtWidth)) || (i >= 10 && (cap2 & kAddlPortCtrsExt))) out += lines[i];
  }
  return out;
}

template <class T>
T add_saturating(T a, uint64_t b, uint64_t max) {
  const uint64_t s = static_cast<uint64_t>(a) + b;
  return static_cast<T>(s < a || s > max ? max : s);
}

void aggregate(mad::PortCounters& t, const mad::PortCounters& p) {
  t.port_select = p.port_select;
  t.counter_select = p.counter_select;
  t.symbol_error_counter = add_saturating(t.symbol_error_counter, p.symbol_error_counter, 0xFFFF);
  t.link_error_recovery_counter = add_saturating(t.link_error_recovery_counter, p.link_error_recovery_counter, 0xFF);
  t.link_downed_counter = add_saturating(t.link_downed_counter, p.link_downed_counter, 0xFF);
  t.port_rcv_errors = add_saturating(t.port_rcv_errors, p.port_rcv_errors, 0xFFFF);
  t.port_rcv_remote_physical_errors = add_saturating(t.port_rcv_remote_physical_errors, p.port_rcv_remote_physical_errors, 0xFFFF);
  t.port_rcv_switch_relay_errors = add_saturating(t.port_rcv_switch_relay_errors, p.port_rcv_switch_relay_errors, 0xFFFF);
  t.port_xmit_discards = add_saturating(t.port_xmit_discards, p.port_xmit_discards, 0xFFFF);
  t.port_xmit_constraint_errors = add_saturating(t.port_xmit_constraint_errors, p.port_xmit_constraint_errors, 0xFF);
  t.port_rcv_constraint_errors = add_saturating(t.port_rcv_constraint_errors, p.port_rcv_constraint_errors, 0xFF);
  t.local_link_integrity_errors = add_saturating(t.local_link_integrity_errors, p.local_link_integrity_errors, 0xF);
  t.excessive_buffer_overrun_errors = add_saturating(t.excessive_buffer_overrun_errors, p.excessive_buffer_overrun_errors, 0xF);
  t.qp1_dropped = add_saturating(t.qp1_dropped, p.qp1_dropped, 0xFFFF);
  t.vl15_dropped = add_saturating(t.vl15_dropped, p.vl15_dropped, 0xFFFF);
  t.port_xmit_data = add_saturating(t.port_xmit_data, p.port_xmit_data, 0xFFFFFFFF);
  t.port_rcv_data = add_saturating(t.port_rcv_data, p.port_rcv_data, 0xFFFFFFFF);
  t.port_xmit_pkts = add_saturating(t.port_xmit_pkts, p.port_xmit_pkts, 0xFFFFFFFF);
  t.port_rcv_pkts = add_saturating(t.port_rcv_pkts, p.port_rcv_pkts, 0xFFFFFFFF);
  t.port_xmit_wait = add_saturating(t.port_xmit_wait, p.port_xmit_wait, 0xFFFFFFFF);
}

void aggregate(mad::PortCountersExtended& t, const mad::PortCountersExtended& p) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  t.counter_select = p.counter_select;
  t.port_xmit_data = add_saturating(t.port_xmit_data, p.port_xmit_data, kMax);
  t.port_rcv_data = add_saturating(t.port_rcv_data, p.port_rcv_data, kMax);
  t.port_xmit_pkts = add_saturating(t.port_xmit_pkts, p.port_xmit_pkts, kMax);
  t.port_rcv_pkts = add_saturating(t.port_rcv_pkts, p.port_rcv_pkts, kMax);
  t.port_unicast_xmit_pkts = add_saturating(t.port_unicast_xmit_pkts, p.port_unicast_xmit_pkts, kMax);
  t.port_unicast_rcv_pkts = add_saturating(t.port_unicast_rcv_pkts, p.port_unicast_rcv_pkts, kMax);
  t.port_multicast_xmit_pkts = add_saturating(t.port_multicast_xmit_pkts, p.port_multicast_xmit_pkts, kMax);
  t.port_multicast_rcv_pkts = add_saturating(t.port_multicast_rcv_pkts, p.port_multicast_rcv_pkts, kMax);
}

class PerfQuery {
 public:
  PerfQuery(const PerfArgs& a, DiagSession& s, Destination to, uint16_t cap, uint32_t cap2)
      : a_(a), s_(s), to_(to), cap_(cap), cap2_(cap2) {}

  MadRequest request(uint16_t attr, int port, uint8_t method, uint32_t mask) const {
    MadRequest r;
    r.to = to_;
    r.mgmt_class = kPmaClass;
    r.method = method;
    r.attribute_id = attr;
    r.data.assign(mad::kPmaDataSize, 0);
    r.data[1] = static_cast<uint8_t>(port);
    if (method == kSet) {
      r.data[2] = static_cast<uint8_t>(mask >> 8);
      r.data[3] = static_cast<uint8_t>(mask);
      if (attr == kPortCountersExtAttr) {
        const uint32_t m2 = mask >> 16;
        for (int i = 0; i < 4; ++i) r.data[4 + static_cast<size_t>(i)] = static_cast<uint8_t>(m2 >> (24 - 8 * i));
      } else {
        r.data[18] = static_cast<uint8_t>(mask >> 16);  // CounterSelect2
      }
    }
    return r;
  }

  // dump_perfcounters; false: IBEXIT'd (exit_code set).
  bool dump(int port, bool aggregate_only) {
    if (!a_.extended) {
      auto got = rpc_call(*s_.rpc, request(kPortCountersAttr, port, kGet, 0), "mad_rpc");
      if (!got) return fail("perfquery");
      auto pc = mad::decode<mad::PortCounters>(data_of(*got, kPmaData));
      if (!pc) return fail("perfquery");
      if (!(cap_ & kXmitWaitSupported)) pc->port_xmit_wait = 0;
      if (aggregate_only) {
        aggregate(pc_total_, *pc);
        return true;
      }
      emit(fmt::format("# Port counters: {} port {} (CapMask: 0x{:02X})\n{}", to_.to_string(), port, cap_,
                       mad::dump(*pc)),
           port, mad::encode(*pc), false);
      return true;
    }
    if (!(cap_ & kExtWidth) && !(cap_ & kExtWidthNoIetf))
      ibwarn("dump_perfcounters",
             fmt::format("PerfMgt ClassPortInfo CapMask 0x{:02X}; No extended counter support indicated\n", cap_));
    auto got = rpc_call(*s_.rpc, request(kPortCountersExtAttr, port, kGet, 0), "mad_rpc");
    if (!got) return fail("perfextquery");
    auto x = mad::decode<mad::PortCountersExtended>(data_of(*got, kPmaData));
    if (!x) return fail("perfextquery");
    if (aggregate_only) {
      aggregate(x_total_, *x);
      return true;
    }
    const auto raw = mad::encode(*x);
    emit(fmt::format("# Port extended counters: {} port {} (CapMask: 0x{:02X} CapMask2: 0x{:07X})\n{}",
                     to_.to_string(), port, cap_, cap2_, dump_ext(raw, cap_, cap2_)),
         port, raw, true);
    return true;
  }

  void output_aggregate() {
    if (!a_.extended) {
      pc_total_.port_select = kAllPorts;
      emit(fmt::format("# Port counters: {} port {} (CapMask: 0x{:02X})\n{}", to_.to_string(), kAllPorts, cap_,
                       mad::dump(pc_total_)),
           kAllPorts, mad::encode(pc_total_), false);
    } else {
      x_total_.port_select = kAllPorts;
      const auto raw = mad::encode(x_total_);
      emit(fmt::format("# Port extended counters: {} port {} (CapMask: 0x{:02X} CapMask2: 0x{:07X})\n{}",
                       to_.to_string(), kAllPorts, cap_, cap2_, dump_ext(raw, cap_, cap2_)),
           kAllPorts, raw, true);
    }
  }

  bool reset(int port, uint32_t mask) {
    const uint16_t attr = a_.extended ? kPortCountersExtAttr : kPortCountersAttr;
    auto got = rpc_call(*s_.rpc, request(attr, port, kSet, mask), "mad_rpc");
    if (!got) return fail(a_.extended ? "perf ext reset" : "perf reset");
    return true;
  }

  int exit_code() const { return exit_code_; }
  const nlohmann::json& json() const { return json_; }

 private:
  bool fail(std::string_view what) {
    exit_code_ = iberror("perfquery", what);
    return false;
  }

  void emit(const std::string& text, int port, const std::vector<uint8_t>& raw, bool extended) {
    if (!a_.c.json) {
      fmt::print("{}", text);
      return;
    }
    // The dump's "Label:....value" lines as an object, in the dump's order.
    nlohmann::ordered_json counters;
    for (const auto& line : lines_of(extended ? dump_ext(raw, cap_, cap2_)
                                              : mad::dump<mad::PortCounters>(wire::ByteSpan(raw)))) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      size_t v = colon + 1;
      while (v < line.size() && line[v] == '.') ++v;
      std::string value = line.substr(v);
      while (!value.empty() && value.back() == '\n') value.pop_back();
      unsigned long n = 0;
      if (parse_uint(value, n) && !value.starts_with("0x")) counters[line.substr(0, colon)] = n;
      else counters[line.substr(0, colon)] = value;
    }
    json_.push_back({{"lid", to_.lid},
                     {"port", port},
                     {"extended", extended},
                     {"cap_mask", fmt::format("0x{:04X}", cap_)},
                     {"counters", nlohmann::json::parse(counters.dump())}});
  }

  const PerfArgs& a_;
  DiagSession& s_;
  Destination to_;
  uint16_t cap_;
  uint32_t cap2_;
  int exit_code_ = 0;
  mad::PortCounters pc_total_;
  mad::PortCountersExtended x_total_;
  nlohmann::json json_ = nlohmann::json::array();
};

int run_perfquery(const PerfArgs& a, CommandContext& ctx) {
  const auto& pos = a.positional;
  if (pos.size() > 3) {
    fmt::print(stderr, "perfquery: too many arguments\n");
    return 2;
  }
  int port = a.all_ports ? kAllPorts : 0;
  std::vector<int> ports;
  if (pos.size() > 1) {
    const std::string& p = pos[1];
    unsigned long v = 0;
    if (p.find(',') != std::string::npos) {
      size_t at = 0;
      while (at <= p.size()) {
        const size_t comma = std::min(p.find(',', at), p.size());
        ports.push_back(static_cast<int>(std::strtoul(p.substr(at, comma - at).c_str(), nullptr, 0)));
        at = comma + 1;
      }
      port = ports.front();
    } else if (const size_t dash = p.find('-'); dash != std::string::npos) {
      const int lo = static_cast<int>(std::strtoul(p.substr(0, dash).c_str(), nullptr, 0));
      const int hi = static_cast<int>(std::strtoul(p.substr(dash + 1).c_str(), nullptr, 0));
      if (lo >= hi) return iberror("perfquery", "max port must be greater than min port in range");
      for (int i = lo; i <= hi; ++i) ports.push_back(i);
      port = ports.front();
    } else {
      port = parse_uint(p, v) ? static_cast<int>(v) : static_cast<int>(std::strtoul(p.c_str(), nullptr, 0));
    }
  }
  uint32_t mask = 0xffff;
  if (pos.size() > 2) mask = static_cast<uint32_t>(std::strtoull(pos[2].c_str(), nullptr, 0));

  auto s = open_diag_session(ctx, "perfquery", a.c.ca, a.c.port, a.c.timeout_ms);
  if (!s) return s.error().exit_code;
  Destination to;
  if (!pos.empty()) {
    int rc = 0;
    auto d = resolve(*s, a.c, pos[0], "perfquery", rc);
    if (!d) return rc;
    to = *d;
  } else {
    // resolve_self: this port's LID and number.
    (void)s->rpc->refresh_port();
    to = Destination::to_lid(s->rpc->local_lid());
    port = s->port.number;
  }

  // PerfMgt ClassPortInfo is a required attribute.
  MadRequest cpi_req;
  cpi_req.to = to;
  cpi_req.mgmt_class = kPmaClass;
  cpi_req.method = kGet;
  cpi_req.attribute_id = kClassPortInfoAttr;
  cpi_req.data.assign(mad::kPmaDataSize, 0);
  cpi_req.data[1] = static_cast<uint8_t>(port);
  auto cpi = rpc_call(*s->rpc, cpi_req, "mad_rpc");
  if (!cpi) return iberror("perfquery", "classportinfo query");
  const auto cpi_data = data_of(*cpi, kPmaData);
  const uint16_t cap = static_cast<uint16_t>((cpi_data[2] << 8) | cpi_data[3]);
  const uint32_t cap2 = ((static_cast<uint32_t>(cpi_data[4]) << 24) | (static_cast<uint32_t>(cpi_data[5]) << 16) |
                         (static_cast<uint32_t>(cpi_data[6]) << 8) | cpi_data[7]) >> 5;

  bool all_ports_loop = false;
  if (!(cap & kAllPortSelect)) {
    if (!a.all_ports && port == kAllPorts) return iberror("perfquery", "AllPortSelect not supported");
    if (a.all_ports && port == kAllPorts) all_ports_loop = true;
  }
  const bool loop = all_ports_loop || (a.loop_ports && (a.all_ports || port == kAllPorts));
  int start_port = 1, num_ports = 0;
  if (loop) {
    MadRequest ni;
    ni.to = to;
    ni.mgmt_class = kSmpClass;
    ni.attribute_id = kNodeInfoAttr;
    auto got = rpc_call(*s->rpc, ni, "mad_rpc");
    if (!got) return iberror("perfquery", "smp query nodeinfo failed");
    auto info = mad::decode<mad::NodeInfo>(data_of(*got, kSmpData));
    if (!info) return iberror("perfquery", "smp query nodeinfo failed");
    num_ports = info->num_ports;
    if (!num_ports) return iberror("perfquery", "smp query nodeinfo: num ports invalid");
    if (info->node_type == mad::NodeType::kSwitch) {
      MadRequest si = ni;
      si.attribute_id = kSwitchInfoAttr;
      auto sg = rpc_call(*s->rpc, si, "mad_rpc");
      if (!sg) return iberror("perfquery", "smp query nodeinfo failed");
      auto sw = mad::decode<mad::SwitchInfo>(data_of(*sg, kSmpData));
      if (sw && sw->enhanced_port0) start_port = 0;
    }
    if (all_ports_loop && !a.loop_ports) ibwarn("main", "Emulating AllPortSelect by iterating through all ports");
  }

  PerfQuery q(a, *s, to, cap, cap2);
  if (!a.reset_only) {
    if (loop) {
      const bool agg = all_ports_loop && !a.loop_ports;
      for (int i = start_port; i <= num_ports; ++i)
        if (!q.dump(i, agg)) return q.exit_code();
      if (agg) q.output_aggregate();
    } else if (ports.size() > 1) {
      const bool agg = a.all_ports && !a.loop_ports;
      for (int p : ports)
        if (!q.dump(p, agg)) return q.exit_code();
      if (agg) q.output_aggregate();
    } else if (!q.dump(port, false)) {
      return q.exit_code();
    }
  }
  if (a.reset || a.reset_only) {
    if (pos.size() <= 2 && !a.extended) {
      if (cap & kXmitWaitSupported) mask |= 1u << 16;
      if (cap & kQp1DropSupported) mask |= 1u << 17;
    }
    if (a.extended) {
      mask |= 0xfff0000;
      if (cap & kXmitWaitSupported) mask |= 1u << 28;
      if (cap & kQp1DropSupported) mask |= 1u << 29;
    }
    if (loop) {
      for (int i = start_port; i <= num_ports; ++i)
        if (!q.reset(i, mask)) return q.exit_code();
    } else if (ports.size() > 1) {
      for (int p : ports)
        if (!q.reset(p, mask)) return q.exit_code();
    } else if (!q.reset(port, mask)) {
      return q.exit_code();
    }
  }
  if (a.c.json) std::cout << nlohmann::json{{"counters", q.json()}}.dump() << "\n";
  return 0;
}

// ---- ibping ----

struct PingArgs {
  CommonArgs c;
  std::string dest;
  unsigned long count = std::numeric_limits<unsigned long>::max();
  bool flood = false, server = false;
  uint32_t oui = mad::kOpenIbOui;
};

// SIGINT/SIGTERM as a pollable fd (blocked for the process while it lives), so the ping
// client reports and the server leaves cleanly instead of dying mid-MAD.
class SignalFd {
 public:
  SignalFd() {
    sigemptyset(&mask_);
    sigaddset(&mask_, SIGINT);
    sigaddset(&mask_, SIGTERM);
    sigprocmask(SIG_BLOCK, &mask_, &old_);
    fd_ = ::signalfd(-1, &mask_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalFd() {
    if (fd_ >= 0) ::close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;
  int fd() const { return fd_; }
  // Waits up to `ms` (-1: forever) for a signal or `other_fd` readable; true on a signal.
  bool wait(int ms, int other_fd = -1) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {other_fd, POLLIN, 0}};
    const int n = ::poll(p, other_fd >= 0 ? 2 : 1, ms);
    if (n <= 0 || !(p[0].revents & POLLIN)) return false;
    // Consume it: left pending, it would kill the process when the mask is restored.
    signalfd_siginfo info{};
    while (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    }
    return true;
  }
  bool pending() { return wait(0); }

 private:
  sigset_t mask_{}, old_{};
  int fd_ = -1;
};

// ibping's data: "<hostname>.<domainname>", the host name being the node's id.
std::string host_and_domain(const std::string& host) {
  char domain[256] = {};
  std::string s = host;
  if (::getdomainname(domain, sizeof domain - 1) < 0) std::snprintf(domain, sizeof domain, "?domainname?");
  if (domain[0]) s += std::string(".") + domain;
  if (s.size() > mad::kVendorDataSize - 1) s.resize(mad::kVendorDataSize - 1);
  return s;
}

int run_ping_server(const PingArgs& a, DiagSession& s, CommandContext& ctx) {
  SignalFd signals;
  auto agent = s.rpc->serve(mad::kOpenIbPingClass, 1, {kGet}, a.oui);
  if (!agent) {
    (void)ctx;
    return iberror("ibping", fmt::format("can't serve class {} on this port", mad::kOpenIbPingClass));
  }
  const std::string pong = host_and_domain(s.ca.node.id);
  for (;;) {
    for (;;) {
      auto req = s.rpc->next_request(std::chrono::milliseconds(0));
      if (!req) return ctx.fail(req.error());
      if (!*req) break;
      if ((*req)->status != 0 || (*req)->mad.size() < mad::kMadSize) continue;
      MadBytes resp{};
      std::copy_n((*req)->mad.begin(), mad::kMadSize, resp.begin());
      std::fill(resp.begin() + kVendorData, resp.end(), 0);
      std::copy(pong.begin(), pong.end(), resp.begin() + kVendorData);
      resp[4] = resp[5] = 0;  // status
      (void)s.rpc->respond(**req, resp);
    }
    if (signals.wait(-1, s.rpc->connection().fd())) return 0;
    pollfd p{s.rpc->connection().fd(), POLLIN, 0};
    if (::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
      return ctx.fail(Status(Code::kUnavailable, "softibd went away"));
  }
}

uint64_t now_us() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

int run_ping(const PingArgs& a, CommandContext& ctx) {
  if (a.dest.empty() && !a.server) {
    fmt::print(stderr, "Usage: softib ping [options] <dest lid|guid>\n");
    return kDiagFailure;  // ibdiag_show_usage exits -1
  }
  auto s = open_diag_session(ctx, "ibping", a.c.ca, a.c.port, a.c.timeout_ms);
  if (!s) return s.error().exit_code;
  if (a.server) return run_ping_server(a, *s, ctx);

  int rc = 0;
  auto to = resolve(*s, a.c, a.dest, "ibping", rc);
  if (!to) return rc;

  SignalFd signals;
  uint64_t minrtt = std::numeric_limits<uint64_t>::max(), maxrtt = 0, total_rtt = 0;
  uint64_t ntrans = 0, replied = 0, lost = 0;
  std::string last_host;
  nlohmann::json pongs = nlohmann::json::array();
  const uint64_t start = now_us();
  unsigned long count = a.count;
  while (count-- > 0) {
    if (signals.pending()) break;
    ++ntrans;
    MadRequest r;
    r.to = *to;
    r.mgmt_class = mad::kOpenIbPingClass;
    r.method = kGet;
    const uint64_t t0 = now_us();
    auto got = rpc_call(*s->rpc, r, "mad_rpc_rmpp");
    if (!got) {
      ++lost;
    } else {
      const uint64_t rtt = now_us() - t0;
      const auto data = data_of(*got, kVendorData);
      std::string host(reinterpret_cast<const char*>(data.data()),
                       strnlen(reinterpret_cast<const char*>(data.data()), data.size()));
      if (last_host.empty()) last_host = host;
      if (a.c.json) pongs.push_back({{"from", host}, {"lid", to->lid}, {"rtt_us", rtt}});
      else if (!a.flood)
        fmt::print("Pong from {} ({}): time {}.{:03} ms\n", host, to->to_string(), rtt / 1000, rtt % 1000);
      std::fflush(stdout);
      minrtt = std::min(minrtt, rtt);
      maxrtt = std::max(maxrtt, rtt);
      total_rtt += rtt;
      ++replied;
    }
    // ibping sleeps a second after every ping, the last one too, before it reports.
    if (!a.flood && signals.wait(1000)) break;
  }
  const uint64_t total_ms = (now_us() - start) / 1000;
  const uint64_t loss = lost != 0 ? lost * 100 / ntrans : 0;
  const uint64_t avg = replied ? total_rtt / replied : 0;
  const uint64_t mn = minrtt == std::numeric_limits<uint64_t>::max() ? 0 : minrtt;
  if (a.c.json) {
    std::cout << nlohmann::json{{"destination", to->to_string()}, {"host", last_host}, {"pongs", pongs},
                                {"transmitted", ntrans}, {"received", replied}, {"loss_percent", loss},
                                {"time_ms", total_ms}, {"rtt_us", {{"min", mn}, {"avg", avg}, {"max", maxrtt}}}}
                     .dump()
              << "\n";
    return 0;
  }
  fmt::print("\n--- {} ({}) ibping statistics ---\n", last_host, to->to_string());
  fmt::print("{} packets transmitted, {} received, {}% packet loss, time {} ms\n", ntrans, replied, loss, total_ms);
  fmt::print("rtt min/avg/max = {}.{:03}/{}.{:03}/{}.{:03} ms\n", mn / 1000, mn % 1000, avg / 1000, avg % 1000,
             maxrtt / 1000, maxrtt % 1000);
  return 0;
}

}  // namespace

void register_query(CLI::App& app, CommandContext& ctx) {
  auto sm = std::make_shared<SminfoArgs>();
  CLI::App* sminfo = app.add_subcommand("sminfo", "Query the SM's SMInfo, as sminfo does");
  add_common(sminfo, sm->c, true);
  sminfo->add_option("-s,--state", sm->state, "set SM state (with a modifier)")->check(CLI::Range(0, 3));
  sminfo->add_option("-p,--priority", sm->priority, "set SM priority (with a modifier)")->check(CLI::Range(0, 15));
  sminfo->add_option("-a,--activity", sm->activity, "set activity count (with a modifier)");
  sminfo->add_option("sm_lid", sm->dest, "the SM's LID (or DR path with -D, GUID with -G); default: this port's SM");
  sminfo->add_option("modifier", sm->modifier, "a non-zero modifier makes it a Set");
  sminfo->callback([sm, &ctx] { ctx.exit_code = run_sminfo(*sm, ctx); });

  auto pq = std::make_shared<PerfArgs>();
  CLI::App* perf = app.add_subcommand("perfquery", "Read (and reset) a port's PMA counters, as perfquery does");
  add_common(perf, pq->c, false);
  perf->add_flag("-x,--extended", pq->extended, "show extended port counters");
  perf->add_flag("-a,--all_ports", pq->all_ports, "show aggregated counters");
  perf->add_flag("-l,--loop_ports", pq->loop_ports, "iterate through each port");
  perf->add_flag("-r,--reset_after_read", pq->reset, "reset counters after read");
  perf->add_flag("-R,--Reset_only", pq->reset_only, "only reset counters");
  perf->add_option("args", pq->positional, "[<lid|guid> [[port(s)] [reset_mask]]]");
  perf->callback([pq, &ctx] { ctx.exit_code = run_perfquery(*pq, ctx); });

  auto pa = std::make_shared<PingArgs>();
  CLI::App* ping = app.add_subcommand("ping", "Ping a port with the OpenIB vendor MAD, or answer pings (-S), as ibping does");
  add_common(ping, pa->c, false);
  ping->add_option("-c,--count", pa->count, "stop after count packets");
  ping->add_flag("-f,--flood", pa->flood, "flood destination");
  ping->add_option("-o,--oui", pa->oui, "use specified OUI number");
  ping->add_flag("-S,--Server", pa->server, "start in server mode");
  ping->add_option("dest", pa->dest, "<dest lid|guid>");
  ping->callback([pa, &ctx] { ctx.exit_code = run_ping(*pa, ctx); });
}

}  // namespace softib::tools
