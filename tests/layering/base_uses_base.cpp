// Layering probe: a base translation unit including a base header. Must build.
#include "base/ids.hpp"

int layering_probe_allowed();
int layering_probe_allowed() { return softib::Lid(1).value(); }
