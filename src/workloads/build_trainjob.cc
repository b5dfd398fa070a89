// TrainJob (trainer.kubeflow.org/v1alpha1) -> JobSet -> Workload, as Trainer v2's
// runtime framework builds the JobSet: the runtime's template, the trainer step's
// count from numNodes, the TrainJob's trainer fields on the "node" container, and the
// torch plugin's numProcPerNode. The gang is the JobSet's (build_jobset.cc).
#include <algorithm>
#include <cctype>
#include <string>

#include "workloads/build_internal.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

bool IsTrainerStep(const model::ReplicatedJob& rj) {
  auto it = rj.template_labels.find(model::kTrainJobAncestorLabel);
  return it != rj.template_labels.end() && it->second == model::kTrainerAncestor;
}

bool HasGpu(const model::QuantityMap& resources) {
  for (const auto& [name, q] : resources) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("gpu") != std::string::npos) return true;
  }
  return false;
}

// The torch plugin's numProcPerNode: "auto" on a node without GPUs and "cpu" become
// the node's CPU count (limits first, then requests; at least 1); "auto" with GPUs
// stays "auto" (torchrun counts the devices); an integer stays. (Upstream falls back
// to 1 when resourcesPerNode has limits but no requests, even over an integer; muster
// keeps the value.)
std::string TorchProcsPerNode(const model::TrainingRuntime& runtime, const model::TrainJob& job) {
  std::string nproc = runtime.torch->num_proc_per_node.value_or("auto");
  if (job.trainer.num_proc_per_node) nproc = *job.trainer.num_proc_per_node;
  if (!job.trainer.limits && !job.trainer.requests) return nproc;
  if (nproc != "auto" && nproc != "cpu") return nproc;
  for (const auto* resources : {&job.trainer.limits, &job.trainer.requests}) {
    if (!*resources) continue;
    const bool use_cpu = nproc == "auto" ? !HasGpu(**resources) : (*resources)->count("cpu") > 0;
    if (!use_cpu) continue;
    auto cpu = (*resources)->find("cpu");
    int64_t n = cpu == (*resources)->end() ? 1 : cpu->second.Value();
    return std::to_string(std::max<int64_t>(1, n));
  }
  return nproc == "cpu" ? "1" : nproc;
}

void UpsertEnv(const std::vector<model::EnvVar>& from, std::vector<model::EnvVar>* into) {
  for (const auto& e : from) {
    auto it = std::find_if(into->begin(), into->end(),
                           [&](const model::EnvVar& x) { return x.name == e.name; });
    if (it == into->end()) {
      into->push_back(e);
    } else {
      *it = e;
    }
  }
}

bool HasTrainerOverrides(const model::TrainerOverrides& t) {
  return t.image || !t.command.empty() || !t.args.empty() || !t.env.empty() || t.requests ||
         t.limits;
}

}  // namespace

const model::TrainingRuntime* FindTrainingRuntime(const model::TrainJob& job,
                                                  const model::ManifestSet& manifests) {
  const bool cluster = job.runtime_ref.kind == "ClusterTrainingRuntime";
  for (const auto& rt : manifests.training_runtimes) {
    if (rt.meta.kind != job.runtime_ref.kind || rt.meta.name != job.runtime_ref.name) continue;
    if (cluster || rt.meta.namespace_ == job.meta.namespace_) return &rt;
  }
  return nullptr;
}

Result<model::JobSet> TrainJobAsJobSet(const model::TrainJob& job,
                                       const model::TrainingRuntime& runtime,
                                       std::string* nproc_per_node, std::string* trainer_step) {
  model::JobSet js = runtime.tmpl;
  js.meta = job.meta;
  for (const auto& [k, v] : runtime.tmpl.meta.labels) js.meta.labels.emplace(k, v);
  for (const auto& [k, v] : job.labels) js.meta.labels[k] = v;
  for (const auto& [k, v] : runtime.tmpl.meta.annotations) js.meta.annotations.emplace(k, v);
  for (const auto& [k, v] : job.annotations) js.meta.annotations[k] = v;
  js.suspend = job.suspend;
  const std::string runtime_desc = runtime.meta.kind + " \"" + runtime.meta.Key() + "\"";

  model::ReplicatedJob* trainer = nullptr;
  for (auto& rj : js.replicated_jobs) {
    if (IsTrainerStep(rj)) trainer = &rj;
  }
  for (auto& rj : js.replicated_jobs) {
    if (trainer == nullptr && rj.name == model::kTrainerContainer) trainer = &rj;
  }
  if (trainer == nullptr) {
    if (HasTrainerOverrides(job.trainer) || job.trainer.num_nodes) {
      return internal::FieldError(job.meta, "spec.trainer",
                                  runtime_desc +
                                      " has no trainer step (a replicated job labelled " +
                                      model::kTrainJobAncestorLabel + ": trainer)");
    }
    return js;
  }
  *trainer_step = trainer->name;
  std::optional<int32_t> nodes = job.trainer.num_nodes ? job.trainer.num_nodes : runtime.num_nodes;
  if (nodes) {
    trainer->tmpl.parallelism = *nodes;
    trainer->tmpl.completions = *nodes;
  }
  auto& containers = trainer->tmpl.tmpl.spec.containers;
  auto node = std::find_if(containers.begin(), containers.end(), [](const model::Container& c) {
    return c.name == model::kTrainerContainer;
  });
  if (node == containers.end()) {
    if (HasTrainerOverrides(job.trainer)) {
      return internal::FieldError(job.meta, "spec.trainer",
                                  runtime_desc + ": the trainer step \"" + trainer->name +
                                      "\" has no container named \"node\"");
    }
  } else {
    if (job.trainer.image) node->image = *job.trainer.image;
    if (!job.trainer.command.empty()) node->command = job.trainer.command;
    if (!job.trainer.args.empty()) node->args = job.trainer.args;
    UpsertEnv(job.trainer.env, &node->env);
    if (job.trainer.requests || job.trainer.limits) {
      node->requests = job.trainer.requests.value_or(model::QuantityMap{});
      node->limits = job.trainer.limits.value_or(model::QuantityMap{});
      // Kubernetes defaults requests to limits where only limits are given.
      for (const auto& [k, v] : node->limits) node->requests.emplace(k, v);
    }
  }
  if (runtime.torch) *nproc_per_node = TorchProcsPerNode(runtime, job);
  return js;
}

namespace internal {

Result<model::Workload> BuildTrainJob(const model::TrainJob& job,
                                      const model::ManifestSet& manifests, PriorityRefs* refs) {
  const model::TrainingRuntime* runtime = FindTrainingRuntime(job, manifests);
  if (runtime == nullptr) {
    std::string where =
        job.runtime_ref.kind == "TrainingRuntime" ? " in namespace " + job.meta.namespace_ : "";
    // Where the TrainJob was read, so simulate's error points at it.
    std::string at = job.meta.source.file.empty()
                         ? ""
                         : job.meta.source.file + ":" + std::to_string(job.meta.source.line) + ": ";
    return NotFound(at + job.meta.kind + " " + job.meta.Key() + ": spec.runtimeRef: " +
                    job.runtime_ref.kind + " \"" + job.runtime_ref.name + "\" not found" + where);
  }
  std::string nproc, trainer_step;
  auto js = TrainJobAsJobSet(job, *runtime, &nproc, &trainer_step);
  if (!js.ok()) return js.status();
  auto w = BuildJobSet(*js, refs);
  if (!w.ok()) return w.status();
  if (runtime->torch && !trainer_step.empty()) {
    w->rank.nproc_per_node = nproc;
    w->rank.torch_trainer_pod_set = trainer_step;
  }
  return w;
}

}  // namespace internal
}  // namespace muster::workloads
