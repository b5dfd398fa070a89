// StatusSink: where the reconciler's decisions go. The reconciler never does I/O: it
// submits writes (Workload objects, job objects and status, queue status, Events,
// pod bindings) and reads their results back. `muster serve` writes into its store
// (synchronously, inside one transaction per pass); `muster kube` sends them to the
// API server concurrently (a worker pool within the client's QPS and burst), so a
// slow API server delays each gang by its own writes only; tests record them.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace muster::control {

enum class WriteKind {
  // Create (`create`) or replace a Workload object: metadata and spec, then the
  // status subresource. `object` is the whole desired object (with the
  // resourceVersion it was read at when replacing).
  kWorkload,
  kDeleteWorkload,
  // Write the job object (suspend / unsuspend / templates) as `object`, derived from
  // `base`, the job as last read: replaced with its resourceVersion as precondition,
  // or (a sink that can) patched with only what differs from `base`, on condition
  // that the spec is still `base`'s (metadata.generation): a status write by the
  // job's controller in between is no conflict. Either way kConflict when the spec
  // changed since, with the fresh object.
  kJob,
  // Replace the job's status subresource (`object` is the whole job).
  kJobStatus,
  // Merge `object` ({"status": {...}}) into the status of a queue or PodGroup
  // (muster is the only writer of those fields: no precondition).
  kMergeStatus,
  kEvent,  // create the v1 Event `object`
  kBind,   // bind the pods `bindings` (pod, node), concurrently if the sink can
  kDeletePod,
  // Take the finalizer `object` (a string) off the object; the API server removes an
  // object being deleted once its last finalizer is gone.
  kRemoveFinalizer,
};

struct WriteOp {
  uint64_t id = 0;  // set by the reconciler; results carry it back
  WriteKind kind = WriteKind::kWorkload;
  std::string resource;  // store key of the target ("workloads.kueue.x-k8s.io", "jobs.batch")
  std::string namespace_;
  std::string name;
  nlohmann::json object;
  std::shared_ptr<const nlohmann::json> base;  // kJob: what `object` was derived from
  // kWorkload: no object exists yet. kEvent: a new Event; false: a repeat of an
  // earlier one (EventCorrelator) to update, or create again when it is gone.
  bool create = false;
  bool status_only = false;  // kWorkload: only the status differs from the stored object
  std::vector<std::pair<std::string, std::string>> bindings;  // kBind: (pod, node) in rank order
};

struct WriteResult {
  uint64_t id = 0;
  Status status;
  // The object as stored after the write (kWorkload, kJob, kJobStatus), when the
  // sink returns it; null otherwise.
  nlohmann::json object;
  // kBind: the pods that failed, one Status each (empty when all were bound).
  std::vector<std::pair<std::string, Status>> failed_bindings;
};

class StatusSink {
 public:
  virtual ~StatusSink() = default;
  // Performs `op` now or later, possibly on another thread. The reconciler submits
  // at most one job-object write and one Workload write per job at a time (the next
  // once the result is back), so writes of different jobs may run in any order.
  virtual void Submit(WriteOp op) = 0;
  // Results of the writes finished since the last call, in completion order.
  // Thread-safe: a concurrent sink completes writes on its own threads.
  virtual std::vector<WriteResult> TakeResults() = 0;
  // Makes the writes a sink held back until now (serve's: those submitted outside a
  // store transaction). The reconciler calls it as each Write begins.
  virtual void Flush() {}
};

}  // namespace muster::control
