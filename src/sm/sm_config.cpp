#include "sm/sm_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
using Getter = std::function<std::string(const SmConfig&)>;

// One option: its OpenSM name, how a value sets it, and how its value is written back (in the
// form OpenSM's opensm.conf uses: 0x-prefixed 64-bit keys and GUIDs, TRUE/FALSE, "(null)").
struct Option {
  std::string_view name;
  Setter set;
  Getter get;
};

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

template <class T>
Option integer_option(std::string_view name, T SmConfig::*field, uint64_t min, uint64_t max, bool hex = false) {
  return {name, integer(field, min, max), [field, hex](const SmConfig& c) {
            return hex ? fmt::format("0x{:016x}", static_cast<uint64_t>(c.*field)) : fmt::format("{}", c.*field + 0);
          }};
}

Option boolean_option(std::string_view name, bool SmConfig::*field) {
  return {name, boolean(field), [field](const SmConfig& c) { return std::string(c.*field ? "TRUE" : "FALSE"); }};
}

Option text_option(std::string_view name, std::string SmConfig::*field) {
  return {name, text(field), [field](const SmConfig& c) { return (c.*field).empty() ? std::string("(null)") : c.*field; }};
}

const std::vector<Option>& options() {
  static const std::vector<Option> table = {
      {"guid",
       [](SmConfig& c, std::string_view v) -> Result<void> {
         auto n = number(v);
         if (!n) return bad(v, "want a port GUID");
         c.guid = Guid(*n);
         return {};
       },
       [](const SmConfig& c) { return fmt::format("0x{:016x}", c.guid.value()); }},
      integer_option("sm_priority", &SmConfig::sm_priority, 0, 15),
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
       },
       [](const SmConfig& c) { return fmt::format("{}", fmt::join(c.routing_engine, ",")); }},
      integer_option("lmc", &SmConfig::lmc, 0, 7),
      boolean_option("lmc_esp0", &SmConfig::lmc_esp0),
      integer_option("subnet_prefix", &SmConfig::subnet_prefix, 0, ~uint64_t{0}, true),
      integer_option("sweep_interval", &SmConfig::sweep_interval, 0, 86400),
      text_option("partition_config_file", &SmConfig::partition_config_file),
      integer_option("sm_key", &SmConfig::sm_key, 0, ~uint64_t{0}, true),
      integer_option("m_key", &SmConfig::m_key, 0, ~uint64_t{0}, true),
      integer_option("max_wire_smps", &SmConfig::max_wire_smps, 1, 0xFFFF),
      integer_option("transaction_timeout", &SmConfig::transaction_timeout, 1, 600000),
      integer_option("transaction_retries", &SmConfig::transaction_retries, 0, 100),
      integer_option("sminfo_polling_timeout", &SmConfig::sminfo_polling_timeout, 1, 3600000),
      integer_option("polling_retry_number", &SmConfig::polling_retry_number, 1, 100),
      boolean_option("force_heavy_sweep", &SmConfig::force_heavy_sweep),
      boolean_option("sweep_on_trap", &SmConfig::sweep_on_trap),
      boolean_option("reassign_lids", &SmConfig::reassign_lids),
      boolean_option("honor_guid2lid_file", &SmConfig::honor_guid2lid_file),
      boolean_option("ignore_other_sm", &SmConfig::ignore_other_sm),
      boolean_option("sm_inactive", &SmConfig::sm_inactive),
      boolean_option("disable_multicast", &SmConfig::disable_multicast),
      boolean_option("no_partition_enforcement", &SmConfig::no_partition_enforcement),
      boolean_option("allow_both_pkeys", &SmConfig::allow_both_pkeys),
      integer_option("packet_life_time", &SmConfig::packet_life_time, 0, 0x13),
      integer_option("subnet_timeout", &SmConfig::subnet_timeout, 0, 0x1F),
      integer_option("head_of_queue_lifetime", &SmConfig::head_of_queue_lifetime, 0, 0x14),
      integer_option("leaf_head_of_queue_lifetime", &SmConfig::leaf_head_of_queue_lifetime, 0, 0x14),
      integer_option("max_op_vls", &SmConfig::max_op_vls, 1, 5),
      text_option("log_file", &SmConfig::log_file),
      text_option("dump_files_dir", &SmConfig::dump_files_dir),
      text_option("root_guid_file", &SmConfig::root_guid_file),
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
  for (const Option& o : options()) {
    if (o.name != name) continue;
    auto r = o.set(config, value);
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

std::string write_sm_config(const SmConfig& config) {
  std::string out =
      "# opensm.conf written by softib sm -c: the options softib implements, under OpenSM's names\n"
      "# (OpenSM's other options are recognised and ignored when read back).\n";
  for (const Option& o : options()) out += fmt::format("\n{} {}\n", o.name, o.get(config));
  return out;
}

}  // namespace softib::sm
