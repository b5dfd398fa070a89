// The synthetic generator: byte-identical output per seed, YAML that `muster
// validate` accepts and that decodes to the same objects the in-process model
// path builds, and generated clusters and workloads that run to completion.
#include "sim/generator.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/decode.h"
#include "core/resource_name.h"
#include "generated_run.h"
#include "sim/simulator.h"
#include "workloads/workloads.h"

namespace muster::sim {
namespace {

// What `muster validate -f FILE` does: LoadPaths, then any diagnostic is printed.
api::DecodeResult ValidateText(const std::string& text, const std::string& name) {
  std::filesystem::path file = std::filesystem::temp_directory_path() /
                               ("muster-gen-" + name + "-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
  }
  api::DecodeResult result = api::LoadPaths({file.string()});
  std::filesystem::remove(file);
  return result;
}

void ExpectClean(const api::DecodeResult& r) {
  for (const auto& d : r.diagnostics) ADD_FAILURE() << d.ToString();
}

ClusterSpec SmallCluster() {
  ClusterSpec s;
  s.nodes = 64;
  s.racks = 4;
  s.blocks = 2;
  s.cluster_queues = 4;
  s.cohorts = 2;
  return s;
}

WorkloadSpec SmallWorkload() {
  WorkloadSpec w;
  w.jobs = 40;
  w.seed = 11;
  w.queues = 4;
  w.rack_gpus = 128;
  return w;
}

TEST(GeneratorTest, ClusterYamlIsDeterministicAndValid) {
  ClusterSpec spec = SmallCluster();
  std::string a = ClusterYaml(spec);
  EXPECT_EQ(a, ClusterYaml(spec));
  api::DecodeResult r = ValidateText(a, "cluster");
  ExpectClean(r);
  model::ManifestSet direct = GenerateCluster(spec);
  const auto& m = r.manifests;
  ASSERT_EQ(m.nodes.size(), 64u);
  ASSERT_EQ(m.node_topologies.size(), 64u);
  ASSERT_EQ(m.topologies.size(), 1u);
  ASSERT_EQ(m.resource_flavors.size(), 1u);
  ASSERT_EQ(m.cluster_queues.size(), 4u);
  ASSERT_EQ(m.local_queues.size(), 4u);
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    EXPECT_EQ(m.nodes[i].meta.name, direct.nodes[i].meta.name);
    EXPECT_EQ(m.nodes[i].meta.labels, direct.nodes[i].meta.labels);
    EXPECT_EQ(m.nodes[i].allocatable.Get(kNvidiaGpu), 8);
    EXPECT_EQ(m.nodes[i].allocatable.Get(kCpu), direct.nodes[i].allocatable.Get(kCpu));
    EXPECT_EQ(m.nodes[i].allocatable.Get(kMemory), direct.nodes[i].allocatable.Get(kMemory));
    ASSERT_EQ(m.node_topologies[i].zones.size(), 2u);
    EXPECT_EQ(m.node_topologies[i].policy, model::TopologyManagerPolicy::kBestEffort);
    for (size_t z = 0; z < 2; ++z) {
      EXPECT_EQ(m.node_topologies[i].zones[z].allocatable.Get(kNvidiaGpu), 4);
      EXPECT_EQ(m.node_topologies[i].zones[z].allocatable.Get(kCpu),
                direct.node_topologies[i].zones[z].allocatable.Get(kCpu));
    }
  }
  // 64 nodes in 4 racks of 16, racks 0-1 in block 0 and 2-3 in block 1.
  EXPECT_EQ(m.nodes[0].meta.labels.at(kGenRackLabel), "rack-0000");
  EXPECT_EQ(m.nodes[63].meta.labels.at(kGenRackLabel), "rack-0003");
  EXPECT_EQ(m.nodes[31].meta.labels.at(kGenBlockLabel), "block-000");
  EXPECT_EQ(m.nodes[32].meta.labels.at(kGenBlockLabel), "block-001");
  // Nominal quota splits the cluster: 512 GPUs / 4 queues.
  const auto& cq = m.cluster_queues[1];
  EXPECT_EQ(cq.cohort, "cohort-001");
  const auto& res = cq.resource_groups.at(0).flavors.at(0).resources;
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(res[2].name, "nvidia.com/gpu");
  EXPECT_EQ(res[2].nominal_quota.Value(), 128);
  EXPECT_EQ(res[1].nominal_quota,
            direct.cluster_queues[1].resource_groups[0].flavors[0].resources[1].nominal_quota);
  EXPECT_EQ(cq.preemption.reclaim_within_cohort, model::PreemptionPolicy::kAny);
}

TEST(GeneratorTest, RacksDefaultAndStayBalanced) {
  ClusterSpec spec;
  spec.nodes = 100;
  EXPECT_EQ(EffectiveRacks(spec), 4);
  spec.racks = 3;
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < spec.nodes; ++i) ++counts[RackOfNode(spec, i)];
  EXPECT_LE(
      std::max({counts[0], counts[1], counts[2]}) - std::min({counts[0], counts[1], counts[2]}), 1);
}

TEST(GeneratorTest, WorkloadYamlIsDeterministicAndMatchesPlans) {
  WorkloadSpec spec = SmallWorkload();
  std::string a = WorkloadYaml(spec);
  EXPECT_EQ(a, WorkloadYaml(spec));
  WorkloadSpec other = spec;
  other.seed = 12;
  EXPECT_NE(a, WorkloadYaml(other));

  // Jobs alone name queues defined elsewhere: validate them with the cluster.
  api::DecodeResult r = ValidateText(ClusterYaml(SmallCluster()) + "---\n" + a, "workload");
  ExpectClean(r);
  auto built = workloads::BuildWorkloads(r.manifests);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::vector<JobPlan> plans = PlanJobs(spec);
  ASSERT_EQ(built->size(), plans.size());
  bool seen[3] = {false, false, false};
  double last_submit = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    const model::Workload& got = (*built)[i];
    model::Workload want = PlanToWorkload(plans[i], static_cast<int64_t>(i));
    SCOPED_TRACE(want.key);
    EXPECT_EQ(got.key, want.key);
    EXPECT_EQ(got.meta.kind, want.meta.kind);
    EXPECT_EQ(got.local_queue, want.local_queue);
    EXPECT_EQ(got.priority, want.priority);
    EXPECT_EQ(got.min_available, want.min_available);
    EXPECT_DOUBLE_EQ(got.sim.submit_at, want.sim.submit_at);
    EXPECT_DOUBLE_EQ(*got.sim.duration, *want.sim.duration);
    ASSERT_EQ(got.pod_sets.size(), want.pod_sets.size());
    for (size_t p = 0; p < got.pod_sets.size(); ++p) {
      EXPECT_EQ(got.pod_sets[p].name, want.pod_sets[p].name);
      EXPECT_EQ(got.pod_sets[p].count, want.pod_sets[p].count);
      EXPECT_EQ(got.pod_sets[p].requests.Get(kNvidiaGpu),
                want.pod_sets[p].requests.Get(kNvidiaGpu));
      EXPECT_EQ(got.pod_sets[p].requests.Get(kCpu), want.pod_sets[p].requests.Get(kCpu));
      EXPECT_EQ(got.pod_sets[p].topology.mode, want.pod_sets[p].topology.mode);
      EXPECT_EQ(got.pod_sets[p].topology.level, want.pod_sets[p].topology.level);
    }
    EXPECT_GE(plans[i].pods, 1);
    EXPECT_LE(plans[i].pods, 512);
    if (plans[i].job_class == JobClass::kLarge) {
      EXPECT_GE(plans[i].pods, 64);
      EXPECT_FALSE(plans[i].topology_level.empty());
    }
    seen[static_cast<int>(plans[i].job_class)] = true;
    EXPECT_GE(plans[i].submit_at, last_submit);
    last_submit = plans[i].submit_at;
  }
  EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
}

TEST(GeneratorTest, ParsesMix) {
  auto mix = ParseJobMix("large:0.5,small:0.5");
  ASSERT_TRUE(mix.ok());
  EXPECT_EQ(mix->small, 0.5);
  EXPECT_EQ(mix->medium, 0);
  EXPECT_EQ(mix->large, 0.5);
  EXPECT_FALSE(ParseJobMix("huge:1").ok());
  EXPECT_FALSE(ParseJobMix("small").ok());
  EXPECT_FALSE(ParseJobMix("small:-1").ok());
  EXPECT_FALSE(ParseJobMix("small:0").ok());
  WorkloadSpec spec;
  spec.jobs = 50;
  spec.mix = *ParseJobMix("small:1");
  for (const auto& p : PlanJobs(spec)) EXPECT_EQ(p.job_class, JobClass::kSmall);
}

// Runs a generated cluster and workload in the simulator; every job must finish.
void ExpectAllSucceed(const ClusterSpec& cluster, const WorkloadSpec& jobs) {
  auto result = testing::SimulateGenerated(cluster, jobs);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->summary.workloads, jobs.jobs);
  EXPECT_EQ(result->summary.succeeded, jobs.jobs);
}

TEST(GeneratorTest, GeneratedClusterRunsGeneratedJobsToCompletion) {
  // One block: a 512-pod gang needs every GPU of the 64 nodes.
  ClusterSpec cluster = SmallCluster();
  cluster.blocks = 1;
  cluster.cluster_queues = 0;
  WorkloadSpec jobs = SmallWorkload();
  jobs.queues = 0;
  ExpectAllSucceed(cluster, jobs);
}

// Regression: with queues in one cohort, team-0001/job-000020 reclaimed quota
// from team-0000's borrowers at t=39.223 and the victim won its quota back in the
// next cycle, forever ("scheduling did not settle after 1000 cycles"). Victims now
// wait for their preemptor. Same shape as: muster gen cluster --nodes 64 --racks 4
// --blocks 1 --cluster-queues 4 --cohorts 1; muster gen workload --jobs 40 --seed 11
// --queues 4 --rack-gpus 128.
TEST(GeneratorTest, QueuedGeneratedJobsRunToCompletion) {
  ClusterSpec cluster = SmallCluster();
  cluster.blocks = 1;
  cluster.cohorts = 1;
  ExpectAllSucceed(cluster, SmallWorkload());
}

}  // namespace
}  // namespace muster::sim
