// SchedulerView: what the scheduler knows that the API objects do not, as one
// immutable value built after each reconcile step: the queue tree with quota, usage,
// borrowing, lending and fair-sharing shares; each workload's position in its queues,
// why it waits in words and numbers (the missing amount per flavor and resource) and
// who could be preempted for it; each node's GPUs and NUMA zones with the workload
// holding each; utilisation over time and a timeline of admissions, preemptions and
// evictions. serve and kube publish it (an atomically swapped
// shared_ptr<const SchedulerView>) and serve it read-only as muster.dev/v1alpha1
// resources (ui/view_api.h), so RBAC applies to it like to any resource.
//
// BuildSchedulerView is a pure function of engine state (no I/O, no clock read): the
// same engine state, configuration and previous view give the same view.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "engine/engine.h"
#include "model/manifest_set.h"

namespace muster::control {

// Amounts per resource name, in ResourceList units (milli-cpu, bytes, counts).
using Amounts = std::map<std::string, int64_t>;

// One (flavor, resource) of a queue.
struct QuotaView {
  std::string flavor;
  std::string resource;
  int64_t nominal = 0;                     // a Cohort's: its own nominal quota plus its members'
  std::optional<int64_t> borrowing_limit;  // nullopt: unlimited
  std::optional<int64_t> lending_limit;    // nullopt: lends all it does not use
  int64_t used = 0;       // held by admitted workloads (of the whole subtree for a Cohort)
  int64_t borrowed = 0;   // used beyond the queue's own quota
  int64_t lent = 0;       // the queue's unused lendable quota others use (see .cc)
  int64_t available = 0;  // what one more workload here could still use now
  bool operator==(const QuotaView&) const = default;
};

// A ClusterQueue, Cohort or Volcano Queue.
struct QueueView {
  std::string name;                   // object name: "<kind lower-case>.<queue name>"
  std::string kind;                   // "ClusterQueue" | "Cohort" | "VolcanoQueue"
  std::string queue;                  // the queue's own name
  std::string parent;                 // cohort / parent queue; "" at the top
  std::vector<std::string> children;  // object names, sorted
  std::vector<QuotaView> quota;       // by (flavor, resource)
  int64_t weight_milli = 1000;        // fairSharing.weight; Volcano weight x 1000
  int64_t weighted_share = 0;         // Kueue fair-sharing share (per mille / weight)
  int64_t pending = 0;                // waiting workloads (inadmissible included)
  int64_t inadmissible = 0;           // of them, parked until capacity changes
  int64_t admitted = 0;               // admitted, placed or not
  Amounts pending_requests;           // what the waiting workloads ask for in total
  std::string queueing_strategy;
  std::string stop_policy;
  std::string preemption;  // "withinClusterQueue=..., reclaimWithinCohort=..."
  std::string inactive_message;
  // Volcano queues.
  Amounts capability;
  Amounts guarantee;
  Amounts deserved;
  Amounts allocated;
  bool reclaimable = true;
  bool operator==(const QueueView&) const = default;
};

// What the workload's queue is short of in one flavor.
struct ShortfallView {
  std::string flavor;  // "" for Volcano queues
  std::string resource;
  int64_t requested = 0;
  int64_t available = 0;  // missing = requested - available
  bool operator==(const ShortfallView&) const = default;
};

// An admitted workload the workload's queue policy would let it preempt.
struct CandidateView {
  std::string workload;  // key "<namespace>/<job name>"
  std::string cluster_queue;
  int32_t priority = 0;
  std::string reason;       // InClusterQueue | InCohortReclamation | InCohortReclaimWhileBorrowing
  bool preempting = false;  // already being evicted for this workload
  bool operator==(const CandidateView&) const = default;
};

struct PodView {
  std::string pod_set;
  int32_t index = 0;
  std::string node;
  std::vector<int32_t> gpus;
  int32_t numa_zone = -1;
  bool operator==(const PodView&) const = default;
};

struct DecisionView {
  Time time = 0;
  std::string action;  // Submit, Admit, Start, Pending, Preempt, Evict, Finish, Fail...
  std::string reason;
  std::string message;
  bool operator==(const DecisionView&) const = default;
};

struct EvictionView {
  Time time = 0;
  std::string reason;
  std::string detail;
  std::string by;
  bool operator==(const EvictionView&) const = default;
};

struct WorkloadView {
  std::string namespace_;
  std::string name;  // the Kueue Workload object's name ("<kind>-<job name>")
  std::string key;   // the engine's key "<namespace>/<job name>"
  std::string job_kind;
  std::string job_name;
  std::string state;  // Pending | Admitted | Running | Succeeded | Failed
  std::string local_queue;
  std::string cluster_queue;  // or the Volcano queue
  std::string cohort;
  bool volcano = false;
  int32_t priority = 0;
  std::string priority_class;
  int32_t position_in_cluster_queue = -1;  // 0-based, while pending
  int32_t position_in_local_queue = -1;
  bool inadmissible = false;
  std::optional<Time> submitted;
  std::optional<Time> admitted;
  std::optional<Time> started;
  std::optional<Time> finished;
  int32_t pods = 0;
  int32_t min_pods = 0;
  Amounts requests;     // all pods together
  std::string reason;   // machine-readable, while not running
  std::string message;  // one line, in words
  std::vector<ShortfallView> shortfall;
  std::vector<CandidateView> candidates;
  std::string preempted_for;                   // being evicted to make room for this workload
  std::map<std::string, std::string> flavors;  // "<pod set>/<resource>" -> flavor
  std::vector<PodView> placement;
  std::vector<EvictionView> evictions;
  std::vector<DecisionView> decisions;  // the latest ones, oldest first
  int32_t failures = 0;
  bool operator==(const WorkloadView&) const = default;
};

struct GpuView {
  int32_t index = 0;
  int32_t numa_zone = -1;
  int32_t nvlink_domain = -1;
  int32_t milli_used = 0;  // 1000 = the whole device
  std::string holder;      // workload key; "" when free
  std::string pod;         // "<pod set>-<index>" of the holder
  bool operator==(const GpuView&) const = default;
};

struct ZoneView {
  std::string name;
  Amounts allocatable;
  Amounts used;
  std::vector<int32_t> gpus;
  std::vector<std::string> holders;  // workload keys, sorted
  bool operator==(const ZoneView&) const = default;
};

struct NodeView {
  std::string name;
  // Where the node sits, outermost first (block, rack...): label key and value.
  std::vector<std::pair<std::string, std::string>> topology;
  bool ready = true;
  bool unschedulable = false;
  Amounts allocatable;
  Amounts used;
  std::vector<GpuView> gpus;
  std::vector<ZoneView> zones;
  std::vector<std::string> workloads;  // keys, sorted
  bool operator==(const NodeView&) const = default;
};

// Utilisation samples as columns (one entry per sample, oldest first).
struct UtilizationSeries {
  std::vector<Time> time;
  std::vector<int64_t> gpus_used;
  std::vector<int64_t> gpus_total;
  std::vector<int64_t> cpu_used;  // milli
  std::vector<int64_t> cpu_total;
  std::vector<int64_t> running;
  std::vector<int64_t> pending;
  size_t size() const { return time.size(); }
  bool operator==(const UtilizationSeries&) const = default;
};

struct TimelineEntry {
  Time time = 0;
  std::string action;    // Admit | Start | Preempt | Evict | Finish | Fail | NodeLost...
  std::string workload;  // key, or a node name for node events
  std::string cluster_queue;
  std::string reason;
  std::string message;
  bool operator==(const TimelineEntry&) const = default;
};

struct ClusterView {
  Time updated = 0;
  int32_t nodes = 0;
  int32_t ready_nodes = 0;
  Amounts allocatable;
  Amounts used;
  int32_t largest_free_gpus = 0;             // most whole GPUs free on one ready node
  std::map<std::string, int64_t> workloads;  // by state
  int64_t cycles = 0;
  std::string engine_error;  // why there is no engine (invalid configuration)
  UtilizationSeries utilization;
  std::vector<TimelineEntry> timeline;  // the latest ones, oldest first
};

struct SchedulerView {
  int64_t generation = 0;  // +1 per build
  ClusterView cluster;
  std::vector<QueueView> queues;        // sorted by name
  std::vector<WorkloadView> workloads;  // sorted by (namespace, name)
  std::vector<NodeView> nodes;          // sorted by name
  // Decision-log entries already folded into the timeline, and the log's first entry
  // (a rebuilt engine starts a new log).
  size_t log_seen = 0;
  std::optional<DecisionView> log_first;
};

// Bounds, so a long-lived server's view stays small.
inline constexpr size_t kMaxUtilizationSamples = 2000;
inline constexpr size_t kMaxTimelineEntries = 1000;
inline constexpr size_t kMaxDecisionsPerWorkload = 20;
inline constexpr size_t kMaxCandidates = 10;
// Preemption candidates are worked out for the first pending workloads of each queue
// only: the ones the next cycles look at.
inline constexpr int32_t kCandidatePositions = 20;

struct ViewInputs {
  const engine::Engine* engine = nullptr;      // null: no engine (see engine_error)
  const model::ManifestSet* config = nullptr;  // the configuration the engine runs
  Time now = 0;
  std::string engine_error;
  // The decisions made since `previous` was built, when the caller drains the engine's
  // log (the reconciler does: Reconciler::TakeUnviewedDecisions). Null: read the
  // engine's own log, which then only grows.
  const std::vector<engine::LogEntry>* new_decisions = nullptr;
};

// The view for the engine's current state. `previous` (may be null) carries the
// utilisation history and the timeline forward.
SchedulerView BuildSchedulerView(const ViewInputs& inputs, const SchedulerView* previous);

}  // namespace muster::control
