// What a job does when its pods fail or its node is lost: restart the whole gang
// (requeue it) or give up. Follows the upstream knobs the workloads layer folded
// into model::LifecycleSpec: restartPolicy OnFailure / ExitCode, Volcano `policies`
// (event -> action) with maxRetry, backoffLimit, JobSet failurePolicy.maxRestarts.
#pragma once

#include <cstdint>
#include <string>

#include "model/workload.h"

namespace muster::engine {

// Volcano event names a failure maps to.
inline constexpr const char* kEventPodFailed = "PodFailed";
inline constexpr const char* kEventPodEvicted = "PodEvicted";

enum class FailureAction { kRestart, kFail };

// What the job's own failure policy already decided for a pod failure (JobSet
// failurePolicy.rules), overriding the lifecycle knobs; kPolicy lets them decide.
enum class FailureDirective {
  kPolicy,            // DecideOnFailure (RestartJobSet: counts toward maxRestarts)
  kFail,              // FailJobSet
  kRestartUncounted,  // RestartJobSetAndIgnoreMaxRestarts
};

struct FailureVerdict {
  FailureAction action = FailureAction::kFail;
  std::string why;  // one line: which policy decided
};

// Restarts while restart_on_failure holds and fewer than max_restarts failures
// happened; a matching Volcano policy decides instead when there is one.
// `failures_so_far` counts earlier failures of this workload (not preemptions).
// `event` is the Volcano event the failure is (kEventPodFailed for a node loss).
FailureVerdict DecideOnFailure(const model::LifecycleSpec& lifecycle, int32_t failures_so_far,
                               const std::string& event);

}  // namespace muster::engine
