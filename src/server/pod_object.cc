#include "server/pod_object.h"

#include "control/workload_objects.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

// The labels the job kind's upstream controller puts on its pods.
json PodLabels(const model::Workload& workload, const model::PodSet& ps, int32_t index) {
  const model::ObjectMeta& job = workload.meta;
  json labels = {{"muster.dev/job-name", job.name},
                 {"muster.dev/pod-set", ps.name},
                 {"muster.dev/pod-index", std::to_string(index)}};
  if (job.kind == "PyTorchJob" || job.kind == "TFJob" || job.kind == "MPIJob") {
    labels["training.kubeflow.org/job-name"] = job.name;
    labels["training.kubeflow.org/replica-type"] = ps.name;
    labels["training.kubeflow.org/replica-index"] = std::to_string(index);
  } else if (job.kind == "Job" && job.api_version == "batch/v1") {
    labels["job-name"] = job.name;
    if (ps.indexed) labels["batch.kubernetes.io/job-completion-index"] = std::to_string(index);
  } else if (job.kind == "JobSet") {
    labels["jobset.sigs.k8s.io/jobset-name"] = job.name;
    labels["jobset.sigs.k8s.io/replicatedjob-name"] = ps.name;
  }
  return labels;
}

}  // namespace

json BuildPodObject(const model::Workload& workload, const PodRunView& pod, Time now) {
  const model::PodSet& ps = workload.pod_sets[pod.pod_set];
  const model::ObjectMeta& job = workload.meta;
  json containers = json::array();
  for (const auto& c : ps.tmpl.spec.containers) {
    json requests = json::object();
    for (const auto& [name, q] : c.requests) requests[name] = q.ToString();
    json container = {
        {"name", c.name}, {"image", c.image}, {"resources", {{"requests", requests}}}};
    if (!c.command.empty()) container["command"] = c.command;
    if (!c.args.empty()) container["args"] = c.args;
    containers.push_back(std::move(container));
  }
  std::string container_name = containers.empty() ? "main" : containers[0].value("name", "main");
  json state;
  std::string phase;
  bool ready = false;
  switch (pod.state) {
    case PodRunState::kWaiting:
      phase = "Pending";
      state = {{"waiting", {{"reason", "ContainerCreating"}, {"message", pod.waiting_message}}}};
      break;
    case PodRunState::kRunning:
      phase = "Running";
      ready = true;
      state = {{"running", {{"startedAt", pod.started_at}}}};
      break;
    case PodRunState::kSucceeded:
    case PodRunState::kFailed:
      phase = pod.state == PodRunState::kSucceeded ? "Succeeded" : "Failed";
      state = {
          {"terminated",
           {{"exitCode", pod.exit_code},
            {"reason", pod.exit_code == 0 ? "Completed" : "Error"},
            {"message", pod.message},
            {"startedAt", pod.started_at},
            {"finishedAt", pod.finished_at.empty() ? control::Rfc3339(now) : pod.finished_at}}}};
      break;
  }
  json status = {
      {"phase", phase},
      {"hostIP", "127.0.0.1"},
      {"podIP", "127.0.0.1"},
      {"containerStatuses",
       json::array({{{"name", container_name},
                     {"image", containers.empty() ? "" : containers[0].value("image", "")},
                     {"ready", ready},
                     {"restartCount", pod.restarts},
                     {"state", state}}})}};
  if (!pod.started_at.empty()) status["startTime"] = pod.started_at;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", pod.name},
            {"namespace", job.namespace_},
            {"labels", PodLabels(workload, ps, pod.index)},
            {"ownerReferences", json::array({{{"apiVersion", job.api_version},
                                              {"kind", job.kind},
                                              {"name", job.name},
                                              {"controller", true}}})}}},
          {"spec",
           {{"nodeName", pod.node},
            {"schedulerName", "muster"},
            {"restartPolicy", ps.tmpl.spec.restart_policy},
            {"terminationGracePeriodSeconds", ps.tmpl.spec.termination_grace_period_seconds},
            {"containers", containers}}},
          {"status", status}};
}

}  // namespace muster::server
