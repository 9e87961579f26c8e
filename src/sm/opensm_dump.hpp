// OpenSM's dump files, byte for byte in OpenSM 3.3.23's formats, so that scripts written for
// OpenSM's dump_files_dir read ours:
//   opensm-lfts.dump   every switch's LFT ("Unicast lids [0-N] of switch Lid L guid G ('D'):")
//   opensm-subnet.lst  one line per cabled port: both ends, link width, state and speed
// Both list nodes in OpenSM's map order (node GUIDs compared in network byte order, as its
// cl_qmap keys are) and keep its quirks, e.g. the far end's DevID printed through a 32-bit
// byte swap of a 16-bit field ("DevID:BD360000").
#pragma once

#include <string>

#include "base/result.hpp"
#include "sm/routing_engine.hpp"
#include "sm/routing_graph.hpp"
#include "sm/subnet.hpp"

namespace softib::sm {

std::string format_lfts_dump(const Subnet& subnet, const RoutingGraph& graph, const RoutingTables& tables);
std::string format_subnet_lst(const Subnet& subnet);

// Reads an opensm-lfts.dump back into tables for `graph` (switches matched by GUID, LIDs as
// written), so that another SM's routing can be measured with routing_check. Switches of the
// graph the dump does not mention keep empty tables; entries the dump omits stay kDropPort.
// Errors: ParseError "name:line: reason" (a malformed line, a LID or port out of range, an
// entry before any switch header, a switch GUID not in the graph).
Result<RoutingTables> read_lfts_dump(std::string_view text, std::string_view name, const RoutingGraph& graph);

// Writes both files into `dir` (which must exist). Errors: IoError naming the file.
Result<void> write_opensm_dumps(const std::string& dir, const Subnet& subnet, const RoutingGraph& graph,
                                const RoutingTables& tables);

}  // namespace softib::sm
