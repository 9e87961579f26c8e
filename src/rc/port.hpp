// What the transport needs to know of its HCA port: addresses, MTU, the P_Key table.
// Who fills it: softibd through the engine (the SM sets LIDs and P_Keys), or a test.
#pragma once

#include <cstdint>
#include <vector>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "verbs/qp_attr.hpp"

namespace softib::rc {

struct PortAttr {
  bool active = true;
  Lid lid{};
  uint8_t lmc = 0;
  verbs::Mtu max_mtu = verbs::Mtu::k4096;
  verbs::Mtu active_mtu = verbs::Mtu::k4096;
  std::vector<PKey> pkeys{PKey::default_full()};
  std::vector<Gid> gids;
  // RoCE (Ethernet link layer): every packet has a GRH, which the wire carries as an IPv4
  // header when both GIDs are IPv4-mapped; completions report no SLID (there is no LRH).
  bool roce = false;
};

}  // namespace softib::rc
