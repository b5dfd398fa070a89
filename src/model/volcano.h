// Volcano objects: Queue, PodGroup, HyperNode (scheduling/topology.volcano.sh) and
// the batch.volcano.sh Job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/meta.h"
#include "model/pod.h"

namespace muster::model {

struct VolcanoQueue {
  ObjectMeta meta;
  int32_t weight = 1;
  QuantityMap capability;  // empty = unlimited
  QuantityMap deserved;
  QuantityMap guarantee;
  bool reclaimable = true;
  std::string parent;  // hierarchical queues; "" = root
  std::optional<int32_t> priority;
  bool open = true;  // status.state / spec state Closed => false
};

enum class NetworkTopologyMode { kHard, kSoft };

struct NetworkTopologySpec {
  NetworkTopologyMode mode = NetworkTopologyMode::kHard;
  std::optional<int32_t> highest_tier_allowed;
};

struct PodGroup {
  ObjectMeta meta;
  int32_t min_member = 1;
  std::map<std::string, int32_t> min_task_member;
  QuantityMap min_resources;
  std::string queue = "default";
  std::string priority_class_name;
  std::optional<NetworkTopologySpec> network_topology;
  // status as last reported (Volcano's scheduler, or muster for a standalone group):
  // what `muster summary` shows; the scheduler never reads it.
  std::string phase;  // Pending, Inqueue, Running, Completed ("" when none)
  int32_t running = 0, succeeded = 0, failed = 0;
};

struct HyperNodeMember {
  enum class Type { kNode, kHyperNode };
  Type type = Type::kNode;
  std::string exact_name;  // selector.exactMatch.name
  std::string regex;       // selector.regexMatch.pattern
  StringMap labels;        // selector.labelMatch.matchLabels
};

struct HyperNode {
  ObjectMeta meta;
  int32_t tier = 1;
  std::vector<HyperNodeMember> members;
};

// Job lifecycle policy: on `event` (PodEvicted, PodFailed, TaskCompleted, Unknown,
// "*") or `exit_code`, take `action` (RestartJob, AbortJob, CompleteJob,
// TerminateJob, RestartTask, RestartPod).
struct LifecyclePolicy {
  std::vector<std::string> events;
  std::string action;
  std::optional<int32_t> exit_code;
  std::optional<double> timeout_seconds;
};

struct VolcanoTask {
  std::string name;
  int32_t replicas = 1;
  std::optional<int32_t> min_available;
  PodTemplate tmpl;
  std::vector<LifecyclePolicy> policies;
};

struct VolcanoJob {
  ObjectMeta meta;
  std::string scheduler_name = "volcano";
  std::optional<int32_t> min_available;  // default: sum of task replicas
  std::string queue = "default";
  std::vector<VolcanoTask> tasks;
  std::vector<LifecyclePolicy> policies;
  std::map<std::string, std::vector<std::string>> plugins;  // env, svc, ssh...
  int32_t max_retry = 3;
  std::string priority_class_name;
  std::optional<NetworkTopologySpec> network_topology;
};

}  // namespace muster::model
