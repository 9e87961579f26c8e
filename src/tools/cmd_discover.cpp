// Placeholder until the subcommands land (issue 4 work in progress).
#include "tools/command.hpp"

namespace softib::tools {

void register_discover(CLI::App&, CommandContext&) {}

}  // namespace softib::tools
