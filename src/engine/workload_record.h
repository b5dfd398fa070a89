// The engine's view of one workload: its lifecycle phase, the times that matter for
// reporting, its latest admission (flavors + placement) and its eviction history.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admission/admission.h"
#include "core/clock.h"
#include "model/workload.h"
#include "placement/placement.h"

namespace muster::engine {

enum class Phase {
  kPending,    // waiting for admission (or not yet created)
  kAdmitted,   // quota reserved, gang not placed yet (quota-only admission)
  kRunning,    // the gang is bound to nodes
  kSucceeded,  // finished
  kFailed,     // gave up: lifecycle policy exhausted
};

// "Pending", "Admitted", ... as CONTRACT section 3 spells them.
std::string_view PhaseName(Phase phase);

// Eviction reasons, as CONTRACT section 3 spells them.
inline constexpr const char* kReasonPreempted = "Preempted";
inline constexpr const char* kReasonNodeFailure = "NodeFailure";
inline constexpr const char* kReasonPodsReadyTimeout = "PodsReadyTimeout";
inline constexpr const char* kReasonDeactivated = "Deactivated";
// Kueue's Evicted reason when waitForPodsReady's backoffLimitCount deactivates it.
inline constexpr const char* kReasonDeactivatedRequeuingLimit =
    "DeactivatedDueToRequeuingLimitExceeded";
// Kueue's underlying cause when waitForPodsReady's backoffLimitCount is exhausted.
inline constexpr const char* kReasonRequeuingLimitExceeded = "RequeuingLimitExceeded";
inline constexpr const char* kReasonClusterQueueStopped = "ClusterQueueStopped";
// The cluster or queue configuration changed and no longer takes a running gang.
inline constexpr const char* kReasonConfigurationChanged = "ConfigurationChanged";
// A NoExecute taint on its node that a pod does not tolerate, or no longer does
// (the DisruptionTarget reason Kubernetes' taint manager gives the pod).
inline constexpr const char* kReasonTaintEviction = "DeletionByTaintManager";

struct Eviction {
  Time time = 0;
  std::string reason;  // one of kReason*
  std::string detail;  // preemption detail (InClusterQueue...) or what failed
  std::string by;      // preemptor key; "" when none
};

// An elastic gang changed size while it ran (engine/elastic.cc).
struct Resize {
  Time time = 0;
  std::string kind;    // "Grow" (capacity freed) | "Shrink" (gave pods to a preemptor)
  std::string detail;  // Shrink: the preemption detail (InClusterQueue, VolcanoPreempt...)
  std::string by;      // Shrink: the preemptor; "" when none
  int32_t from = 0;    // pods before
  int32_t to = 0;      // pods after
};

struct WorkloadRecord {
  model::Workload workload;
  Phase phase = Phase::kPending;
  bool submitted = false;  // the "workload created" event happened

  std::optional<Time> submit_time;
  std::optional<Time> first_admit_time;  // for queueing delay
  std::optional<Time> admit_time;        // latest admission
  std::optional<Time> start_time;        // latest start
  std::optional<Time> finish_time;

  // Latest admission: kept after the workload finishes, cleared when it is evicted.
  admission::Assignment assignment;
  placement::GangPlan plan;
  bool bound = false;  // `plan` is committed in the ClusterState right now

  // Where admission queued it, remembered because admission forgets finished ones.
  admission::QueueInfo queue;

  std::vector<Eviction> evictions;
  std::vector<Resize> resizes;  // elastic growth and shrinking, in time order
  int32_t failures = 0;         // failures counted against the lifecycle budget
  // Restarts a failure policy kept off that budget (RestartJobSetAndIgnoreMaxRestarts).
  int32_t uncounted_restarts = 0;
  std::string failure_message;  // why it is Failed
  std::string failure_reason;   // set by Engine::FailJob: its Job's Failed condition reason

  // Kueue's waitForPodsReady (engine/pods_ready.cc); inert unless it is enabled.
  bool pods_ready = false;              // every pod of the current gang is ready
  std::optional<Time> ready_lost_time;  // was ready in this admission, then lost it
  int32_t requeue_count = 0;            // status.requeueState.count
  std::optional<Time> requeue_at;       // status.requeueState.requeueAt: out of line until then
  bool deactivated = false;             // spec.active=false: never admitted again
  // The last PodsReadyTimeout eviction as a restarted server read it back (its own
  // evictions are not restored): orders the requeue under timestamp Eviction.
  std::optional<Time> restored_eviction_time;

  // The latest pending reason the engine logged for it (admission's, or its own:
  // Inactive, Backoff, blocked admission), shown while it waits; `noted` is false
  // once it was admitted or after it has none. Held here, not in a map by key: a
  // cycle logs one for most heads it cannot admit. An interned text of admission's
  // (Decision::text) is kept shared, not copied: a wave's first cycle notes one for
  // thousands of workloads, each a record not touched since it was queued.
  struct PendingNote {
    bool noted = false;
    std::string reason;   // when `shared` is null
    std::string message;  // when `shared` is null
    std::shared_ptr<const admission::PendingText> shared;
    const std::string& Reason() const { return shared ? shared->reason : reason; }
    const std::string& Message() const { return shared ? shared->message : message; }
  };
  PendingNote pending_note;

  const std::string& key() const { return workload.key; }
  // `workload` for the admitter to read in place (Admitter::Enqueue): a pointer that
  // owns nothing, valid while the record lives. Records never move (RecordTable), the
  // engine removes a workload from admission before its record goes, and a record's
  // workload is never changed after it is added.
  std::shared_ptr<const model::Workload> SharedWorkload() const {
    return std::shared_ptr<const model::Workload>(std::shared_ptr<const model::Workload>(),
                                                  &workload);
  }
  bool Active() const { return phase == Phase::kAdmitted || phase == Phase::kRunning; }
  bool Finished() const { return phase == Phase::kSucceeded || phase == Phase::kFailed; }
};

// GPUs (nvidia.com/gpu) a placed gang holds: the sum over its placed pods.
int64_t PlacedGpus(const WorkloadRecord& record);

}  // namespace muster::engine
