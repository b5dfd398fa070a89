// `muster summary -f PATH...`: validates manifests and prints a readable summary of
// the cluster, the queue tree and the jobs as muster sees them (gang sizes, pod
// sets, effective per-pod requests, priorities, queues).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "api/decode.h"
#include "cli/commands.h"
#include "core/resource_list.h"
#include "workloads/elastic.h"
#include "workloads/workloads.h"

namespace muster::cli {
namespace {

std::string QuantityOrDash(const std::optional<Quantity>& q) { return q ? q->ToString() : "-"; }

void PrintCluster(const model::ManifestSet& m) {
  ResourceList total;
  int numa_nodes = 0;
  for (const auto& n : m.nodes) total += n.allocatable;
  for (const auto& t : m.node_topologies) {
    if (t.zones.size() > 1) ++numa_nodes;
  }
  std::printf("Cluster: %zu nodes (%d with NUMA topology), allocatable %s\n", m.nodes.size(),
              numa_nodes, total.ToString().c_str());
  for (const auto& n : m.nodes) {
    std::string flags;
    if (n.unschedulable) flags += " unschedulable";
    if (!n.taints.empty()) flags += " taints=" + std::to_string(n.taints.size());
    std::printf("  %-24s %s%s\n", n.meta.name.c_str(), n.allocatable.ToString().c_str(),
                flags.c_str());
  }
}

void PrintQueues(const model::ManifestSet& m) {
  std::printf("\nQueues:\n");
  for (const auto& c : m.cohorts) {
    std::printf("  Cohort %s%s\n", c.meta.name.c_str(),
                c.parent.empty() ? "" : (" (parent " + c.parent + ")").c_str());
  }
  for (const auto& cq : m.cluster_queues) {
    std::printf("  ClusterQueue %s cohort=%s strategy=%s\n", cq.meta.name.c_str(),
                cq.cohort.empty() ? "-" : cq.cohort.c_str(),
                cq.queueing_strategy == model::QueueingStrategy::kStrictFIFO ? "StrictFIFO"
                                                                             : "BestEffortFIFO");
    for (const auto& rg : cq.resource_groups) {
      for (const auto& fq : rg.flavors) {
        for (const auto& r : fq.resources) {
          std::printf("    %-10s %-18s nominal=%s borrowingLimit=%s lendingLimit=%s\n",
                      fq.name.c_str(), r.name.c_str(), r.nominal_quota.ToString().c_str(),
                      QuantityOrDash(r.borrowing_limit).c_str(),
                      QuantityOrDash(r.lending_limit).c_str());
        }
      }
    }
  }
  for (const auto& lq : m.local_queues) {
    std::printf("  LocalQueue %s -> ClusterQueue %s\n", lq.meta.Key().c_str(),
                lq.cluster_queue.c_str());
  }
  for (const auto& q : m.volcano_queues) {
    std::printf("  Volcano Queue %s weight=%d reclaimable=%s%s\n", q.meta.name.c_str(), q.weight,
                q.reclaimable ? "true" : "false",
                q.parent.empty() ? "" : (" parent=" + q.parent).c_str());
  }
}

void PrintJobs(const std::vector<model::Workload>& workloads) {
  std::printf("\nJobs (%zu):\n", workloads.size());
  for (const auto& w : workloads) {
    std::string queue = !w.local_queue.empty()     ? "kueue:" + w.local_queue
                        : !w.volcano_queue.empty() ? "volcano:" + w.volcano_queue
                                                   : "none";
    // Elastic between its minimum and full size where its own queue lets it be.
    if (workloads::IsElastic(w, !w.local_queue.empty())) {
      std::vector<int32_t> lo = workloads::MinCounts(w);
      int32_t min = 0;
      for (int32_t c : lo) min += c;
      std::printf("    elastic %d..%d pods (%s)\n", min, w.TotalCount(),
                  std::string(workloads::ElasticSourceName(w.elastic)).c_str());
    }
    if (w.task_topology) {
      auto groups = [](const std::vector<std::vector<std::string>>& gs) {
        std::string out;
        for (const auto& g : gs) {
          std::string one;
          for (const auto& t : g) one += (one.empty() ? "" : ",") + t;
          out += (out.empty() ? "" : ";") + one;
        }
        return out.empty() ? std::string("-") : out;
      };
      std::printf("    task-topology affinity=%s anti-affinity=%s\n",
                  groups(w.task_topology->affinity).c_str(),
                  groups(w.task_topology->anti_affinity).c_str());
    }
    if (w.sla_waiting_seconds) std::printf("    sla-waiting-time %gs\n", *w.sla_waiting_seconds);
    std::printf("  %-28s %-11s queue=%-18s priority=%d gang=%d/%d\n", w.key.c_str(),
                w.meta.kind.c_str(), queue.c_str(), w.priority, w.min_available, w.TotalCount());
    for (const auto& ps : w.pod_sets) {
      std::printf("    %-12s x%-3d (min %d) per pod %s\n", ps.name.c_str(), ps.count, ps.min_count,
                  ps.requests.ToString().c_str());
    }
  }
}

// Volcano PodGroups and the job that uses each; one no job of the input uses is a
// standalone gang (its pods are created by someone else) and is listed as such.
void PrintPodGroups(const model::ManifestSet& m, const std::vector<model::Workload>& workloads) {
  if (m.pod_groups.empty()) return;
  std::printf("\nPodGroups (%zu):\n", m.pod_groups.size());
  for (const auto& pg : m.pod_groups) {
    std::string user;
    for (const auto& w : workloads) {
      if (w.meta.namespace_ != pg.meta.namespace_) continue;
      auto it = w.meta.annotations.find("scheduling.k8s.io/group-name");
      std::string group = it != w.meta.annotations.end() ? it->second : w.meta.name;
      if (group == pg.meta.name) user = w.key;
    }
    // Its status when the input has one (a `kubectl get podgroups -o yaml`).
    std::string status;
    if (!pg.phase.empty()) {
      status = " phase=" + pg.phase + " (running " + std::to_string(pg.running) + ", succeeded " +
               std::to_string(pg.succeeded) + ", failed " + std::to_string(pg.failed) + ")";
    }
    std::printf(
        "  %-28s minMember=%d queue=%s%s %s\n", pg.meta.Key().c_str(), pg.min_member,
        pg.queue.c_str(), status.c_str(),
        user.empty() ? "standalone: no job of the input uses it" : ("gang of " + user).c_str());
  }
}

void PrintConfiguration(const model::ManifestSet& m) {
  if (!m.scheduler_config) return;
  const model::SchedulerConfiguration& c = *m.scheduler_config;
  static const char* const kPolicies[] = {"Binpack", "Spread", "GpuPacking", "BestFit", "FGD"};
  std::printf(
      "\nScheduler configuration%s: scoringPolicy=%s volcano: preempt=%s reclaim=%s "
      "drf=%s sla=%s task-topology=%s (weight %d)\n",
      c.mapped_from.empty() ? "" : (" (from " + c.mapped_from + ")").c_str(),
      kPolicies[static_cast<int>(c.scoring)], c.volcano.preempt ? "on" : "off",
      c.volcano.reclaim ? "on" : "off", c.volcano.drf_job_order ? "on" : "off",
      c.volcano.sla ? "on" : "off", c.volcano.task_topology ? "on" : "off",
      c.volcano.task_topology_weight);
}

}  // namespace

void RegisterSummaryCommand(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("summary", "Validate manifests and summarize cluster, queues, jobs");
  static std::vector<std::string> paths;
  cmd->add_option("-f,--filename", paths, "Manifest file or directory (repeatable, - for stdin)")
      ->required();
  cmd->callback([&exit_code] {
    api::DecodeResult decoded = api::LoadPaths(paths);
    for (const auto& d : decoded.diagnostics) std::printf("%s\n", d.ToString().c_str());
    if (decoded.HasErrors()) {
      exit_code = 1;
      return;
    }
    auto workloads = workloads::BuildWorkloads(decoded.manifests);
    if (!workloads.ok()) {
      std::fprintf(stderr, "error: %s\n", workloads.status().message().c_str());
      exit_code = 1;
      return;
    }
    PrintCluster(decoded.manifests);
    PrintQueues(decoded.manifests);
    PrintJobs(*workloads);
    PrintPodGroups(decoded.manifests, *workloads);
    PrintConfiguration(decoded.manifests);
    exit_code = 0;
  });
}

}  // namespace muster::cli
