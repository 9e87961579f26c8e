// SM options under OpenSM's names, read from an opensm.conf-style file ("name value" per
// line, '#' comments, "(null)" for unset strings, TRUE/FALSE booleans, 0x hex numbers).
// Options softib does not implement are warned about and ignored, as are unknown names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"

namespace softib::sm {

struct SmConfig {
  Guid guid;                               // port to bind; 0: the first port
  uint8_t sm_priority = 0;                 // 0..15
  std::vector<std::string> routing_engine{"auto"};
  uint8_t lmc = 0;                         // 0..7
  bool lmc_esp0 = false;                   // LMC on switch enhanced port 0 too
  uint64_t subnet_prefix = 0xFE80000000000000ULL;
  uint32_t sweep_interval = 10;            // seconds; 0 disables periodic sweeps
  std::string partition_config_file;       // empty: none
  uint64_t sm_key = 1;                     // OpenSM's default (OSM_DEFAULT_SM_KEY, also its sa_key)
  uint64_t m_key = 0;
  uint32_t max_wire_smps = 4;              // outstanding SMPs
  uint32_t transaction_timeout = 200;      // ms
  uint32_t transaction_retries = 3;
  uint32_t sminfo_polling_timeout = 10000; // ms: standby polls the master this often
  uint32_t polling_retry_number = 4;       // missed polls before a standby takes over
  bool force_heavy_sweep = false;
  bool sweep_on_trap = true;
  bool reassign_lids = false;
  bool honor_guid2lid_file = false;
  bool ignore_other_sm = false;
  bool sm_inactive = false;
  bool disable_multicast = false;
  bool no_partition_enforcement = false;
  bool allow_both_pkeys = false;
  uint8_t packet_life_time = 0x12;
  uint8_t subnet_timeout = 18;
  uint8_t head_of_queue_lifetime = 0x12;
  uint8_t leaf_head_of_queue_lifetime = 0x10;
  uint8_t max_op_vls = 5;                  // OperationalVLs code: 1 = VL0 ... 5 = VL0-14
  std::string log_file;
  std::string dump_files_dir;
  std::string cache_dir = "/var/cache/opensm";  // where guid2lid lives
  std::string root_guid_file;
};

struct ConfigFile {
  SmConfig config;
  std::vector<std::string> warnings;  // "file:line: ..." for ignored options
};

// Applies every "name value" line of `text` on top of `base`.
// Errors: ParseError "name:line: reason" for a bad value of an option softib implements.
Result<ConfigFile> parse_sm_config(std::string_view text, std::string_view name, SmConfig base = {});
Result<ConfigFile> read_sm_config(const std::string& path, SmConfig base = {});

// Sets one option by its OpenSM name (what command-line flags map to).
// Errors: InvalidArgument for an unknown option or a bad value.
Result<void> set_sm_option(SmConfig& config, std::string_view name, std::string_view value);

// An opensm.conf holding every option softib implements with its value in `config` (what
// `softib sm -c FILE` writes, as `opensm -c FILE` does); parse_sm_config reads it back to the
// same config.
std::string write_sm_config(const SmConfig& config);

}  // namespace softib::sm
