// Layering probe: base may not include wire (a higher layer). Must fail to compile with
// "wire/bth.hpp: No such file or directory".
#include "wire/bth.hpp"

int layering_probe_forbidden();
int layering_probe_forbidden() { return 0; }
