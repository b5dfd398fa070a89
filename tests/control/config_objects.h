// The cluster configuration objects that control and serve tests store, one builder
// each: a Node, a ResourceFlavor, a ClusterQueue owning cpu and GPU quota of one
// flavor, a LocalQueue. A test then says only what differs (names, amounts, cohort).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace muster::control::testing {

// A Node with `cpu` CPUs, `memory` and `gpus` GPUs allocatable.
inline nlohmann::json NodeObject(const std::string& name, const std::string& cpu,
                                 const std::string& memory, const std::string& gpus) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status",
           {{"allocatable",
             {{"cpu", cpu}, {"memory", memory}, {"nvidia.com/gpu", gpus}, {"pods", "110"}}}}}};
}

inline nlohmann::json FlavorObject(const std::string& name) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "ResourceFlavor"},
          {"metadata", {{"name", name}}}};
}

// A ClusterQueue for every namespace with `cpu` CPUs and `gpus` GPUs of `flavor`
// nominal; in `cohort` and with `preemption` (spec.preemption) when they are given.
inline nlohmann::json ClusterQueueObject(const std::string& name, const std::string& flavor,
                                         int cpu, int gpus, const std::string& cohort = "",
                                         const nlohmann::json& preemption = nullptr) {
  nlohmann::json resources =
      nlohmann::json::array({{{"name", "cpu"}, {"nominalQuota", cpu}},
                             {{"name", "nvidia.com/gpu"}, {"nominalQuota", gpus}}});
  nlohmann::json spec = {{"namespaceSelector", nlohmann::json::object()},
                         {"resourceGroups",
                          {{{"coveredResources", {"cpu", "nvidia.com/gpu"}},
                            {"flavors", {{{"name", flavor}, {"resources", resources}}}}}}}};
  if (!cohort.empty()) spec["cohort"] = cohort;
  if (!preemption.is_null()) spec["preemption"] = preemption;
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

inline nlohmann::json LocalQueueObject(const std::string& name, const std::string& ns,
                                       const std::string& cluster_queue) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"clusterQueue", cluster_queue}}}};
}

}  // namespace muster::control::testing
