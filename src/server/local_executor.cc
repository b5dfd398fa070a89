#include "server/local_executor.h"

#include <algorithm>

#include "control/workload_objects.h"
#include "server/local_node.h"
#include "server/pod_object.h"
#include "server/pod_paths.h"
#include "server/port_allocator.h"
#include "workloads/workloads.h"

namespace muster::server {
namespace {

using json = nlohmann::json;

constexpr int kFirstMasterPort = 29500;

const model::Container* MainContainer(const model::PodSet& ps) {
  return ps.tmpl.spec.containers.empty() ? nullptr : &ps.tmpl.spec.containers.front();
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

}  // namespace

std::vector<std::string> GangProcessIds(const model::Workload& workload,
                                        const placement::GangPlan& plan) {
  std::vector<std::string> ids;
  for (const auto& p : plan.pods) {
    ids.push_back(PodProcessId(workload.meta.namespace_,
                               workloads::DefaultHostname(workload, p.pod_set, p.index)));
  }
  return ids;
}

LocalExecutor::LocalExecutor(ObjectStore& store, ProcessSupervisor& processes)
    : store_(store), processes_(processes) {}

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
  gang.workload = record.workload;
  for (const auto& p : record.plan.pods) {
    PodRun pod;
    pod.pod_set = p.pod_set;
    pod.index = p.index;
    pod.name = workloads::DefaultHostname(record.workload, p.pod_set, p.index);
    pod.id = PodProcessId(gang.namespace_, pod.name);
    pod.node = NodeName(p.node);
    pod.gpus = p.gpus;
    gang.pods.push_back(std::move(pod));
  }
  int64_t attempt = next_attempt_++;
  current_[gang.key] = attempt;
  last_counts_.erase(gang.key);
  auto& stored = gangs_.emplace(attempt, std::move(gang)).first->second;
  for (const auto& pod : stored.pods) WritePod(stored, pod, now);
}

void LocalExecutor::AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                                   const std::map<std::string, RecoveredProcess>& recovered) {
  Started(record, now);
  Gang& gang = gangs_.at(current_.at(record.key()));
  gang.launched = true;
  int64_t attempt = current_.at(record.key());
  for (size_t i = 0; i < gang.pods.size(); ++i) {
    PodRun& pod = gang.pods[i];
    auto it = recovered.find(pod.id);
    if (it == recovered.end()) {
      pod.state = PodState::kFailed;
      pod.exit_code = 137;
      pod.message = "the pod's process was not found after the server restarted";
    } else if (it->second.running) {
      pod.state = PodState::kRunning;
      by_process_[pod.id] = {attempt, i};
    } else {
      const ProcessExit exit = it->second.exit.value_or(ProcessExit{pod.id, 137, 0, true});
      pod.exit_code = exit.exit_code;
      pod.state = exit.exit_code == 0 ? PodState::kSucceeded : PodState::kFailed;
      pod.message = exit.lost ? "the process vanished while the server was down"
                              : "exited with code " + std::to_string(exit.exit_code);
    }
    WritePod(gang, pod, now);
  }
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
      processes_.Terminate(pod.id, grace);
    } else if (pod.state == PodState::kWaiting) {
      pod.state = PodState::kFailed;
      pod.exit_code = 0;
      pod.message = "stopped before it started";
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

void LocalExecutor::Launch(Gang& gang, Time now) {
  gang.launched = true;
  std::set<int> reserved;
  for (const auto& [attempt, other] : gangs_) {
    if (other.master_port != 0 && !other.stopping) reserved.insert(other.master_port);
  }
  auto port = PickFreePort(kFirstMasterPort, reserved);
  gang.master_port = port.ok() ? *port : kFirstMasterPort;

  workloads::RankContext context = workloads::DefaultRankContext(gang.workload);
  context.master_addr = "127.0.0.1";
  context.master_port = gang.master_port;
  for (const auto& ps : gang.workload.pod_sets) {
    context.hostnames[ps.name] = std::vector<std::string>(ps.count, "127.0.0.1");
  }
  const int64_t attempt = current_.at(gang.key);
  for (size_t i = 0; i < gang.pods.size(); ++i) {
    PodRun& pod = gang.pods[i];
    const model::PodSet& ps = gang.workload.pod_sets[pod.pod_set];
    const model::Container* container = MainContainer(ps);
    ProcessSpec spec;
    spec.id = pod.id;
    if (container != nullptr) {
      spec.argv = container->command;
      spec.argv.insert(spec.argv.end(), container->args.begin(), container->args.end());
      spec.working_dir = container->working_dir;
      for (const auto& e : container->env) {
        if (!e.from_source) spec.env[e.name] = e.value;
      }
    }
    workloads::PodIdentity identity =
        workloads::RankIdentity(gang.workload, pod.pod_set, pod.index, context);
    for (const auto& [k, v] : identity.env) spec.env[k] = v;
    spec.env["HOSTNAME"] = pod.name;
    std::vector<std::string> physical = PhysicalGpus(pod.node);
    std::vector<std::string> visible;
    for (int32_t g : pod.gpus) {
      visible.push_back(g >= 0 && g < static_cast<int32_t>(physical.size()) ? physical[g]
                                                                            : std::to_string(g));
    }
    // Like the NVIDIA device plugin: a pod sees exactly the GPUs it was given, so a
    // pod without GPUs sees none.
    spec.env["CUDA_VISIBLE_DEVICES"] = Join(visible, ",");
    // GPU ids are nvidia-smi's (PCI bus order); CUDA's default order is fastest-first.
    spec.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    pod.restarts = restarts_[gang.namespace_ + "/" + pod.name]++;
    pod.started_at = control::Rfc3339(now);
    if (spec.argv.empty()) {
      pod.state = PodState::kFailed;
      pod.exit_code = 127;
      pod.message =
          "the container has no command: muster serve runs the container's command "
          "and args as a local process and does not pull images";
    } else if (Status s = processes_.Start(spec); !s.ok()) {
      pod.state = PodState::kFailed;
      pod.exit_code = 127;
      pod.message = s.message();
    } else {
      pod.state = PodState::kRunning;
      by_process_[pod.id] = {attempt, i};
    }
    WritePod(gang, pod, now);
  }
}

std::optional<control::GangOutcome> LocalExecutor::Evaluate(Gang& gang, Time now) const {
  if (gang.stopping || gang.reported || !gang.launched) return std::nullopt;
  // Which pods decide success: the upstream controllers' defaults.
  const std::string& kind = gang.workload.meta.kind;
  auto set_named = [&](const std::string& name) {
    for (size_t i = 0; i < gang.workload.pod_sets.size(); ++i) {
      if (gang.workload.pod_sets[i].name == name) return static_cast<int32_t>(i);
    }
    return int32_t{-1};
  };
  int32_t decisive = -1;
  bool only_index0 = false;
  if (kind == "PyTorchJob") {
    decisive = set_named("master");
  } else if (kind == "TFJob") {
    decisive = set_named("chief");
    if (decisive < 0) decisive = set_named("worker"), only_index0 = decisive >= 0;
  } else if (kind == "MPIJob") {
    decisive = set_named("launcher");
  }
  bool decided = true;  // every decisive pod succeeded
  bool live = false;    // some pod still runs
  for (const auto& pod : gang.pods) {
    if (pod.state == PodState::kRunning || pod.state == PodState::kWaiting) live = true;
    if (decisive >= 0 && pod.pod_set != decisive) continue;
    if (only_index0 && pod.index != 0) continue;
    if (pod.state != PodState::kSucceeded) decided = false;
  }
  if (decided) {
    // The job has succeeded; the other ranks usually finish on their own a moment
    // later (upstream leaves them running), so they get their termination grace
    // period before the gang is stopped and they are terminated.
    if (gang.decided_at < 0) gang.decided_at = now;
    double grace = 0;
    for (const auto& ps : gang.workload.pod_sets) {
      grace = std::max(grace, static_cast<double>(ps.tmpl.spec.termination_grace_period_seconds));
    }
    if (live && now - gang.decided_at < grace) return std::nullopt;
    return control::GangOutcome{gang.key, true, ""};
  }
  for (const auto& pod : gang.pods) {
    if (pod.state == PodState::kFailed) {
      return control::GangOutcome{
          gang.key, false,
          "pod " + pod.name + " failed: " +
              (pod.message.empty() ? "exit code " + std::to_string(pod.exit_code) : pod.message)};
    }
  }
  return std::nullopt;
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
    pod.message = exit.lost     ? "the process vanished"
                  : exit.signal ? "killed by signal " + std::to_string(exit.signal)
                                : "exited with code " + std::to_string(exit.exit_code);
    if (!g->second.deleted) WritePod(g->second, pod, now);
  }

  std::vector<control::GangOutcome> outcomes;
  for (auto it = gangs_.begin(); it != gangs_.end();) {
    Gang& gang = it->second;
    if (!gang.launched && !gang.stopping && CanLaunch(gang)) Launch(gang, now);
    if (auto outcome = Evaluate(gang, now)) {
      gang.reported = true;
      outcomes.push_back(std::move(*outcome));
    }
    bool live = std::any_of(gang.pods.begin(), gang.pods.end(), [](const PodRun& p) {
      return p.state == PodState::kRunning || p.state == PodState::kWaiting;
    });
    if (gang.stopping && !live) {
      if (gang.deleted) DeletePods(gang);
      it = gangs_.erase(it);
      continue;
    }
    ++it;
  }
  return outcomes;
}

control::GangPodCounts LocalExecutor::Counts(const std::string& key) const {
  control::GangPodCounts counts;
  auto cur = current_.find(key);
  if (cur == current_.end()) {
    auto last = last_counts_.find(key);
    return last == last_counts_.end() ? counts : last->second;
  }
  for (const auto& pod : gangs_.at(cur->second).pods) {
    switch (pod.state) {
      case PodState::kWaiting:
        ++counts.waiting;
        break;
      case PodState::kRunning:
        ++counts.running;
        break;
      case PodState::kSucceeded:
        ++counts.succeeded;
        break;
      case PodState::kFailed:
        ++counts.failed;
        break;
    }
  }
  return counts;
}

bool LocalExecutor::PodsReady(const std::string& key) const {
  control::GangPodCounts c = Counts(key);
  return c.waiting == 0 && c.failed == 0 && c.running + c.succeeded > 0;
}

int32_t LocalExecutor::RunningProcesses() const { return static_cast<int32_t>(by_process_.size()); }

bool LocalExecutor::Idle() const {
  if (!by_process_.empty()) return false;
  return std::none_of(gangs_.begin(), gangs_.end(),
                      [](const auto& g) { return !g.second.launched && !g.second.stopping; });
}

void LocalExecutor::WritePod(const Gang& gang, const PodRun& pod, Time now) {
  ++changes_;
  MarkChanged(gang.key);
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
  view.message = pod.message;
  view.waiting_message = "waiting for the GPUs of terminating pods";
  view.started_at = pod.started_at;
  view.finished_at = pod.finished_at;
  view.restarts = pod.restarts;
  json object = BuildPodObject(gang.workload, view, now);
  control::ObjectKey key{"pods", gang.namespace_, pod.name};
  if (store_.Get(key).ok()) {
    store_.Update(key, std::move(object), WriteScope::kAll);
  } else {
    store_.Create(key, std::move(object));
  }
}

void LocalExecutor::DeletePods(const Gang& gang) {
  for (const auto& pod : gang.pods) {
    store_.Delete({"pods", gang.namespace_, pod.name});
    processes_.Remove(pod.id);
  }
}

}  // namespace muster::server
