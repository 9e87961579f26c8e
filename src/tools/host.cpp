#include "tools/host.hpp"

#include <charconv>

#include <fmt/format.h>

#include "tools/mad_rpc.hpp"

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

Result<MadRpc> open_tool_port(std::string_view fabric, std::string_view host, uint8_t port,
                              const RpcOptions& options, std::vector<ipc::NodeEntry>* nodes) {
  auto c = ipc::Connection::open(fabric, "softib");
  if (!c) return Err{c.error()};
  auto all = c->list_nodes();
  if (!all) return Err{all.error()};
  auto me = this_host(*all, host);
  if (!me) return Err{me.error()};
  if (port == 0 || port > me->num_ports)
    return Status(Code::kInvalidArgument, fmt::format("{} has no port {}", me->id, port));
  const uint32_t index = me->index;
  if (nodes) *nodes = std::move(*all);
  return MadRpc::attach(std::move(*c), index, port, options);
}

}  // namespace softib::tools
