// The P_Key table partitions.conf gives an end port, by OpenSM's rules (checked against
// OpenSM 3.3.23 on ibsim): per partition the port belongs to, its strongest membership
// (both, else full, else limited) as the full or limited key — both keys for "both" only
// with allow_both_pkeys; keys of one base merged (full wins); in partition order, then the
// indx0 partition's key (else the default partition's) swapped into index 0. Not cut to any
// capacity: the caller decides what to do with a table that does not fit.
#pragma once

#include <vector>

#include "base/ids.hpp"
#include "mad/node_info.hpp"
#include "sm/partitions.hpp"
#include "sm/subnet.hpp"

namespace softib::sm {

// `end_port`: a CA or router port, or a switch's port 0. SELF is the subnet's own port.
std::vector<PKey> partition_keys(const Subnet& subnet, PortRef end_port, const PartitionConfig& partitions,
                                 bool allow_both_pkeys);

}  // namespace softib::sm
