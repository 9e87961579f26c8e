// LocalFabric: channel adapters that live in one process, joined by the loopback link — no
// softibd, no shared memory. Every port is Active from the start with LID 1, 2, ... (the CA's
// index + 1), the default P_Key and a 4096-byte MTU, as an SM would leave a simple fabric.
// Several contexts may open the same CA: each gets its own QPN block, as processes do.
//
// Thread: any; contexts created from it must be destroyed before it.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "link/loopback.hpp"
#include "link/shm_directory.hpp"
#include "provider/devices.hpp"

namespace softib::provider {

class LocalFabric {
 public:
  explicit LocalFabric(uint32_t hcas = 2);
  uint32_t hcas() const { return static_cast<uint32_t>(devices_.size()); }
  const DeviceInfo& device(uint32_t hca) const { return devices_.at(hca); }
  link::LoopbackHub& hub() { return hub_; }
  // What the port looks like (as a directory would say).
  link::PortSnapshot port(uint32_t hca) const;
  // The next free QPN block of the CA: [first, last].
  std::pair<uint32_t, uint32_t> take_qpn_block(uint32_t hca);

 private:
  std::vector<DeviceInfo> devices_;
  std::vector<uint32_t> next_block_;
  std::mutex mu_;
  link::LoopbackHub hub_;
};

}  // namespace softib::provider
