#include "server/pod_object.h"

#include <algorithm>
#include <set>

#include "control/pod_spec_json.h"
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

namespace {

// The conditions the kubelet reports (PodScheduled, Initialized, ContainersReady,
// Ready), so `kubectl wait --for=condition=Ready` works. Init containers are not run
// (docs/containers.md), so a placed pod is initialized from its start.
json PodConditions(const PodRunView& pod, const std::string& container, const std::string& now) {
  const json since = pod.started_at.empty() ? json(nullptr) : json(pod.started_at);
  auto condition = [](const char* type, bool value, const json& at) {
    return json{{"type", type}, {"status", value ? "True" : "False"}, {"lastTransitionTime", at}};
  };
  json ready = condition("ContainersReady", false, since);
  switch (pod.state) {
    case PodRunState::kRunning:
      ready = condition("ContainersReady", true, since);
      break;
    case PodRunState::kWaiting:
      ready["reason"] = "ContainersNotReady";
      ready["message"] = "containers with unready status: [" + container + "]";
      break;
    case PodRunState::kSucceeded:
    case PodRunState::kFailed:
      // The kubelet's reason for both terminal phases.
      ready["lastTransitionTime"] = pod.finished_at.empty() ? now : pod.finished_at;
      ready["reason"] = "PodCompleted";
      break;
  }
  json pod_ready = ready;
  pod_ready["type"] = "Ready";
  return json::array({condition("PodScheduled", true, since), condition("Initialized", true, since),
                      std::move(ready), std::move(pod_ready)});
}

// The env a job's controller adds to the container it runs (rank identity), after the
// template's own; a name the template defines keeps the template's definition.
void AppendControllerEnv(json& container, const PodRunView& pod) {
  if (pod.controller_env.empty()) return;
  json& env = container["env"];
  if (!env.is_array()) env = json::array();
  std::set<std::string> defined;
  for (const json& e : env) defined.insert(e.value("name", ""));
  for (const auto& [name, value] : pod.controller_env) {
    if (defined.insert(name).second) env.push_back({{"name", name}, {"value", value}});
  }
}

}  // namespace

json BuildPodObject(const model::Workload& workload, const PodRunView& pod, Time now) {
  const model::PodSet& ps = workload.pod_sets[pod.pod_set];
  const model::ObjectMeta& job = workload.meta;
  json spec = control::PodSpecJson(ps.tmpl.spec);
  json& containers = spec["containers"];
  if (!containers.empty()) AppendControllerEnv(containers[0], pod);
  spec["nodeName"] = pod.node;
  spec["hostname"] = pod.name;
  // muster places the pods of the jobs it admits, whichever scheduler the template names.
  spec["schedulerName"] = "muster";
  if (!pod.subdomain.empty()) spec["subdomain"] = pod.subdomain;
  if (const auto& p = pod.priority) {
    if (!p->class_name.empty()) spec["priorityClassName"] = p->class_name;
    spec["priority"] = p->value;
    spec["preemptionPolicy"] = p->preemption_policy;
  }
  control::DefaultPodSpecJson(spec);
  const std::string now_text = control::Rfc3339(now);
  // Only the first container runs (docs/containers.md): its state is the pod's.
  std::string container_name = containers.empty() ? "main" : containers[0].value("name", "main");
  json state;
  std::string phase;
  bool ready = false;
  switch (pod.state) {
    case PodRunState::kWaiting:
      phase = pod.restarting ? "Running" : "Pending";
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
      state = {{"terminated",
                {{"exitCode", pod.exit_code},
                 {"reason", !pod.reason.empty()  ? pod.reason
                            : pod.exit_code == 0 ? "Completed"
                                                 : "Error"},
                 {"message", pod.message},
                 {"startedAt", pod.started_at},
                 {"finishedAt", pod.finished_at.empty() ? now_text : pod.finished_at}}}};
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
      {"conditions", PodConditions(pod, container_name, now_text)},
      {"hostIP", "127.0.0.1"},
      {"hostIPs", json::array({{{"ip", "127.0.0.1"}}})},
      {"podIP", pod_ip},
      {"podIPs", json::array({{{"ip", pod_ip}}})},
      {"qosClass", control::PodQosClass(ps.tmpl.spec)},
      {"containerStatuses",
       json::array({{{"name", container_name},
                     {"image", containers.empty() ? "" : containers[0].value("image", "")},
                     {"ready", ready},
                     {"started", ready},
                     {"restartCount", pod.restarts},
                     {"state", state},
                     {"lastState", last_state}}})}};
  if (!pod.started_at.empty()) status["startTime"] = pod.started_at;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", pod.name},
            {"namespace", job.namespace_},
            {"labels", PodLabels(workload, ps, pod.index)},
            {"annotations", PodAnnotations(workload, ps, pod.index)},
            {"ownerReferences", OwnerReferences(job, pod.owner_uid)}}},
          {"spec", std::move(spec)},
          {"status", std::move(status)}};
}

std::vector<std::optional<PodPriority>> PodSetPriorities(const control::ObjectReader& store,
                                                         const model::Workload& workload) {
  std::vector<std::optional<PodPriority>> out;
  auto classes = store.List("priorityclasses.scheduling.k8s.io", "");
  for (const model::PodSet& ps : workload.pod_sets) {
    if (!classes.ok()) {
      out.emplace_back();
      continue;
    }
    auto p = ComputePodPriority(classes->items, ps.tmpl.spec.priority_class_name);
    out.push_back(p.ok() ? std::optional<PodPriority>(std::move(*p)) : std::nullopt);
  }
  return out;
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
  // What Kueue's pod integration merges into the pod when it admits it: the
  // flavors' node labels and tolerations (built from the admitted template).
  if (const auto selector = built_spec.find("nodeSelector");
      selector != built_spec.end() && selector->is_object()) {
    json& own = out["spec"]["nodeSelector"];
    if (!own.is_object()) own = json::object();
    for (const auto& [key, value] : selector->items()) own[key] = value;
  }
  if (const auto tolerations = built_spec.find("tolerations");
      tolerations != built_spec.end() && tolerations->is_array()) {
    json& own = out["spec"]["tolerations"];
    if (!own.is_array()) own = json::array();
    for (const json& t : *tolerations) {
      if (std::find(own.begin(), own.end(), t) == own.end()) own.push_back(t);
    }
  }
  out["status"] = built.value("status", json::object());
  return out;
}

}  // namespace muster::server
