// ValidateUpdate: the immutability rules kube-apiserver and the projects' webhooks
// apply when an object is replaced or patched, so an update muster would store but
// never act on (a running Job's template, a LocalQueue's ClusterQueue) is a 422
// naming the field, as upstream answers, instead of a 200 that silently lies.
//
// Per kind: batch Job (selector, template unless suspended and never started, with
// the scheduling directives a suspended Job may change; completions except for an
// elastic Indexed Job; completionMode, podFailurePolicy, backoffLimitPerIndex);
// JobSet (replicatedJobs, except the scheduling directives of a suspended one);
// Volcano Job (only minAvailable and tasks[*].replicas); Kubeflow jobs (replica specs
// while admitted); Kueue's queue-name label while the job is admitted (its
// Workload holds quota); LocalQueue clusterQueue; Workload podSets and queueName
// while admitted; PriorityClass value and preemptionPolicy; Pod spec (image,
// activeDeadlineSeconds and added tolerations only). Any kind: no finalizer added
// while the object is being deleted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "control/object_reader.h"
#include "control/resource_types.h"
#include "server/api_status.h"

namespace muster::server {

struct UpdateContext {
  // The job's Kueue Workload holds quota (QuotaReserved or Admitted, not Finished):
  // what Kueue's "the job is not suspended" means in muster, which never suspends.
  bool admitted = false;
};

// What is wrong with changing `current` into `next` (both whole objects of `type`).
// Metadata of `next` is validated as on create, except for the name, which an
// update cannot change.
std::vector<StatusCause> ValidateUpdate(const control::ResourceType& type,
                                        const nlohmann::json& current, const nlohmann::json& next,
                                        const UpdateContext& context);

// Whether the job `job` of `type` is admitted, read from its Workload object.
bool JobAdmitted(const control::ObjectReader& store, const control::ResourceType& type,
                 const nlohmann::json& job);

}  // namespace muster::server
