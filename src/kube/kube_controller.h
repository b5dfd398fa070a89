// KubeController: the engine inside a real cluster (`muster kube`). One thread owns the
// engine. Reflectors mirror the cluster into an ObjectCache; every change the cache
// takes is queued here and applied in delivery order:
//   - a managed job created / deleted       -> Engine::AddWorkload+Submit / RemoveWorkload
//     (managed: it names a LocalQueue with kueue.x-k8s.io/queue-name, or a Volcano
//     queue; batch Jobs owned by a JobSet belong to the JobSet)
//   - a job's status says it finished       -> Succeed / FailPods
//   - a node, queue, flavor, priority class or configuration changed (what the engine
//     reads, not heartbeats) -> the engine is rebuilt from the cache and running gangs
//     are adopted from their Workload objects
//   - a pod changed                         -> the gang binder looks again
// then the admission + placement cycle runs on that snapshot and its decisions are
// written to the API server (KubeExecutor's actions): Kueue Workload objects with
// conditions and admission, flavor injection + unsuspend on admission, suspend +
// template restore on eviction, whole-gang pod binding, queue status and Events.
//
// Nothing is scheduled before every watched resource has listed once (no decision on a
// partial view). Writes carry resourceVersion preconditions; a conflict leaves the
// action queued and it is retried against the next view of the object.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "control/store_snapshot.h"
#include "engine/engine.h"
#include "kube/api_writer.h"
#include "kube/kube_client.h"
#include "kube/kube_executor.h"
#include "kube/object_cache.h"
#include "ui/view_publisher.h"

namespace muster::kube {

struct KubeOptions {
  // Pods whose spec.schedulerName is one of these are bound by muster.
  std::vector<std::string> scheduler_names = {"muster"};
  // Kueue's manageJobsWithoutQueueName: also admit jobs that name no queue.
  bool manage_jobs_without_queue_name = false;
  double resync_seconds = 1.0;  // a cycle runs at least this often
  // Store keys the reflectors fill; scheduling waits until all have synced.
  std::vector<std::string> watched;
  // Where each step's scheduler view is published (the dashboard); may be null.
  ui::ViewPublisher* views = nullptr;
};

class KubeController {
 public:
  KubeController(KubeClient& client, ObjectCache& cache, KubeOptions options);
  ~KubeController();
  KubeController(const KubeController&) = delete;
  KubeController& operator=(const KubeController&) = delete;

  // Subscribes to the cache and starts the thread.
  void Start();
  void Stop();

  // Snapshots for tests and status output (taken on the controller thread).
  struct Stats {
    bool synced = false;
    int64_t cycles = 0;
    int64_t bindings = 0;
    int64_t conflicts = 0;  // writes retried after a 409
    int64_t admitted = 0;   // admission writes done
    int64_t evicted = 0;    // eviction writes done
  };
  Stats stats() const;

 private:
  class WallClock : public Clock {
   public:
    Time Now() const override;
  };
  struct JobState {
    control::JobRef ref;
    nlohmann::json object;  // latest job object seen
    int64_t generation = 0;
    bool in_engine = false;
    bool finished = false;
    nlohmann::json written_workload;  // the Workload object as last written (null: none)
    bool admission_written = false;   // the current admission is on the job (unsuspended)
    bool eviction_pending = false;    // suspend not yet written
  };

  void Loop();
  void Step();
  void Apply(const control::Change& change, bool& rebuild);
  void ApplyJob(const control::Change& change, bool& rebuild);
  void ApplyPod(const control::Change& change);
  void Rebuild();
  void Adopt(const std::string& key, JobState& job);
  void AddJob(JobState& job, model::Workload workload);
  void RemoveJob(const std::string& key);
  bool Managed(const nlohmann::json& job_object, const model::Workload& workload) const;
  void CheckFinished(const std::string& key, JobState& job);

  // kube_sync.cc: the writes after a cycle.
  void Sync();
  void WriteActions();
  void WriteAdmission(const std::string& key, JobState& job);
  void WriteEviction(const std::string& key, JobState& job);
  void SuspendAndRestore();
  void SetPodGroupPhase(const JobState& job, const std::string& phase);
  void BindGangs();
  void SyncWorkloads();
  void SyncWorkload(const std::string& key, JobState& job, const std::string& now);
  void SyncQueues();
  void WriteEvents();
  bool NodesFree(const engine::WorkloadRecord& record, std::string& why) const;
  Result<nlohmann::json> ReplaceJob(JobState& job, const nlohmann::json& desired);
  void Log(const std::string& line);
  // Builds the scheduler view (control/scheduler_view.h) and publishes it.
  void PublishView();
  std::string Now() const;

  KubeClient& client_;
  ObjectCache& cache_;
  KubeOptions options_;
  ApiWriter writer_;
  WallClock clock_;
  std::unique_ptr<KubeExecutor> executor_;
  std::unique_ptr<engine::Engine> engine_;
  model::ManifestSet config_;
  std::map<std::string, nlohmann::json> flavors_;  // ResourceFlavor objects by name
  bool synced_ = false;
  std::map<std::string, JobState> jobs_;         // by workload key "<ns>/<name>"
  std::map<std::string, std::string> job_keys_;  // "<resource>/<ns>/<name>" -> workload key
  // Pods by workload key ("<ns>/<job name>"), each by pod name; kept from pod changes.
  std::map<std::string, std::map<std::string, nlohmann::json>> gang_pods_;
  std::map<std::string, std::string> pod_gang_;  // "<ns>/<pod>" -> workload key
  std::map<std::string, std::string> config_seen_;
  std::map<std::string, nlohmann::json> written_queue_status_;
  std::set<std::string> adopted_;  // workload keys adopted at the last rebuild
  int64_t next_order_ = 0;         // arrival order of jobs, kept across rebuilds
  size_t decisions_seen_ = 0;
  int64_t event_counter_ = 0;
  Stats stats_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<control::Change> changes_;
  bool stopping_ = false;
  bool started_ = false;
  Stats published_;
  std::thread thread_;
};

}  // namespace muster::kube
