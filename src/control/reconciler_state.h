// The reconciler's per-job and per-configuration-object state (private to the
// reconciler_*.cc files).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "control/change.h"
#include "control/reconciler.h"
#include "model/manifest_set.h"

namespace muster::control {

inline constexpr const char* kWorkloads = "workloads.kueue.x-k8s.io";
inline constexpr const char* kPodGroups = "podgroups.scheduling.volcano.sh";

struct Reconciler::JobState {
  JobRef ref;
  std::string key;  // workload key "<ns>/<name>"
  // The latest job object seen (or written): the change's own copy, shared with the
  // watch history rather than copied. Immutable: an edit builds a new object.
  std::shared_ptr<const nlohmann::json> object;
  int64_t generation = 0;
  bool in_engine = false;
  bool finished = false;      // succeeded or failed: never resubmitted
  bool bare_pods = false;     // a gang of bare Pod objects (pod_workloads.h)
  nlohmann::json workload;    // the Workload object as last written or read (null: none)
  size_t written_status = 0;  // serve: hash of the job status as last written (0: none)

  // Cluster mode. An admission is written in two steps, Workload first (so a
  // restarted muster finds it and adopts the gang), then the job unsuspended.
  int64_t admit_epoch = 0;            // counts the gang's admissions
  int64_t workload_admit_epoch = -1;  // the admission the written Workload records
  bool admission_written = false;     // unsuspended for the current admission
  bool delete_pods = false;           // evicted Volcano Job: its pods are deleted
  std::string parked;                 // why the API server refused to start it
  bool stop_refused = false;          // a suspend or restore was refused (4xx)
  // Elastic gangs: pods left unbound beyond the admitted count -> the message of the
  // PodScheduled=False condition written on them; pods a shrink deleted.
  std::map<std::string, std::string> unbound_written;
  std::set<std::string> shrink_deleted;

  // What SyncWorkload last found already written (valid: the Workload matched): the
  // engine (instance, generation), the Workload's resourceVersion and the facts the
  // engine does not hold. While they stay the same, the Workload is not rebuilt and
  // compared again (most pod events change none of them).
  struct {
    bool valid = false;
    uint64_t engine = 0;
    uint64_t generation = 0;
    std::string resource_version;
    bool pods_ready = false;
    std::string pending_message;
  } workload_synced;

  // Writes in flight: at most one of each per job (op ids; 0: none).
  uint64_t workload_op = 0;
  uint64_t job_op = 0;
  uint64_t bind_op = 0;

  const nlohmann::json& Object() const { return object ? *object : NullObject(); }
  void SetObject(nlohmann::json o) {
    object = std::make_shared<const nlohmann::json>(std::move(o));
  }
};

struct Reconciler::InFlight {
  WriteOp op;
  std::string job_key;  // "" for writes of no job (queues, Events, deletions)
  int64_t epoch = -1;   // kWorkload: the admission it records
};

// A gang of bare pods (pod_workloads.h) as its pods arrive.
struct Reconciler::PodGang {
  PodWorkloadId id;
  std::map<std::string, nlohmann::json> pods;  // by pod name, latest seen
  std::map<std::string, size_t> written;       // pod -> hash of the pending status written
  std::string why;                             // what it waits for, as last reported
  nlohmann::json group_status;                 // Volcano PodGroup status as last written
};

struct Reconciler::ConfigObject {
  std::string significant;     // what the engine reads of it (compact JSON)
  model::ManifestSet decoded;  // the object alone, decoded
  std::string problem;         // why it does not decode ("" when it does)
  std::string structure;       // ClusterQueues, Cohorts: significant without quotas
};

}  // namespace muster::control
