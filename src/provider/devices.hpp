// Which devices a verbs program on this host sees, and where their fabric is.
//
// A softib fabric lives on one machine, so a program says which of its nodes it stands for
// (SOFTIB_HOST, `softib run --host`), as the toolbox does (tools/host.hpp): it sees that
// node's channel adapters, and every CA with the same system image GUID (a host with several
// HCAs), as softib0, softib1, ... in fabric order. Without a host, the fabric's first CA is
// this host; SOFTIB_HOST=all shows every CA of the fabric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"
#include "engine/options.hpp"

namespace softib::provider {

struct Options {
  std::string fabric;  // empty: SOFTIB_FABRIC, else "default"
  std::string socket;  // empty: the fabric's socket (ipc/paths.hpp)
  std::string host;    // empty: SOFTIB_HOST, else the fabric's first CA; "all": every CA
  engine::EngineOptions engine;  // each opened device's engine thread (defaults; tests change them)
  // Reads SOFTIB_FABRIC, SOFTIB_SOCKET and SOFTIB_HOST for what is empty.
  static Options from_environment();
};

// One channel adapter as a program sees it (struct ibv_device plus its node).
struct DeviceInfo {
  std::string name;         // softib0, softib1, ...
  uint32_t node = 0;        // the fabric's node index
  std::string node_id;      // the net file's id ("host-a")
  std::string description;  // NodeDescription
  Guid node_guid{}, sys_image_guid{};
  uint8_t num_ports = 0;
  uint32_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t revision = 0;
  std::vector<Guid> port_guids;
};

// The devices this process sees. Errors: Unavailable when no softibd serves the fabric
// ("is softibd running? softib up"), NotFound for a host the fabric does not have.
Result<std::vector<DeviceInfo>> list_devices(const Options& options);

}  // namespace softib::provider
