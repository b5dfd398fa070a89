#include "workloads/task_topology.h"

#include <algorithm>
#include <set>

#include "core/text.h"
#include "workloads/build_internal.h"

namespace muster::workloads {
namespace {

// One group per ';', tasks separated by ','; empty names are skipped, as Volcano does.
bool ParseGroups(std::string_view text, std::string_view key, const std::vector<std::string>& tasks,
                 std::vector<std::vector<std::string>>* groups, std::string* why) {
  for (const std::string& part : SplitTrimmed(text, ';')) {
    std::vector<std::string> group;
    std::set<std::string> seen;
    for (std::string& name : SplitTrimmed(part, ',')) {
      if (name.empty()) continue;
      if (std::find(tasks.begin(), tasks.end(), name) == tasks.end()) {
        *why = std::string(key) + ": task " + name + " does not exist in the job";
        return false;
      }
      if (!seen.insert(name).second) {
        *why = std::string(key) + ": task " + name + " is repeated in one group";
        return false;
      }
      group.push_back(std::move(name));
    }
    if (!group.empty()) groups->push_back(std::move(group));
  }
  return true;
}

}  // namespace

std::optional<model::TaskTopology> ParseTaskTopology(const model::StringMap& annotations,
                                                     const std::vector<std::string>& tasks,
                                                     std::string* why) {
  auto get = [&](std::string_view key) -> const std::string* {
    auto it = annotations.find(std::string(key));
    return it == annotations.end() ? nullptr : &it->second;
  };
  const std::string* affinity = get(kTaskTopologyAffinityAnnotation);
  const std::string* anti = get(kTaskTopologyAntiAffinityAnnotation);
  const std::string* order = get(kTaskTopologyTaskOrderAnnotation);
  if (affinity == nullptr && anti == nullptr && order == nullptr) return std::nullopt;
  model::TaskTopology t;
  if (affinity != nullptr &&
      !ParseGroups(*affinity, kTaskTopologyAffinityAnnotation, tasks, &t.affinity, why)) {
    return std::nullopt;
  }
  if (anti != nullptr &&
      !ParseGroups(*anti, kTaskTopologyAntiAffinityAnnotation, tasks, &t.anti_affinity, why)) {
    return std::nullopt;
  }
  if (order != nullptr) {
    std::vector<std::vector<std::string>> one;
    // The order is one group: a task named twice or unknown voids it, as in Volcano.
    std::string joined;
    for (const std::string& name : SplitTrimmed(*order, ','))
      joined += (joined.empty() ? "" : ",") + name;
    if (!ParseGroups(joined, kTaskTopologyTaskOrderAnnotation, tasks, &one, why)) {
      return std::nullopt;
    }
    if (!one.empty()) t.task_order = std::move(one.front());
  }
  return t;
}

namespace internal {

void ApplyTaskTopology(const model::ManifestSet& manifests, model::Workload* workload) {
  model::StringMap annotations = workload->meta.annotations;
  if (const model::PodGroup* pg = FindPodGroup(manifests, *workload)) {
    for (const auto& [k, v] : pg->meta.annotations) annotations[k] = v;
  }
  std::vector<std::string> tasks;
  for (const model::PodSet& ps : workload->pod_sets) tasks.push_back(ps.name);
  std::string why;
  workload->task_topology = ParseTaskTopology(annotations, tasks, &why);
}

}  // namespace internal
}  // namespace muster::workloads
