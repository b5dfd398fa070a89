// Small builders for model objects used by the workloads tests. Tests build model
// values directly so they do not depend on the manifest decoder.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/quantity.h"
#include "core/resource_list.h"
#include "model/manifest_set.h"

namespace muster::workloads::testing {

inline Quantity Q(std::string_view text) { return Quantity::Parse(text).value(); }

inline model::QuantityMap Res(std::initializer_list<std::pair<const char*, const char*>> items) {
  model::QuantityMap m;
  for (const auto& [k, v] : items) m.emplace(k, Q(v));
  return m;
}

inline ResourceList List(std::initializer_list<std::pair<const char*, const char*>> items) {
  return ResourceList::FromQuantities(Res(items));
}

inline model::Container MakeContainer(std::string name, model::QuantityMap requests,
                                      model::QuantityMap limits = {}) {
  model::Container c;
  c.name = std::move(name);
  c.image = "busybox";
  c.requests = std::move(requests);
  c.limits = std::move(limits);
  return c;
}

// A template with one container "main" requesting `requests`.
inline model::PodTemplate Template(model::QuantityMap requests = Res({{"cpu", "1"}})) {
  model::PodTemplate t;
  t.spec.containers.push_back(MakeContainer("main", std::move(requests)));
  return t;
}

inline model::ObjectMeta Meta(std::string api_version, std::string kind, std::string name,
                              std::string ns = "default") {
  model::ObjectMeta m;
  m.api_version = std::move(api_version);
  m.kind = std::move(kind);
  m.name = std::move(name);
  m.namespace_ = std::move(ns);
  return m;
}

inline model::BatchJob BatchJob(std::string name, int32_t parallelism,
                                std::optional<int32_t> completions = std::nullopt) {
  model::BatchJob j;
  j.meta = Meta("batch/v1", "Job", std::move(name));
  j.spec.parallelism = parallelism;
  j.spec.completions = completions;
  j.spec.tmpl = Template();
  return j;
}

inline model::ReplicaSpec Replica(std::string type, int32_t replicas,
                                  model::PodTemplate tmpl = Template()) {
  model::ReplicaSpec r;
  r.type = std::move(type);
  r.replicas = replicas;
  r.tmpl = std::move(tmpl);
  return r;
}

inline model::KubeflowJob Kubeflow(std::string kind, std::string name,
                                   std::vector<model::ReplicaSpec> replicas) {
  model::KubeflowJob j;
  std::string api = kind == "MPIJob" ? "kubeflow.org/v2beta1" : "kubeflow.org/v1";
  j.meta = Meta(api, std::move(kind), std::move(name));
  j.replica_specs = std::move(replicas);
  return j;
}

inline model::ReplicatedJob Replicated(std::string name, int32_t replicas, int32_t parallelism,
                                       bool indexed = true) {
  model::ReplicatedJob rj;
  rj.name = std::move(name);
  rj.replicas = replicas;
  rj.tmpl.parallelism = parallelism;
  rj.tmpl.completions = parallelism;
  rj.tmpl.completion_mode =
      indexed ? model::CompletionMode::kIndexed : model::CompletionMode::kNonIndexed;
  rj.tmpl.tmpl = Template();
  return rj;
}

inline model::JobSet JobSet(std::string name, std::vector<model::ReplicatedJob> rjs) {
  model::JobSet j;
  j.meta = Meta("jobset.x-k8s.io/v1alpha2", "JobSet", std::move(name));
  j.replicated_jobs = std::move(rjs);
  return j;
}

inline model::VolcanoTask Task(std::string name, int32_t replicas,
                               std::optional<int32_t> min_available = std::nullopt) {
  model::VolcanoTask t;
  t.name = std::move(name);
  t.replicas = replicas;
  t.min_available = min_available;
  t.tmpl = Template();
  return t;
}

inline model::VolcanoJob VolcanoJob(std::string name, std::vector<model::VolcanoTask> tasks) {
  model::VolcanoJob j;
  j.meta = Meta("batch.volcano.sh/v1alpha1", "Job", std::move(name));
  j.tasks = std::move(tasks);
  return j;
}

inline model::PriorityClass PriorityClass(std::string name, int32_t value,
                                          bool global_default = false,
                                          bool preemption_never = false) {
  model::PriorityClass pc;
  pc.meta = Meta("scheduling.k8s.io/v1", "PriorityClass", std::move(name), "");
  pc.value = value;
  pc.global_default = global_default;
  pc.preemption_never = preemption_never;
  return pc;
}

inline model::WorkloadPriorityClass WorkloadPriorityClass(std::string name, int32_t value) {
  model::WorkloadPriorityClass wpc;
  wpc.meta = Meta("kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass", std::move(name), "");
  wpc.value = value;
  return wpc;
}

}  // namespace muster::workloads::testing
