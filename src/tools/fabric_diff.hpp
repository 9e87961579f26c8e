// The live fabric (as discovery sees it) against an expected topology (a net file): nodes
// missing or extra by node GUID, cables missing, extra or mis-cabled. Used by `softib topo
// diff`, and by `softib diagnet` to tell a Down port with a cable from an empty one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabric/topology.hpp"
#include "tools/discovery.hpp"

namespace softib::tools {

// One end of a cable: a node GUID and a port number.
struct PortKey {
  uint64_t guid = 0;
  uint8_t port = 0;
  friend bool operator==(const PortKey&, const PortKey&) = default;
  friend auto operator<=>(const PortKey&, const PortKey&) = default;
};

// The expected topology looked up by node GUID (the first node with a GUID, as
// Topology::find_by_guid).
class ExpectedFabric {
 public:
  explicit ExpectedFabric(const fabric::Topology& t);
  const fabric::Topology& topology() const { return t_; }
  std::optional<fabric::NodeIndex> node(uint64_t guid) const;
  // The other end of the cable at `p` per the topology; nullopt when none (or no such node).
  std::optional<PortKey> peer(PortKey p) const;
  // "S-L0001" (the net-file id), or "0x... \"description\"" for a node it does not have.
  std::string name(uint64_t guid) const;

 private:
  const fabric::Topology& t_;
  std::unordered_map<uint64_t, fabric::NodeIndex> by_guid_;
};

struct DiffEntry {
  enum class Kind : uint8_t { kMissingNode, kExtraNode, kMissingLink, kExtraLink, kMiscabled };
  Kind kind;
  std::string text;  // the line as printed: "missing link: S-L0001[3] - H-00005[1]"
  nlohmann::json json;
};
std::string_view to_string(DiffEntry::Kind k);  // "missing node", ...

struct TopoDiff {
  std::vector<DiffEntry> entries;  // by kind, then by the lowest port key (stable)
  size_t expected_nodes = 0, live_nodes = 0, expected_links = 0, live_links = 0;
  size_t count(DiffEntry::Kind k) const;
  std::string summary() const;  // the count line
  nlohmann::json to_json() const;
};

// Links touching a node that is missing (or extra) are not listed separately: the node's
// line stands for them. A mis-cabling pairs an expected cable that is not there with a live
// one that shares an end with it: "<shared end> expected <peer> found <peer>".
TopoDiff diff_topology(const DiscoveredFabric& live, const ExpectedFabric& expected);

}  // namespace softib::tools
