// The sim.muster.dev/* annotations of a job (CONTRACT section 1).
#include <limits>
#include <optional>
#include <string>

#include "core/duration.h"
#include "workloads/build_internal.h"
#include "workloads/keys.h"

namespace muster::workloads::internal {
namespace {

// Parses annotation `key` when present; `positive` rejects zero (an interval of 0
// would schedule infinitely many checkpoints).
Result<std::optional<double>> ReadSeconds(const model::ObjectMeta& meta, std::string_view key,
                                          bool positive) {
  auto it = meta.annotations.find(std::string(key));
  if (it == meta.annotations.end()) return std::optional<double>();
  std::string field = "metadata.annotations[" + std::string(key) + "]";
  Result<double> seconds = ParseDurationSeconds(it->second);
  if (!seconds.ok()) return FieldError(meta, field, seconds.status().message());
  if (*seconds < 0 || (positive && *seconds == 0)) {
    return FieldError(
        meta, field,
        "\"" + it->second + "\" must be " + (positive ? "greater than zero" : "zero or more"));
  }
  return std::optional<double>(*seconds);
}

}  // namespace

Status ParseSimSpec(const model::ObjectMeta& meta, model::WorkloadSimSpec* sim) {
  auto submit_at = ReadSeconds(meta, kSubmitAtAnnotation, /*positive=*/false);
  if (!submit_at.ok()) return submit_at.status();
  auto duration = ReadSeconds(meta, kDurationAnnotation, /*positive=*/false);
  if (!duration.ok()) return duration.status();
  auto checkpoint = ReadSeconds(meta, kCheckpointIntervalAnnotation, /*positive=*/true);
  if (!checkpoint.ok()) return checkpoint.status();
  std::optional<double> ready_after;
  if (auto it = meta.annotations.find(std::string(kPodsReadyAfterAnnotation));
      it != meta.annotations.end() && it->second == "never") {
    ready_after = std::numeric_limits<double>::infinity();
  } else {
    auto after = ReadSeconds(meta, kPodsReadyAfterAnnotation, /*positive=*/false);
    if (!after.ok()) return after.status();
    ready_after = *after;
  }
  sim->submit_at = submit_at->value_or(0);
  sim->pods_ready_after = ready_after;
  sim->duration = *duration;
  sim->checkpoint_interval = *checkpoint;
  return Status::Ok();
}

}  // namespace muster::workloads::internal
