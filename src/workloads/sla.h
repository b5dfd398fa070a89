// Volcano's sla plugin annotation (pkg/scheduler/plugins/sla): the longest a job
// should wait. A job that has waited longer since it was created is ordered ahead
// of the others in its queue and may reserve the nodes it waits for.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/meta.h"

namespace muster::workloads {

inline constexpr std::string_view kSlaWaitingTimeAnnotation = "sla-waiting-time";

// The annotation's value in seconds (a Go duration such as "1h2m3s"); nullopt when
// absent. Volcano ignores a value it cannot parse or that is not positive: nullopt,
// with the reason in `why`.
std::optional<double> ParseSlaWaitingTime(const model::StringMap& annotations, std::string* why);

}  // namespace muster::workloads
