#include "server/serve_executor.h"

#include "server/pod_paths.h"
#include "workloads/workloads.h"

namespace muster::server {

void ServeExecutor::Adopt(const engine::WorkloadRecord& record, Time now) {
  // Pods let go of (their job deleted with its dependents orphaned) are taken over
  // by their own workloads one at a time, while the server runs.
  if (let_go_.empty()) return AdoptRecovered(record, now, recovered_);
  std::vector<std::string> taken;
  for (const auto& p : record.plan.pods) {
    const std::string id =
        PodProcessId(record.workload.meta.namespace_,
                     workloads::DefaultHostname(record.workload, p.pod_set, p.index));
    if (let_go_.count(id) != 0) taken.push_back(id);
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
