// Durations as muster reads them everywhere (simulation annotations, --until, config): plain
// seconds ("90", "1.5") or Go time.ParseDuration strings ("90s", "15m", "2h", "1h30m", "250ms").
#pragma once

#include <string_view>

#include "core/status.h"

namespace muster {

// Seconds in `text`. Accepts an optional sign, then either a decimal number of seconds
// or one or more <decimal><unit> pairs with units ns, us (µs, μs), ms, s, m, h, as Go
// does; "0" alone is zero. Rejects empty text, exponents, "inf"/"nan", unknown units
// and trailing garbage. A negative result is returned as is: callers decide if it is
// allowed.
Result<double> ParseDurationSeconds(std::string_view text);

}  // namespace muster
