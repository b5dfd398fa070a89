// Volcano: scheduling.volcano.sh Queue and PodGroup, topology.volcano.sh HyperNode,
// batch.volcano.sh Job. Defaults follow Volcano's admission webhook (mutate_job.go).
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

std::optional<model::NetworkTopologySpec> DecodeNetworkTopology(const YamlValue& v) {
  if (!v.IsSet()) return std::nullopt;
  model::NetworkTopologySpec nt;
  YamlValue mode = v.Get("mode");
  if (mode.IsSet()) {
    if (auto m = mode.Enum({"hard", "soft"})) nt.mode = static_cast<model::NetworkTopologyMode>(*m);
  }
  if (auto t = v.Get("highestTierAllowed").Int32(0)) nt.highest_tier_allowed = *t;
  return nt;
}

// Job- or task-level lifecycle policies; an event (or exit code) may appear in one
// policy only, as Volcano's webhook requires.
std::vector<model::LifecyclePolicy> DecodePolicies(const YamlValue& v) {
  std::vector<model::LifecyclePolicy> out;
  std::set<std::string> events_seen;
  std::set<int32_t> codes_seen;
  for (const auto& p : v.Items()) {
    model::LifecyclePolicy policy;
    std::vector<YamlValue> event_values;
    if (p.Get("event").IsSet()) event_values.push_back(p.Get("event"));
    for (auto& e : p.Get("events").Items()) event_values.push_back(e);
    for (const auto& e : event_values) {
      static const char* const kEvents[] = {
          "*",          "PodFailed",     "PodEvicted",    "PodPending",
          "PodRunning", "Unknown",       "TaskCompleted", "TaskFailed",
          "OutOfSync",  "CommandIssued", "JobUpdated"};
      auto which =
          e.Enum({"*", "PodFailed", "PodEvicted", "PodPending", "PodRunning", "Unknown",
                  "TaskCompleted", "TaskFailed", "OutOfSync", "CommandIssued", "JobUpdated"});
      if (!which) continue;
      std::string name = kEvents[*which];
      if (!events_seen.insert(name).second) {
        e.Error("event " + Quote(name) + " is already handled by another policy");
      }
      policy.events.push_back(name);
    }
    if (auto code = p.Get("exitCode").Int32(INT32_MIN)) {
      policy.exit_code = *code;
      if (*code == 0) p.Get("exitCode").Error("must not be 0 (0 means success)");
      if (!codes_seen.insert(*code).second) {
        p.Get("exitCode")
            .Error("exit code " + std::to_string(*code) + " is already handled by another policy");
      }
    }
    if (policy.events.empty() && !policy.exit_code) {
      p.Error("needs event, events or exitCode");
    } else if (!policy.events.empty() && policy.exit_code) {
      p.Get("exitCode").Error("must not be set together with event/events");
    }
    YamlValue action = p.Get("action");
    if (!action.IsSet()) {
      action.Error("is required");
    } else if (auto a =
                   action.Enum({"AbortJob", "RestartJob", "RestartTask", "RestartPod",
                                "RestartPartition", "TerminateJob", "CompleteJob", "ResumeJob"})) {
      static const char* const kActions[] = {"AbortJob",    "RestartJob",       "RestartTask",
                                             "RestartPod",  "RestartPartition", "TerminateJob",
                                             "CompleteJob", "ResumeJob"};
      policy.action = kActions[*a];
    }
    if (p.Get("timeout").IsSet()) policy.timeout_seconds = p.Get("timeout").Duration();
    out.push_back(std::move(policy));
  }
  return out;
}

}  // namespace

void DecodeVolcanoQueue(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::VolcanoQueue q;
  YamlValue spec = root.Get("spec");
  spec.Get("weight").Read(q.weight, 1);
  q.capability = spec.Get("capability").QuantityMap(QuantityScope::kQuota);
  q.deserved = spec.Get("deserved").QuantityMap(QuantityScope::kQuota);
  q.guarantee = spec.Get("guarantee").Get("resource").QuantityMap(QuantityScope::kQuota);
  spec.Get("reclaimable").Read(q.reclaimable);
  spec.Get("parent").Read(q.parent);
  if (q.parent == "root") q.parent.clear();  // Volcano's implicit root queue
  if (!q.parent.empty()) {
    spec.Get("parent").Ref("Queue", "", q.parent);
  }
  if (auto p = spec.Get("priority").Int(INT32_MIN, INT32_MAX))
    q.priority = static_cast<int32_t>(*p);
  for (const char* where : {"spec", "status"}) {
    YamlValue state = root.Get(where).Get("state");
    if (state.IsSet()) {
      if (auto s = state.Enum({"Open", "Closed", "Closing", "Unknown"})) q.open = *s == 0;
    }
  }
  for (const auto& [name, amount] : q.deserved) {
    auto cap = q.capability.find(name);
    if (cap != q.capability.end() && amount > cap->second) {
      spec.Get("deserved")
          .Error("deserved " + name + " (" + amount.ToString() + ") exceeds capability (" +
                 cap->second.ToString() + ")");
    }
  }
  q.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.volcano_queues.push_back(std::move(q));
}

void DecodePodGroup(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::PodGroup pg;
  YamlValue spec = root.Get("spec");
  spec.Get("minMember").Read(pg.min_member);
  for (const auto& [task, value] : spec.Get("minTaskMember").Entries()) {
    if (auto n = value.Int32(0)) pg.min_task_member[task] = *n;
  }
  pg.min_resources = spec.Get("minResources").QuantityMap(QuantityScope::kWorkload);
  spec.Get("queue").Read(pg.queue);
  if (pg.queue.empty()) pg.queue = "default";
  if (pg.queue != "default") spec.Get("queue").Ref("Queue", "", pg.queue);
  spec.Get("priorityClassName").Read(pg.priority_class_name);
  if (!pg.priority_class_name.empty()) {
    spec.Get("priorityClassName").Ref("PriorityClass", "", pg.priority_class_name);
  }
  pg.network_topology = DecodeNetworkTopology(spec.Get("networkTopology"));
  YamlValue status = root.Get("status");
  status.Get("phase").Read(pg.phase);
  status.Get("running").Read(pg.running);
  status.Get("succeeded").Read(pg.succeeded);
  status.Get("failed").Read(pg.failed);
  pg.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.pod_groups.push_back(std::move(pg));
}

void DecodeHyperNode(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::HyperNode hn;
  YamlValue spec = root.Get("spec");
  spec.Get("tier").Read(hn.tier, 0);
  for (const auto& m : spec.Get("members").Items()) {
    model::HyperNodeMember member;
    YamlValue type = m.Get("type");
    if (type.IsSet()) {
      if (auto t = type.Enum({"Node", "HyperNode"})) {
        member.type = static_cast<model::HyperNodeMember::Type>(*t);
      }
    }
    YamlValue selector = m.Get("selector");
    int kinds = 0;
    if (selector.Get("exactMatch").IsSet()) {
      ++kinds;
      selector.Get("exactMatch").Get("name").Read(member.exact_name);
      if (member.exact_name.empty()) selector.Get("exactMatch").Get("name").Error("is required");
    }
    if (selector.Get("regexMatch").IsSet()) {
      ++kinds;
      selector.Get("regexMatch").Get("pattern").Read(member.regex);
      if (member.regex.empty()) selector.Get("regexMatch").Get("pattern").Error("is required");
    }
    if (selector.Get("labelMatch").IsSet()) {
      ++kinds;
      member.labels = selector.Get("labelMatch").Get("matchLabels").StringMap();
    }
    if (kinds != 1) {
      selector.Error("must set exactly one of exactMatch, regexMatch, labelMatch");
    }
    hn.members.push_back(std::move(member));
  }
  hn.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.hyper_nodes.push_back(std::move(hn));
}

void DecodeVolcanoJob(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::VolcanoJob job;
  YamlValue spec = root.Get("spec");
  spec.Get("schedulerName").Read(job.scheduler_name);
  if (job.scheduler_name.empty()) job.scheduler_name = "volcano";
  YamlValue queue = spec.Get("queue");
  queue.Read(job.queue);
  if (job.queue.empty()) {
    auto it = meta.annotations.find(kVolcanoQueueAnnotation);
    job.queue = it != meta.annotations.end() && !it->second.empty() ? it->second : "default";
  }
  if (job.queue != "default") queue.Ref("Queue", "", job.queue);
  spec.Get("priorityClassName").Read(job.priority_class_name);
  if (!job.priority_class_name.empty()) {
    spec.Get("priorityClassName").Ref("PriorityClass", "", job.priority_class_name);
  }
  // maxRetry 0 means "unset" to Volcano's webhook, which then sets 3.
  spec.Get("maxRetry").Read(job.max_retry);
  if (job.max_retry == 0) job.max_retry = 3;
  job.policies = DecodePolicies(spec.Get("policies"));
  for (const auto& [plugin, args] : spec.Get("plugins").Entries()) {
    job.plugins[plugin] = args.StringList();
  }
  job.network_topology = DecodeNetworkTopology(spec.Get("networkTopology"));

  YamlValue tasks = spec.Get("tasks");
  if (!tasks.IsSet()) tasks.Error("is required (at least one task)");
  std::set<std::string> names;
  int64_t total_replicas = 0, default_min = 0;
  int index = 0;
  for (const auto& t : tasks.Items()) {
    model::VolcanoTask task;
    t.Get("name").Read(task.name);
    if (task.name.empty()) task.name = "default" + std::to_string(index);
    if (!names.insert(task.name).second) {
      t.Get("name").Error("task name " + Quote(task.name) + " is used by another task");
    }
    t.Get("replicas").Read(task.replicas);
    YamlValue min = t.Get("minAvailable");
    min.Read(task.min_available);
    if (task.min_available && *task.min_available > task.replicas) {
      min.Error(std::to_string(*task.min_available) + " is more than the task's replicas (" +
                std::to_string(task.replicas) + ")");
    }
    if (!task.min_available) task.min_available = task.replicas;  // webhook default
    task.tmpl = DecodePodTemplate(t.Get("template"));
    task.policies = DecodePolicies(t.Get("policies"));
    total_replicas += task.replicas;
    default_min += *task.min_available;
    job.tasks.push_back(std::move(task));
    ++index;
  }
  YamlValue min = spec.Get("minAvailable");
  min.Read(job.min_available);
  if (job.min_available && *job.min_available > total_replicas) {
    min.Error(std::to_string(*job.min_available) +
              " is more than the total replicas of all tasks (" + std::to_string(total_replicas) +
              ")");
  }
  // minAvailable 0 or unset: the webhook sums the tasks' minAvailable.
  if (!job.min_available || *job.min_available == 0) {
    job.min_available = static_cast<int32_t>(std::min<int64_t>(default_min, INT32_MAX));
  }
  AddWorkloadRefs(root, meta);
  job.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.jobs.emplace_back(std::move(job));
}

}  // namespace muster::api::internal
