// The mutating admission webhook's decision, as a pure function of the AdmissionReview
// the API server sends (no I/O: webhook_server.h does the TLS). A job that muster
// queues is created suspended, so no pod exists before muster admits it; the controller
// unsuspends it on admission. Semantics follow Kueue's job webhooks (default suspend
// when the job names a queue and its controlling owner is not itself a managed job).
//
// A Kueue ClusterQueue gets the resource-in-use finalizer on CREATE, as Kueue's
// webhook adds it (control/workload_objects.h).
//
// Suspend fields by kind:
//   batch/v1 Job, jobset.x-k8s.io JobSet          spec.suspend
//   kubeflow.org PyTorchJob, TFJob, MPIJob         spec.runPolicy.suspend
//   batch.volcano.sh Job                           none: allowed unchanged (see .cc)
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace muster::kube {

struct WebhookOptions {
  // Kueue's manageJobsWithoutQueueName (default false): also suspend jobs that carry no
  // kueue.x-k8s.io/queue-name label (muster then queues them in a default queue).
  bool manage_jobs_without_queue_name = false;
  // muster's scheduler name (the first --scheduler-name). A job muster queues gets it
  // in every pod template that names no scheduler ("" or "default-scheduler", which
  // the API server defaults an unset one to before webhooks run), so the Kueue
  // tutorial's Jobs are bound by muster unchanged; a template naming another
  // scheduler keeps it. Set at creation because a Job's template, schedulerName
  // included, is immutable afterwards (only nodeSelector, tolerations, affinity,
  // labels and annotations may change while it is suspended). Empty: not set.
  std::string scheduler_name;
};

// Answers one admission.k8s.io/v1 AdmissionReview request with an AdmissionReview
// response carrying the same uid. CREATE of a job muster manages that is not yet
// suspended: allowed with a base64 JSONPatch that suspends it. Anything else muster
// does not change: allowed without a patch. A malformed review: allowed=false with a
// status message saying what is wrong (never throws).
nlohmann::json ReviewJobCreate(const nlohmann::json& admission_review,
                               const WebhookOptions& options);

// The same for an HTTP request body: JSON that does not parse is answered like any
// other malformed review.
nlohmann::json ReviewJobCreateBody(std::string_view body, const WebhookOptions& options);

}  // namespace muster::kube
