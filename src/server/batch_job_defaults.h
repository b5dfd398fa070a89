// A batch/v1 Job as kube-apiserver stores it: the Job's defaults (applied on every
// write, as upstream's decoding does) and, on create, the selector it generates and
// the labels that selector matches on the pod template, so that the Job's pods carry
// them (the local executor copies the template's labels onto each pod):
//
//   spec.selector.matchLabels   batch.kubernetes.io/controller-uid: <uid>
//   spec.template.metadata.labels
//     batch.kubernetes.io/controller-uid, controller-uid: <uid>
//     batch.kubernetes.io/job-name, job-name:             <name>
//
// unless spec.manualSelector is true. `kubectl get pods -l
// batch.kubernetes.io/job-name=NAME` (the Job documentation's own command) then finds
// a Job's pods, and `kubectl describe job` shows its selector.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

bool IsBatchJob(const control::ResourceType& type);
bool IsCronJob(const control::ResourceType& type);

// SetDefaults_CronJob: concurrencyPolicy Allow, suspend false, and history limits of
// 3 successful and 1 failed Job.
void DefaultCronJob(nlohmann::json& cronjob);

// SetDefaults_Job: completions and parallelism (1 when both are unset; parallelism
// 1 when only it is), backoffLimit (6, or the int32 maximum with
// backoffLimitPerIndex), completionMode NonIndexed, suspend false,
// podReplacementPolicy (Failed with a podFailurePolicy, TerminatingOrFailed
// without), manualSelector false, a podFailurePolicy onPodConditions pattern's status
// True, and the template's labels as the Job's when it has none.
void DefaultBatchJob(nlohmann::json& job);

// The create path's step for a Job (kube-apiserver's generateSelector, then the
// selector's validation), applied to each name the create tries: the generated
// selector and template labels above, where the template does not have them already
// (those it has are kept, then validated); on a later try (a generated name that was
// taken) the name labels it added are set to the new name.
class JobSelectorGeneration {
 public:
  explicit JobSelectorGeneration(std::string uid) : uid_(std::move(uid)) {}
  // The problems upstream's validation finds (none: the create goes on).
  std::vector<StatusCause> Apply(nlohmann::json& job, const std::string& name);

 private:
  std::string uid_;
  bool generated_ = false;
  std::vector<std::string> name_labels_;  // template labels it set to the name
};

// What upstream's validation says about the selector: it is required; it must match
// the template's labels; a generated one (manualSelector not true) also needs the
// template's controller-uid and job-name labels to carry this Job's uid and name.
std::vector<StatusCause> ValidateJobSelector(const nlohmann::json& job, const std::string& name,
                                             const std::string& uid);

}  // namespace muster::server
