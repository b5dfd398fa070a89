// Volcano's task-topology annotations (pkg/scheduler/plugins/task-topology): which
// tasks of a job to pack together, which to keep apart and in which order to place
// them. Read from the job's annotations (Volcano copies them to the PodGroup) or a
// PodGroup's; task names are pod set names (a Volcano Job's task names).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/meta.h"
#include "model/workload.h"

namespace muster::workloads {

inline constexpr std::string_view kTaskTopologyAffinityAnnotation =
    "volcano.sh/task-topology-affinity";
inline constexpr std::string_view kTaskTopologyAntiAffinityAnnotation =
    "volcano.sh/task-topology-anti-affinity";
inline constexpr std::string_view kTaskTopologyTaskOrderAnnotation =
    "volcano.sh/task-topology-task-order";

// "ps,worker;chief" -> {{ps, worker}, {chief}} for the affinity annotations and
// "ps,worker" for the task order. nullopt when none is set. When one names a task
// the job does not have, or names a task twice in one group, Volcano ignores the
// job's task topology altogether: nullopt, with the reason in `why`.
std::optional<model::TaskTopology> ParseTaskTopology(const model::StringMap& annotations,
                                                     const std::vector<std::string>& tasks,
                                                     std::string* why);

}  // namespace muster::workloads
