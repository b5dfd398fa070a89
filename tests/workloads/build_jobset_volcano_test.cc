#include <gtest/gtest.h>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using testing::JobSet;
using testing::Replicated;
using testing::Task;
using testing::VolcanoJob;

TEST(JobSetTest, OnePodSetPerReplicatedJob) {
  model::JobSet js = JobSet("js", {Replicated("driver", 1, 1), Replicated("workers", 4, 8)});
  js.failure_policy.max_restarts = 3;
  Result<model::Workload> w = BuildWorkload(js, {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->pod_sets.size(), 2u);
  EXPECT_EQ(w->pod_sets[0].name, "driver");
  EXPECT_EQ(w->pod_sets[0].count, 1);
  EXPECT_EQ(w->pod_sets[1].name, "workers");
  EXPECT_EQ(w->pod_sets[1].count, 32);  // 4 child Jobs x 8 pods
  EXPECT_EQ(w->pod_sets[1].min_count, 32);
  EXPECT_EQ(w->pod_sets[1].pods_per_job, 8);
  EXPECT_TRUE(w->pod_sets[1].indexed);
  EXPECT_EQ(w->min_available, 33);
  EXPECT_EQ(w->lifecycle.max_restarts, 3);
  EXPECT_TRUE(w->lifecycle.restart_on_failure);
}

TEST(JobSetTest, CompletionsCapPodsPerJobAndNamesAreUnique) {
  model::ReplicatedJob rj = Replicated("w", 2, 4);
  rj.tmpl.completions = 3;
  Result<model::Workload> w = BuildWorkload(JobSet("js", {rj}), {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->pod_sets[0].count, 6);

  w = BuildWorkload(JobSet("js", {Replicated("w", 1, 1), Replicated("w", 1, 1)}), {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "JobSet default/js: spec.replicatedJobs[1].name: \"w\" is used twice");
}

TEST(JobSetTest, StartOrderAndPoliciesRideOnTheWorkload) {
  model::JobSet js = JobSet(
      "js", {Replicated("init", 1, 1), Replicated("leader", 1, 1), Replicated("workers", 2, 2)});
  js.startup_policy_order = "InOrder";
  js.success_policy.op = "Any";
  js.success_policy.target_replicated_jobs = {"leader"};
  js.failure_policy.rules.push_back({"r", "FailJobSet", {}, {}, {"init"}});
  Result<model::Workload> w = BuildWorkload(js, {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_TRUE(w->pod_sets[0].start_after.empty());
  ASSERT_EQ(w->pod_sets[1].start_after.size(), 1u);
  EXPECT_EQ(w->pod_sets[1].start_after[0].pod_set, "init");
  EXPECT_FALSE(w->pod_sets[1].start_after[0].complete);
  EXPECT_EQ(w->pod_sets[2].start_after.at(0).pod_set, "leader");
  EXPECT_TRUE(w->gang_policy.child_jobs);
  EXPECT_TRUE(w->gang_policy.success_any);
  EXPECT_TRUE(w->gang_policy.in_order);
  EXPECT_EQ(w->gang_policy.success_sets, std::vector<std::string>{"leader"});
  EXPECT_EQ(w->gang_policy.failure_rules.at(0).action, "FailJobSet");
  // The gang is still admitted whole.
  EXPECT_EQ(w->min_available, 6);

  // dependsOn instead: Complete.
  js.startup_policy_order = "AnyOrder";
  js.replicated_jobs[2].depends_on = {{"init", "Complete"}};
  w = BuildWorkload(js, {});
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->pod_sets[1].start_after.empty());
  ASSERT_EQ(w->pod_sets[2].start_after.size(), 1u);
  EXPECT_EQ(w->pod_sets[2].start_after[0].pod_set, "init");
  EXPECT_TRUE(w->pod_sets[2].start_after[0].complete);
}

struct VolcanoMinCase {
  const char* name;
  model::VolcanoJob job;
  std::vector<int32_t> want_min_counts;
  int32_t want_min_available;
};

void PrintTo(const VolcanoMinCase& c, std::ostream* os) { *os << c.name; }

class VolcanoMinimums : public ::testing::TestWithParam<VolcanoMinCase> {};

TEST_P(VolcanoMinimums, AsVolcanoDefaultsThem) {
  Result<model::Workload> w = BuildWorkload(GetParam().job, {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::vector<int32_t> got;
  for (const auto& ps : w->pod_sets) got.push_back(ps.min_count);
  EXPECT_EQ(got, GetParam().want_min_counts) << GetParam().name;
  EXPECT_EQ(w->min_available, GetParam().want_min_available) << GetParam().name;
}

std::vector<VolcanoMinCase> MinCases() {
  std::vector<VolcanoMinCase> cases;
  cases.push_back(
      {"default: every pod", VolcanoJob("v", {Task("ps", 2), Task("worker", 4)}), {2, 4}, 6});
  cases.push_back(
      {"task minAvailable", VolcanoJob("v", {Task("ps", 2), Task("worker", 4, 1)}), {2, 1}, 3});
  {
    VolcanoMinCase c{"job minAvailable spread over tasks without their own",
                     VolcanoJob("v", {Task("ps", 2), Task("worker", 4)}),
                     {2, 1},
                     3};
    c.job.min_available = 3;
    cases.push_back(c);
  }
  {
    VolcanoMinCase c{"job minAvailable with an explicit task minimum",
                     VolcanoJob("v", {Task("ps", 2, 1), Task("worker", 4)}),
                     {1, 3},
                     4};
    c.job.min_available = 4;
    cases.push_back(c);
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Table, VolcanoMinimums, ::testing::ValuesIn(MinCases()));

TEST(VolcanoJobTest, QueueSchedulerTopologyLifecycle) {
  model::VolcanoJob job = VolcanoJob("v", {Task("worker", 2)});
  job.queue = "research";
  job.max_retry = 5;
  job.network_topology = model::NetworkTopologySpec{model::NetworkTopologyMode::kHard, 2};
  model::LifecyclePolicy restart;
  restart.events = {"PodEvicted"};
  restart.action = "RestartJob";
  job.policies = {restart};
  job.tasks[0].policies = {restart};
  job.plugins = {{"env", {}}, {"svc", {}}};

  Result<model::Workload> w = BuildWorkload(job, {});
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->volcano_queue, "research");
  EXPECT_EQ(w->local_queue, "");
  EXPECT_EQ(w->scheduler_name, "volcano");
  ASSERT_TRUE(w->network_topology);
  EXPECT_EQ(w->network_topology->highest_tier_allowed, 2);
  EXPECT_EQ(w->lifecycle.max_restarts, 5);
  EXPECT_TRUE(w->lifecycle.restart_on_failure);
  EXPECT_EQ(w->lifecycle.volcano_policies.size(), 1u);
  EXPECT_EQ(w->pod_sets[0].volcano_policies.size(), 1u);
  EXPECT_EQ(w->rank.volcano_plugins.size(), 2u);

  // The queue always exists: Volcano's default when spec.queue is empty.
  model::VolcanoJob plain = VolcanoJob("p", {Task("t", 1)});
  plain.queue = "";
  EXPECT_EQ(BuildWorkload(plain, {})->volcano_queue, "default");
}

TEST(VolcanoJobTest, UnnamedTasksAndBadMinimums) {
  Result<model::Workload> w = BuildWorkload(VolcanoJob("v", {Task("", 1), Task("", 1)}), {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->pod_sets[0].name, "default0");
  EXPECT_EQ(w->pod_sets[1].name, "default1");

  model::VolcanoJob too_many = VolcanoJob("v", {Task("t", 2)});
  too_many.min_available = 3;
  w = BuildWorkload(too_many, {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "Job default/v: spec.minAvailable: 3 must be from 0 to the total replicas of all "
            "tasks (2)");

  w = BuildWorkload(VolcanoJob("v", {Task("t", 2, 5)}), {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "Job default/v: spec.tasks[0].minAvailable: 5 must be from 0 to replicas (2)");
}

TEST(PodGroupTest, OverridesGangMinimums) {
  model::ManifestSet m;
  model::PodGroup pg;
  pg.meta = testing::Meta("scheduling.volcano.sh/v1beta1", "PodGroup", "pt");
  pg.min_member = 3;
  pg.queue = "pg-queue";
  m.pod_groups.push_back(pg);

  model::KubeflowJob job = testing::Kubeflow(
      "PyTorchJob", "pt", {testing::Replica("Master", 1), testing::Replica("Worker", 4)});
  Result<model::Workload> w = BuildWorkload(job, m);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->min_available, 3);
  EXPECT_EQ(w->pod_sets[0].min_count, 1);
  EXPECT_EQ(w->pod_sets[1].min_count, 2);
  EXPECT_EQ(w->volcano_queue, "pg-queue");

  // minTaskMember sets per-set minimums; a group named by annotation is found too.
  m.pod_groups[0].meta.name = "custom";
  m.pod_groups[0].min_task_member = {{"worker", 1}};
  m.pod_groups[0].min_member = 2;
  job.meta.annotations["scheduling.k8s.io/group-name"] = "custom";
  w = BuildWorkload(job, m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->min_available, 2);
  EXPECT_EQ(w->pod_sets[0].min_count, 1);
  EXPECT_EQ(w->pod_sets[1].min_count, 1);

  // A group in another namespace does not apply.
  job.meta.namespace_ = "other";
  w = BuildWorkload(job, m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->min_available, 5);
}

}  // namespace
}  // namespace muster::workloads
