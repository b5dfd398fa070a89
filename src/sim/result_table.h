// The SimulationResult as a human-readable table (`-o table`, the default).
#pragma once

#include <string>

#include "sim/result.h"

namespace muster::sim {

// Columns NAME KIND QUEUE PHASE SUBMIT ADMIT START FINISH NODES REASON, then a
// summary block.
std::string ToTable(const SimulationResult& result);

}  // namespace muster::sim
