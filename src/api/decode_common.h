// Decoders shared by several kinds (pod templates, taints, tolerations, selectors)
// and the per-kind decoder entry points that decode.cc dispatches to.
#pragma once

#include <vector>

#include "api/decode.h"
#include "api/yaml_value.h"
#include "model/manifest_set.h"

namespace muster::api::internal {

// Upstream's well-known label and annotation keys.
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kKueuePriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kVolcanoQueueAnnotation[] = "scheduling.volcano.sh/queue-name";

// core/v1 PodTemplateSpec (`metadata` labels/annotations and `spec`).
model::PodTemplate DecodePodTemplate(const YamlValue& v);
model::PodSpec DecodePodSpec(const YamlValue& v);
model::Container DecodeContainer(const YamlValue& v);
std::vector<model::Taint> DecodeTaints(const YamlValue& v);
std::vector<model::Toleration> DecodeTolerations(const YamlValue& v);
model::LabelSelector DecodeLabelSelector(const YamlValue& v);

// Records the references every workload kind shares: its LocalQueue label and the
// priority classes it names. `meta` is the job's metadata, `root` the document.
void AddWorkloadRefs(const YamlValue& root, const model::ObjectMeta& meta);
// Records a template's spec.priorityClassName reference.
void AddTemplateRefs(const YamlValue& template_value, const model::PodTemplate& tmpl);

// One decoder per kind. Each decodes `root` (the whole document; metadata is
// already in `meta`) and appends the object to `out.manifests` unless the document
// had errors: a malformed object is reported, never half-used.
void DecodeNode(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
// A Pod on its own: validated, not added to the ManifestSet (decode_bare_pod.cc).
void DecodeBarePod(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeNodeResourceTopology(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodePriorityClass(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);

void DecodeResourceFlavor(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeClusterQueue(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeLocalQueue(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeNamespace(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
// v1 LimitRange, validated and defaulted as kube-apiserver does (decode_limit_range.cc).
void DecodeLimitRange(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeCohort(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeWorkloadPriorityClass(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeTopology(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);

void DecodeVolcanoQueue(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodePodGroup(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeHyperNode(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeVolcanoJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);

void DecodeBatchJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeKubeflowJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeJobSet(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeTrainingRuntime(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeTrainJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
// Records `root`'s object in out.validated_only unless it had errors (decode_cronjob.cc).
void NoteValidatedOnly(const YamlValue& root, const model::ObjectMeta& meta, DecodeResult& out);
// A CronJob: validated, not added to the ManifestSet (decode_cronjob.cc).
void DecodeCronJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);

void DecodeKueueConfiguration(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeSchedulerConfiguration(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);

// A duration that must be above zero (sla-waiting-time): read into `out` when set
// and valid, else reported.
void ReadPositiveDuration(const YamlValue& v, std::optional<double>& out);

// Volcano's scheduler configuration (decode_volcano_scheduler.cc): the raw
// volcano-scheduler.conf document, or Volcano's ConfigMap holding it under this key.
// Both are mapped onto muster's SchedulerConfiguration.
inline constexpr char kVolcanoSchedulerConfKey[] = "volcano-scheduler.conf";
void DecodeVolcanoSchedulerConf(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out);
void DecodeVolcanoSchedulerConfigMap(const YamlValue& root, const model::ObjectMeta& meta,
                                     DecodeResult& out);

// Shared by batch Job and JobSet replicated jobs: batch/v1 JobSpec with defaults.
model::BatchJobSpec DecodeBatchJobSpec(const YamlValue& spec);
// A Job's podFailurePolicy, backoffLimitPerIndex, maxFailedIndexes and
// ttlSecondsAfterFinished (decode_job_policies.cc), after the rest of its spec.
void DecodeJobPolicies(const YamlValue& spec, model::BatchJobSpec& js);
// Those fields in a JobSet's job template: warnings, muster does not act on them.
void WarnJobTemplatePolicies(const YamlValue& job_spec);
// A JobSet's spec (also a training runtime's spec.template.spec).
model::JobSet DecodeJobSetSpec(const YamlValue& spec);

}  // namespace muster::api::internal
