#include "sm/pkey_tables.hpp"

#include <algorithm>
#include <optional>

namespace softib::sm {

std::vector<PKey> partition_keys(const Subnet& s, PortRef end_port, const PartitionConfig& partitions,
                                 bool allow_both_pkeys) {
  const SmNode& node = s.nodes[end_port.node.value()];
  const Guid guid = s.topo.port(end_port).guid;
  const bool self = end_port.node == s.self && (s.is_switch(s.self) || end_port.port == s.self_port);
  std::vector<PKey> keys;
  std::optional<PKey> index0;
  const auto add = [&](PKey k) {
    for (PKey& have : keys)
      if (have.base() == k.base() && (have.is_full_member() == k.is_full_member() || !allow_both_pkeys)) {
        if (k.is_full_member()) have = k;  // full membership wins a merge
        return;
      }
    keys.push_back(k);
  };
  for (const Partition& part : partitions.partitions) {
    std::optional<Membership> m;
    for (const PartitionMember& member : part.members) {
      bool match = false;
      switch (member.kind) {
        case PartitionMember::Kind::kGuid: match = member.guid == guid; break;
        case PartitionMember::Kind::kAll: match = true; break;
        case PartitionMember::Kind::kAllCas: match = node.info.node_type == mad::NodeType::kChannelAdapter; break;
        case PartitionMember::Kind::kAllSwitches: match = node.info.node_type == mad::NodeType::kSwitch; break;
        case PartitionMember::Kind::kAllRouters: match = node.info.node_type == mad::NodeType::kRouter; break;
        case PartitionMember::Kind::kSelf: match = self; break;
      }
      if (!match) continue;
      // A port named twice keeps the strongest membership.
      if (!m || member.membership == Membership::kBoth ||
          (member.membership == Membership::kFull && *m == Membership::kLimited))
        m = member.membership;
    }
    if (!m) continue;
    const PKey full = PKey(part.pkey.base()).as_full(), limited = PKey(part.pkey.base());
    if (*m == Membership::kFull || (*m == Membership::kBoth && !allow_both_pkeys)) add(full);
    else if (*m == Membership::kLimited) add(limited);
    else {
      add(full);
      add(limited);
    }
    if (part.index0 && !index0) index0 = *m == Membership::kLimited ? limited : full;
  }
  // Index 0: the indx0 partition's key, else the default partition's, when the port has it.
  const auto first = [&](uint16_t base) {
    return std::find_if(keys.begin(), keys.end(), [&](PKey k) { return k.base() == base; });
  };
  // As OpenSM does it: the key that belongs at index 0 swaps places with the one there (so the
  // default key moves to where the indx0 key was), checked against OpenSM on ibsim.
  auto zero = index0 ? first(index0->base()) : first(kDefaultPKey.base());
  if (zero != keys.end()) std::iter_swap(keys.begin(), zero);
  return keys;
}

}  // namespace softib::sm
