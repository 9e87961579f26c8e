// Many independent MAD queries with a window of them in flight, sent in batches (one
// message to the daemon per refill) and matched to their answers by TID through a hash map:
// what the diagnostics need to read every port of a fabric of thousands of nodes quickly.
// MadRpc::call_many does the same one MAD per message with a linear search of the window,
// which is fine for a tool's handful of queries but not for a quarter of a million.
//
// Thread: the MadRpc's.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "base/result.hpp"
#include "tools/mad_rpc.hpp"

namespace softib::tools {

// Every request's answer in request order: the response MAD (its MAD status is the
// caller's to look at), or Timeout after the RPC's retries. The outer error is the
// connection's (the daemon went away).
Result<std::vector<Result<MadBytes>>> query_windowed(MadRpc& rpc, std::span<const MadRequest> requests,
                                                     size_t window = 256);

}  // namespace softib::tools
