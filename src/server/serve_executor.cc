#include "server/serve_executor.h"

#include "server/pod_paths.h"
#include "workloads/workloads.h"

namespace muster::server {

std::vector<std::string> GangProcessIds(const model::Workload& workload,
                                        const placement::GangPlan& plan) {
  std::vector<std::string> ids;
  for (const auto& p : plan.pods) {
    ids.push_back(PodProcessId(workload.meta.namespace_,
                               workloads::DefaultHostname(workload, p.pod_set, p.index)));
  }
  return ids;
}

void ServeExecutor::Adopt(const engine::WorkloadRecord& record, Time now) {
  // Pods let go of (their job deleted with its dependents orphaned) are taken over
  // by their own workloads one at a time, while the server runs.
  if (let_go_.empty()) return AdoptRecovered(record, now, recovered_);
  std::vector<std::string> taken;
  for (std::string& id : GangProcessIds(record.workload, record.plan)) {
    if (let_go_.count(id) != 0) taken.push_back(std::move(id));
  }
  if (taken.empty()) return AdoptRecovered(record, now, recovered_);
  AdoptRecovered(record, now, let_go_);
  for (const std::string& id : taken) let_go_.erase(id);
}

void ServeExecutor::NoteLetGo(const std::string& ns, const std::string& pod) {
  RecoveredProcess p;
  p.id = PodProcessId(ns, pod);
  p.running = true;
  let_go_[p.id] = p;
}

}  // namespace muster::server
