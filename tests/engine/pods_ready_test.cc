// Kueue's waitForPodsReady in the engine (engine/pods_ready.cc): readiness is
// reported (as serve and kube do), time comes from a manual clock.
#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/scenario.h"

namespace muster::engine {
namespace {

using testing::AddQueues;
using testing::MakeJob;
using testing::MakeNode;
using testing::ManualClock;
using testing::Number;
using testing::RecordingExecutor;

class PodsReadyTest : public ::testing::Test {
 protected:
  // Kueue's Configuration: waitForPodsReady with a 10 s timeout, base backoff 5 s.
  void Configure(bool block_admission, std::optional<int32_t> limit = std::nullopt) {
    model::KueueConfiguration kc;
    kc.wait_for_pods_ready.enable = true;
    kc.wait_for_pods_ready.timeout_seconds = 10;
    kc.wait_for_pods_ready.block_admission = block_admission;
    kc.wait_for_pods_ready.backoff_base_seconds = 5;
    kc.wait_for_pods_ready.backoff_max_seconds = 15;
    kc.wait_for_pods_ready.backoff_limit_count = limit;
    manifests_.kueue_config = kc;
  }
  void Build(bool reported = true) {
    Number(manifests_);
    EngineOptions options;
    options.check_invariants = true;
    options.pods_ready_reported = reported;
    auto engine = Engine::Create(manifests_, clock_, options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    engine_->SetExecutor(&executor_);
  }
  void At(Time t) { clock_.Set(t); }
  void Cycle() {
    Status st = engine_->RunCycle();
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << engine_->log().ToString();
  }
  const WorkloadRecord& Get(const std::string& key) { return *engine_->Find(key); }

  model::ManifestSet manifests_;
  ManualClock clock_;
  RecordingExecutor executor_;
  std::unique_ptr<Engine> engine_;
};

// Never ready: evicted at admission + 10 s, out of line for 5, 10, then 15 s
// (5*2^(n-1) capped at 15), each time back in line and admitted again.
TEST_F(PodsReadyTest, TimeoutEvictsAndRequeuesWithBackoff) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 8, "lq"));
  Configure(/*block_admission=*/false);
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  Cycle();
  ASSERT_EQ(Get("ml/a").phase, Phase::kRunning);
  EXPECT_EQ(engine_->NextPodsReadyDeadline(), 10.0);
  At(9.5);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning) << "not timed out before 10 s";

  At(10);
  Cycle();
  const WorkloadRecord& a = Get("ml/a");
  EXPECT_EQ(a.phase, Phase::kPending);
  ASSERT_EQ(a.evictions.size(), 1u);
  EXPECT_EQ(a.evictions[0].reason, kReasonPodsReadyTimeout);
  EXPECT_EQ(a.evictions[0].detail, "Exceeded the PodsReady timeout ml/a");
  EXPECT_EQ(a.requeue_count, 1);
  EXPECT_EQ(a.requeue_at, 15.0);
  EXPECT_NE(engine_->PendingMessage("ml/a").find("backoff"), std::string::npos);
  EXPECT_EQ(engine_->NextPodsReadyDeadline(), 15.0);
  EXPECT_TRUE(engine_->admitter().QueueOf("ml/a").cluster_queue.empty())
      << "out of line (and its quota released) during the backoff";

  At(14);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kPending);
  At(15);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning) << "requeued and admitted after the backoff";
  EXPECT_FALSE(Get("ml/a").requeue_at.has_value());

  // Second timeout at 25: backoff 10 s; third at 45: 20 s capped to 15 s.
  At(25);
  Cycle();
  EXPECT_EQ(Get("ml/a").requeue_count, 2);
  EXPECT_EQ(Get("ml/a").requeue_at, 35.0);
  At(35);
  Cycle();
  At(45);
  Cycle();
  EXPECT_EQ(Get("ml/a").requeue_count, 3);
  EXPECT_EQ(Get("ml/a").requeue_at, 60.0);
  EXPECT_FALSE(Get("ml/a").deactivated) << "no backoffLimitCount: requeued for ever";
  EXPECT_EQ(executor_.events,
            (std::vector<std::string>{"start ml/a @0", "evicted ml/a @10", "start ml/a @15",
                                      "evicted ml/a @25", "start ml/a @35", "evicted ml/a @45"}));
}

// Ready in time: no eviction; losing readiness later is bounded only by
// recoveryTimeout.
TEST_F(PodsReadyTest, ReadyWorkloadStaysAndRecoveryTimeoutApplies) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 8, "lq"));
  Configure(false);
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  Cycle();
  At(5);
  ASSERT_TRUE(engine_->SetPodsReady("ml/a", true).ok());
  EXPECT_FALSE(engine_->NextPodsReadyDeadline().has_value());
  At(100);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning);
  ASSERT_TRUE(engine_->SetPodsReady("ml/a", false).ok());
  At(1000);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning) << "no recoveryTimeout: no limit after ready";
  EXPECT_TRUE(Get("ml/a").evictions.empty());
}

TEST_F(PodsReadyTest, RecoveryTimeoutEvictsAfterReadinessIsLost) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 8, "lq"));
  Configure(false);
  manifests_.kueue_config->wait_for_pods_ready.recovery_timeout_seconds = 3;
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  Cycle();
  ASSERT_TRUE(engine_->SetPodsReady("ml/a", true).ok());
  At(50);
  ASSERT_TRUE(engine_->SetPodsReady("ml/a", false).ok());
  EXPECT_EQ(engine_->NextPodsReadyDeadline(), 53.0);
  At(53);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kPending);
  EXPECT_EQ(Get("ml/a").evictions.back().reason, kReasonPodsReadyTimeout);
}

// backoffLimitCount 1: the first timeout requeues, the second deactivates.
TEST_F(PodsReadyTest, DeactivatedAfterBackoffLimitCount) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 8, "lq"));
  manifests_.jobs.push_back(MakeJob("b", 1, 8, "lq"));
  Configure(false, /*limit=*/1);
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  Cycle();
  At(1);
  ASSERT_TRUE(engine_->Submit("ml/b").ok());
  Cycle();
  EXPECT_EQ(Get("ml/b").phase, Phase::kPending);
  At(10);
  Cycle();  // a times out; b takes the GPUs
  EXPECT_EQ(Get("ml/a").requeue_count, 1);
  EXPECT_EQ(Get("ml/b").phase, Phase::kRunning);
  ASSERT_TRUE(engine_->SetPodsReady("ml/b", true).ok());
  At(20);
  ASSERT_TRUE(engine_->Succeed("ml/b").ok());
  Cycle();  // a's backoff ended at 15; it waited for b
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/a").admit_time, 20.0);

  At(30);
  Cycle();
  const WorkloadRecord& a = Get("ml/a");
  EXPECT_EQ(a.phase, Phase::kPending);
  EXPECT_TRUE(a.deactivated);
  EXPECT_EQ(a.requeue_count, 0) << "deactivation clears requeueState";
  EXPECT_EQ(a.evictions.back().reason, kReasonDeactivatedRequeuingLimit);
  EXPECT_EQ(a.evictions.back().detail,
            "The workload is deactivated due to exceeding the maximum number of re-queuing "
            "retries");
  EXPECT_FALSE(engine_->NextPodsReadyDeadline().has_value());
  At(10000);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kPending) << "a deactivated workload is never admitted";
}

// blockAdmission: b fits beside a but waits until a's pods are ready.
TEST_F(PodsReadyTest, BlockAdmissionHoldsTheNextUntilTheFirstIsReady) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.nodes.push_back(MakeNode("gpu-2", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 8, "lq"));
  manifests_.jobs.push_back(MakeJob("b", 1, 8, "lq"));
  Configure(/*block_admission=*/true);
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  ASSERT_TRUE(engine_->Submit("ml/b").ok());
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/b").phase, Phase::kPending) << "admitted one at a time";
  EXPECT_EQ(engine_->PendingMessage("ml/b"),
            "waiting for all admitted workloads to be in PodsReady condition");
  At(3);
  Cycle();
  EXPECT_EQ(Get("ml/b").phase, Phase::kPending);

  At(4);
  ASSERT_TRUE(engine_->SetPodsReady("ml/a", true).ok());
  Cycle();
  EXPECT_EQ(Get("ml/b").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/b").admit_time, 4.0);
}

// blockAdmission and a first workload that never gets ready: the timeout frees
// the line.
TEST_F(PodsReadyTest, BlockAdmissionEndsWhenTheBlockerTimesOut) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.nodes.push_back(MakeNode("gpu-2", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 8, "lq"));
  manifests_.jobs.push_back(MakeJob("b", 1, 8, "lq"));
  Configure(true);
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  ASSERT_TRUE(engine_->Submit("ml/b").ok());
  Cycle();
  At(10);
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kPending);
  EXPECT_EQ(Get("ml/b").phase, Phase::kRunning);
}

// requeuingStrategy.timestamp: after its backoff, the evicted a competes with c
// (created at 5). Ordered by its eviction (10) a goes after c; by its creation
// (0) before.
TEST_F(PodsReadyTest, RequeuingTimestampOrdersTheRequeued) {
  for (const char* strategy : {"Eviction", "Creation"}) {
    SCOPED_TRACE(strategy);
    manifests_ = model::ManifestSet{};
    AddQueues(manifests_, 8);
    manifests_.nodes.push_back(MakeNode("gpu-1", 8));
    for (const char* name : {"a", "b", "c"}) manifests_.jobs.push_back(MakeJob(name, 1, 8, "lq"));
    Configure(false);
    manifests_.kueue_config->wait_for_pods_ready.requeuing_timestamp = strategy;
    Build();

    At(0);
    ASSERT_TRUE(engine_->Submit("ml/a").ok());
    Cycle();
    At(1);
    ASSERT_TRUE(engine_->Submit("ml/b").ok());
    Cycle();
    At(5);
    ASSERT_TRUE(engine_->Submit("ml/c").ok());
    Cycle();
    At(10);
    Cycle();  // a times out (back in line at 15); b, created first, runs
    ASSERT_EQ(Get("ml/b").phase, Phase::kRunning);
    ASSERT_TRUE(engine_->SetPodsReady("ml/b", true).ok());
    At(15);
    Cycle();
    At(20);
    ASSERT_TRUE(engine_->Succeed("ml/b").ok());
    Cycle();
    const bool by_eviction = std::string(strategy) == "Eviction";
    EXPECT_EQ(Get("ml/a").phase, by_eviction ? Phase::kPending : Phase::kRunning);
    EXPECT_EQ(Get("ml/c").phase, by_eviction ? Phase::kRunning : Phase::kPending);
  }
}

}  // namespace
}  // namespace muster::engine
