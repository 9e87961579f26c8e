// LID assignment (OpenSM's LID manager rules): every end port — CA and router ports and
// switch port 0 — gets an LMC-aligned range of 2^LMC LIDs, in this order of preference:
//   1. the range the guid2lid file remembers for its GUID (stable across SM restarts),
//   2. the LIDs the port already has (pre-set LIDs honoured) unless reassign_lids,
//   3. the lowest free aligned range, avoiding ranges guid2lid keeps for absent ports.
// Two ports claiming one range: the first in request order keeps it, the other moves. The SM
// asks in OpenSM's order (its own port, then port GUIDs in OpenSM's map order).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"
#include "sm/guid2lid.hpp"

namespace softib::sm {

struct LidRequest {
  Guid port_guid;
  Lid current;          // the port's LID as read (0: none)
  uint8_t lmc = 0;      // the LMC this port gets
};

struct LidAssignment {
  std::vector<LidRange> ranges;  // parallel to the requests
  uint32_t from_guid2lid = 0, kept = 0, fresh = 0, moved = 0;  // how each was decided
};

// Errors: ResourceExhausted when the unicast LID space (1..0xBFFF) cannot hold them all.
// Updates `persisted` with every assignment.
Result<LidAssignment> assign_lids(std::span<const LidRequest> requests, Guid2Lid& persisted,
                                  bool reassign_lids);

}  // namespace softib::sm
