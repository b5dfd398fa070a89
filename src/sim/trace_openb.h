// Trace readers for `muster simulate --trace FORMAT:PATH`, and the Alibaba openb
// (cluster-trace-gpu-v2023) reader. This header also holds what every trace format
// shares: the TraceReader interface, the cluster a trace brings, and a small CSV
// splitter (traces are plain comma-separated files without quoting).
// Formats, mapping choices and examples: docs/traces.md.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/manifest_set.h"
#include "model/node.h"
#include "model/workload.h"

namespace muster::sim {

// Node label naming a node's GPU model (openb `model` column, e.g. "V100M32").
inline constexpr std::string_view kGpuModelLabel = "alibaba.com/gpu-model";

// What a trace brings besides its workloads.
struct TraceCluster {
  std::vector<model::Node> nodes;
  // Queues the trace implies (Philly: one ClusterQueue + LocalQueue per virtual
  // cluster, a cohort and a flavor). Empty for openb, whose pods use no queue.
  model::ManifestSet queues;
};

// Yields a trace's workloads in submit order (ties in file order), one at a time.
// Readers keep one compact record per row (tens of bytes), never a Workload per
// row, so a 100k-job trace costs a few MiB.
class TraceReader {
 public:
  virtual ~TraceReader() = default;
  virtual const TraceCluster& cluster() const = 0;
  // The next workload, or nullopt when the trace is exhausted.
  virtual std::optional<model::Workload> Next() = 0;
  // Workloads the trace holds in total (known once opened).
  virtual int64_t size() const = 0;
};

namespace csv {

// Splits one CSV line on commas (no quoting: none of the supported traces quote).
// A trailing '\r' is dropped so CRLF files read the same.
std::vector<std::string_view> SplitLine(std::string_view line);

// Maps header names to column indexes; fails naming the missing column.
class Header {
 public:
  static Result<Header> Parse(std::string_view line, const std::vector<std::string>& required,
                              const std::string& file);
  // Column index of `name` (must be one of the required names or present).
  int Index(std::string_view name) const;
  size_t columns() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

// Strict numeric parsing; the error names file, line and column.
Result<int64_t> ParseInt(std::string_view text, const std::string& where);
Result<double> ParseDouble(std::string_view text, const std::string& where);

}  // namespace csv

// ---- Alibaba openb ----

struct OpenbOptions {
  // Node list read from the trace directory. The FGD paper's cluster is the
  // 1,213 GPU nodes; openb_node_list_all_node.csv adds 310 CPU-only nodes.
  std::string node_list = "openb_node_list_gpu_node.csv";
  // Pod list used when the path is a directory.
  std::string default_pod_list = "openb_pod_list_default.csv";
};

// Parses a node list (sn,cpu_milli,memory_mib,gpu,model). `file` names the source
// in error messages.
Result<std::vector<model::Node>> ParseOpenbNodes(std::istream& in, const std::string& file);

// One pod row in compact form (what the reader keeps in memory).
struct OpenbPodRecord {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int32_t gpu_milli = 0;  // per GPU; 1000 = whole devices
  std::string gpu_spec;   // "" or "V100M16|V100M32"
  double creation_time = 0;
  std::optional<double> duration;  // deletion - scheduled (or - creation)
};

// Parses a pod list; rows come back sorted by creation time (stable).
Result<std::vector<OpenbPodRecord>> ParseOpenbPods(std::istream& in, const std::string& file);

// The single-pod Workload for a record: kind Pod in namespace "default", one pod
// set "main". Whole GPUs (gpu_milli == 1000 or num_gpu > 1) request
// nvidia.com/gpu = num_gpu; a share of one device requests muster.dev/gpu-milli =
// gpu_milli and no nvidia.com/gpu. gpu_spec becomes required node affinity
// alibaba.com/gpu-model In (models).
model::Workload OpenbPodToWorkload(const OpenbPodRecord& pod);

// GPU demand of a workload in milli-GPUs: nvidia.com/gpu * 1000 + gpu-milli, per
// pod, times pod counts. The packing experiment's unit of account.
int64_t WorkloadGpuMilli(const model::Workload& workload);

// Opens `path`: a directory (node list + default pod list) or a pod-list CSV (the
// node list is taken from the same directory).
Result<std::unique_ptr<TraceReader>> OpenOpenbTrace(const std::string& path,
                                                    const OpenbOptions& options = {});

}  // namespace muster::sim
