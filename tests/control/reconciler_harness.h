// The reconciler's test bench, as engine tests have theirs: a manual clock, an
// in-memory object store, a sink that records every write and applies it to the store
// (at once, or when the test says, to play a slow API server), and a fake executor
// for serve mode. No threads, no sleeps.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "control/gang_runtime.h"
#include "control/json_fields.h"
#include "control/memory_objects.h"
#include "control/reconciler.h"
#include "control/status_sink.h"

namespace muster::control::testing {

using json = nlohmann::json;

class ManualClock : public Clock {
 public:
  Time Now() const override { return now_; }
  void Advance(Time seconds) { now_ += seconds; }

 private:
  Time now_ = 1'800'000'000;  // 2027-01-15T08:00:00Z
};

// Applies each write to `objects` and records it as "<kind> <resource> <ns>/<name>".
// Deferred: writes wait in `pending` until Complete() (an API server's latency).
// `fail` makes the next write of a (kind, name) fail with a Status.
class RecordingSink : public StatusSink {
 public:
  explicit RecordingSink(MemoryObjects& objects) : objects_(objects) {}

  bool deferred = false;
  std::vector<std::string> log;        // every write submitted, in order
  std::vector<Change> changes;         // what a watch would deliver for them
  std::map<std::string, Status> fail;  // "<kind> <name>" -> the next write's result

  void Submit(WriteOp op) override {
    log.push_back(Describe(op));
    if (deferred) {
      pending_.push_back(std::move(op));
    } else {
      results_.push_back(Run(op));
    }
  }
  std::vector<WriteResult> TakeResults() override {
    std::vector<WriteResult> out;
    out.swap(results_);
    return out;
  }
  // Finishes the oldest `n` deferred writes (all when n < 0).
  void Complete(int n = -1) {
    while (!pending_.empty() && n != 0) {
      results_.push_back(Run(pending_.front()));
      pending_.pop_front();
      if (n > 0) --n;
    }
  }
  // Finishes the deferred writes whose description contains `part`, oldest first;
  // returns how many.
  int CompleteWhere(const std::string& part) {
    int n = 0;
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (Describe(*it).find(part) == std::string::npos) {
        ++it;
        continue;
      }
      results_.push_back(Run(*it));
      it = pending_.erase(it);
      ++n;
    }
    return n;
  }
  size_t Pending() const { return pending_.size(); }
  // Deferred writes whose description contains `part`.
  int PendingWhere(const std::string& part) const {
    int n = 0;
    for (const WriteOp& op : pending_) n += Describe(op).find(part) != std::string::npos;
    return n;
  }
  // Writes logged since `from` that contain `part`.
  int Count(const std::string& part, size_t from = 0) const {
    int n = 0;
    for (size_t i = from; i < log.size(); ++i) n += log[i].find(part) != std::string::npos;
    return n;
  }

  static const char* KindName(WriteKind kind) {
    switch (kind) {
      case WriteKind::kWorkload:
        return "workload";
      case WriteKind::kDeleteWorkload:
        return "delete-workload";
      case WriteKind::kJob:
        return "job";
      case WriteKind::kJobStatus:
        return "job-status";
      case WriteKind::kMergeStatus:
        return "status";
      case WriteKind::kEvent:
        return "event";
      case WriteKind::kBind:
        return "bind";
      case WriteKind::kDeletePod:
        return "delete-pod";
      case WriteKind::kRemoveFinalizer:
        return "remove-finalizer";
    }
    return "?";
  }

 private:
  static std::string Describe(const WriteOp& op) {
    std::string out =
        std::string(KindName(op.kind)) + " " + op.resource + " " + op.namespace_ + "/" + op.name;
    if (op.kind == WriteKind::kEvent) out += " " + op.object.value("reason", "");
    for (const auto& [pod, node] : op.bindings) out += " " + pod + "->" + node;
    return out;
  }

  WriteResult Run(const WriteOp& op) {
    WriteResult r;
    r.id = op.id;
    auto failure = fail.find(std::string(KindName(op.kind)) + " " + op.name);
    if (failure != fail.end()) {
      r.status = failure->second;
      fail.erase(failure);
      return r;
    }
    Result<Change> done = NotFound("not written");
    switch (op.kind) {
      case WriteKind::kWorkload:
      case WriteKind::kJob:
        if (op.create) {
          done = objects_.Create(op.resource, op.namespace_, op.object);
        } else {
          done = objects_.Replace(op.resource, op.namespace_, op.object);
        }
        break;
      case WriteKind::kJobStatus:
      case WriteKind::kMergeStatus: {
        auto current = objects_.Get({op.resource, op.namespace_, op.name});
        if (!current.ok()) {
          done = current.status();
          break;
        }
        json next = *current;
        if (op.kind == WriteKind::kJobStatus) {
          next["status"] = op.object.value("status", json::object());
        } else {
          next["status"].merge_patch(op.object.value("status", json::object()));
        }
        done = objects_.Replace(op.resource, op.namespace_, next);
        break;
      }
      case WriteKind::kEvent:
        done = op.create ? objects_.Create("events", op.namespace_, op.object)
                         : objects_.Replace("events", op.namespace_, op.object);
        if (!op.create && !done.ok() && done.status().code() == StatusCode::kNotFound)
          done = objects_.Create("events", op.namespace_, op.object);
        break;
      case WriteKind::kDeleteWorkload:
      case WriteKind::kDeletePod:
        done = objects_.Delete(op.resource, op.namespace_, op.name);
        break;
      case WriteKind::kRemoveFinalizer: {
        // As the API server: an object being deleted goes with its last finalizer.
        auto current = objects_.Get({op.resource, op.namespace_, op.name});
        if (!current.ok()) {
          done = current.status();
          break;
        }
        json next = *current;
        RemoveFinalizer(next, op.object.get<std::string>());
        const json& meta = next["metadata"];
        if (meta.contains("deletionTimestamp") && !meta.contains("finalizers")) {
          done = objects_.Delete(op.resource, op.namespace_, op.name);
        } else {
          done = objects_.Replace(op.resource, op.namespace_, next);
        }
        break;
      }
      case WriteKind::kBind:
        for (const auto& [pod, node] : op.bindings) {
          auto current = objects_.Get({"pods", op.namespace_, pod});
          if (!current.ok()) {
            r.failed_bindings.emplace_back(pod, current.status());
            continue;
          }
          json next = *current;
          next["spec"]["nodeName"] = node;
          auto bound = objects_.Replace("pods", op.namespace_, next);
          if (bound.ok()) changes.push_back(*bound);
        }
        return r;
    }
    if (!done.ok()) {
      r.status = done.status();
      return r;
    }
    r.object = done->Object();
    changes.push_back(*done);
    return r;
  }

  MemoryObjects& objects_;
  std::deque<WriteOp> pending_;
  std::vector<WriteResult> results_;
};

// Serve mode's executor: records starts and stops; gangs finish when the test says.
class FakeRuntime : public GangRuntime {
 public:
  std::vector<std::string> events;  // "start ml/a", "evicted ml/a", "adopt ml/a"...
  std::set<std::string> running;

  void SetEngine(const engine::Engine*) override {}
  void Started(const engine::WorkloadRecord& r, Time) override {
    events.push_back("start " + r.key());
    running.insert(r.key());
    changed_.insert(r.key());
  }
  void Stopped(const engine::WorkloadRecord& r, Time, engine::StopCause cause) override {
    const char* what = cause == engine::StopCause::kSucceeded ? "done"
                       : cause == engine::StopCause::kEvicted ? "evicted"
                       : cause == engine::StopCause::kDeleted ? "deleted"
                                                              : "failed";
    events.push_back(std::string(what) + " " + r.key());
    running.erase(r.key());
    changed_.insert(r.key());
  }
  void Adopt(const engine::WorkloadRecord& r, Time) override {
    events.push_back("adopt " + r.key());
    running.insert(r.key());
  }
  std::vector<GangOutcome> Poll(Time) override {
    std::vector<GangOutcome> out;
    out.swap(outcomes_);
    return out;
  }
  GangPodCounts Counts(const std::string& key) const override {
    GangPodCounts c;
    if (running.count(key) != 0) c.running = 1;
    return c;
  }
  bool PodsReady(const std::string& key) const override {
    return running.count(key) != 0 && unready.count(key) == 0;
  }
  std::set<std::string> unready;  // running gangs whose pods are not ready
  void MarkReady(const std::string& key) {
    unready.erase(key);
    changed_.insert(key);
  }
  std::vector<std::string> TakeChangedGangs() override {
    std::vector<std::string> out(changed_.begin(), changed_.end());
    changed_.clear();
    return out;
  }
  void Finish(const std::string& key, bool succeeded) {
    outcomes_.push_back({key, succeeded, succeeded ? "" : "pod exited 1"});
  }
  void Report(GangOutcome outcome) { outcomes_.push_back(std::move(outcome)); }

 private:
  std::vector<GangOutcome> outcomes_;
  std::set<std::string> changed_;
};

// --- Objects.

inline json Node(const std::string& name, int gpus, const std::string& pool = "a100") {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", {{"pool", pool}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", "32"},
              {"memory", "256Gi"},
              {"pods", "110"},
              {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

inline json Flavor(const std::string& name) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "ResourceFlavor"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"nodeLabels", {{"pool", name}}},
            {"tolerations",
             json::array({{{"key", "gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})}}}};
}

inline json ClusterQueue(const std::string& name, int gpus, const std::string& flavor = "a100") {
  json resources = json::array({{{"name", "cpu"}, {"nominalQuota", 1000}},
                                {{"name", "nvidia.com/gpu"}, {"nominalQuota", gpus}}});
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"namespaceSelector", json::object()},
            {"preemption", {{"withinClusterQueue", "LowerPriority"}}},
            {"resourceGroups",
             {{{"coveredResources", {"cpu", "nvidia.com/gpu"}},
               {"flavors", {{{"name", flavor}, {"resources", resources}}}}}}}}}};
}

inline json LocalQueue(const std::string& name, const std::string& cq) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", name}, {"namespace", "ml"}}},
          {"spec", {{"clusterQueue", cq}}}};
}

inline json PriorityClass(const std::string& name, int value) {
  return {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", name}}},
          {"value", value}};
}

// An Indexed batch Job of `pods` pods with `gpus` GPUs each in namespace "ml", queued
// to LocalQueue "team", created suspended (as muster's webhook leaves it).
inline json IndexedJob(const std::string& name, int pods, int gpus,
                       const std::string& priority_class = "") {
  json container = {
      {"name", "train"},
      {"image", "trainer"},
      {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", name}, {"namespace", "ml"}, {"labels", {{"kueue.x-k8s.io/queue-name", "team"}}}}},
      {"spec",
       {{"suspend", true},
        {"parallelism", pods},
        {"completions", pods},
        {"completionMode", "Indexed"},
        {"template",
         {{"spec",
           {{"schedulerName", "muster"},
            {"restartPolicy", "Never"},
            {"containers", json::array({container})}}}}}}}};
  if (!priority_class.empty())
    job["spec"]["template"]["spec"]["priorityClassName"] = priority_class;
  return job;
}

// The pod the Job controller makes for completion index `index` of `job`.
inline json PodOf(const json& job, int index) {
  const std::string name = job["metadata"]["name"];
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {
      {"name", name + "-" + std::to_string(index)},
      {"namespace", "ml"},
      {"labels", {{"batch.kubernetes.io/job-name", name}}},
      {"annotations", {{"batch.kubernetes.io/job-completion-index", std::to_string(index)}}},
      {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                        {"kind", "Job"},
                                        {"name", name},
                                        {"uid", job["metadata"]["uid"]},
                                        {"controller", true}}})}};
  pod["spec"] = job["spec"]["template"]["spec"];
  pod["status"] = {{"phase", "Pending"}};
  return pod;
}

inline std::string Condition(const json& object, const std::string& type,
                             std::string* reason = nullptr) {
  if (!object.is_object()) return "";
  for (const auto& c : object.value("status", json::object()).value("conditions", json::array())) {
    if (c.value("type", "") != type) continue;
    if (reason != nullptr) *reason = c.value("reason", "");
    return c.value("status", "");
  }
  return "";
}

// A reconciler over `objects` with its sink, clock and (serve) runtime. Changes of the
// sink's writes are fed back like a watch when `Step` runs.
class Bench {
 public:
  explicit Bench(ReconcilerMode mode,
                 std::optional<model::KueueConfiguration> kueue_config = std::nullopt)
      : sink(objects) {
    options_.mode = mode;
    options_.kueue_config = std::move(kueue_config);
    options_.check_invariants = true;
    options_.log = [this](const std::string& line) { logs.push_back(line); };
    reconciler = std::make_unique<Reconciler>(
        clock, sink, mode == ReconcilerMode::kServe ? &runtime : nullptr, options_);
  }

  // Changes the options the reconciler is made with (a new one, not built yet).
  void Reconfigure(const std::function<void(ReconcilerOptions&)>& edit) {
    edit(options_);
    reconciler = std::make_unique<Reconciler>(
        clock, sink, options_.mode == ReconcilerMode::kServe ? &runtime : nullptr, options_);
    built = false;
  }

  // A restarted controller: a new reconciler, with nothing remembered, built over the
  // same objects.
  void Restart() {
    reconciler = std::make_unique<Reconciler>(
        clock, sink, options_.mode == ReconcilerMode::kServe ? &runtime : nullptr, options_);
    Build();
  }

  // Creates an object through the "API": stored, and delivered as a change.
  json Create(const std::string& resource, const std::string& ns, json object) {
    Change c = objects.Create(resource, ns, std::move(object));
    if (built) reconciler->Apply(c);
    return c.Object();
  }
  json Replace(const std::string& resource, const std::string& ns, json object) {
    Change c = *objects.Replace(resource, ns, std::move(object));
    if (built) reconciler->Apply(c);
    return c.Object();
  }
  void Delete(const std::string& resource, const std::string& ns, const std::string& name) {
    Change c = *objects.Delete(resource, ns, name);
    if (built) reconciler->Apply(c);
  }
  void Build() {
    reconciler->Build(objects);
    built = true;
  }
  // One step; then the watch delivers what the sink wrote (as an adapter's queue would).
  Reconciler::StepResult Step() {
    auto result = reconciler->Step();
    std::vector<Change> echoed;
    echoed.swap(sink.changes);
    for (const auto& c : echoed) reconciler->Apply(c);
    return result;
  }
  void Steps(int n) {
    for (int i = 0; i < n; ++i) Step();
  }

  json Get(const std::string& resource, const std::string& ns, const std::string& name) {
    auto o = objects.Get({resource, ns, name});
    return o.ok() ? *o : json();
  }
  json Workload(const std::string& job) {
    return Get("workloads.kueue.x-k8s.io", "ml", "job-" + job);
  }
  json Job(const std::string& name) { return Get("jobs.batch", "ml", name); }

  void Configure(int nodes, int gpus_per_node, int quota) {
    for (int i = 0; i < nodes; ++i)
      Create("nodes", "", Node("gpu-" + std::to_string(i), gpus_per_node));
    Create("resourceflavors.kueue.x-k8s.io", "", Flavor("a100"));
    Create("clusterqueues.kueue.x-k8s.io", "", ClusterQueue("research", quota));
    Create("localqueues.kueue.x-k8s.io", "ml", LocalQueue("team", "research"));
    Create("priorityclasses.scheduling.k8s.io", "", PriorityClass("urgent", 1000));
  }

  ManualClock clock;
  MemoryObjects objects;
  RecordingSink sink;
  FakeRuntime runtime;
  std::vector<std::string> logs;
  std::unique_ptr<Reconciler> reconciler;
  bool built = false;

 private:
  ReconcilerOptions options_;
};

}  // namespace muster::control::testing
