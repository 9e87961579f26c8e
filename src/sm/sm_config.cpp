#include "sm/sm_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "sm/routing_engine.hpp"
#include "base/file.hpp"
namespace softib::sm {

namespace {

std::optional<uint64_t> number(std::string_view s) {
  if (s.empty() || s.size() > 24) return std::nullopt;
  char buf[32] = {};
  s.copy(buf, s.size());
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(buf, &end, 0);
  if (end == buf || *end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

using Setter = std::function<Result<void>(SmConfig&, std::string_view)>;

Status bad(std::string_view value, std::string_view want) {
  return Status(Code::kInvalidArgument, fmt::format("\"{}\": {}", value, want));
}

template <class T>
Setter integer(T SmConfig::*field, uint64_t min, uint64_t max) {
  return [=](SmConfig& c, std::string_view v) -> Result<void> {
    auto n = number(v);
    if (!n || *n < min || *n > max) return bad(v, fmt::format("want a number {}..{}", min, max));
    c.*field = static_cast<T>(*n);
    return {};
  };
}

Setter boolean(bool SmConfig::*field) {
  return [=](SmConfig& c, std::string_view v) -> Result<void> {
    if (v == "TRUE" || v == "true" || v == "1") {
      c.*field = true;
    } else if (v == "FALSE" || v == "false" || v == "0") {
      c.*field = false;
    } else {
      return bad(v, "want TRUE or FALSE");
    }
    return {};
  };
}

Setter text(std::string SmConfig::*field) {
  return [=](SmConfig& c, std::string_view v) -> Result<void> {
    c.*field = v == "(null)" ? std::string() : std::string(v);
    return {};
  };
}

const std::vector<std::pair<std::string_view, Setter>>& setters() {
  static const std::vector<std::pair<std::string_view, Setter>> table = {
      {"guid", [](SmConfig& c, std::string_view v) -> Result<void> {
         auto n = number(v);
         if (!n) return bad(v, "want a port GUID");
         c.guid = Guid(*n);
         return {};
       }},
      {"sm_priority", integer(&SmConfig::sm_priority, 0, 15)},
      {"routing_engine", [](SmConfig& c, std::string_view v) -> Result<void> {
         c.routing_engine.clear();
         while (!v.empty()) {
           const size_t comma = v.find(',');
           const std::string_view e = v.substr(0, comma);
           if (!e.empty()) c.routing_engine.emplace_back(e);
           v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
         }
         if (c.routing_engine.empty() || c.routing_engine.front() == "(null)") c.routing_engine = {"auto"};
         return check_engine_chain(c.routing_engine);
       }},
      {"lmc", integer(&SmConfig::lmc, 0, 7)},
      {"lmc_esp0", boolean(&SmConfig::lmc_esp0)},
      {"subnet_prefix", integer(&SmConfig::subnet_prefix, 0, ~uint64_t{0})},
      {"sweep_interval", integer(&SmConfig::sweep_interval, 0, 86400)},
      {"partition_config_file", text(&SmConfig::partition_config_file)},
      {"sm_key", integer(&SmConfig::sm_key, 0, ~uint64_t{0})},
      {"m_key", integer(&SmConfig::m_key, 0, ~uint64_t{0})},
      {"max_wire_smps", integer(&SmConfig::max_wire_smps, 1, 0xFFFF)},
      {"transaction_timeout", integer(&SmConfig::transaction_timeout, 1, 600000)},
      {"transaction_retries", integer(&SmConfig::transaction_retries, 0, 100)},
      {"sminfo_polling_timeout", integer(&SmConfig::sminfo_polling_timeout, 1, 3600000)},
      {"polling_retry_number", integer(&SmConfig::polling_retry_number, 1, 100)},
      {"force_heavy_sweep", boolean(&SmConfig::force_heavy_sweep)},
      {"sweep_on_trap", boolean(&SmConfig::sweep_on_trap)},
      {"reassign_lids", boolean(&SmConfig::reassign_lids)},
      {"honor_guid2lid_file", boolean(&SmConfig::honor_guid2lid_file)},
      {"ignore_other_sm", boolean(&SmConfig::ignore_other_sm)},
      {"sm_inactive", boolean(&SmConfig::sm_inactive)},
      {"disable_multicast", boolean(&SmConfig::disable_multicast)},
      {"no_partition_enforcement", boolean(&SmConfig::no_partition_enforcement)},
      {"allow_both_pkeys", boolean(&SmConfig::allow_both_pkeys)},
      {"packet_life_time", integer(&SmConfig::packet_life_time, 0, 0x13)},
      {"subnet_timeout", integer(&SmConfig::subnet_timeout, 0, 0x1F)},
      {"head_of_queue_lifetime", integer(&SmConfig::head_of_queue_lifetime, 0, 0x14)},
      {"leaf_head_of_queue_lifetime", integer(&SmConfig::leaf_head_of_queue_lifetime, 0, 0x14)},
      {"max_op_vls", integer(&SmConfig::max_op_vls, 1, 5)},
      {"log_file", text(&SmConfig::log_file)},
      {"dump_files_dir", text(&SmConfig::dump_files_dir)},
      {"root_guid_file", text(&SmConfig::root_guid_file)},
  };
  return table;
}

// OpenSM 3.3.23's other option names: recognised, not implemented by softib.
constexpr std::string_view kOpenSmOnly[] = {
    "sa_key", "m_key_lease_period", "m_key_protection_level", "m_key_lookup", "max_wire_smps2",
    "max_smps_timeout", "console", "console_port", "long_transaction_timeout",
    "max_msg_fifo_timeout", "force_link_speed", "force_link_speed_ext", "force_link_width", "fdr10",
    "single_thread", "vl_stall_count", "leaf_vl_stall_count", "local_phy_errors_threshold",
    "overrun_errors_threshold", "use_mfttop", "port_prof_ignore_file", "hop_weights_file",
    "dimn_ports_file", "port_search_ordering_file", "port_profile_switch_nodes",
    "avoid_throttled_links", "connect_roots", "use_ucast_cache", "log_max_size", "log_flags",
    "force_log_flush", "accum_log_file", "part_enforce", "keep_pkey_indexes", "sm_assigned_guid",
    "qos", "qos_policy_file", "suppress_sl2vl_mad_status_errors", "lid_matrix_dump_file",
    "lfts_file", "cn_guid_file", "io_guid_file", "port_shifting", "scatter_ports",
    "max_reverse_hops", "ids_guid_file", "guid_routing_order_file", "guid_routing_order_no_scatter",
    "sa_db_file", "sa_db_dump", "torus_config", "do_mesh_analysis", "exit_on_fatal", "daemon",
    "babbling_port_policy", "drop_event_subscriptions", "ipoib_mcgroup_creation_validation",
    "mcgroup_join_validation", "use_original_extended_sa_rates_only", "use_optimized_slvl",
    "fsync_high_avail_files", "perfmgr", "perfmgr_redir", "perfmgr_sweep_time_s",
    "perfmgr_max_outstanding_queries", "perfmgr_ignore_cas", "event_db_dump_file",
    "perfmgr_rm_nodes", "perfmgr_log_errors", "perfmgr_query_cpi", "perfmgr_xmit_wait_log",
    "perfmgr_xmit_wait_threshold", "event_plugin_name", "event_plugin_options",
    "node_name_map_name", "congestion_control", "cc_key", "cc_max_outstanding_mads", "cc_cct"};

bool opensm_only(std::string_view name) {
  if (name.starts_with("qos_") || name.starts_with("cc_sw_") || name.starts_with("cc_ca_")) return true;
  for (std::string_view n : kOpenSmOnly)
    if (n == name) return true;
  return false;
}

}  // namespace

Result<void> set_sm_option(SmConfig& config, std::string_view name, std::string_view value) {
  for (const auto& [option, setter] : setters()) {
    if (option != name) continue;
    auto r = setter(config, value);
    if (!r) return Status(Code::kInvalidArgument, fmt::format("{}: {}", name, r.error().message()));
    return {};
  }
  return Status(Code::kInvalidArgument, fmt::format("unknown option \"{}\"", name));
}

Result<ConfigFile> parse_sm_config(std::string_view text, std::string_view name, SmConfig base) {
  ConfigFile out{std::move(base), {}};
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    line = line.substr(0, line.find('#'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    if (line.empty()) continue;
    const size_t space = line.find_first_of(" \t");
    const std::string_view key = line.substr(0, space);
    std::string_view value = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.remove_prefix(1);
    auto r = set_sm_option(out.config, key, value);
    if (r) continue;
    if (r.error().message().starts_with("unknown option")) {
      out.warnings.push_back(fmt::format("{}:{}: {} option \"{}\" ignored", name, line_no,
                                         opensm_only(key) ? "OpenSM" : "unknown", key));
      continue;
    }
    return Status(Code::kParseError, fmt::format("{}:{}: {}", name, line_no, r.error().message()));
  }
  return out;
}

Result<ConfigFile> read_sm_config(const std::string& path, SmConfig base) {
  auto text = read_file(path, "config file");
  if (!text) return text.error();
  return parse_sm_config(*text, path, std::move(base));
}

}  // namespace softib::sm
