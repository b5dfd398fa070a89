// Orphaned pods in serve: `kubectl delete job X --cascade=orphan` deletes the Job and
// leaves its pods, unowned, running on (a kubelet does not stop a pod because its
// owner went). serve's garbage collector sees the Job deleted with the `orphan`
// finalizer and then takes the pods' ownerReferences off. Here, at the Job's
// deletion, the executor lets go of its running pods' processes instead of stopping
// them, the Job's workload is removed (its quota released, as Kueue finishes the
// Workload of a Job deleted that way), and each pod becomes at once the one-pod
// workload any unowned pod is, adopted where it already runs: its node and GPUs stay
// taken (no cycle runs in between), and deleting the pod later stops it alone.
//
// A pod that could not run on as its own workload without being placed again (it
// names a queue, or a pod group) is stopped with the Job, and a log line says why.
#include "control/json_fields.h"
#include "control/reconciler.h"
#include "control/reconciler_state.h"
#include "workloads/workloads.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

// Why the pod cannot run on as a one-pod workload without quota; "" when it can.
std::string WhyNotRunOn(const json& pod) {
  const json& meta = ObjectField(pod, "metadata");
  if (!StringField(ObjectField(meta, "labels"), "kueue.x-k8s.io/queue-name").empty()) {
    return "it names a queue (kueue.x-k8s.io/queue-name), whose quota it would need again";
  }
  std::optional<PodWorkloadId> id = PodWorkloadOf(pod);
  if (!id) return "it is no workload's";
  if (id->group) return "it is in a pod group";
  return "";
}

}  // namespace

std::vector<json> Reconciler::LetGoOrphans(const std::string& key, const json& deleted_job) {
  std::vector<json> out;
  if (runtime_ == nullptr || engine_ == nullptr || view_ == nullptr ||
      !HasFinalizer(deleted_job, kOrphanFinalizer)) {
    return out;
  }
  const engine::WorkloadRecord* r = engine_->Find(key);
  if (r == nullptr || r->phase != engine::Phase::kRunning) return out;
  const std::string& ns = r->workload.meta.namespace_;
  const std::string uid = StringField(ObjectField(deleted_job, "metadata"), "uid");
  std::map<std::string, json> pods;  // by name: the pods that may run on
  for (const auto& p : r->plan.pods) {
    const std::string name = workloads::DefaultHostname(r->workload, p.pod_set, p.index);
    auto stored = view_->Get({"pods", ns, name});
    if (!stored.ok()) continue;
    // As the garbage collector is about to leave it.
    json pod = std::move(*stored);
    RemoveOwnerReference(pod, uid);
    if (const std::string why = WhyNotRunOn(pod); !why.empty()) {
      Log("pod " + ns + "/" + name + " of " + key +
          " (deleted, its dependents orphaned) is stopped with it: " + why);
      continue;
    }
    pods.emplace(name, std::move(pod));
  }
  std::set<std::string> names;
  for (const auto& [name, pod] : pods) names.insert(name);
  const std::set<std::string> let_go = runtime_->LetGo(key, names);
  for (const auto& p : r->plan.pods) {
    const std::string name = workloads::DefaultHostname(r->workload, p.pod_set, p.index);
    if (let_go.count(name) == 0) continue;
    placement::PodPlacement where = p;
    where.pod_set = 0;  // the one pod of its own workload
    where.index = 0;
    let_go_pods_[ns + "/" + name] = where;
    out.push_back(std::move(pods.at(name)));
  }
  if (!out.empty()) {
    Log(key + " was deleted with its dependents orphaned: " + std::to_string(out.size()) +
        " of its pods run on, each as a workload of its own");
  }
  return out;
}

void Reconciler::TakeInOrphans(const std::vector<json>& pods) {
  for (const json& pod : pods) {
    const json& meta = ObjectField(pod, "metadata");
    const std::string pod_id = StringField(meta, "namespace") + "/" + StringField(meta, "name");
    if (bare_pods_.count(pod_id) != 0 || !IntakeBarePod(pod)) continue;
    waiting_pod_gangs_.insert(bare_pods_.at(pod_id));
  }
}

void Reconciler::TakeOverOrphan(JobState& job) {
  auto gang = pod_gangs_.find(job.key);
  if (gang == pod_gangs_.end() || gang->second.pods.size() != 1) return;
  const std::string ns = gang->second.id.namespace_;
  const std::string pod = gang->second.pods.begin()->first;
  auto where = let_go_pods_.find(ns + "/" + pod);
  if (where == let_go_pods_.end()) return;
  placement::GangPlan plan;
  plan.workload_key = job.key;
  plan.pods.push_back(where->second);
  let_go_pods_.erase(where);
  const engine::WorkloadRecord* r = job.in_engine ? engine_->Find(job.key) : nullptr;
  const Time now = clock_.Now();
  Status adopted = FailedPrecondition("its workload was not submitted");
  if (r != nullptr && r->workload.pod_sets.size() == 1) {
    admission::Assignment assignment;
    assignment.pod_sets.push_back({r->workload.pod_sets[0].name, 1, {}});
    adopted = engine_->Adopt(job.key, assignment, std::move(plan), now, now);
  }
  if (adopted.ok()) {
    runtime_->Adopt(*engine_->Find(job.key), now);
    dirty_.insert(job.key);
    return;
  }
  Log("cannot run orphaned pod " + ns + "/" + pod + " on as its own workload (" +
      adopted.message() + "): stopping it");
  runtime_->StopLetGo(ns, pod);
  RemoveJob(job.key);
}

void Reconciler::ForgetOrphan(const std::string& ns, const std::string& pod) {
  if (let_go_pods_.erase(ns + "/" + pod) != 0 && runtime_ != nullptr) {
    runtime_->StopLetGo(ns, pod);
  }
}

}  // namespace muster::control
