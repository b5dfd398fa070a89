// Queue resolution: Kueue LocalQueue label and Volcano queue name.
#include "workloads/build_internal.h"
#include "workloads/keys.h"

namespace muster::workloads::internal {
namespace {

std::string Lookup(const model::StringMap& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? "" : it->second;
}

}  // namespace

void ResolveQueues(model::Workload* workload) {
  workload->local_queue = Lookup(workload->meta.labels, kQueueNameLabel);
  // Kueue still honours the older annotation form of the same key.
  if (workload->local_queue.empty()) {
    workload->local_queue = Lookup(workload->meta.annotations, kQueueNameLabel);
  }

  // A kind-level queue (Volcano spec.queue, Kubeflow schedulingPolicy.queue) was set
  // by the builder; otherwise the annotation, on the job or (as Volcano reads it from
  // pods) on the first template.
  if (workload->volcano_queue.empty()) {
    workload->volcano_queue = Lookup(workload->meta.annotations, kVolcanoQueueAnnotation);
  }
  if (workload->volcano_queue.empty() && !workload->pod_sets.empty()) {
    workload->volcano_queue =
        Lookup(workload->pod_sets.front().tmpl.annotations, kVolcanoQueueAnnotation);
  }
  // Pods handed to the Volcano scheduler without a queue land in its default queue.
  if (workload->volcano_queue.empty() && workload->scheduler_name == kVolcanoSchedulerName) {
    workload->volcano_queue = std::string(kVolcanoDefaultQueue);
  }
}

}  // namespace muster::workloads::internal
