// Kueue's waitForPodsReady through the reconciler (serve mode): the executor says
// whether a gang's pods are ready, the reconciler's steps wake the engine when a
// timeout or backoff falls due, and the Workload object shows what happened.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

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
  EXPECT_EQ(reason, "DeactivatedDueToRequeuingLimitExceeded");
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

// A restarted server (a new reconciler over the same objects) keeps the requeue
// count, the backoff's end and the deactivation its Workload recorded: with
// backoffLimitCount 2 the third timeout deactivates, restarts between them or not.
TEST(ReconcilerPodsReadyTest, RequeueStateSurvivesRestarts) {
  model::KueueConfiguration kc = PodsReadyConfig();
  kc.wait_for_pods_ready.backoff_base_seconds = 10;
  kc.wait_for_pods_ready.backoff_limit_count = 2;
  auto bench = std::make_unique<Bench>(ReconcilerMode::kServe, kc);
  bench->Configure(1, 8, 8);
  bench->Build();
  bench->runtime.unready.insert("ml/stuck");
  bench->Create("jobs.batch", "ml", IndexedJob("stuck", 1, 8));
  bench->Step();
  bench->clock.Advance(2);
  bench->Steps(2);
  ASSERT_EQ(bench->Workload("stuck")["status"]["requeueState"]["count"], 1);

  // A new server, the same objects, the clock where it was.
  auto restart = [&](Time elapsed) {
    auto next = std::make_unique<Bench>(ReconcilerMode::kServe, kc);
    next->objects = bench->objects;
    next->clock.Advance(bench->clock.Now() - next->clock.Now() + elapsed);
    next->runtime.unready.insert("ml/stuck");
    next->Build();
    next->Steps(2);
    bench = std::move(next);
  };
  restart(1);
  const engine::WorkloadRecord* r = bench->reconciler->engine()->Find("ml/stuck");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->requeue_count, 1);
  EXPECT_TRUE(r->requeue_at.has_value());
  EXPECT_TRUE(bench->runtime.events.empty()) << "still in its 10 s backoff";
  json wl = bench->Workload("stuck");
  EXPECT_EQ(wl["status"]["requeueState"]["count"], 1);
  std::string reason;
  EXPECT_EQ(Condition(wl, "Evicted", &reason), "True");
  EXPECT_EQ(reason, "PodsReadyTimeout");

  bench->clock.Advance(9);  // the backoff is over: started again, times out again
  bench->Steps(2);
  bench->clock.Advance(2);
  bench->Steps(2);
  EXPECT_THAT(bench->runtime.events, ElementsAre("start ml/stuck", "evicted ml/stuck"));
  EXPECT_EQ(bench->Workload("stuck")["status"]["requeueState"]["count"], 2);

  restart(20);  // past the 20 s backoff: started at once, third timeout deactivates
  bench->clock.Advance(2);
  bench->Steps(2);
  EXPECT_THAT(bench->runtime.events, ElementsAre("start ml/stuck", "evicted ml/stuck"));
  wl = bench->Workload("stuck");
  EXPECT_EQ(wl["spec"]["active"], false);
  EXPECT_EQ(Condition(wl, "Evicted", &reason), "True");
  EXPECT_EQ(reason, "DeactivatedDueToRequeuingLimitExceeded");
  EXPECT_FALSE(wl["status"].contains("requeueState"));

  restart(100);  // deactivated for good
  EXPECT_TRUE(bench->runtime.events.empty());
  EXPECT_TRUE(bench->reconciler->engine()->Find("ml/stuck")->deactivated);
}

}  // namespace
}  // namespace muster::control
