// Pieces shared by the per-kind builders (build_*.cc). Not part of the layer's API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/manifest_set.h"
#include "model/workload.h"

namespace muster::workloads::internal {

// Where an error happened: "<Kind> <namespace>/<name>: <field>: <message>".
Status FieldError(const model::ObjectMeta& meta, std::string_view field, std::string_view message);

// Copies the scheduling-relevant parts of `tmpl` into a pod set and computes its
// effective requests and topology request. `field` is the template's path, for errors.
Result<model::PodSet> MakePodSet(const model::ObjectMeta& owner, std::string_view field,
                                 std::string name, int32_t count, const model::PodTemplate& tmpl);

// Spreads a gang minimum of `total` pods over pod sets in order: each set takes as
// many as it has until the total is used up. Kueue's pod-set order puts the
// coordinating replicas (master, chief, launcher, ps) first, so they are always in.
void DistributeMinCount(int32_t total, std::vector<model::PodSet>* pod_sets);

// Sum of pod-set minimums: the gang size when nothing overrides it.
int32_t SumMinCounts(const std::vector<model::PodSet>& pod_sets);

// The PodGroup of the job: named by scheduling.k8s.io/group-name on the job or its
// first template, else the one with the job's name; null when none.
const model::PodGroup* FindPodGroup(const model::ManifestSet& manifests,
                                    const model::Workload& workload);
// Volcano's task-topology annotations of the job and its PodGroup (task_topology.cc).
void ApplyTaskTopology(const model::ManifestSet& manifests, model::Workload* workload);
// Volcano's sla-waiting-time annotation of the job and its PodGroup (sla.cc).
void ApplySla(const model::ManifestSet& manifests, model::Workload* workload);

// kueue.x-k8s.io/elastic-job: "true" on the job (Kueue's ElasticJobsViaWorkloadSlices).
bool IsElasticJob(const model::ObjectMeta& meta);

// Job-level priority class names, by precedence (empty = not given).
struct PriorityRefs {
  std::string workload_priority_class;  // label kueue.x-k8s.io/priority-class
  std::string template_class;           // first pod template's priorityClassName
  std::string template_field;           // its path, for errors
  std::string spec_class;               // the job spec's own priority class field
  std::string spec_field;               // its path, for errors
};

// Fills workload->priority, priority_class and preemption_never.
Status ResolvePriority(const model::ManifestSet& manifests, const PriorityRefs& refs,
                       model::Workload* workload);

// Reads the sim.muster.dev/* annotations of the job.
Status ParseSimSpec(const model::ObjectMeta& meta, model::WorkloadSimSpec* sim);

// Kueue local queue from the job's label; Volcano queue from the annotation (job or
// first template) unless the kind already set one.
void ResolveQueues(model::Workload* workload);

// Applies a Volcano PodGroup named like the job (or named by annotation
// scheduling.k8s.io/group-name): minMember, minTaskMember, queue, network topology.
// Returns the PodGroup's priorityClassName ("" when none applies).
std::string ApplyPodGroup(const model::ManifestSet& manifests, model::Workload* workload);

// Records `tmpl`'s priorityClassName (at `field`) unless an earlier template gave one:
// builders call it in pod-set order, so the first pod set's class wins.
void NoteTemplateClass(const model::PodTemplate& tmpl, std::string_view field, PriorityRefs* refs);

// Per-kind builders: pod sets, gang minimums, lifecycle, spec-level queue and priority
// class. The shared finishing (priority, queues, sim, PodGroup) is done by the caller.
Result<model::Workload> BuildBatchJob(const model::BatchJob& job, PriorityRefs* refs);
Result<model::Workload> BuildKubeflowJob(const model::KubeflowJob& job, PriorityRefs* refs);
Result<model::Workload> BuildJobSet(const model::JobSet& job, PriorityRefs* refs);
Result<model::Workload> BuildVolcanoJob(const model::VolcanoJob& job, PriorityRefs* refs);
// Resolves the runtime from `manifests`; NotFound when it is missing.
Result<model::Workload> BuildTrainJob(const model::TrainJob& job,
                                      const model::ManifestSet& manifests, PriorityRefs* refs);

}  // namespace muster::workloads::internal
