#include "tools/host.hpp"

#include <charconv>

#include <fmt/format.h>

namespace softib::tools {

Result<ipc::NodeEntry> find_node(const std::vector<ipc::NodeEntry>& nodes, std::string_view which) {
  for (const auto& n : nodes)
    if (n.id == which) return n;
  for (const auto& n : nodes)
    if (n.description == which) return n;
  uint64_t guid = 0;
  std::string_view digits = which;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), guid, 16);
  if (ec == std::errc() && end == digits.data() + digits.size() && !digits.empty()) {
    for (const auto& n : nodes) {
      if (n.node_guid == guid) return n;
      for (uint64_t g : n.port_guids)
        if (g == guid) return n;
    }
  }
  return Status(Code::kNotFound, fmt::format("no node \"{}\" in this fabric", which));
}

Result<ipc::NodeEntry> this_host(const std::vector<ipc::NodeEntry>& nodes, std::string_view host) {
  if (!host.empty()) {
    auto n = find_node(nodes, host);
    if (!n) return n;
    if (n->type == 2) return Status(Code::kInvalidArgument, fmt::format("\"{}\" is a switch, not a host", host));
    return n;
  }
  for (const auto& n : nodes)
    if (n.type != 2) return n;
  return Status(Code::kNotFound, "this fabric has no HCA");
}

}  // namespace softib::tools
