// When a batch/v1 Job's time is up, read from its stored object only, so a
// restarted server finds the same instants (no timers): activeDeadlineSeconds
// counts from status.startTime (pkg/controller/job), ttlSecondsAfterFinished from
// the lastTransitionTime of its Complete or Failed condition
// (pkg/controller/ttlafterfinished).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/clock.h"

namespace muster::control {

// Upstream's Failed condition for a Job past its deadline.
inline constexpr const char* kDeadlineExceeded = "DeadlineExceeded";
inline constexpr const char* kDeadlineExceededMessage =
    "Job was active longer than specified deadline";

// "2026-11-27T15:04:05Z" (fractional seconds allowed) as Unix seconds.
std::optional<Time> ParseRfc3339(const std::string& text);

// A batch/v1 Job with spec.activeDeadlineSeconds and status.startTime: when its
// deadline passes. nullopt otherwise (not started, or suspended: no startTime).
std::optional<Time> ActiveDeadline(const nlohmann::json& job);

// A batch/v1 Job with spec.ttlSecondsAfterFinished that finished (a Complete or
// Failed condition with status True): when it is to be deleted.
std::optional<Time> TtlExpiry(const nlohmann::json& job);

}  // namespace muster::control
