// metrics.k8s.io/v1beta1 as metrics-server serves it, for `kubectl top pod` and
// `kubectl top node`: each pod the local executor runs, its CPU as a rate (nanocores)
// over the window since an earlier sample and its memory working set (usage less
// inactive file pages, as cAdvisor counts it), read from the pod's cgroup (v1 cpuacct
// and memory, or v2 cpu.stat and memory.current); a Node's usage is the sum of its
// pods'. A pod without a running process (the emulated executor's, one waiting to
// restart) has no metrics and is left out of lists, as metrics-server leaves out pods
// it has not scraped.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/api_handler.h"
#include "server/object_store.h"

namespace muster::server {

class ProcessSupervisor;  // server/process_supervisor.h

inline constexpr char kMetricsGroup[] = "metrics.k8s.io";
inline constexpr char kMetricsVersion[] = "v1beta1";

struct CgroupUsage {
  std::optional<uint64_t> cpu_ns;        // CPU time used so far
  std::optional<uint64_t> memory_bytes;  // working set now
};
// Reads the usage of the cgroup whose directory in each hierarchy is `dirs`.
CgroupUsage ReadCgroupUsage(const std::vector<std::string>& dirs);

class PodMetrics {
 public:
  // The usage of process `id` now (its cgroup's); nullopt when it does not run.
  using UsageReader = std::function<std::optional<CgroupUsage>(const std::string& id)>;
  // The cgroups of `processes`' pods; nullptr: no pod has metrics (the emulated
  // executor).
  explicit PodMetrics(const ProcessSupervisor* processes);
  explicit PodMetrics(UsageReader reader) : reader_(std::move(reader)) {}

  struct Usage {
    int64_t nanocores = 0;
    int64_t memory_bytes = 0;
    double window_seconds = 0;
  };
  using PodKey = std::pair<std::string, std::string>;  // namespace, name
  // The usage of each pod of `pods` that runs here now. A pod seen for the first time
  // (or not for a minute) is sampled twice, a second apart, once for the whole call.
  // Thread-safe.
  std::map<PodKey, Usage> Sample(const std::vector<PodKey>& pods);

  // How long apart the samples a rate is computed from are, at least and about.
  static constexpr std::chrono::seconds kMinWindow{1};
  static constexpr std::chrono::seconds kWindow{15};

 private:
  struct Point {
    std::chrono::steady_clock::time_point at;
    uint64_t cpu_ns = 0;
  };
  UsageReader reader_;
  std::mutex mu_;
  std::map<std::string, std::deque<Point>> history_;  // process id -> samples, oldest first
};

// The discovery document's resources of metrics.k8s.io/`version`.
nlohmann::json MetricsApiResources(const std::string& version);

// GET /apis/metrics.k8s.io/v1beta1/{[namespaces/NS/]pods[/NAME], nodes[/NAME]};
// nullopt for any other path. `metrics` nullptr: every list is empty.
std::optional<ApiResponse> HandleMetricsRoute(ObjectStore& store, PodMetrics* metrics,
                                              const ApiRequest& request);

}  // namespace muster::server
