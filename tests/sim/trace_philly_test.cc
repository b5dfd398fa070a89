#include "sim/trace_philly.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace muster::sim {
namespace {

TEST(PhillyVcTest, ParsesVcList) {
  std::istringstream in("vc,node num\nteam-a,4\nteam-b,2\n");
  auto vcs = ParsePhillyVcs(in, "vc.csv");
  ASSERT_TRUE(vcs.ok()) << vcs.status().ToString();
  ASSERT_EQ(vcs->size(), 2u);
  EXPECT_EQ((*vcs)[0].name, "team-a");
  EXPECT_EQ((*vcs)[0].nodes, 4);

  std::istringstream dup("vc,node num\na,1\na,2\n");
  auto bad = ParsePhillyVcs(dup, "vc.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("vc.csv:3"), std::string::npos);
}

TEST(PhillyJobsTest, SortsBySubmitAndRebasesOnFirstSubmit) {
  std::istringstream in(
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-09 07:01:55,66.0,1,66.0,team-a\n"
      "2017-10-09 06:13:03,2951.0,16,2951.0,team-b\n"
      "2017-10-09 07:01:55,10.0,2,20.0,team-a\n"
      "\n");
  auto jobs = ParsePhillyJobs(in, "jobs.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->jobs.size(), 3u);
  EXPECT_EQ(jobs->vc_names, (std::vector<std::string>{"team-a", "team-b"}));
  // 06:13:03 is first (submit 0); the two 07:01:55 jobs keep file order.
  EXPECT_EQ(jobs->jobs[0].row, 2);
  EXPECT_DOUBLE_EQ(jobs->jobs[0].submit, 0);
  EXPECT_EQ(jobs->jobs[1].row, 1);
  EXPECT_DOUBLE_EQ(jobs->jobs[1].submit, 48 * 60 + 52);
  EXPECT_EQ(jobs->jobs[2].row, 3);
  EXPECT_EQ(jobs->jobs[2].gpus, 2);
}

TEST(PhillyJobsTest, RejectsBadTimestampWithLine) {
  std::istringstream in("timestamp,duration,num_gpus,gpu_time,cluster\n2017/10/09,1,1,1,a\n");
  auto jobs = ParsePhillyJobs(in, "jobs.csv");
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.status().message().find("jobs.csv:2: column timestamp"), std::string::npos)
      << jobs.status().message();
}

TEST(PhillyGangTest, SplitsLargeJobsIntoEightGpuPods) {
  PhillyJobRecord job;
  job.row = 7;
  job.submit = 30;
  job.duration = 600;

  job.gpus = 4;
  model::Workload small = PhillyJobToWorkload(job, "team-a");
  EXPECT_EQ(small.key, "philly/job-000007");
  EXPECT_EQ(small.local_queue, "team-a");
  EXPECT_EQ(small.meta.labels.at("kueue.x-k8s.io/queue-name"), "team-a");
  ASSERT_EQ(small.pod_sets.size(), 1u);
  EXPECT_EQ(small.pod_sets[0].count, 1);
  EXPECT_EQ(small.pod_sets[0].requests.Get(kNvidiaGpu), 4);
  EXPECT_DOUBLE_EQ(small.sim.submit_at, 30);
  EXPECT_DOUBLE_EQ(*small.sim.duration, 600);

  job.gpus = 32;  // 4 pods of 8
  model::Workload even = PhillyJobToWorkload(job, "team-a");
  ASSERT_EQ(even.pod_sets.size(), 1u);
  EXPECT_EQ(even.pod_sets[0].count, 4);
  EXPECT_EQ(even.pod_sets[0].requests.Get(kNvidiaGpu), 8);
  EXPECT_EQ(even.min_available, 4);

  job.gpus = 12;  // 8 + 4: the remainder gets its own pod set
  model::Workload odd = PhillyJobToWorkload(job, "team-a");
  ASSERT_EQ(odd.pod_sets.size(), 2u);
  EXPECT_EQ(odd.pod_sets[0].name, "main");
  EXPECT_EQ(odd.pod_sets[0].count, 1);
  EXPECT_EQ(odd.pod_sets[0].requests.Get(kNvidiaGpu), 8);
  EXPECT_EQ(odd.pod_sets[1].name, "tail");
  EXPECT_EQ(odd.pod_sets[1].count, 1);
  EXPECT_EQ(odd.pod_sets[1].requests.Get(kNvidiaGpu), 4);
  EXPECT_EQ(odd.min_available, 2);
}

TEST(PhillyClusterTest, OneQueuePerVcInOneCohort) {
  TraceCluster c = BuildPhillyCluster({{"a", 3}, {"b", 2}}, {"zz"});
  ASSERT_EQ(c.queues.cluster_queues.size(), 3u);
  ASSERT_EQ(c.queues.local_queues.size(), 3u);
  ASSERT_EQ(c.queues.resource_flavors.size(), 1u);
  const model::ClusterQueue& a = c.queues.cluster_queues[0];
  EXPECT_EQ(a.meta.name, "vc-a");
  EXPECT_EQ(a.cohort, "philly");
  ASSERT_TRUE(a.namespace_selector.has_value());
  const auto& quota = a.resource_groups.at(0).flavors.at(0).resources.at(0);
  EXPECT_EQ(quota.name, "nvidia.com/gpu");
  EXPECT_EQ(quota.nominal_quota.Value(), 24);
  EXPECT_FALSE(quota.borrowing_limit.has_value());
  // A VC missing from the VC list runs on borrowed capacity only.
  EXPECT_EQ(
      c.queues.cluster_queues[2].resource_groups[0].flavors[0].resources[0].nominal_quota.Value(),
      0);
  EXPECT_EQ(c.queues.local_queues[0].meta.namespace_, "philly");
  EXPECT_EQ(c.queues.local_queues[0].cluster_queue, "vc-a");
  // (3 + 2) * 8 GPUs -> 5 nodes of 8.
  ASSERT_EQ(c.nodes.size(), 5u);
  EXPECT_EQ(c.nodes[0].meta.name, "philly-node-0000");
  EXPECT_EQ(c.nodes[0].allocatable.Get(kNvidiaGpu), 8);
}

TEST(PhillyTraceTest, OpenTraceDispatchesAndRejectsUnknownFormat) {
  auto bad = OpenTrace("alibaba:/tmp");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto no_colon = OpenTrace("philly");
  ASSERT_FALSE(no_colon.ok());
  auto missing = OpenTrace("philly:/nonexistent/philly_jobs.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(PhillyTraceTest, ReadsPublishedTrace) {
  const std::string file = MUSTER_SHARED_DIR "/traces/philly/philly_jobs.csv";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no shared traces";
  auto reader = OpenTrace("philly:" + file);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const TraceCluster& c = (*reader)->cluster();
  // 11 listed VCs + 4 seen only in jobs (23dbec, 51b7ef, 795a4c, 925e2b).
  EXPECT_EQ(c.queues.cluster_queues.size(), 15u);
  EXPECT_EQ(c.nodes.size(), 352u);  // sum of "node num"
  EXPECT_EQ((*reader)->size(), 82247);
  int64_t count = 0, gangs = 0, gpus = 0;
  double last = -1;
  while (auto w = (*reader)->Next()) {
    ++count;
    EXPECT_GE(w->sim.submit_at, last);
    last = w->sim.submit_at;
    if (w->TotalCount() > 1) ++gangs;
    for (const auto& ps : w->pod_sets) gpus += ps.requests.Get(kNvidiaGpu) * ps.count;
  }
  EXPECT_EQ(count, 82247);
  EXPECT_EQ(gangs, 7 + 199 + 7 + 67 + 6 + 3);  // every job above 8 GPUs
  EXPECT_GT(gpus, 82247);
}

}  // namespace
}  // namespace muster::sim
