#include "server/local_executor.h"

#include <algorithm>

#include "control/workload_objects.h"
#include "core/text.h"
#include "server/local_node.h"
#include "server/pod_object.h"
#include "server/pod_paths.h"
#include "server/podman_runtime.h"
#include "server/port_allocator.h"
#include "server/store_volume_sources.h"
#include "workloads/workloads.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

constexpr int kFirstMasterPort = 29500;

model::StringMap StringMapAt(const json& object, const char* section, const char* field) {
  model::StringMap out;
  if (!object.contains(section) || !object[section].is_object()) return out;
  const json& s = object[section];
  if (!s.contains(field) || !s[field].is_object()) return out;
  for (const auto& [k, v] : s[field].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

bool IsKubeflow(const model::Workload& w) {
  return w.meta.kind == "PyTorchJob" || w.meta.kind == "TFJob";
}

// Subdomains whose headless Service the job's controller creates itself.
bool SubdomainByController(const model::Workload& w, int32_t pod_set) {
  const model::PodSet& ps = w.pod_sets[pod_set];
  return ps.tmpl.spec.subdomain.empty() && !workloads::DefaultSubdomain(w, pod_set).empty();
}

}  // namespace

LocalExecutor::LocalExecutor(ObjectStore& store, ProcessSupervisor& processes,
                             LocalPodConfig config)
    : store_(store),
      processes_(processes),
      config_(std::move(config)),
      addresses_(PodAddressPool::OctetFor(config_.data_dir)),
      pull_backoff_(config_.image_pull_backoff) {
  subscription_ = store_.hub().Subscribe([this](const WatchHub::ChangePtr& change) {
    if (change->resource != "pods") return;
    if (change->type == control::ChangeType::kDeleted) {
      std::lock_guard<std::mutex> lock(deleted_mu_);
      deleted_pods_.push_back(PodProcessId(change->namespace_, change->name));
      return;
    }
    auto marked = TerminatingPodOf(change->Object());
    if (!marked) return;
    std::lock_guard<std::mutex> lock(deleted_mu_);
    marked_pods_.push_back(std::move(*marked));
  });
  LoadPullBackOff();
}

LocalExecutor::~LocalExecutor() { Shutdown(); }

void LocalExecutor::Shutdown() {
  if (subscription_ != 0) store_.hub().Unsubscribe(subscription_);
  subscription_ = 0;
}

std::string LocalExecutor::NodeName(int32_t node_index) const {
  if (engine_ == nullptr || node_index < 0 || node_index >= engine_->cluster().NodeCount()) {
    return "";
  }
  return engine_->cluster().GetNode(node_index).meta.name;
}

std::vector<std::string> LocalExecutor::PhysicalGpus(const std::string& node) const {
  auto object = store_.Get({"nodes", "", node});
  if (!object.ok()) return {};
  return PhysicalGpuIds(*object);
}

void LocalExecutor::Started(const engine::WorkloadRecord& record, Time now) {
  Gang gang;
  gang.key = record.key();
  gang.namespace_ = record.workload.meta.namespace_;
  // Its pods as Kueue would run them: the flavors' node labels and tolerations in.
  gang.workload = engine_ != nullptr ? engine_->AdmittedWorkload(record) : record.workload;
  gang.job_uid = JobUid(store_, record.workload.meta);
  gang.priorities = PodSetPriorities(store_, record.workload);
  for (const auto& p : record.plan.pods) {
    gang.pods.push_back(NewPodRun(record.workload, p, gang.namespace_));
  }
  int64_t attempt = next_attempt_++;
  current_[gang.key] = attempt;
  last_counts_.erase(gang.key);
  auto& stored = gangs_.emplace(attempt, std::move(gang)).first->second;
  // Written now (not at the next Poll): the launch reads each pod's uid back.
  for (auto& pod : stored.pods) WritePod(stored, pod, now);
}

bool LocalExecutor::Release(const std::string& key) {
  auto cur = current_.find(key);
  if (cur == current_.end()) return false;
  Gang& gang = gangs_.at(cur->second);
  if (gang.released) return false;
  gang.released = true;
  return true;
}

void LocalExecutor::Stopped(const engine::WorkloadRecord& record, Time now,
                            engine::StopCause cause) {
  auto cur = current_.find(record.key());
  if (cur == current_.end()) return;
  Gang& gang = gangs_.at(cur->second);
  // The job's status keeps reporting the stopped gang's pods (a finished Job shows
  // how many succeeded) until a new gang starts.
  last_counts_[record.key()] = Counts(record.key());
  current_.erase(cur);
  gang.stopping = true;
  gang.deleted = cause == engine::StopCause::kDeleted;
  for (auto& pod : gang.pods) {
    if (pod.state == PodState::kRunning) {
      double grace = 30;
      if (pod.pod_set < static_cast<int32_t>(gang.workload.pod_sets.size())) {
        grace = static_cast<double>(
            gang.workload.pod_sets[pod.pod_set].tmpl.spec.termination_grace_period_seconds);
      }
      Terminate(pod.id, grace);
    } else if (pod.state == PodState::kWaiting) {
      EndImageWait(pod);
      pod.state = PodState::kFailed;
      pod.exit_code = 0;
      pod.message =
          pod.crash_wait ? "stopped while waiting to restart" : "stopped before it started";
      pod.crash_wait = false;
      WritePod(gang, pod, now);
    }
  }
}

bool LocalExecutor::CanLaunch(const Gang& gang) const {
  std::set<std::pair<std::string, int32_t>> wanted;
  for (const auto& pod : gang.pods) {
    if (processes_.Running(pod.id)) return false;
    for (int32_t g : pod.gpus) wanted.insert({pod.node, g});
  }
  if (wanted.empty()) return true;
  for (const auto& [attempt, other] : gangs_) {
    if (&other == &gang) continue;
    for (const auto& pod : other.pods) {
      if (pod.state != PodState::kRunning) continue;
      for (int32_t g : pod.gpus) {
        if (wanted.count({pod.node, g}) != 0) return false;
      }
    }
  }
  return true;
}

std::vector<DnsPod> LocalExecutor::DnsPods(const Gang* launching) const {
  std::vector<DnsPod> out;
  for (const auto& [attempt, gang] : gangs_) {
    for (const auto& pod : gang.pods) {
      if (pod.shrunk) continue;  // leaving: new pods need not find it
      bool live = pod.state == PodState::kRunning || (&gang == launching && !pod.ip.empty());
      if (!live || pod.ip.empty()) continue;
      DnsPod d;
      d.namespace_ = gang.namespace_;
      d.hostname = pod.name;
      d.subdomain = pod.subdomain;
      d.ip = pod.ip;
      d.labels = PodObjectLabels(gang.workload, pod.pod_set, pod.index);
      d.subdomain_by_controller = SubdomainByController(gang.workload, pod.pod_set);
      d.per_pod_service = IsKubeflow(gang.workload);
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<DnsService> LocalExecutor::Services() const {
  std::vector<DnsService> out;
  auto list = store_.List("services", "");
  if (!list.ok()) return out;  // the Service kind is not served (yet)
  for (const auto& o : list->items) {
    DnsService s;
    s.namespace_ = o["metadata"].value("namespace", "");
    s.name = o["metadata"].value("name", "");
    s.selector = StringMapAt(o, "spec", "selector");
    out.push_back(std::move(s));
  }
  return out;
}

void LocalExecutor::Launch(int64_t attempt, Gang& gang, Time now) {
  gang.launched = true;
  std::set<int> reserved;
  for (const auto& [attempt, other] : gangs_) {
    if (other.master_port != 0 && !other.stopping) reserved.insert(other.master_port);
  }
  auto port = PickFreePort(kFirstMasterPort, reserved);
  gang.master_port = port.ok() ? *port : kFirstMasterPort;

  for (auto& pod : gang.pods) pod.ip = addresses_.Allocate();
  const workloads::RankContext context = RankContextOf(gang);
  const std::vector<DnsPod> dns = DnsPods(&gang);
  const std::vector<DnsService> services = Services();
  // Pod sets that start after others wait, Pending (StartAddedPods starts them).
  const std::vector<bool> blocked = BlockedPodSets(gang);
  for (size_t i = 0; i < gang.pods.size(); ++i) {
    if (!blocked[gang.pods[i].pod_set]) StartPod(attempt, gang, i, context, dns, services, now);
  }
}

void LocalExecutor::StartPod(int64_t attempt, Gang& gang, size_t i,
                             const workloads::RankContext& context, const std::vector<DnsPod>& dns,
                             const std::vector<DnsService>& services, Time now) {
  PodRun& pod = gang.pods[i];
  // Trying again after an image wait is no restart (no container ran).
  if (!pod.image_wait) {
    const std::string key = gang.namespace_ + "/" + pod.name;
    pod.restarts = restarts_[key]++;
    // lastState: how the pod's previous container ended (a gang restart reuses names).
    if (auto t = terminated_.find(key); t != terminated_.end()) pod.last_terminated = t->second;
  }
  pod.retry_start = false;
  pod.crash_wait = false;
  pod.started = now;
  pod.started_at = control::Rfc3339(now);
  pod.dirty = true;
  auto fail = [&](const std::string& reason, const std::string& message) {
    EndImageWait(pod);
    pod.state = PodState::kFailed;
    pod.exit_code = 127;
    pod.reason = reason;
    pod.message = message;
    ReleaseAddress(pod);
  };
  if (pod.ip.empty()) {
    return fail("CreateContainerError", "no free pod address on this machine");
  }
  workloads::PodIdentity identity =
      workloads::RankIdentity(gang.workload, pod.pod_set, pod.index, context);

  LocalPodInput input;
  input.workload = &gang.workload;
  input.pod_set = pod.pod_set;
  input.index = pod.index;
  input.name = pod.name;
  input.subdomain = pod.subdomain;
  input.node = pod.node;
  input.ip = pod.ip;
  auto object = store_.Get({"pods", gang.namespace_, pod.name});
  if (!object.ok() && !pod.object_deleted) {
    // The store did not take the object at Started (a failed commit): written now,
    // before the process that reads its uid starts.
    WritePod(gang, pod, now);
    pod.dirty = true;  // its start is written at the next Poll, as any start
    object = store_.Get({"pods", gang.namespace_, pod.name});
  }
  if (object.ok()) {
    input.uid = (*object)["metadata"].value("uid", "");
    input.labels = StringMapAt(*object, "metadata", "labels");
    input.annotations = StringMapAt(*object, "metadata", "annotations");
  }
  if (auto node = store_.Get({"nodes", "", pod.node}); node.ok() && node->contains("status")) {
    const json allocatable = (*node)["status"].value("allocatable", json::object());
    for (const auto& [k, v] : allocatable.items()) {
      if (auto q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump()); q.ok()) {
        input.node_allocatable[k] = *q;
      }
    }
  }
  for (const auto& [k, v] : identity.env) input.identity_env.emplace_back(k, v);
  std::vector<std::string> physical = PhysicalGpus(pod.node);
  std::vector<std::string> visible;
  for (int32_t g : pod.gpus) {
    visible.push_back(g >= 0 && g < static_cast<int32_t>(physical.size()) ? physical[g]
                                                                          : std::to_string(g));
  }
  // Like the NVIDIA device plugin: a pod sees exactly the GPUs it was given, so a
  // pod without GPUs sees none.
  input.identity_env.emplace_back("CUDA_VISIBLE_DEVICES", JoinStrings(visible, ","));
  // GPU ids are nvidia-smi's (PCI bus order); CUDA's default order is fastest-first.
  input.identity_env.emplace_back("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
  input.mpi_hostfile = identity.mpi_hostfile;
  input.volcano_hostfiles = identity.volcano_hostfiles;

  DnsPod self;
  self.namespace_ = gang.namespace_;
  self.hostname = pod.name;
  self.subdomain = pod.subdomain;
  self.ip = pod.ip;
  input.hosts = HostsFile(self, dns, services);

  // Claims that running pods of other gangs mount (ReadWriteOncePod).
  std::set<std::string> claims;
  for (const auto& [attempt, other] : gangs_) {
    if (&other == &gang || other.namespace_ != gang.namespace_) continue;
    bool running = std::any_of(other.pods.begin(), other.pods.end(),
                               [](const PodRun& p) { return p.state == PodState::kRunning; });
    if (!running) continue;
    for (const auto& ps : other.workload.pod_sets) {
      for (const auto& v : ps.tmpl.spec.volumes) {
        if (v.kind == model::VolumeKind::kPersistentVolumeClaim) claims.insert(v.source);
      }
    }
  }
  StoreVolumeSources sources(store_, gang.namespace_, std::move(claims));
  if (config_.podman && !pod.image_ready && !EnsureImage(gang, pod, now)) return;
  pod.image_ready = false;
  auto plan = PlanLocalPod(config_, input, sources);
  if (!plan.ok()) return fail("CreateContainerConfigError", plan.status().message());
  if (Status s = processes_.Start(plan->spec); !s.ok()) {
    return fail("CreateContainerError", s.message());
  }
  // Its back-off stays until the container has run (a pull that fails again doubles it).
  pod.image_wait = pod.retry_start = false;
  pod.state = PodState::kRunning;
  pod.reason.clear();
  pod.message = plan->warnings.empty() ? "" : JoinStrings(plan->warnings, "; ");
  by_process_[pod.id] = {attempt, i};
}

void LocalExecutor::Run(Time now) {
  if (!collected_orphans_) {
    CollectOrphanDirs();
    std::vector<TerminatingPod> before = TerminatingPods(store_);
    std::lock_guard<std::mutex> lock(deleted_mu_);
    marked_pods_.insert(marked_pods_.end(), before.begin(), before.end());
  }
  HandleDeletedPods();
  HandleMarkedPods();
  for (auto& [attempt, gang] : gangs_) {
    if (!gang.launched && gang.released && !gang.stopping && CanLaunch(gang))
      Launch(attempt, gang, now);
    if (gang.launched && !gang.stopping) SyncImageWaits(gang, now);
    if (gang.launched && !gang.stopping) StartAddedPods(attempt, gang, now);
  }
  if (config_.podman) config_.podman->Run(processes_);
  if (!retained_backoff_) {
    // Loaded entries of pods that no adopted gang holds any more.
    retained_backoff_ = true;
    std::vector<std::string> ids;
    for (const auto& [attempt, gang] : gangs_) {
      for (const PodRun& pod : gang.pods) ids.push_back(pod.id);
    }
    pull_backoff_.Retain(ids);
  }
  SavePullBackOff();
}

workloads::RankContext LocalExecutor::RankContextOf(const Gang& gang) const {
  workloads::RankContext context = workloads::DefaultRankContext(gang.workload);
  context.master_port = gang.master_port;
  if (!config_.isolate) {
    // No private /etc/hosts without root: ranks find each other by address.
    for (const PodRun& pod : gang.pods) {
      if (pod.shrunk || pod.ip.empty()) continue;
      auto& hosts = context.hostnames[gang.workload.pod_sets[pod.pod_set].name];
      if (hosts.size() <= static_cast<size_t>(pod.index)) hosts.resize(pod.index + 1);
      hosts[pod.index] = pod.ip;
    }
  }
  return context;
}

void LocalExecutor::Terminate(const std::string& id, double grace) {
  processes_.Terminate(id, grace);
  if (config_.podman) config_.podman->Stop(id, grace);
}

std::vector<control::GangOutcome> LocalExecutor::Poll(Time now) {
  for (const ProcessExit& exit : processes_.Poll()) {
    auto it = by_process_.find(exit.id);
    if (it == by_process_.end()) continue;
    auto [attempt, i] = it->second;
    by_process_.erase(it);
    auto g = gangs_.find(attempt);
    if (g == gangs_.end()) continue;
    PodRun& pod = g->second.pods[i];
    pod.exit_code = exit.exit_code;
    pod.finished_at = control::Rfc3339(now);
    pod.state = exit.exit_code == 0 ? PodState::kSucceeded : PodState::kFailed;
    pod.reason = exit.exit_code == 0 ? "Completed" : exit.oom_killed ? "OOMKilled" : "Error";
    pod.message = exit.lost     ? "the process vanished"
                  : exit.signal ? "killed by signal " + std::to_string(exit.signal)
                                : "exited with code " + std::to_string(exit.exit_code);
    if (config_.podman) {
      const std::string log = processes_.LogPath(exit.id);
      auto e = config_.podman->ExitReason(exit.id, exit.exit_code, log);
      config_.podman->Exited(exit.id, log.substr(0, log.rfind('/')));
      if (e && e->reason == "ErrImagePull" && !g->second.stopping && !pod.shrunk &&
          !pod.object_deleted) {
        // The kubelet retries the pull; the pod keeps its address meanwhile.
        const auto& containers = g->second.workload.pod_sets[pod.pod_set].tmpl.spec.containers;
        pod.image = containers.empty() ? "" : containers[0].image;
        pod.finished_at.clear();
        WaitForImage(g->second, pod,
                     pull_backoff_.PullFailed(ImagePullBackOff::Key(pod.id, pod.image), pod.image,
                                              e->message, now));
        continue;
      }
      if (e) pod.reason = e->reason, pod.message = e->message;
      EndImageWait(pod);  // the image was there: its back-off is over
    }
    terminated_[g->second.namespace_ + "/" + pod.name] = {pod.exit_code, pod.reason, pod.message,
                                                          pod.started_at, pod.finished_at};
    if (RestartInPlace(g->second, pod, now)) continue;
    ReleaseAddress(pod);
    pod.dirty = !g->second.deleted && !pod.shrunk;
  }
  // Pods a shrink stopped leave once they ended (by_process_ is re-indexed).
  for (auto& [attempt, gang] : gangs_) RetireShrunkPods(attempt, gang);

  WritePodEvents(now);
  SavePullBackOff();
  std::vector<control::GangOutcome> outcomes;
  for (auto it = gangs_.begin(); it != gangs_.end();) {
    Gang& gang = it->second;
    for (auto& pod : gang.pods) {
      if (pod.dirty) WritePod(gang, pod, now);
    }
    if (auto outcome = Evaluate(gang, now)) {
      gang.reported = true;
      outcomes.push_back(std::move(*outcome));
    }
    bool live = std::any_of(gang.pods.begin(), gang.pods.end(), [](const PodRun& p) {
      return p.state == PodState::kRunning || p.state == PodState::kWaiting;
    });
    if (gang.stopping && !live) {
      if (gang.deleted) DeletePods(gang);
      for (auto& pod : gang.pods) ReleaseAddress(pod);
      it = gangs_.erase(it);
      continue;
    }
    ++it;
  }
  DeleteTerminatedPods();
  return outcomes;
}

void LocalExecutor::HandleDeletedPods() {
  std::vector<std::string> deleted;
  {
    std::lock_guard<std::mutex> lock(deleted_mu_);
    deleted.swap(deleted_pods_);
  }
  for (const std::string& id : deleted) {
    // Our own deletion of a pod a shrink stopped: it has ended and was handled.
    if (own_deletes_.erase(id) != 0) continue;
    // A pod object gone for good starts its restart count afresh if a pod of the same
    // name is made again (as the kubelet's count is per pod uid), and is not kept.
    if (auto pod = ParsePodProcessId(id)) {
      restarts_.erase(pod->first + "/" + pod->second);
      terminated_.erase(pod->first + "/" + pod->second);
    }
    for (auto& [attempt, gang] : gangs_) {
      for (auto& pod : gang.pods) {
        if (pod.id != id) continue;
        pod.object_deleted = true;
        // Waiting for its image: no more pulls; its gang sees it fail (as a running
        // pod deleted would).
        if (!pod.image_wait) continue;
        EndImageWait(pod);
        pod.state = PodState::kFailed;
        pod.message = "the pod was deleted while it waited for its image";
        pod.dirty = true;
      }
    }
    if (auto it = by_process_.find(id); it != by_process_.end()) {
      // `kubectl delete pod` of a running pod: the kubelet stops it with its grace
      // period; the gang sees it fail. Its files go once it has ended.
      auto g = gangs_.find(it->second.first);
      double grace = 30;
      if (g != gangs_.end()) {
        const PodRun& pod = g->second.pods[it->second.second];
        grace = static_cast<double>(
            g->second.workload.pod_sets[pod.pod_set].tmpl.spec.termination_grace_period_seconds);
      }
      Terminate(id, grace);
      std::lock_guard<std::mutex> lock(deleted_mu_);
      deleted_pods_.push_back(id);  // look again once it has exited
      continue;
    }
    if (!processes_.Running(id)) {
      processes_.Remove(id).ok();
      continue;
    }
    // Running, no gang's (an orphaned pod not yet taken over): a pod deleted is
    // stopped; its files go once it has ended.
    Terminate(id, 30);
    std::lock_guard<std::mutex> lock(deleted_mu_);
    deleted_pods_.push_back(id);
  }
}

int32_t LocalExecutor::RunningProcesses() const { return static_cast<int32_t>(by_process_.size()); }

bool LocalExecutor::Idle() const {
  if (!by_process_.empty()) return false;
  return std::none_of(gangs_.begin(), gangs_.end(), [](const auto& g) {
    if (g.second.stopping) return false;
    return !g.second.launched || std::any_of(g.second.pods.begin(), g.second.pods.end(),
                                             [](const PodRun& p) { return p.image_wait; });
  });
}

void LocalExecutor::ReleaseAddress(PodRun& pod) {
  if (!pod.ip.empty()) addresses_.Release(pod.ip);
}

void LocalExecutor::WritePod(const Gang& gang, PodRun& pod, Time now) {
  ++changes_;
  MarkChanged(gang.key);
  pod.dirty = false;
  if (pod.object_deleted) return;
  PodRunView view;
  view.name = pod.name;
  view.pod_set = pod.pod_set;
  view.index = pod.index;
  view.node = pod.node;
  view.state = pod.state == PodState::kWaiting     ? PodRunState::kWaiting
               : pod.state == PodState::kRunning   ? PodRunState::kRunning
               : pod.state == PodState::kSucceeded ? PodRunState::kSucceeded
                                                   : PodRunState::kFailed;
  view.exit_code = pod.exit_code;
  view.reason = pod.reason;
  view.message = pod.message;
  const bool told = pod.image_wait || pod.crash_wait;  // the kubelet's waiting reason
  view.waiting_reason = told ? pod.reason : "";
  view.waiting_message = told ? pod.message : "waiting for the GPUs of terminating pods";
  view.restarting = pod.crash_wait;
  if (pod.state == PodState::kWaiting && !pod.image_wait && !gang.stopping) {
    if (auto blocker = StartBlocker(gang, pod.pod_set)) {
      view.waiting_reason =
          gang.workload.meta.kind == "MPIJob" ? "WaitingForWorkers" : "WaitingForReplicatedJob";
      view.waiting_message = *blocker;
    }
  }
  view.started_at = pod.started_at;
  view.finished_at = pod.finished_at;
  view.restarts = pod.restarts;
  view.last_terminated = pod.last_terminated;
  view.ip = pod.ip;
  view.subdomain = pod.subdomain;
  view.owner_uid = gang.job_uid;
  if (static_cast<size_t>(pod.pod_set) < gang.priorities.size()) {
    view.priority = gang.priorities[pod.pod_set];
  }
  // The rank identity its process gets (StartPod), as upstream's controllers write it
  // into the pod's spec.
  for (auto& [name, value] :
       workloads::RankIdentity(gang.workload, pod.pod_set, pod.index, RankContextOf(gang)).env) {
    view.controller_env.emplace_back(name, std::move(value));
  }
  json object = BuildPodObject(gang.workload, view, now);
  control::ObjectKey key{"pods", gang.namespace_, pod.name};
  if (IsExistingPod(gang.workload, pod.pod_set)) {
    // The user's own Pod: its status is written, never a pod re-created.
    if (auto stored = store_.Get(key); stored.ok()) {
      store_.Update(key, ExistingPodObject(*stored, object), WriteScope::kAll);
    }
    return;
  }
  if (store_.Get(key).ok()) {
    store_.Update(key, std::move(object), WriteScope::kAll);
  } else {
    store_.Create(key, std::move(object));
  }
}

void LocalExecutor::DeletePods(Gang& gang) {
  for (auto& pod : gang.pods) {
    if (pod.let_go) continue;  // runs on, unowned: its object and files stay
    // A bare Pod's object is the user's: it stays (with its logs) until deleted.
    if (IsExistingPod(gang.workload, pod.pod_set) && !pod.object_deleted) continue;
    store_.Delete({"pods", gang.namespace_, pod.name});
    processes_.Remove(pod.id);
  }
}

}  // namespace muster::server
