// `softib topo`: write generated fabrics as net files, and describe a fabric.
#pragma once

#include <string>

#include "base/result.hpp"
#include "fabric/topology.hpp"

namespace softib::tools {

// The net file of a generated fabric, in the layout of the sample fabrics (and of ibsim's
// own examples): CAs then switches in generation order, no GUID lines — ibsim and softib
// both assign the generator's GUIDs from their counters. Errors: a bad spec.
Result<std::string> topo_gen(const std::string& spec);

// A short description: node and link counts by type, port count range, link rates, and
// the net reader's warnings. Errors: the file's load error (file:line).
Result<std::string> topo_show(const std::string& source);

}  // namespace softib::tools
