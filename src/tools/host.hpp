// "This host": a softib fabric lives on one machine, so a shell says which of its nodes it
// stands for (--host / SOFTIB_HOST), as umad2sim's SIM_HOST does. Tools then see that node's
// HCA ports as their local ports.
#pragma once

#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "ipc/client.hpp"

namespace softib::tools {

// A node by its net-file id ("host-a", "H-00001", "S-L0001"), its description, or its node
// or port GUID (0x...). Errors: NotFound naming what was looked for.
Result<ipc::NodeEntry> find_node(const std::vector<ipc::NodeEntry>& nodes, std::string_view which);

// The CA this shell stands for: `host` if given, else the fabric's first CA.
// Errors: NotFound; InvalidArgument when `host` names a switch.
Result<ipc::NodeEntry> this_host(const std::vector<ipc::NodeEntry>& nodes, std::string_view host);

// A tool's MAD port: connects to the fabric, finds this shell's host (`host`, see this_host)
// and opens its port `port` (1 for the first) with the tool agents. `nodes` receives the
// fabric's node list when not null.
struct RpcOptions;
class MadRpc;
Result<MadRpc> open_tool_port(std::string_view fabric, std::string_view host, uint8_t port,
                              const RpcOptions& options, std::vector<ipc::NodeEntry>* nodes = nullptr);

}  // namespace softib::tools
