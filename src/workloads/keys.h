// Label and annotation keys this layer reads, named once so a typo cannot hide.
#pragma once

#include <string_view>

namespace muster::workloads {

// Kueue.
inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr std::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";
inline constexpr std::string_view kJobMinParallelismAnnotation =
    "kueue.x-k8s.io/job-min-parallelism";
inline constexpr std::string_view kRequiredTopologyAnnotation =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr std::string_view kPreferredTopologyAnnotation =
    "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr std::string_view kUnconstrainedTopologyAnnotation =
    "kueue.x-k8s.io/podset-unconstrained-topology";

// Volcano.
inline constexpr std::string_view kVolcanoQueueAnnotation = "scheduling.volcano.sh/queue-name";
inline constexpr std::string_view kPodGroupNameAnnotation = "scheduling.k8s.io/group-name";
inline constexpr std::string_view kVolcanoSchedulerName = "volcano";
inline constexpr std::string_view kVolcanoDefaultQueue = "default";

// muster simulation (CONTRACT section 1).
inline constexpr std::string_view kSubmitAtAnnotation = "sim.muster.dev/submit-at";
inline constexpr std::string_view kDurationAnnotation = "sim.muster.dev/duration";
inline constexpr std::string_view kCheckpointIntervalAnnotation =
    "sim.muster.dev/checkpoint-interval";
// Time from a gang's start until all its pods are ready, or "never" (waitForPodsReady).
inline constexpr std::string_view kPodsReadyAfterAnnotation = "sim.muster.dev/pods-ready-after";

}  // namespace muster::workloads
