// Fabric generators. Node ids, descriptions, port numbering and GUIDs follow one
// convention, so that a generated fabric written as a net file and loaded by ibsim gets the
// same GUIDs softib gave it: CAs first ("H-00001", "h00001 HCA-1"), then switches, GUIDs from
// ibsim's counters in that order (CAs 0x100000 + (ports+1) each, switches 0x200000 + 1 each).
// Every cable is 4xEDR on both ends, as the sample fabrics are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "fabric/topology.hpp"

namespace softib::fabric {

// Two levels: leaves with hosts and uplinks, spines above. Leaf port order: hosts 1..h, then
// for each spine `parallel` consecutive uplinks; spine port order: for each leaf `parallel`
// consecutive downlinks. 0 means "full": leaves = radix, spines = radix/2 / parallel,
// hosts_per_leaf = radix/2.
struct FatTree2 {
  int radix = 36;
  int leaves = 0;
  int spines = 0;
  int hosts_per_leaf = 0;
  int parallel = 1;
};

// Three levels, the k-ary fat-tree: `pods` pods of radix/2 edge ("leaf") and radix/2
// aggregation switches, (radix/2)^2 core switches, hosts_per_edge hosts on each edge switch.
// Full (pods = radix, hosts_per_edge = radix/2): radix^3/4 hosts, 5 radix^2/4 switches.
struct FatTree3 {
  int radix = 36;
  int pods = 0;
  int hosts_per_edge = 0;
};

// A 2D or 3D torus (wrap-around links) or mesh of switches with hosts on each. Switch port
// order: hosts 1..h, then +x, -x, +y, -y, +z, -z. Switches are named S-T<x>-<y>[-<z>].
struct Grid {
  std::vector<int> dims;  // 2 or 3 sizes, each >= 1
  bool torus = true;
  int hosts_per_switch = 1;
  int radix = 36;
};

Result<Topology> generate(const FatTree2& spec);
Result<Topology> generate(const FatTree3& spec);
Result<Topology> generate(const Grid& spec);
// Two HCAs cabled port to port ("host-a", "host-b").
Topology back_to_back();
// One switch with `hosts` HCAs: the admin guides' simplest fabric (hosts 2: "host-a",
// "host-b").
Result<Topology> single_switch(int hosts, int radix = 36);

// A generator spec as users type it:
//   ft2[:radix=36,leaves=2,spines=2,hosts=8,parallel=4]    ft3[:radix=48,pods=48,hosts=24]
//   torus:8x8[,hosts=4]   mesh:4x4x4[,hosts=2]   b2b   switch[:hosts=2]
// Errors: InvalidArgument naming the bad part.
Result<Topology> generate(std::string_view spec);

}  // namespace softib::fabric
