// Generated runs with cohorts, three priorities and preemption, simulated twice: as
// muster runs (full ClusterQueues sleep through runs of like heads,
// admission_sleep.cc) and with an admitter that visits every head. Each workload's
// decisions at each instant, and every admission, preemption and eviction in its
// order, must be the same. The second seed failed before a preemptor giving up its
// reserved quota woke the tree's sleeping queues before unparking their heads: the
// sleepers then parked the heads just unparked instead of their own.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "admission/admitter_impl.h"
#include "api/decode.h"
#include "sim/generator.h"
#include "sim/simulator.h"
#include "workloads/workloads.h"

namespace muster::sim {
namespace {

struct Decided {
  // (time, workload) -> its log lines at that instant, in order.
  std::map<std::pair<Time, std::string>, std::vector<std::string>> by_instant;
  std::vector<std::string> moves;  // every line but Pending, in order
  size_t lines = 0;
};

Decided SimulateOnce(const model::ManifestSet& m, bool sleep) {
  auto workloads = workloads::BuildWorkloads(m);
  EXPECT_TRUE(workloads.ok());
  auto parts = engine::BuildEngineParts(m);
  EXPECT_TRUE(parts.ok());
  if (!sleep) static_cast<admission::AdmitterImpl&>(*parts->admitter).StopSleeping();
  SimOptions options;
  options.check_invariants = true;
  auto sim = Simulator::Create(m, std::move(workloads).value(), std::move(parts).value(), options);
  EXPECT_TRUE(sim.ok());
  Status st = (*sim)->Run();
  EXPECT_TRUE(st.ok()) << st.message();
  Decided run;
  for (const engine::LogEntry& e : (*sim)->engine().log().entries()) {
    std::string line = e.action + " " + e.workload + " " + e.reason + " " + e.message;
    run.by_instant[{e.time, e.workload}].push_back(line);
    if (e.action != "Pending") run.moves.push_back(std::to_string(e.time) + " " + line);
    ++run.lines;
  }
  return run;
}

TEST(SleepingQueues, GeneratedRunsDecideAsVisitingEveryHead) {
  struct Case {
    ClusterSpec cluster;
    WorkloadSpec jobs;
  };
  // Jobs for the cluster's 8 queues (racks of 64 GPUs), arriving `every` seconds.
  auto make = [](ClusterSpec cluster, int32_t jobs, uint64_t seed, double every) {
    Case c{cluster, {}};
    c.jobs.jobs = jobs;
    c.jobs.seed = seed;
    c.jobs.queues = cluster.cluster_queues;
    c.jobs.rack_gpus = 64;
    c.jobs.mean_interarrival_seconds = every;
    return c;
  };
  const std::vector<Case> cases = {
      // 8 ClusterQueues in 2 cohorts, arrivals every 30 s.
      make({.nodes = 64, .racks = 8, .blocks = 2, .cluster_queues = 8, .cohorts = 2}, 200, 1, 30),
      // 8 in 4 cohorts, every 5 s: preemptors give up their claims while a queue of
      // their tree sleeps.
      make({.nodes = 48, .racks = 6, .cluster_queues = 8, .cohorts = 4, .seed = 7}, 400, 3, 5),
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    api::DecodeResult r;
    api::DecodeText(ClusterYaml(cases[i].cluster), "cluster.yaml", r);
    api::DecodeText(WorkloadYaml(cases[i].jobs), "jobs.yaml", r);
    ASSERT_FALSE(r.HasErrors());
    Decided sleeping = SimulateOnce(r.manifests, true);
    Decided visiting = SimulateOnce(r.manifests, false);
    EXPECT_GT(visiting.moves.size(), 400u);
    EXPECT_EQ(sleeping.moves, visiting.moves);
    EXPECT_EQ(sleeping.lines, visiting.lines);
    for (const auto& [at, lines] : visiting.by_instant) {
      auto it = sleeping.by_instant.find(at);
      ASSERT_NE(it, sleeping.by_instant.end()) << at.first << " " << at.second;
      ASSERT_EQ(it->second, lines) << at.first << " " << at.second;
    }
  }
}

}  // namespace
}  // namespace muster::sim
