// softib stat | devices | devinfo: this host's CAs as ibstat, ibv_devices and ibv_devinfo
// show them (rdma-core's infiniband-diags/ibstat.c, libibverbs/examples/device_list.c and
// devinfo.c), read from the daemon's live PortInfo, so a port reads Initializing/LinkUp
// until an SM brings it to Active.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ipc/client.hpp"
#include "tools/command.hpp"
#include "tools/diag_common.hpp"
#include "verbs/caps.hpp"

#ifndef SOFTIB_VERSION
#define SOFTIB_VERSION "0"
#endif

namespace softib::tools {

namespace {

// The device identity softib's CAs report (sysfs hca_type, fw_ver; hw_rev is NodeInfo's
// revision).
constexpr std::string_view kCaType = "softib";
constexpr std::string_view kFirmware = SOFTIB_VERSION;

constexpr std::string_view kPortState[] = {"???", "Down", "Initializing", "Armed", "Active"};
constexpr std::string_view kPhysState[] = {"No state change", "Sleep", "Polling", "Disabled",
                                           "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery",
                                           "PhyTest"};

std::string_view state_name(mad::PortState s) {
  const auto v = static_cast<unsigned>(s);
  return v < std::size(kPortState) ? kPortState[v] : "???";
}
std::string_view phys_name(mad::PhysPortState s) {
  const auto v = static_cast<unsigned>(s);
  return v < std::size(kPhysState) ? kPhysState[v] : "???";
}

std::string hw_version(const ipc::NodeEntry& n) { return fmt::format("{:x}", n.revision); }

// umad reads the sysfs rate "100 Gb/sec (4X EDR)" as an integer; ibstat prints 1X SDR's
// 2 as "2.5".
std::string ibstat_rate(const mad::PortInfo& pi) {
  const uint32_t r = port_rate(pi).tenths_gbps / 10;
  return r == 2 ? "2.5" : std::to_string(r);
}

std::string port_text(const LocalPort& p, bool alone) {
  const std::string pre = alone ? "" : "\t\t";
  const std::string hdr = alone ? "" : "\t";
  std::string s = fmt::format("{}Port {}:\n", hdr, p.number);
  s += fmt::format("{}State: {}\n", pre, state_name(p.info.port_state));
  s += fmt::format("{}Physical state: {}\n", pre, phys_name(p.info.port_physical_state));
  s += fmt::format("{}Rate: {}\n", pre, ibstat_rate(p.info));
  s += fmt::format("{}Base lid: {}\n", pre, p.lid());
  s += fmt::format("{}LMC: {}\n", pre, p.lmc());
  s += fmt::format("{}SM lid: {}\n", pre, p.sm_lid());
  s += fmt::format("{}Capability mask: 0x{:08x}\n", pre, p.info.capability_mask);
  s += fmt::format("{}Port GUID: 0x{:016x}\n", pre, p.state.port_guid);
  s += fmt::format("{}Link layer: {}\n", pre, p.link_layer());
  return s;
}

std::string ca_text(const LocalCa& ca) {
  std::string s = fmt::format("CA '{}'\n", ca.name);
  s += fmt::format("\tCA type: {}\n", kCaType);
  s += fmt::format("\tNumber of ports: {}\n", ca.node.num_ports);
  s += fmt::format("\tFirmware version: {}\n", kFirmware);
  s += fmt::format("\tHardware version: {}\n", hw_version(ca.node));
  s += fmt::format("\tNode GUID: 0x{:016x}\n", ca.node.node_guid);
  s += fmt::format("\tSystem image GUID: 0x{:016x}\n", ca.node.system_image_guid);
  return s;
}

nlohmann::json port_json(const LocalPort& p) {
  const PortRate r = port_rate(p.info);
  return {{"port", p.number},
          {"state", state_name(p.info.port_state)},
          {"physical_state", phys_name(p.info.port_physical_state)},
          {"rate", r.to_string()},
          {"base_lid", p.lid()},
          {"lmc", p.lmc()},
          {"sm_lid", p.sm_lid()},
          {"capability_mask", fmt::format("0x{:08x}", p.info.capability_mask)},
          {"port_guid", fmt::format("0x{:016x}", p.state.port_guid)},
          {"link_layer", p.link_layer()}};
}

nlohmann::json ca_json(const LocalCa& ca, bool ports) {
  nlohmann::json j{{"name", ca.name},
                   {"type", kCaType},
                   {"num_ports", ca.node.num_ports},
                   {"firmware_version", kFirmware},
                   {"hardware_version", hw_version(ca.node)},
                   {"node_guid", fmt::format("0x{:016x}", ca.node.node_guid)},
                   {"system_image_guid", fmt::format("0x{:016x}", ca.node.system_image_guid)},
                   {"node", ca.node.id}};
  if (ports) {
    j["ports"] = nlohmann::json::array();
    for (const auto& p : ca.ports) j["ports"].push_back(port_json(p));
  }
  return j;
}

Result<std::vector<LocalCa>> load_cas(CommandContext& ctx, std::string_view client) {
  auto c = ipc::Connection::open(ctx.fabric, client);
  if (!c) return Err{c.error()};
  return local_cas(*c, ctx.host);
}

// ---- ibstat ----

struct StatArgs {
  bool list = false, short_format = false, port_list = false, json = false;
  std::string ca;
  std::string port;  // strtol(..., 0) as ibstat reads it
};

int run_stat(const StatArgs& a, CommandContext& ctx) {
  auto cas = load_cas(ctx, "softib stat");
  if (!cas) return ctx.fail(cas.error());
  std::vector<const LocalCa*> chosen;
  for (const auto& ca : *cas)
    if (a.ca.empty() || ca.name == a.ca) chosen.push_back(&ca);
  if (!a.ca.empty() && chosen.empty())
    return ibpanic("main", fmt::format("'{}' IB device can't be found", a.ca), "Success");
  long port = -1;
  if (!a.port.empty()) port = std::strtol(a.port.c_str(), nullptr, 0);

  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const LocalCa* ca : chosen) {
      if (port >= 0 && !a.list && !a.port_list && !a.short_format) {
        if (port < 1 || port > static_cast<long>(ca->ports.size()))
          return ctx.fail(Status(Code::kNotFound, fmt::format("CA '{}' has no port number {}", ca->name, port)));
        nlohmann::json j = ca_json(*ca, false);
        j["ports"] = nlohmann::json::array({port_json(ca->ports[static_cast<size_t>(port - 1)])});
        out.push_back(j);
      } else {
        out.push_back(ca_json(*ca, !a.short_format));
      }
    }
    std::cout << nlohmann::json{{"cas", out}}.dump() << "\n";
    return 0;
  }
  if (a.port_list) {
    for (const LocalCa* ca : chosen)
      for (const auto& p : ca->ports)
        if (p.state.port_guid) fmt::print("0x{:016x}\n", p.state.port_guid);
    return 0;
  }
  for (const LocalCa* ca : chosen) {
    if (a.list) {
      fmt::print("{}\n", ca->name);
      continue;
    }
    if (!a.short_format && port >= 0) {
      if (port < 1 || port > static_cast<long>(ca->ports.size())) {
        std::fflush(stdout);
        ibwarn("ca_stat", fmt::format("CA: '{}' has no port number {} - max ({})", ca->name, port, ca->ports.size()));
        return ibpanic("main", fmt::format("stat of IB device '{}' failed", ca->name), "No such file or directory");
      }
      fmt::print("CA: '{}'\n{}", ca->name, port_text(ca->ports[static_cast<size_t>(port - 1)], true));
      continue;
    }
    std::string s = ca_text(*ca);
    if (!a.short_format)
      for (const auto& p : ca->ports) s += port_text(p, false);
    fmt::print("{}", s);
  }
  return 0;
}

// ---- ibv_devices / ibv_devinfo ----

int run_devices(bool json, CommandContext& ctx) {
  auto cas = load_cas(ctx, "softib devices");
  if (!cas) return ctx.fail(cas.error());
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& ca : *cas) out.push_back({{"device", ca.name}, {"node_guid", fmt::format("{:016x}", ca.node.node_guid)}});
    std::cout << nlohmann::json{{"devices", out}}.dump() << "\n";
    return 0;
  }
  fmt::print("    {:<16}\t   node GUID\n", "device");
  fmt::print("    {:<16}\t----------------\n", "------");
  for (const auto& ca : *cas) fmt::print("    {:<16}\t{:016x}\n", ca.name, ca.node.node_guid);
  return 0;
}

struct DevinfoArgs {
  std::string device;
  int port = 0;
  bool list = false, verbose = false, json = false;
};

std::string guid_str(uint64_t g) {
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xffff, (g >> 32) & 0xffff, (g >> 16) & 0xffff,
                     g & 0xffff);
}

std::string_view verbs_state(mad::PortState s) {
  switch (s) {
    case mad::PortState::kDown: return "PORT_DOWN";
    case mad::PortState::kInitialize: return "PORT_INIT";
    case mad::PortState::kArmed: return "PORT_ARMED";
    case mad::PortState::kActive: return "PORT_ACTIVE";
    default: return "invalid state";
  }
}

std::string_view verbs_phys_state(mad::PhysPortState s) {
  switch (s) {
    case mad::PhysPortState::kSleep: return "SLEEP";
    case mad::PhysPortState::kPolling: return "POLLING";
    case mad::PhysPortState::kDisabled: return "DISABLED";
    case mad::PhysPortState::kPortConfigurationTraining: return "PORT_CONFIGURATION TRAINNING";
    case mad::PhysPortState::kLinkUp: return "LINK_UP";
    case mad::PhysPortState::kLinkErrorRecovery: return "LINK_ERROR_RECOVERY";
    case mad::PhysPortState::kPhyTest: return "PHY TEST";
    default: return "invalid physical state";
  }
}

std::string_view mtu_str(uint8_t mtu) {
  switch (mtu) {
    case 1: return "256";
    case 2: return "512";
    case 3: return "1024";
    case 4: return "2048";
    case 5: return "4096";
    default: return "invalid MTU";
  }
}

std::string_view width_str(uint8_t w) {
  switch (w) {
    case 1: return "1";
    case 2: return "4";
    case 4: return "8";
    case 8: return "12";
    case 16: return "2";
    default: return "invalid width";
  }
}

std::string_view speed_str(uint8_t s) {
  switch (s) {
    case 1: return "2.5 Gbps";
    case 2: return "5.0 Gbps";
    case 4:
    case 8: return "10.0 Gbps";
    case 16: return "14.0 Gbps";
    case 32: return "25.0 Gbps";
    case 64: return "50.0 Gbps";
    case 128: return "100.0 Gbps";
    default: return "invalid speed";
  }
}

std::string_view vl_str(uint8_t v) {
  switch (v) {
    case 1: return "1";
    case 2: return "2";
    case 3: return "4";
    case 4: return "8";
    case 5: return "15";
    default: return "invalid value";
  }
}

// device_cap_flags as ibv_devinfo names them (enum ibv_device_cap_flags, in bit order).
constexpr std::pair<uint32_t, std::string_view> kCapFlagNames[] = {
    {verbs::device_cap::kResizeMaxWr, "RESIZE_MAX_WR"},     {verbs::device_cap::kBadPkeyCntr, "BAD_PKEY_CNTR"},
    {verbs::device_cap::kBadQkeyCntr, "BAD_QKEY_CNTR"},     {verbs::device_cap::kRawMulti, "RAW_MULTI"},
    {verbs::device_cap::kAutoPathMig, "AUTO_PATH_MIG"},     {verbs::device_cap::kChangePhyPort, "CHANGE_PHY_PORT"},
    {verbs::device_cap::kUdAvPortEnforce, "UD_AV_PORT_ENFORCE"}, {verbs::device_cap::kCurrQpStateMod, "CURR_QP_STATE_MOD"},
    {verbs::device_cap::kShutdownPort, "SHUTDOWN_PORT"},    {verbs::device_cap::kInitType, "INIT_TYPE"},
    {verbs::device_cap::kPortActiveEvent, "PORT_ACTIVE_EVENT"}, {verbs::device_cap::kSysImageGuid, "SYS_IMAGE_GUID"},
    {verbs::device_cap::kRcRnrNakGen, "RC_RNR_NAK_GEN"},    {verbs::device_cap::kSrqResize, "SRQ_RESIZE"},
    {verbs::device_cap::kNNotifyCq, "N_NOTIFY_CQ"},         {verbs::device_cap::kMemWindow, "MEM_WINDOW"},
    {verbs::device_cap::kUdIpCsum, "UD_IP_CSUM"},           {verbs::device_cap::kXrc, "XRC"},
    {verbs::device_cap::kMemMgtExtensions, "MEM_MGT_EXTENSIONS"}, {verbs::device_cap::kMemWindowType2A, "MEM_WINDOW_TYPE_2A"},
    {verbs::device_cap::kMemWindowType2B, "MEM_WINDOW_TYPE_2B"}, {verbs::device_cap::kRcIpCsum, "RC_IP_CSUM"},
    {verbs::device_cap::kRawIpCsum, "RAW_IP_CSUM"},         {verbs::device_cap::kManagedFlowSteering, "MANAGED_FLOW_STEERING"},
};

// What ibv_devinfo -v prints of the device itself (libibverbs/examples/devinfo.c,
// print_hca_cap), from the capabilities the verbs library reports for this CA
// (verbs::ca_caps: the drop-in libibverbs answers with the same values).
std::string device_caps_text(const verbs::DeviceCaps& c) {
  std::string s;
  auto line = [&s](std::string_view name, std::string_view tabs, auto value) {
    s += fmt::format("\t{}:{}{}\n", name, tabs, value);
  };
  line("max_mr_size", "\t\t\t", fmt::format("{:#x}", c.max_mr_size));
  line("page_size_cap", "\t\t\t", fmt::format("{:#x}", c.page_size_cap));
  line("max_qp", "\t\t\t\t", c.max_qp);
  line("max_qp_wr", "\t\t\t", c.max_qp_wr);
  line("device_cap_flags", "\t\t", fmt::format("0x{:08x}", c.device_cap_flags));
  for (const auto& [bit, name] : kCapFlagNames)
    if (c.device_cap_flags & bit) s += fmt::format("\t\t\t\t\t{}\n", name);
  line("max_sge", "\t\t\t", c.max_sge);
  line("max_sge_rd", "\t\t\t", c.max_sge_rd);
  line("max_cq", "\t\t\t\t", c.max_cq);
  line("max_cqe", "\t\t\t", c.max_cqe);
  line("max_mr", "\t\t\t\t", c.max_mr);
  line("max_pd", "\t\t\t\t", c.max_pd);
  line("max_qp_rd_atom", "\t\t\t", c.max_qp_rd_atom);
  line("max_ee_rd_atom", "\t\t\t", c.max_ee_rd_atom);
  line("max_res_rd_atom", "\t\t", c.max_res_rd_atom);
  line("max_qp_init_rd_atom", "\t\t", c.max_qp_init_rd_atom);
  line("max_ee_init_rd_atom", "\t\t", c.max_ee_init_rd_atom);
  line("atomic_cap", "\t\t\t", fmt::format("{} ({})", verbs::to_string(c.atomic_cap), static_cast<int>(c.atomic_cap)));
  line("max_ee", "\t\t\t\t", c.max_ee);
  line("max_rdd", "\t\t\t", c.max_rdd);
  line("max_mw", "\t\t\t\t", c.max_mw);
  line("max_raw_ipv6_qp", "\t\t", c.max_raw_ipv6_qp);
  line("max_raw_ethy_qp", "\t\t", c.max_raw_ethy_qp);
  line("max_mcast_grp", "\t\t\t", c.max_mcast_grp);
  line("max_mcast_qp_attach", "\t\t", c.max_mcast_qp_attach);
  line("max_total_mcast_qp_attach", "\t", c.max_total_mcast_qp_attach);
  line("max_ah", "\t\t\t\t", c.max_ah);
  line("max_fmr", "\t\t\t", c.max_fmr);
  if (c.max_fmr) line("max_map_per_fmr", "\t\t", c.max_map_per_fmr);
  line("max_srq", "\t\t\t", c.max_srq);
  if (c.max_srq) {
    line("max_srq_wr", "\t\t\t", c.max_srq_wr);
    line("max_srq_sge", "\t\t\t", c.max_srq_sge);
  }
  line("max_pkeys", "\t\t\t", c.max_pkeys);
  line("local_ca_ack_delay", "\t\t", c.local_ca_ack_delay);
  // No on-demand paging, TSO, RSS, packet pacing or tag matching; completion timestamps in
  // nanoseconds (a 1 GHz clock), as the drop-in's query_device_ex says.
  s += "\tgeneral_odp_caps:\n";
  for (const char* t : {"rc", "uc", "ud", "xrc"}) s += fmt::format("\t{}_odp_caps:\n\t\t\t\t\tNO SUPPORT\n", t);
  s += "\tcompletion timestamp_mask:\t\t\t0xffffffffffffffff\n";
  s += "\thca_core_clock:\t\t\t1000000kHZ\n";
  s += fmt::format("\tdevice_cap_flags_ex:\t\t0x{:X}\n", c.device_cap_flags);
  s += "\ttso_caps:\n\t\tmax_tso:\t\t\t0\n";
  s += "\trss_caps:\n\t\tmax_rwq_indirection_tables:\t\t\t0\n\t\tmax_rwq_indirection_table_size:\t\t\t0\n"
       "\t\trx_hash_function:\t\t\t\t0x0\n\t\trx_hash_fields_mask:\t\t\t\t0x0\n";
  s += "\tmax_wq_type_rq:\t\t\t0\n";
  s += "\tpacket_pacing_caps:\n\t\tqp_rate_limit_min:\t0kbps\n\t\tqp_rate_limit_max:\t0kbps\n";
  s += "\ttag matching not supported\n";
  s += "\tnum_comp_vectors:\t\t1\n";
  return s;
}

std::string devinfo_text(const LocalCa& ca, int only_port, bool verbose) {
  const verbs::DeviceCaps caps = verbs::ca_caps(ca.node.num_ports);
  std::string s = fmt::format("hca_id:\t{}\n", ca.name);
  s += "\ttransport:\t\t\tInfiniBand (0)\n";
  s += fmt::format("\tfw_ver:\t\t\t\t{}\n", kFirmware);
  s += fmt::format("\tnode_guid:\t\t\t{}\n", guid_str(ca.node.node_guid));
  s += fmt::format("\tsys_image_guid:\t\t\t{}\n", guid_str(ca.node.system_image_guid));
  // The verbs identity (not NodeInfo's VendorID, which the SMA answers): no real vendor's.
  s += fmt::format("\tvendor_id:\t\t\t0x{:04x}\n", caps.vendor_id);
  s += fmt::format("\tvendor_part_id:\t\t\t{}\n", caps.vendor_part_id);
  s += fmt::format("\thw_ver:\t\t\t\t0x{:X}\n", caps.hw_ver);
  s += fmt::format("\tboard_id:\t\t\tSOFTIB_{}\n", ca.node.id);
  s += fmt::format("\tphys_port_cnt:\t\t\t{}\n", ca.node.num_ports);
  if (verbose) s += device_caps_text(caps);
  for (const auto& p : ca.ports) {
    if (only_port && p.number != only_port) continue;
    const mad::PortInfo& pi = p.info;
    s += fmt::format("\t\tport:\t{}\n", p.number);
    s += fmt::format("\t\t\tstate:\t\t\t{} ({})\n", verbs_state(pi.port_state), static_cast<int>(pi.port_state));
    s += fmt::format("\t\t\tmax_mtu:\t\t{} ({})\n", mtu_str(pi.mtu_cap), pi.mtu_cap);
    s += fmt::format("\t\t\tactive_mtu:\t\t{} ({})\n", mtu_str(pi.neighbor_mtu), pi.neighbor_mtu);
    s += fmt::format("\t\t\tsm_lid:\t\t\t{}\n", p.sm_lid());
    s += fmt::format("\t\t\tport_lid:\t\t{}\n", p.lid());
    s += fmt::format("\t\t\tport_lmc:\t\t0x{:02x}\n", p.lmc());
    s += fmt::format("\t\t\tlink_layer:\t\t{}\n", p.link_layer());
    if (verbose) {
      const uint8_t speed = verbs_active_speed(pi);
      s += "\t\t\tmax_msg_sz:\t\t0x80000000\n";  // IBA 9.4: 2^31 bytes
      s += fmt::format("\t\t\tport_cap_flags:\t\t0x{:08x}\n", pi.capability_mask);
      s += fmt::format("\t\t\tport_cap_flags2:\t0x{:04x}\n", pi.capability_mask2);
      s += fmt::format("\t\t\tmax_vl_num:\t\t{} ({})\n", vl_str(pi.vl_cap), pi.vl_cap);
      s += fmt::format("\t\t\tbad_pkey_cntr:\t\t0x{:x}\n", pi.p_key_violations);
      s += fmt::format("\t\t\tqkey_viol_cntr:\t\t0x{:x}\n", pi.q_key_violations);
      s += fmt::format("\t\t\tsm_sl:\t\t\t{}\n", pi.master_sm_sl);
      s += fmt::format("\t\t\tpkey_tbl_len:\t\t{}\n", caps.max_pkeys);
      s += fmt::format("\t\t\tgid_tbl_len:\t\t{}\n", p.ethernet() ? 2 : pi.guid_cap);
      s += fmt::format("\t\t\tsubnet_timeout:\t\t{}\n", pi.subnet_timeout);
      s += fmt::format("\t\t\tinit_type_reply:\t{}\n", pi.init_type_reply);
      s += fmt::format("\t\t\tactive_width:\t\t{}X ({})\n", width_str(pi.link_width_active), pi.link_width_active);
      s += fmt::format("\t\t\tactive_speed:\t\t{} ({})\n", speed_str(speed), speed);
      s += fmt::format("\t\t\tphys_state:\t\t{} ({})\n", verbs_phys_state(pi.port_physical_state),
                       static_cast<int>(pi.port_physical_state));
      // GID[0]: the subnet prefix and the port GUID (non-null GIDs only, as devinfo prints).
      const uint64_t prefix = pi.gid_prefix, guid = p.state.port_guid;
      if (p.ethernet()) {
        // RoCE: devinfo prints the address form and the type (link-local, then IPv4-mapped).
        s += fmt::format("\t\t\tGID[{:3}]:\t\t{}, RoCE v2\n", 0, Gid(prefix, Guid(guid)).to_string());
        s += fmt::format("\t\t\tGID[{:3}]:\t\t{}, RoCE v2\n", 1, Gid::from_ipv4(p.state.ipv4).to_string());
      } else if (guid != 0)
        s += fmt::format("\t\t\tGID[{:3}]:\t\t{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}:{:04x}\n", 0,
                         (prefix >> 48) & 0xffff, (prefix >> 32) & 0xffff, (prefix >> 16) & 0xffff, prefix & 0xffff,
                         (guid >> 48) & 0xffff, (guid >> 32) & 0xffff, (guid >> 16) & 0xffff, guid & 0xffff);
    }
    s += "\n";
  }
  return s;
}

int run_devinfo(const DevinfoArgs& a, CommandContext& ctx) {
  if (a.port < 0) {
    fmt::print(stderr, "softib devinfo: invalid port {}\n", a.port);
    return 1;  // devinfo: usage, return 1
  }
  auto cas = load_cas(ctx, "softib devinfo");
  if (!cas) return ctx.fail(cas.error());
  if (a.list) {
    if (a.json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& ca : *cas) out.push_back(ca.name);
      std::cout << nlohmann::json{{"devices", out}}.dump() << "\n";
      return 0;
    }
    fmt::print("{} HCA{} found:\n", cas->size(), cas->size() != 1 ? "s" : "");
    for (const auto& ca : *cas) fmt::print("\t{}\n", ca.name);
    fmt::print("\n");
    return 0;
  }
  std::vector<const LocalCa*> chosen;
  for (const auto& ca : *cas)
    if (a.device.empty() || ca.name == a.device) chosen.push_back(&ca);
  if (chosen.empty()) {
    if (a.device.empty()) fmt::print(stderr, "No IB devices found\n");
    else fmt::print(stderr, "IB device '{}' wasn't found\n", a.device);
    return kDiagFailure;  // return -1
  }
  int rc = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const LocalCa* ca : chosen) {
    if (a.port && a.port > static_cast<int>(ca->ports.size())) {
      fmt::print(stderr, "Invalid port requested for device\n");
      rc |= 4;
      continue;
    }
    if (a.json) {
      nlohmann::json j = ca_json(*ca, false);
      j["ports"] = nlohmann::json::array();
      for (const auto& p : ca->ports) {
        if (a.port && p.number != a.port) continue;
        nlohmann::json pj = port_json(p);
        pj["max_mtu"] = mtu_str(p.info.mtu_cap);
        pj["active_mtu"] = mtu_str(p.info.neighbor_mtu);
        j["ports"].push_back(pj);
      }
      out.push_back(j);
      continue;
    }
    fmt::print("{}", devinfo_text(*ca, a.port, a.verbose));
  }
  if (a.json) std::cout << nlohmann::json{{"devices", out}}.dump() << "\n";
  return rc;
}

}  // namespace

void register_stat(CLI::App& app, CommandContext& ctx) {
  auto a = std::make_shared<StatArgs>();
  CLI::App* stat = app.add_subcommand("stat", "This host's CAs and ports, as ibstat shows them");
  stat->add_flag("-l,--list_of_cas", a->list, "list all IB devices");
  stat->add_flag("-s,--short", a->short_format, "short output");
  stat->add_flag("-p,--port_list", a->port_list, "show port list");
  stat->add_flag("--json", a->json, "JSON output");
  stat->add_option("ca_name", a->ca, "a CA of this host (softib0, ...)");
  stat->add_option("portnum", a->port, "one of its ports");
  stat->callback([a, &ctx] { ctx.exit_code = run_stat(*a, ctx); });

  auto devices_json = std::make_shared<bool>(false);
  CLI::App* devices = app.add_subcommand("devices", "This host's RDMA devices, as ibv_devices lists them");
  devices->add_flag("--json", *devices_json, "JSON output");
  devices->callback([devices_json, &ctx] { ctx.exit_code = run_devices(*devices_json, ctx); });

  auto d = std::make_shared<DevinfoArgs>();
  CLI::App* devinfo = app.add_subcommand("devinfo", "This host's RDMA devices' attributes, as ibv_devinfo prints them");
  devinfo->add_option("-d,--ib-dev", d->device, "use IB device <dev> (default all devices)");
  devinfo->add_option("-i,--ib-port", d->port, "use port <port> of IB device (default all ports)")->check(CLI::PositiveNumber);
  devinfo->add_flag("-l,--list", d->list, "print only the IB devices names");
  devinfo->add_flag("-v,--verbose", d->verbose, "print all the attributes of the IB device(s)");
  devinfo->add_flag("--json", d->json, "JSON output");
  devinfo->callback([d, &ctx] { ctx.exit_code = run_devinfo(*d, ctx); });
}

}  // namespace softib::tools
