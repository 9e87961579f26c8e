// Partition configuration in OpenSM's partitions.conf syntax (opensm doc/partition-config.txt):
//
//   [Name][=PKey][,ipoib][,defmember=full|limited|both][,indx0][,<group flags>] :
//       <port>[=full|limited|both], ... | mgid=<gid>[,<group flags>] <newline> ... ;
//
// ports: a port GUID, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF, NONE; group flags:
// rate, mtu, sl, scope, Q_Key, TClass, FlowLabel (IBA codes). Keywords may be abbreviated as
// OpenSM allows ("limi" = limited). Rules with the same P_Key merge. The default partition
// 0x7fff always exists: ALL=limited and SELF=full when a file is given, ALL=full (with its
// IPoIB broadcast group) when none is.
//
// Errors carry "file:line: reason". Where OpenSM silently skips something the user asked
// for (an invalid MTU code, an IPoIB group whose rate disagrees with its partition), softib
// reports an error instead.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "base/result.hpp"

namespace softib::sm {

enum class Membership : uint8_t { kLimited, kFull, kBoth };
std::string_view to_string(Membership m);

struct PartitionMember {
  enum class Kind : uint8_t { kGuid, kAll, kAllCas, kAllSwitches, kAllRouters, kSelf };
  Kind kind = Kind::kGuid;
  Guid guid;  // kGuid only
  Membership membership = Membership::kLimited;
  friend bool operator==(const PartitionMember&, const PartitionMember&) = default;
};

// A multicast group the SM creates for a partition (the IPoIB broadcast group of an ipoib
// partition, or an mgid line). IBA codes: mtu 1..5 (256..4096), rate 2..(IBA table 226).
struct McGroupSpec {
  Gid mgid;
  uint8_t mtu = 4;   // 2048
  uint8_t rate = 3;  // 10 Gb/s
  uint8_t sl = 0;
  QKey qkey{0};
  uint8_t tclass = 0;
  uint32_t flow_label = 0;
  friend bool operator==(const McGroupSpec&, const McGroupSpec&) = default;
};

struct Partition {
  std::string name;
  PKey pkey;  // base (low 15 bits)
  bool ipoib = false;
  bool index0 = false;  // indx0: put this P_Key in block 0 index 0
  uint8_t sl = 0;
  std::vector<PartitionMember> members;
  std::vector<McGroupSpec> groups;
  int line = 0;  // where it was (first) defined; 0 for the built-in default
};

struct PartitionConfig {
  std::vector<Partition> partitions;  // the default partition first
  std::vector<std::string> warnings;  // "file:line: ..." for what was ignored

  const Partition* find(PKey pkey) const;
};

inline constexpr PKey kDefaultPKey{0x7FFF};
inline constexpr QKey kIpoibQKey{0x0B1B};

// The IPoIB broadcast MGID of a partition: ff1<scope>:401b:<pkey|0x8000>::ffff:ffff.
Gid ipoib_broadcast_mgid(PKey pkey, uint8_t scope = 2);

// Parses a file's text. Errors: ParseError "name:line: reason".
Result<PartitionConfig> parse_partitions(std::string_view text, std::string_view name = "partitions.conf");
// Errors: NotFound when the file is missing, else as parse_partitions.
Result<PartitionConfig> read_partitions_file(const std::string& path);
// What OpenSM runs with when no partition file exists.
PartitionConfig default_partitions();

}  // namespace softib::sm
