// FakeJobController: plays kube-controller-manager's Job controller and garbage
// collector against the fake API server's store, for the kube benchmark
// (tests/kube/kube_load.h) and its smoke test. No controller-manager runs with the
// fake server, yet muster kube only admits Jobs: their pods come from the Job
// controller. This makes what that controller visibly makes, as it does for an
// Indexed Job:
//   - a Job not suspended that has no pods gets one pod per completion index, from
//     its template (labels, annotations and the completion index as upstream sets
//     them, a controller owner reference), and its status.active and startTime;
//   - a Job suspended again (preempted) or deleted has its pods deleted, and a Job
//     deleted its other dependents too (muster's Workload: the garbage collector);
//   - a Job whose pods are all Running gets status.ready.
// It writes straight into the store (no HTTP): the benchmark measures muster kube's
// requests, not the harness's. Writes of one Job go in one store batch.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "kube/store_change_worker.h"
#include "server/object_store.h"

namespace muster::kube::testing {

class FakeJobController {
 public:
  // Subscribes to `store` at once: every Job written after this is seen.
  explicit FakeJobController(server::ObjectStore& store);
  FakeJobController(const FakeJobController&) = delete;
  FakeJobController& operator=(const FakeJobController&) = delete;

  // Pods created so far (over the run: recreated ones count again).
  int64_t pods_created() const;
  // Writes the store refused (a Job deleted meanwhile is not one).
  int64_t errors() const;

 private:
  struct JobState {
    std::string uid;
    int pods = 0;     // pods this controller made and has not deleted
    int running = 0;  // of them, Running
    bool ready_written = false;
  };

  void Handle(const StoreChangeWorker::Batch& batch);
  void OnJob(const control::Change& change);
  void OnPod(const control::Change& change);
  void OnWorkload(const control::Change& change);
  void CreatePods(const nlohmann::json& job, JobState& state);
  void DeletePods(const std::string& ns, const std::string& job, JobState& state);

  server::ObjectStore& store_;
  mutable std::mutex mu_;
  int64_t pods_created_ = 0;
  int64_t errors_ = 0;

  // Worker thread only: Jobs by "<namespace>/<name>".
  std::map<std::string, JobState> jobs_;
  // Worker thread only: the pods of each Job, by name, and whether seen Running.
  std::map<std::string, std::map<std::string, bool>> pods_of_;
  int64_t serial_ = 0;  // for pod names
  // Worker thread only: Workloads ("<namespace>/<name>") by their owner Job's uid.
  std::map<std::string, std::set<std::string>> workloads_of_;
  StoreChangeWorker worker_;  // last: stops before the members it uses go
};

}  // namespace muster::kube::testing
