// Reads the ibnetdiscover / ibsim "net" topology format (docs: net-format.md in the steering
// repository). Every file the real ibnetdiscover writes loads, with its GUIDs (node, system
// image, port: the "(guid)" annotations ibsim ignores are honoured) and LIDs (switch "lid N
// lmc M", CA port "# lid N lmc M") preserved. ibsim's extras are understood too: switchguid /
// caguid / rtguid counters (absolute "=" and relative "+"), vendid, devid, sysimgguid, width,
// speed, extspeed, module prefixes, include (depth 9), port aliases (@[p] "a" / "@a"), and the
// w= s= e= port options.
//
// Where ibsim silently mis-parses, softib rejects the file with file:line and a reason
// instead: a port line outside a node record, a duplicate port line, a one-sided cable, a
// "=" inside a comment taken as an option (softib reads options only before the '#').
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "fabric/topology.hpp"

namespace softib::fabric {

struct NetReadOptions {
  // ibsim -I: load fabrics whose nodes share a GUID (diagnostics want to show them).
  bool allow_duplicate_guids = false;
  // "include FILE" lines; off for text from untrusted sources (it reads other files).
  bool allow_includes = true;
};

struct NetFile {
  Topology topology;
  // Non-fatal remarks, each "file:line: text" (e.g. an ignored "do" console command).
  std::vector<std::string> warnings;
};

// Errors: NotFound when the file cannot be opened; ParseError "file:line: reason" for a bad
// file (the first error found).
Result<NetFile> read_net_file(const std::string& path, const NetReadOptions& options = {});

// Parses `text` as if it were the file `name`; includes are resolved relative to the
// directory of `name` (then the current directory).
Result<NetFile> read_net(std::string_view text, std::string_view name = "<input>",
                         const NetReadOptions& options = {});

}  // namespace softib::fabric
