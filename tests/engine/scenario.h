// Small hand-built clusters and jobs for engine tests (model objects, no YAML).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/quantity.h"
#include "engine/executor.h"
#include "model/manifest_set.h"

namespace muster::engine::testing {

// Virtual time the test moves by hand.
class ManualClock : public Clock {
 public:
  Time Now() const override { return now_; }
  void Set(Time t) { now_ = t; }

 private:
  Time now_ = 0;
};

// Records starts and stops the way an executor sees them: "start ml/a @0",
// "evicted ml/a @5", "done ...", "failed ...", "deleted ...".
class RecordingExecutor : public Executor {
 public:
  void Started(const WorkloadRecord& r, Time now) override {
    events.push_back("start " + r.key() + " @" + std::to_string(static_cast<int>(now)));
  }
  void Stopped(const WorkloadRecord& r, Time now, StopCause cause) override {
    const char* what = cause == StopCause::kSucceeded ? "done"
                       : cause == StopCause::kEvicted ? "evicted"
                       : cause == StopCause::kDeleted ? "deleted"
                                                      : "failed";
    events.push_back(std::string(what) + " " + r.key() + " @" +
                     std::to_string(static_cast<int>(now)));
  }
  // Elastic gangs: "resize ml/a +4 -0 @600".
  void Resized(const WorkloadRecord& r, const std::vector<placement::PodPlacement>& added,
               const std::vector<placement::PodPlacement>& removed, Time now) override {
    events.push_back("resize " + r.key() + " +" + std::to_string(added.size()) + " -" +
                     std::to_string(removed.size()) + " @" + std::to_string(static_cast<int>(now)));
  }
  bool SupportsResize() const override { return true; }
  std::vector<std::string> events;
};

inline model::QuantityMap Q(const std::map<std::string, std::string>& named) {
  model::QuantityMap out;
  for (const auto& [k, v] : named) out[k] = Quantity::Parse(v).value();
  return out;
}

inline model::Node MakeNode(const std::string& name, int gpus) {
  model::Node n;
  n.meta.api_version = "v1";
  n.meta.kind = "Node";
  n.meta.name = name;
  n.meta.labels["kubernetes.io/hostname"] = name;
  n.allocatable = ResourceList::FromQuantities(Q({{"cpu", "64"},
                                                  {"memory", "512Gi"},
                                                  {"pods", "110"},
                                                  {"nvidia.com/gpu", std::to_string(gpus)}}));
  return n;
}

// A batch/v1 Job of `pods` pods with `gpus` GPUs each, in namespace "ml".
inline model::BatchJob MakeJob(const std::string& name, int pods, int gpus,
                               const std::string& local_queue = "",
                               const std::string& priority_class = "") {
  model::BatchJob job;
  job.meta.api_version = "batch/v1";
  job.meta.kind = "Job";
  job.meta.name = name;
  job.meta.namespace_ = "ml";
  if (!local_queue.empty()) job.meta.labels["kueue.x-k8s.io/queue-name"] = local_queue;
  job.spec.parallelism = pods;
  job.spec.completions = pods;
  job.spec.backoff_limit = 0;
  job.spec.tmpl.spec.restart_policy = "Never";
  job.spec.tmpl.spec.priority_class_name = priority_class;
  model::Container c;
  c.name = "trainer";
  c.image = "trainer:latest";
  c.requests = Q({{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}});
  c.limits = Q({{"nvidia.com/gpu", std::to_string(gpus)}});
  job.spec.tmpl.spec.containers.push_back(c);
  return job;
}

// A ClusterQueue "cq" with one flavor "gpu" (cpu 64, `gpus` GPUs), LocalQueue
// "lq" in namespace "ml", and preemption withinClusterQueue LowerPriority.
inline void AddQueues(model::ManifestSet& m, int gpus) {
  model::ResourceFlavor flavor;
  flavor.meta.name = "gpu";
  flavor.meta.kind = "ResourceFlavor";
  m.resource_flavors.push_back(flavor);
  model::ClusterQueue cq;
  cq.meta.name = "cq";
  cq.meta.kind = "ClusterQueue";
  cq.namespace_selector = model::LabelSelector{};
  cq.preemption.within_cluster_queue = model::PreemptionPolicy::kLowerPriority;
  model::ResourceGroup rg;
  rg.covered_resources = {"cpu", "nvidia.com/gpu"};
  model::FlavorQuotas fq;
  fq.name = "gpu";
  fq.resources.push_back({"cpu", Quantity::Parse("64").value(), std::nullopt, std::nullopt});
  fq.resources.push_back({"nvidia.com/gpu", Quantity::FromInt(gpus), std::nullopt, std::nullopt});
  rg.flavors.push_back(fq);
  cq.resource_groups.push_back(rg);
  m.cluster_queues.push_back(cq);
  model::LocalQueue lq;
  lq.meta.name = "lq";
  lq.meta.namespace_ = "ml";
  lq.meta.kind = "LocalQueue";
  lq.cluster_queue = "cq";
  m.local_queues.push_back(lq);
  for (auto [name, value] : {std::pair<const char*, int>{"low", 100}, {"high", 1000}}) {
    model::PriorityClass pc;
    pc.meta.name = name;
    pc.meta.kind = "PriorityClass";
    pc.value = value;
    m.priority_classes.push_back(pc);
  }
}

// Input order for the engine's tie-breaks.
inline void Number(model::ManifestSet& m) {
  int64_t order = 0;
  for (auto& job : m.jobs) {
    std::visit([&](auto& j) { j.meta.order = order++; }, job);
  }
}

}  // namespace muster::engine::testing
