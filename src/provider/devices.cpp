#include "provider/devices.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "ipc/client.hpp"

namespace softib::provider {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

bool names(const ipc::NodeEntry& n, const std::string& which) {
  if (n.id == which || n.description == which) return true;
  // "host-a" also names "host-a HCA-1" (the net file's usual description).
  if (n.description.size() > which.size() && n.description.compare(0, which.size(), which) == 0 &&
      n.description[which.size()] == ' ')
    return true;
  const std::string guid = fmt::format("{:#018x}", n.node_guid);
  return which == guid || which == fmt::format("{:#x}", n.node_guid);
}

}  // namespace

Options Options::from_environment() {
  Options o;
  o.fabric = env("SOFTIB_FABRIC");
  o.socket = env("SOFTIB_SOCKET");
  o.host = env("SOFTIB_HOST");
  return o;
}

Result<std::vector<DeviceInfo>> list_devices(const Options& options) {
  auto conn = ipc::Connection::open(options.fabric, "softib verbs", options.socket);
  if (!conn) return Err{conn.error()};
  auto nodes = conn->list_nodes(ipc::Connection::NodeFilter::kCas);
  if (!nodes) return Err{nodes.error()};
  std::vector<const ipc::NodeEntry*> mine;
  if (options.host == "all") {
    for (const auto& n : *nodes) mine.push_back(&n);
  } else {
    const ipc::NodeEntry* host = nullptr;
    if (options.host.empty()) {
      if (!nodes->empty()) host = &nodes->front();
    } else {
      for (const auto& n : *nodes)
        if (names(n, options.host)) {
          host = &n;
          break;
        }
      if (host == nullptr)
        return Status(Code::kNotFound, fmt::format("the fabric has no channel adapter \"{}\"", options.host));
    }
    if (host != nullptr)
      for (const auto& n : *nodes)
        if (&n == host || (host->system_image_guid != 0 && n.system_image_guid == host->system_image_guid))
          mine.push_back(&n);
  }
  std::vector<DeviceInfo> out;
  for (const ipc::NodeEntry* n : mine) {
    DeviceInfo d;
    d.name = fmt::format("softib{}", out.size());
    d.node = n->index;
    d.node_id = n->id;
    d.description = n->description;
    d.node_guid = Guid(n->node_guid);
    d.sys_image_guid = Guid(n->system_image_guid);
    d.num_ports = n->num_ports;
    d.vendor_id = n->vendor_id;
    d.device_id = n->device_id;
    d.revision = n->revision;
    for (uint64_t g : n->port_guids) d.port_guids.push_back(Guid(g));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace softib::provider
