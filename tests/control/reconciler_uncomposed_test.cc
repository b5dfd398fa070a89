// A job whose Workload cannot be made from the configuration (here: a PriorityClass
// that does not exist) is not dropped silently: a Warning Event ErrWorkloadCompose
// says why, as Kueue's job reconciler does, once per reason, and the job is taken as
// soon as the configuration has what it lacked; at start-up too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using ::testing::ElementsAre;
using testing::IndexedJob;
using testing::json;
using testing::PriorityClass;

std::vector<std::string> ComposeEvents(Bench& bench) {
  std::vector<std::string> out;
  auto events = bench.objects.List("events", "ml");
  if (!events.ok()) return out;
  for (const json& e : events->items) {
    if (e.value("reason", "") != "ErrWorkloadCompose") continue;
    out.push_back(e.value("type", "") + " " + e["involvedObject"].value("kind", "") + "/" +
                  e["involvedObject"].value("name", "") + ": " + e.value("message", ""));
  }
  return out;
}

class ReconcilerUncomposedTest : public ::testing::Test {
 protected:
  ReconcilerUncomposedTest() : bench_(ReconcilerMode::kServe) {}
  Bench bench_;
};

TEST_F(ReconcilerUncomposedTest, AJobNamingAMissingPriorityClassIsToldThenRunsOnceItExists) {
  bench_.Configure(1, 8, 8);
  bench_.Build();
  bench_.Create("jobs.batch", "ml", IndexedJob("train", 1, 1, "later"));
  bench_.Steps(2);
  EXPECT_TRUE(bench_.runtime.events.empty());
  EXPECT_THAT(ComposeEvents(bench_),
              ElementsAre("Warning Job/train: Job ml/train: "
                          "spec.template.spec.priorityClassName: PriorityClass \"later\" not "
                          "found; define it or remove the reference"));
  // The same reason again (another change of the job) is not a new Event.
  json job = bench_.Job("train");
  job["metadata"]["labels"]["edited"] = "yes";
  bench_.Replace("jobs.batch", "ml", job);
  bench_.Step();
  EXPECT_EQ(ComposeEvents(bench_).size(), 1u);

  bench_.Create("priorityclasses.scheduling.k8s.io", "", PriorityClass("later", 10));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  EXPECT_EQ(bench_.Workload("train")["spec"]["priority"], 10);
}

TEST_F(ReconcilerUncomposedTest, AtStartUpTooAndADeletedJobIsForgotten) {
  bench_.Configure(1, 8, 8);
  bench_.Create("jobs.batch", "ml", IndexedJob("early", 1, 1, "absent"));
  bench_.Create("jobs.batch", "ml", IndexedJob("gone", 1, 1, "absent"));
  bench_.Build();  // a restart: the jobs are in the store already
  bench_.Step();
  EXPECT_EQ(ComposeEvents(bench_).size(), 2u);
  bench_.Delete("jobs.batch", "ml", "gone");
  bench_.Create("priorityclasses.scheduling.k8s.io", "", PriorityClass("absent", 1));
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/early"));
}

// In a cluster only the jobs muster would manage are told: Kueue composes no
// Workload for a Job without a queue name (manageJobsWithoutQueueName off).
TEST(ReconcilerUncomposedClusterTest, OnlyAJobWithAQueueNameIsTold) {
  Bench bench(ReconcilerMode::kCluster);
  bench.Configure(1, 8, 8);
  bench.Build();
  json unqueued = IndexedJob("other", 1, 1, "absent");
  unqueued["metadata"].erase("labels");
  bench.Create("jobs.batch", "ml", unqueued);
  bench.Create("jobs.batch", "ml", IndexedJob("queued", 1, 1, "absent"));
  bench.Steps(2);
  const std::vector<std::string> told = ComposeEvents(bench);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].rfind("Warning Job/queued: ", 0), 0u) << told[0];
}

}  // namespace
}  // namespace muster::control
