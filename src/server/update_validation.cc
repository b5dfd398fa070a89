#include "server/update_validation.h"

#include "control/store_snapshot.h"
#include "control/workload_objects.h"
#include "server/batch_job_defaults.h"
#include "server/core_validation.h"
#include "server/graceful_deletion.h"
#include "server/meta_validation.h"
#include "server/rbac_validation.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr char kImmutable[] = "field is immutable";
constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";

// The value at `path` ("spec.template"), null when any step is absent.
json At(const json& object, std::initializer_list<const char*> path) {
  const json* v = &object;
  for (const char* key : path) {
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
  }
  return *v;
}

void Immutable(const std::string& field, const json& before, const json& after,
               std::vector<StatusCause>& out, const char* message = kImmutable) {
  if (before != after) out.push_back(InvalidValue(field, after, message));
}

// The pod template fields a suspended workload that never started may change
// (Kubernetes' JobMutableNodeSchedulingDirectives; JobSet does the same): copied from
// `from` into `to` so the rest can be compared whole.
void CopySchedulingDirectives(const json& from, json& to) {
  if (!to.is_object()) return;
  for (const char* key : {"labels", "annotations"}) {
    json v = At(from, {"metadata", key});
    if (!to.contains("metadata") || !to["metadata"].is_object()) to["metadata"] = json::object();
    if (v.is_null()) {
      to["metadata"].erase(key);
    } else {
      to["metadata"][key] = v;
    }
  }
  if (to["metadata"].empty()) to.erase("metadata");
  if (!to.contains("spec") || !to["spec"].is_object()) return;
  json& spec = to["spec"];
  for (const char* key : {"nodeSelector", "tolerations", "schedulingGates"}) {
    json v = At(from, {"spec", key});
    if (v.is_null()) {
      spec.erase(key);
    } else {
      spec[key] = v;
    }
  }
  const json node_affinity = At(from, {"spec", "affinity", "nodeAffinity"});
  json& affinity = spec["affinity"];
  if (!affinity.is_object()) affinity = json::object();
  if (node_affinity.is_null()) {
    affinity.erase("nodeAffinity");
  } else {
    affinity["nodeAffinity"] = node_affinity;
  }
  if (affinity.empty()) spec.erase("affinity");
}

bool Suspended(const json& job) { return At(job, {"spec", "suspend"}) == json(true); }

void ValidateBatchJob(const json& stored, const json& next, std::vector<StatusCause>& out) {
  // Read back defaulted, as kube-apiserver decodes what etcd holds: a Job stored
  // before its defaults were written (an older muster) keeps its completionMode.
  json cur = stored;
  DefaultBatchJob(cur);
  const json os = At(cur, {"spec"}), ns = At(next, {"spec"});
  Immutable("spec.selector", At(os, {"selector"}), At(ns, {"selector"}), out);
  json old_template = At(os, {"template"});
  const json new_template = At(ns, {"template"});
  if (Suspended(cur) && At(cur, {"status", "startTime"}).is_null()) {
    CopySchedulingDirectives(new_template, old_template);
  }
  Immutable("spec.template", old_template, new_template, out);
  const json old_completions = At(os, {"completions"}), new_completions = At(ns, {"completions"});
  if (old_completions != new_completions) {
    // Elastic Indexed Jobs scale completions together with parallelism.
    if (At(ns, {"completionMode"}) != json("Indexed")) {
      Immutable("spec.completions", old_completions, new_completions, out);
    } else if (!new_completions.is_null() && new_completions != At(ns, {"parallelism"})) {
      out.push_back(InvalidValue("spec.completions", new_completions,
                                 "can only be modified in tandem with spec.parallelism"));
    }
  }
  for (const char* key : {"completionMode", "podFailurePolicy", "backoffLimitPerIndex"}) {
    Immutable(std::string("spec.") + key, At(os, {key}), At(ns, {key}), out);
  }
}

void ValidateJobSet(const json& cur, const json& next, std::vector<StatusCause>& out) {
  json old_jobs = At(cur, {"spec", "replicatedJobs"});
  const json new_jobs = At(next, {"spec", "replicatedJobs"});
  if (Suspended(cur) && old_jobs.is_array() && new_jobs.is_array() &&
      old_jobs.size() == new_jobs.size()) {
    for (size_t i = 0; i < old_jobs.size(); ++i) {
      json* tmpl = &old_jobs[i];
      for (const char* key : {"template", "spec", "template"}) {
        if (!tmpl->is_object() || !tmpl->contains(key)) {
          tmpl = nullptr;
          break;
        }
        tmpl = &(*tmpl)[key];
      }
      if (tmpl != nullptr) {
        CopySchedulingDirectives(At(new_jobs[i], {"template", "spec", "template"}), *tmpl);
      }
    }
  }
  Immutable("spec.replicatedJobs", old_jobs, new_jobs, out);
  Immutable("spec.managedBy", At(cur, {"spec", "managedBy"}), At(next, {"spec", "managedBy"}), out);
}

// Volcano's job webhook: only minAvailable and the tasks' replicas may change.
void ValidateVolcanoJob(const json& cur, const json& next, std::vector<StatusCause>& out) {
  json os = At(cur, {"spec"}), ns = At(next, {"spec"});
  const json old_tasks = At(os, {"tasks"}), new_tasks = At(ns, {"tasks"});
  if (old_tasks.is_array() && new_tasks.is_array() && old_tasks.size() != new_tasks.size()) {
    out.push_back(Forbidden("spec.tasks", "job updates may not add or remove tasks"));
    return;
  }
  for (json* spec : {&os, &ns}) {
    if (!spec->is_object()) continue;
    spec->erase("minAvailable");
    if (spec->contains("tasks") && (*spec)["tasks"].is_array()) {
      for (auto& t : (*spec)["tasks"]) {
        if (t.is_object()) t.erase("replicas");
      }
    }
  }
  if (os != ns) {
    out.push_back(Forbidden("spec",
                            "job updates may not change fields other than "
                            "`minAvailable`, `tasks[*].replicas under spec`"));
  }
}

void ValidateKubeflowJob(const control::ResourceType& type, const json& cur, const json& next,
                         const UpdateContext& context, std::vector<StatusCause>& out) {
  if (!context.admitted) return;
  // The engine admitted the gang these replica specs describe: muster would store
  // a change and never run it.
  const std::string key = type.kind == "PyTorchJob" ? "pytorchReplicaSpecs"
                          : type.kind == "TFJob"    ? "tfReplicaSpecs"
                                                    : "mpiReplicaSpecs";
  Immutable("spec." + key, At(cur, {"spec", key.c_str()}), At(next, {"spec", key.c_str()}), out,
            "field is immutable while the job is admitted");
}

void ValidatePod(const json& cur, const json& next, std::vector<StatusCause>& out) {
  json old_spec = At(cur, {"spec"});
  const json new_spec = At(next, {"spec"});
  if (!old_spec.is_object() || !new_spec.is_object()) {
    Immutable("spec", old_spec, new_spec, out);
    return;
  }
  // What upstream lets an update change: images, activeDeadlineSeconds, added
  // tolerations, removed scheduling gates.
  for (const char* list : {"containers", "initContainers"}) {
    json& old_list = old_spec[list];
    const json new_list = At(new_spec, {list});
    if (old_list.is_array() && new_list.is_array() && old_list.size() == new_list.size()) {
      for (size_t i = 0; i < old_list.size(); ++i) {
        if (old_list[i].is_object()) old_list[i]["image"] = At(new_list[i], {"image"});
      }
    }
    if (old_list.is_null()) old_spec.erase(list);
  }
  for (const char* key : {"activeDeadlineSeconds"}) {
    old_spec[key] = At(new_spec, {key});
    if (old_spec[key].is_null()) old_spec.erase(key);
  }
  const json old_tol = At(old_spec, {"tolerations"}), new_tol = At(new_spec, {"tolerations"});
  bool only_added = new_tol.is_array() || old_tol.is_null();
  if (old_tol.is_array()) {
    for (const auto& t : old_tol) {
      if (!new_tol.is_array() || std::find(new_tol.begin(), new_tol.end(), t) == new_tol.end()) {
        only_added = false;
      }
    }
  }
  if (only_added && !new_tol.is_null()) old_spec["tolerations"] = new_tol;
  const json old_gates = At(old_spec, {"schedulingGates"}),
             new_gates = At(new_spec, {"schedulingGates"});
  if (old_gates.is_array() && (new_gates.is_null() || new_gates.size() < old_gates.size())) {
    if (new_gates.is_null()) {
      old_spec.erase("schedulingGates");
    } else {
      old_spec["schedulingGates"] = new_gates;
    }
  }
  if (old_spec != new_spec) {
    out.push_back(Forbidden(
        "spec",
        "pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.schedulingGates` (only removals)"));
  }
}

bool HasTrueCondition(const json& object, const char* type) {
  const json conditions = At(object, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  for (const auto& c : conditions) {
    if (c.is_object() && c.value("type", "") == type && c.value("status", "") == "True") {
      return true;
    }
  }
  return false;
}

bool WorkloadAdmitted(const json& workload) {
  return (HasTrueCondition(workload, "QuotaReserved") || HasTrueCondition(workload, "Admitted")) &&
         !HasTrueCondition(workload, "Finished");
}

}  // namespace

std::vector<StatusCause> ValidateUpdate(const control::ResourceType& type, const json& current,
                                        const json& next, const UpdateContext& context) {
  std::vector<StatusCause> out =
      ValidateObjectMeta(type, At(next, {"metadata"}), /*check_name=*/false);
  if (BeingDeleted(current)) {
    if (auto added = AddedFinalizers(current, next); !added.empty()) {
      std::string list;
      for (const std::string& f : added) list += (list.empty() ? "\"" : ", \"") + f + "\"";
      out.push_back(Forbidden("metadata.finalizers",
                              "no new finalizers can be added if the object is being deleted, "
                              "found new finalizers []string{" +
                                  list + "}"));
    }
  }
  const bool is_job = control::IsJobResource(type.StoreKey());
  if (is_job && context.admitted) {
    const json old_queue = At(current, {"metadata", "labels", kQueueNameLabel});
    const json new_queue = At(next, {"metadata", "labels", kQueueNameLabel});
    Immutable(std::string("metadata.labels[") + kQueueNameLabel + "]", old_queue, new_queue, out);
  }
  ValidateRbacUpdate(type, current, next, out);  // roleRef
  ValidateCoreUpdate(type, current, next, out);  // data once immutable, clusterIP, claims
  const std::string key = type.StoreKey();
  if (key == "jobs.batch") {
    ValidateBatchJob(current, next, out);
  } else if (key == "jobsets.jobset.x-k8s.io") {
    ValidateJobSet(current, next, out);
  } else if (key == "jobs.batch.volcano.sh") {
    ValidateVolcanoJob(current, next, out);
  } else if (key == "trainjobs.trainer.kubeflow.org") {
    // Trainer's CEL rules: self == oldSelf.
    for (const char* field : {"runtimeRef", "initializer", "trainer", "managedBy"}) {
      Immutable(std::string("spec.") + field, At(current, {"spec", field}),
                At(next, {"spec", field}), out);
    }
  } else if (type.group == "kubeflow.org") {
    ValidateKubeflowJob(type, current, next, context, out);
  } else if (key == "localqueues.kueue.x-k8s.io") {
    Immutable("spec.clusterQueue", At(current, {"spec", "clusterQueue"}),
              At(next, {"spec", "clusterQueue"}), out);
  } else if (key == "workloads.kueue.x-k8s.io") {
    Immutable("spec.podSets", At(current, {"spec", "podSets"}), At(next, {"spec", "podSets"}), out);
    if (WorkloadAdmitted(current)) {
      Immutable("spec.queueName", At(current, {"spec", "queueName"}),
                At(next, {"spec", "queueName"}), out);
    }
  } else if (key == "priorityclasses.scheduling.k8s.io") {
    if (At(current, {"value"}) != At(next, {"value"})) {
      out.push_back(Forbidden("value", "may not be changed in an update."));
    }
    Immutable("preemptionPolicy", At(current, {"preemptionPolicy"}), At(next, {"preemptionPolicy"}),
              out);
  } else if (key == "pods") {
    ValidatePod(current, next, out);
  }
  return out;
}

bool JobAdmitted(const control::ObjectReader& store, const control::ResourceType& type,
                 const json& job) {
  if (!control::IsJobResource(type.StoreKey())) return false;
  control::JobRef ref;
  ref.kind = type.kind;
  ref.name = At(job, {"metadata", "name"}).is_string()
                 ? At(job, {"metadata", "name"}).get<std::string>()
                 : "";
  const json ns = At(job, {"metadata", "namespace"});
  auto workload =
      store.Get({"workloads.kueue.x-k8s.io", ns.is_string() ? ns.get<std::string>() : "",
                 control::WorkloadObjectName(ref)});
  return workload.ok() && WorkloadAdmitted(*workload);
}

}  // namespace muster::server
