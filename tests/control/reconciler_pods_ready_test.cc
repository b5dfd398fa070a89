// Kueue's waitForPodsReady through the reconciler (serve mode): the executor says
// whether a gang's pods are ready, the reconciler's steps wake the engine when a
// timeout or backoff falls due, and the Workload object shows what happened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control/reconciler_harness.h"

namespace muster::control {
namespace {

using testing::Bench;
using testing::Condition;
using ::testing::ElementsAre;
using testing::IndexedJob;
using testing::json;

model::KueueConfiguration PodsReadyConfig() {
  model::KueueConfiguration kc;
  kc.wait_for_pods_ready.enable = true;
  kc.wait_for_pods_ready.timeout_seconds = 2;
  kc.wait_for_pods_ready.block_admission = true;
  kc.wait_for_pods_ready.backoff_base_seconds = 1;
  kc.wait_for_pods_ready.backoff_limit_count = 1;
  return kc;
}

// A Job whose pod never gets ready: evicted after 2 s, requeued after a 1 s
// backoff, started again, and deactivated at its second timeout.
TEST(ReconcilerPodsReadyTest, NeverReadyJobIsEvictedRequeuedThenDeactivated) {
  Bench bench(ReconcilerMode::kServe, PodsReadyConfig());
  bench.Configure(1, 8, 8);
  bench.Build();
  bench.runtime.unready.insert("ml/stuck");
  bench.Create("jobs.batch", "ml", IndexedJob("stuck", 1, 8));
  bench.Step();
  std::string reason;
  EXPECT_EQ(Condition(bench.Workload("stuck"), "PodsReady", &reason), "False");
  EXPECT_EQ(reason, "WaitForStart");

  bench.clock.Advance(1);
  bench.Step();
  EXPECT_THAT(bench.runtime.events, ElementsAre("start ml/stuck"));

  bench.clock.Advance(1);  // 2 s since admission
  bench.Steps(2);
  json wl = bench.Workload("stuck");
  EXPECT_EQ(Condition(wl, "Evicted", &reason), "True");
  EXPECT_EQ(reason, "PodsReadyTimeout");
  EXPECT_EQ(Condition(wl, "QuotaReserved"), "False");
  EXPECT_EQ(wl["status"]["requeueState"]["count"], 1);
  EXPECT_TRUE(wl["status"]["requeueState"].contains("requeueAt"));
  EXPECT_EQ(wl["spec"]["active"], true);
  EXPECT_THAT(bench.runtime.events, ElementsAre("start ml/stuck", "evicted ml/stuck"));

  bench.clock.Advance(1);  // the 1 s backoff is over
  bench.Steps(2);
  EXPECT_THAT(bench.runtime.events,
              ElementsAre("start ml/stuck", "evicted ml/stuck", "start ml/stuck"));

  bench.clock.Advance(2);  // second timeout: backoffLimitCount 1 is exhausted
  bench.Steps(2);
  wl = bench.Workload("stuck");
  EXPECT_EQ(wl["spec"]["active"], false);
  EXPECT_EQ(Condition(wl, "Evicted", &reason), "True");
  EXPECT_EQ(reason, "Deactivated");
  EXPECT_FALSE(wl["status"].contains("requeueState"));
  bench.clock.Advance(100);
  bench.Steps(2);
  EXPECT_EQ(bench.runtime.events.size(), 4u) << "a deactivated workload does not start again";
}

// blockAdmission: the second Job waits while the first one's pods are not ready,
// and starts in the step after they are.
TEST(ReconcilerPodsReadyTest, BlockAdmissionWaitsForTheFirstJobsPods) {
  Bench bench(ReconcilerMode::kServe, PodsReadyConfig());
  bench.Configure(2, 8, 16);
  bench.Build();
  bench.runtime.unready.insert("ml/first");
  bench.Create("jobs.batch", "ml", IndexedJob("first", 1, 8));
  bench.Step();
  bench.Create("jobs.batch", "ml", IndexedJob("second", 1, 8));
  bench.Steps(2);
  EXPECT_THAT(bench.runtime.events, ElementsAre("start ml/first"));
  std::string reason;
  EXPECT_EQ(Condition(bench.Workload("second"), "QuotaReserved", &reason), "False");

  bench.runtime.MarkReady("ml/first");
  bench.Steps(3);
  EXPECT_THAT(bench.runtime.events, ElementsAre("start ml/first", "start ml/second"));
}

}  // namespace
}  // namespace muster::control
