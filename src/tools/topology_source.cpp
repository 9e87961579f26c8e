#include "tools/topology_source.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"

namespace softib::tools {

namespace {

bool looks_like_spec(const std::string& s) {
  for (const char* kind : {"ft2", "ft3", "torus", "mesh", "b2b", "switch"}) {
    const std::string_view k(kind);
    if (s.starts_with(k) && (s.size() == k.size() || s[k.size()] == ':')) return true;
  }
  return false;
}

}  // namespace

Result<LoadedTopology> load_topology(const std::string& source) {
  LoadedTopology out;
  struct stat st {};
  if (::stat(source.c_str(), &st) == 0 || !looks_like_spec(source)) {
    auto net = fabric::read_net_file(source);
    if (!net) return Err{net.error()};
    out.topology = std::move(net->topology);
    out.warnings = std::move(net->warnings);
    return out;
  }
  auto t = fabric::generate(source);
  if (!t) return Err{t.error()};
  out.topology = std::move(*t);
  out.generated = true;
  return out;
}

}  // namespace softib::tools
