// Durations as the simulation annotations and muster's configuration write them.
#pragma once

#include <string_view>

#include "core/status.h"

namespace muster::api {

// Seconds from a plain non-negative number ("90", "1.5") or a Go-style duration
// ("90s", "15m", "2h", "1h30m", "1.5h", "500ms"). Negative values are rejected:
// every use is a time from the start of the simulation or a timeout.
Result<double> ParseDuration(std::string_view text);

}  // namespace muster::api
