// Durations as the simulation annotations and --until spell them: plain seconds
// ("90", "1.5") or Go-style durations ("90s", "15m", "2h", "1h30m", "500ms").
#pragma once

#include <string_view>

#include "core/status.h"

namespace muster::sim {

// Seconds; rejects negative, empty and malformed text with a message naming it.
Result<double> ParseDuration(std::string_view text);

}  // namespace muster::sim
