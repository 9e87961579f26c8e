// Where a command's fabric comes from: a net file, or a generator spec typed in its place.
#pragma once

#include <string>

#include "base/result.hpp"
#include "fabric/topology.hpp"

namespace softib::tools {

struct LoadedTopology {
  fabric::Topology topology;
  bool generated = false;
  std::vector<std::string> warnings;  // from the net reader
};

// `source` names an existing file: it is read as a net file (errors carry file:line).
// Otherwise it must be a generator spec ("ft2", "ft3:radix=8", "torus:8x8,hosts=4", "b2b",
// "switch:hosts=2"). Errors: NotFound for a missing file that is not a spec either.
Result<LoadedTopology> load_topology(const std::string& source);

}  // namespace softib::tools
