// The SimulationResult as CONTRACT section 3's JSON object: stable key order,
// times rounded to microseconds so the text is byte-identical run to run.
#pragma once

#include <string>

#include "sim/result.h"

namespace muster::sim {

// Pretty-printed (2-space indent), ending in a newline.
std::string ToJson(const SimulationResult& result);

}  // namespace muster::sim
