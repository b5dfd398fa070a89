#include "server/pod_object.h"

#include <algorithm>

#include "control/resource_types.h"
#include "control/workload_objects.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

// The labels the job kind's upstream controller puts on its pods.
json PodLabels(const model::Workload& workload, const model::PodSet& ps, int32_t index) {
  const model::ObjectMeta& job = workload.meta;
  json labels = json::object();
  for (const auto& [k, v] : ps.tmpl.labels) labels[k] = v;
  labels["muster.dev/job-name"] = job.name;
  labels["muster.dev/pod-set"] = ps.name;
  labels["muster.dev/pod-index"] = std::to_string(index);
  if (job.kind == "PyTorchJob" || job.kind == "TFJob" || job.kind == "MPIJob") {
    labels["training.kubeflow.org/job-name"] = job.name;
    labels["training.kubeflow.org/replica-type"] = ps.name;
    labels["training.kubeflow.org/replica-index"] = std::to_string(index);
  } else if (job.kind == "Job" && job.api_version == "batch/v1") {
    labels["job-name"] = job.name;
    if (ps.indexed) labels["batch.kubernetes.io/job-completion-index"] = std::to_string(index);
  } else if (job.kind == "JobSet" || job.kind == "TrainJob") {
    labels["jobset.sigs.k8s.io/jobset-name"] = job.name;
    labels["jobset.sigs.k8s.io/replicatedjob-name"] = ps.name;
    labels["job-name"] =
        job.name + "-" + ps.name + "-" + std::to_string(index / std::max(1, ps.pods_per_job));
    labels["batch.kubernetes.io/job-completion-index"] =
        std::to_string(index % std::max(1, ps.pods_per_job));
  } else if (job.kind == "MPIJob") {
    labels["training.kubeflow.org/job-role"] = ps.name;
  } else if (job.kind == "Job" && job.api_version.starts_with("batch.volcano.sh/")) {
    labels["volcano.sh/job-name"] = job.name;
    labels["volcano.sh/task-spec"] = ps.name;
  }
  return labels;
}

// The template's annotations, the controller's and the owner of the job.
json PodAnnotations(const model::Workload& workload, const model::PodSet& ps, int32_t index) {
  json annotations = json::object();
  for (const auto& [k, v] : ps.tmpl.annotations) annotations[k] = v;
  const model::ObjectMeta& job = workload.meta;
  if (job.kind == "Job" && job.api_version == "batch/v1" && ps.indexed) {
    annotations["batch.kubernetes.io/job-completion-index"] = std::to_string(index);
  }
  if ((job.kind == "JobSet" || job.kind == "TrainJob") && ps.indexed) {
    annotations["batch.kubernetes.io/job-completion-index"] =
        std::to_string(index % std::max(1, ps.pods_per_job));
  }
  if (auto it = job.annotations.find("muster.dev/owner"); it != job.annotations.end()) {
    annotations["muster.dev/owner"] = it->second;
  }
  return annotations;
}

// The pod's controller reference to its job; by uid when known (Kubernetes requires
// it, and the garbage collector follows nothing else).
json OwnerReferences(const model::ObjectMeta& job, const std::string& uid) {
  json ref = {{"apiVersion", job.api_version},
              {"kind", job.kind},
              {"name", job.name},
              {"controller", true},
              {"blockOwnerDeletion", true}};
  if (!uid.empty()) ref["uid"] = uid;
  return json::array({std::move(ref)});
}

}  // namespace

model::StringMap PodObjectLabels(const model::Workload& workload, int32_t pod_set, int32_t index) {
  model::StringMap out;
  if (pod_set < 0 || pod_set >= static_cast<int32_t>(workload.pod_sets.size())) return out;
  const json labels = PodLabels(workload, workload.pod_sets[pod_set], index);
  for (const auto& [k, v] : labels.items()) out[k] = v.get<std::string>();
  return out;
}

std::string JobUid(const control::ObjectReader& store, const model::ObjectMeta& job) {
  const control::ResourceType* type = control::FindByKind(job.api_version, job.kind);
  if (type == nullptr) return "";
  auto object = store.Get({type->StoreKey(), job.namespace_, job.name});
  if (!object.ok()) return "";
  const json meta = object->value("metadata", json::object());
  return meta.is_object() ? meta.value("uid", "") : "";
}

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
      state = {{"waiting",
                {{"reason", pod.waiting_reason.empty() ? "ContainerCreating" : pod.waiting_reason},
                 {"message", pod.waiting_message}}}};
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
            {"reason", !pod.reason.empty()  ? pod.reason
                       : pod.exit_code == 0 ? "Completed"
                                            : "Error"},
            {"message", pod.message},
            {"startedAt", pod.started_at},
            {"finishedAt", pod.finished_at.empty() ? control::Rfc3339(now) : pod.finished_at}}}};
      break;
  }
  json last_state = json::object();
  if (const auto& t = pod.last_terminated) {
    last_state["terminated"] = {{"exitCode", t->exit_code},
                                {"reason", t->reason},
                                {"message", t->message},
                                {"startedAt", t->started_at},
                                {"finishedAt", t->finished_at}};
  }
  const std::string pod_ip = pod.ip.empty() ? "127.0.0.1" : pod.ip;
  json status = {
      {"phase", phase},
      {"hostIP", "127.0.0.1"},
      {"hostIPs", json::array({{{"ip", "127.0.0.1"}}})},
      {"podIP", pod_ip},
      {"podIPs", json::array({{{"ip", pod_ip}}})},
      {"containerStatuses",
       json::array({{{"name", container_name},
                     {"image", containers.empty() ? "" : containers[0].value("image", "")},
                     {"ready", ready},
                     {"restartCount", pod.restarts},
                     {"state", state},
                     {"lastState", last_state}}})}};
  if (!pod.started_at.empty()) status["startTime"] = pod.started_at;
  json spec = {{"nodeName", pod.node},
               {"hostname", pod.name},
               {"schedulerName", "muster"},
               {"restartPolicy", ps.tmpl.spec.restart_policy},
               {"terminationGracePeriodSeconds", ps.tmpl.spec.termination_grace_period_seconds},
               {"containers", containers}};
  if (!pod.subdomain.empty()) spec["subdomain"] = pod.subdomain;
  if (!ps.tmpl.spec.service_account_name.empty()) {
    spec["serviceAccountName"] = ps.tmpl.spec.service_account_name;
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", pod.name},
            {"namespace", job.namespace_},
            {"labels", PodLabels(workload, ps, pod.index)},
            {"annotations", PodAnnotations(workload, ps, pod.index)},
            {"ownerReferences", OwnerReferences(job, pod.owner_uid)}}},
          {"spec", spec},
          {"status", status}};
}

bool IsExistingPod(const model::Workload& workload, int32_t pod_set) {
  return pod_set >= 0 && pod_set < static_cast<int32_t>(workload.pod_sets.size()) &&
         !workload.pod_sets[pod_set].existing_pod.empty();
}

json ExistingPodObject(const json& stored, const json& built) {
  json out = stored;
  if (!out["spec"].is_object()) out["spec"] = json::object();
  const json built_spec = built.value("spec", json::object());
  out["spec"]["nodeName"] = built_spec.value("nodeName", "");
  json status = built.value("status", json::object());
  const std::string phase = status.value("phase", "");
  const std::string now = status.value("startTime", "");
  const bool running = phase == "Running";
  auto condition = [&](const char* type, bool value) {
    json c = {{"type", type}, {"status", value ? "True" : "False"}};
    c["lastTransitionTime"] = now.empty() ? json(nullptr) : json(now);
    if (!value && phase != "Pending") c["reason"] = "PodCompleted";
    return c;
  };
  status["conditions"] =
      json::array({condition("PodScheduled", true), condition("Initialized", phase != "Pending"),
                   condition("ContainersReady", running), condition("Ready", running)});
  out["status"] = std::move(status);
  return out;
}

}  // namespace muster::server
