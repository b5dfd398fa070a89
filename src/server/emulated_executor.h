// EmulatedExecutor: `muster serve --executor emulated`. Like kwok, it runs nothing:
// a started gang's pods are Running at once (their Pod objects are written at the
// next Poll, as LocalExecutor writes them, so kubectl and `muster get` show them),
// and the gang succeeds once the job's sim.muster.dev/duration has passed since it
// started. A job without a duration runs until it is deleted or preempted. Stopping
// (eviction, failure, deletion) is immediate: no process needs a grace period.
//
// An elastic gang changes size in place (Resized): added pods are Running at once,
// removed ones (the highest indices) have their Pod objects deleted at once, as a
// scale-down deletes them; the gang's duration does not change with its size.
//
// After a restart a gang recorded running is adopted and still finishes at its
// original start (its pods' status.startTime) + duration. Every start runs the whole
// duration (no checkpoint progress is modelled). Called from the controller thread
// only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/object_store.h"
#include "server/pod_object.h"
#include "server/serve_executor.h"

namespace muster::server {

class EmulatedExecutor : public ServeExecutor {
 public:
  explicit EmulatedExecutor(ObjectStore& store);

  void SetEngine(const engine::Engine* engine) override { engine_ = engine; }
  void Started(const engine::WorkloadRecord& record, Time now) override;
  void Stopped(const engine::WorkloadRecord& record, Time now, engine::StopCause cause) override;
  void Resized(const engine::WorkloadRecord& record,
               const std::vector<placement::PodPlacement>& added,
               const std::vector<placement::PodPlacement>& removed, Time now) override;
  bool SupportsResize() const override { return true; }
  // `recovered` is ignored: nothing ran as a process.
  void AdoptRecovered(const engine::WorkloadRecord& record, Time now,
                      const std::map<std::string, RecoveredProcess>& recovered) override;
  std::vector<control::GangOutcome> Poll(Time now) override;
  control::GangPodCounts Counts(const std::string& key) const override;
  void Forget(const std::string& key) override { last_counts_.erase(key); }
  bool PodsReady(const std::string& key) const override;
  int32_t RunningProcesses() const override { return 0; }
  uint64_t changes() const { return changes_; }

  // Gangs started and not yet stopped.
  size_t RunningGangs() const { return gangs_.size(); }

 private:
  struct Gang {
    model::Workload workload;
    std::vector<PodRunView> pods;  // with owner_uid, the job's uid
    std::optional<Time> ends_at;   // nullopt: no duration, runs until stopped
  };

  PodRunView NewPod(const model::Workload& workload, const placement::PodPlacement& placement,
                    const std::string& job_uid, const std::string& started);
  // Registers the gang of `record` as running since `started_at` and writes its pods.
  void StartGang(const engine::WorkloadRecord& record, Time started_at);
  void WritePods(const Gang& gang, Time now);
  void DeletePods(const Gang& gang);
  // When a previous server started the pods of `record` (their status.startTime);
  // nullopt when no pod object records it.
  std::optional<Time> RecordedStart(const engine::WorkloadRecord& record) const;
  std::string NodeName(int32_t node_index) const;

  ObjectStore& store_;
  const engine::Engine* engine_ = nullptr;
  uint64_t changes_ = 0;
  std::map<std::string, Gang> gangs_;                          // by workload key
  std::set<std::pair<Time, std::string>> deadlines_;           // (ends_at, key) of running gangs
  std::map<std::string, int32_t> starts_;                      // "<ns>/<pod>" -> starts so far
  std::map<std::string, control::GangPodCounts> last_counts_;  // of the last stopped gang per key
  std::vector<std::string> to_write_;  // started gangs whose pods Poll writes
};

}  // namespace muster::server
