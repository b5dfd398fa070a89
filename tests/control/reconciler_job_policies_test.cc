// Serve as the Job controller for a Job's own failure rules: activeDeadlineSeconds
// (from the stored status.startTime, with the injected clock) and the outcomes the
// executor's podFailurePolicy gives (FailJob, Ignore).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/job_deadlines.h"
#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using testing::IndexedJob;
using testing::json;

class ReconcilerJobPoliciesTest : public ::testing::Test {
 protected:
  ReconcilerJobPoliciesTest() : bench_(ReconcilerMode::kServe) {
    bench_.Configure(2, 4, 8);
    bench_.Build();
  }
  Bench bench_;
};

TEST_F(ReconcilerJobPoliciesTest, AJobPastItsActiveDeadlineFailsAndIsStopped) {
  json job = IndexedJob("train", 1, 4);
  job["spec"]["activeDeadlineSeconds"] = 30;
  job["spec"]["backoffLimit"] = 6;
  bench_.Create("jobs.batch", "ml", job);
  bench_.Step();
  ASSERT_TRUE(bench_.Job("train")["status"].contains("startTime"));
  const Time start = *ParseRfc3339(bench_.Job("train")["status"]["startTime"].get<std::string>());
  bench_.clock.Advance(start + 29 - bench_.clock.Now());
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train"));
  bench_.clock.Advance(1);
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "failed ml/train"));
  std::string reason;
  EXPECT_EQ(Condition(bench_.Job("train"), "Failed", &reason), "True");
  EXPECT_EQ(reason, "DeadlineExceeded");
  EXPECT_EQ(bench_.reconciler->engine()->Find("ml/train")->failure_message,
            "Job was active longer than specified deadline");
  // No restart afterwards.
  bench_.clock.Advance(60);
  bench_.Step();
  EXPECT_EQ(bench_.runtime.events.size(), 2u);
}

TEST_F(ReconcilerJobPoliciesTest, FailJobFailsAtOnceWhateverTheBackoffLimit) {
  json job = IndexedJob("train", 1, 4);
  job["spec"]["backoffLimit"] = 6;
  bench_.Create("jobs.batch", "ml", job);
  bench_.Step();
  GangOutcome o{"ml/train", false,
                "Container train for pod ml/train-0 failed with exit code 42 "
                "matching FailJob rule at index 0"};
  o.policy = GangOutcome::Policy::kFail;
  o.reason = "PodFailurePolicy";
  bench_.runtime.Report(o);
  bench_.Step();
  EXPECT_THAT(bench_.runtime.events, ElementsAre("start ml/train", "failed ml/train"));
  std::string reason;
  EXPECT_EQ(Condition(bench_.Job("train"), "Failed", &reason), "True");
  EXPECT_EQ(reason, "PodFailurePolicy");
}

TEST_F(ReconcilerJobPoliciesTest, IgnoredFailuresRestartWithoutCounting) {
  json job = IndexedJob("train", 1, 4);
  job["spec"]["backoffLimit"] = 0;  // a counted failure would fail it
  bench_.Create("jobs.batch", "ml", job);
  bench_.Step();
  for (int i = 0; i < 3; ++i) {
    GangOutcome o{"ml/train", false, "ignored"};
    o.policy = GangOutcome::Policy::kIgnore;
    bench_.runtime.Report(o);
    bench_.Step();
  }
  const engine::WorkloadRecord* r = bench_.reconciler->engine()->Find("ml/train");
  EXPECT_EQ(r->phase, engine::Phase::kRunning);
  EXPECT_EQ(r->failures, 0);
  EXPECT_EQ(bench_.runtime.events.size(), 7u);  // start, then 3 x (evicted, start)
  bench_.runtime.Finish("ml/train", false);     // counted: backoffLimit 0
  bench_.Step();
  std::string reason;
  EXPECT_EQ(Condition(bench_.Job("train"), "Failed", &reason), "True");
  EXPECT_EQ(reason, "BackoffLimitExceeded");
}

TEST(JobDeadlines, ReadFromTheStoredJob) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"spec", {{"activeDeadlineSeconds", 5}, {"ttlSecondsAfterFinished", 3}}},
              {"status", json::object()}};
  EXPECT_EQ(ActiveDeadline(job), std::nullopt);  // not started (or suspended)
  job["status"]["startTime"] = "2026-11-27T15:00:00Z";
  EXPECT_EQ(ActiveDeadline(job), 1795791605.0);
  EXPECT_EQ(TtlExpiry(job), std::nullopt);  // not finished
  job["status"]["conditions"] = json::array(
      {{{"type", "Failed"}, {"status", "True"}, {"lastTransitionTime", "2026-11-27T15:00:07.5Z"}}});
  EXPECT_EQ(TtlExpiry(job), 1795791610.5);
  EXPECT_EQ(ParseRfc3339("2026-11-27 15:00:00"), std::nullopt);
}

}  // namespace
}  // namespace muster::control
