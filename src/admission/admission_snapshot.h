// AdmissionSnapshot: the numbers behind admission's decisions, read out as plain
// values for people (the dashboard's queue tree and "why is this waiting" views in
// control/scheduler_view.h): quota, usage and what is still available per (flavor,
// resource) at every node of the cohort tree, fair-sharing shares, each queue's
// pending workloads in queue order, and Volcano queues' deserved and allocated
// amounts. Amounts are in ResourceList units (milli-cpu, bytes, device counts).
// Reading it changes nothing; the same state gives the same snapshot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_list.h"
#include "model/kueue.h"

namespace muster::admission {

// One (flavor, resource) of a ClusterQueue or Cohort.
struct QuotaCellSnapshot {
  std::string flavor;
  std::string resource;
  int64_t nominal = 0;                     // the node's own nominalQuota
  std::optional<int64_t> borrowing_limit;  // nullopt: unlimited
  std::optional<int64_t> lending_limit;    // nullopt: lends everything
  int64_t subtree = 0;        // the node's nominal plus what the nodes below it lend up
  int64_t total_nominal = 0;  // nominal of the node and every node below it
  int64_t guaranteed = 0;     // the part of `subtree` the node does not lend
  int64_t usage = 0;          // held by admitted workloads of the subtree
  int64_t available = 0;      // what one more workload here could still use now
};

// A ClusterQueue or Cohort of the quota tree.
struct QuotaNodeSnapshot {
  std::string name;
  bool cluster_queue = false;
  std::string parent;           // "" for a root
  int64_t weight_milli = 1000;  // fairSharing.weight
  // Kueue's status.fairSharing.weightedShare: the dominant share (per mille) of what
  // the node borrows over what its parent can lend, divided by its weight; 0 when it
  // does not borrow or has no parent.
  int64_t weighted_share = 0;
  std::vector<QuotaCellSnapshot> cells;  // by (flavor preference order, resource)
};

// A ClusterQueue's own settings and workloads.
struct ClusterQueueSnapshot {
  std::string name;
  std::string cohort;
  std::vector<std::vector<std::string>> flavor_groups;  // flavors per resource group, in order
  std::vector<std::vector<std::string>> covered;        // covered resources per group
  model::QueueingStrategy strategy = model::QueueingStrategy::kBestEffortFIFO;
  model::ClusterQueuePreemption preemption;
  model::StopPolicy stop_policy = model::StopPolicy::kNone;
  std::string inactive_message;       // non-empty when misconfigured
  std::vector<std::string> pending;   // workload keys in queue order (parked ones included)
  std::vector<std::string> parked;    // of `pending`: inadmissible until capacity changes, sorted
  std::vector<std::string> admitted;  // sorted by key
};

struct VolcanoQueueSnapshot {
  std::string name;
  std::string parent;  // "" for a top-level queue
  int32_t weight = 1;
  std::map<std::string, int64_t> capability;  // absent = unlimited
  ResourceList guarantee;
  ResourceList deserved;   // computed by proportion (whole units)
  ResourceList allocated;  // admitted workloads
  ResourceList request;    // pending + admitted workloads
  bool reclaimable = true;
  std::vector<std::string> pending;   // queue order
  std::vector<std::string> admitted;  // sorted
};

struct AdmissionSnapshot {
  std::vector<QuotaNodeSnapshot> quota_nodes;        // sorted by (cohort before queue, name)
  std::vector<ClusterQueueSnapshot> cluster_queues;  // sorted by name
  std::vector<VolcanoQueueSnapshot> volcano_queues;  // sorted by name
  // Preemption victims not yet gone, and the workload each one makes room for.
  std::map<std::string, std::string> preempted_for;
  bool fair_sharing = false;
};

}  // namespace muster::admission
