// Microsoft Philly trace reader (`muster simulate --trace philly:FILE`): the job
// summary philly_jobs.csv (timestamp,duration,num_gpus,gpu_time,cluster) and the
// virtual-cluster sizes philly_vc.csv (vc,node num). Each virtual cluster becomes a
// team queue; each job a gang Workload. Choices are documented in docs/traces.md.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/workload.h"
#include "sim/trace_openb.h"

namespace muster::sim {

struct PhillyOptions {
  // Philly's servers were mostly 8-GPU machines; VC sizes are given in nodes.
  int32_t gpus_per_node = 8;
  // Largest pod: bigger jobs are split into a gang of pods of this many GPUs.
  int32_t max_gpus_per_pod = 8;
  // VC list; "" = philly_vc.csv next to the jobs file.
  std::string vc_file;
  std::string namespace_ = "philly";  // namespace of LocalQueues and workloads
  std::string cohort = "philly";      // every ClusterQueue borrows within it
  std::string flavor = "philly-gpu";  // the one ResourceFlavor
};

struct PhillyVc {
  std::string name;
  int32_t nodes = 0;
};

// Parses philly_vc.csv; rows keep file order.
Result<std::vector<PhillyVc>> ParsePhillyVcs(std::istream& in, const std::string& file);

// One job in compact form (what the reader keeps per row: 32 bytes).
struct PhillyJobRecord {
  double submit = 0;    // seconds since the trace's first submit
  double duration = 0;  // seconds
  int64_t row = 0;      // 1-based data row in the file: the job's stable id
  int32_t gpus = 0;
  int32_t vc = 0;  // index into the VC name table
};

struct PhillyJobs {
  std::vector<PhillyJobRecord> jobs;  // sorted by submit, ties in file order
  std::vector<std::string> vc_names;  // first-seen order
};

// Parses philly_jobs.csv row by row ("YYYY-MM-DD HH:MM:SS" timestamps, UTC).
Result<PhillyJobs> ParsePhillyJobs(std::istream& in, const std::string& file);

// Queues and nodes for the given VCs (plus `extra_vcs` seen in jobs but absent from
// the VC list: they get a queue with zero nominal quota, so they run on borrowed
// capacity only). One ClusterQueue "vc-<name>" per VC with nominal
// nvidia.com/gpu = nodes * gpus_per_node in cohort `cohort`, a LocalQueue <name> in
// `namespace_`, and ceil(sum of quotas / gpus_per_node) nodes "philly-node-NNNN".
TraceCluster BuildPhillyCluster(const std::vector<PhillyVc>& vcs,
                                const std::vector<std::string>& extra_vcs,
                                const PhillyOptions& options = {});

// The gang Workload of one job (kind Job, batch/v1, namespace `namespace_`):
// gpus <= max_gpus_per_pod: one pod with all GPUs in pod set "main";
// more: floor(gpus / max) pods of max GPUs in "main" plus, when there is a
// remainder, one pod with the remainder in pod set "tail". All pods must run at once.
model::Workload PhillyJobToWorkload(const PhillyJobRecord& job, const std::string& vc_name,
                                    const PhillyOptions& options = {});

// Opens FILE (philly_jobs.csv, or a directory holding it).
Result<std::unique_ptr<TraceReader>> OpenPhillyTrace(const std::string& path,
                                                     const PhillyOptions& options = {});

// Dispatches "openb:PATH" / "philly:PATH" to the readers above.
Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& spec);

}  // namespace muster::sim
