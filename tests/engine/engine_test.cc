// Engine scenarios on small hand-built clusters, run with the real admission and
// placement layers and the invariant checker on after every cycle.
#include "engine/engine.h"

#include <gtest/gtest.h>

#include "engine/scenario.h"

namespace muster::engine {
namespace {

using testing::AddQueues;
using testing::MakeJob;
using testing::MakeNode;
using testing::ManualClock;
using testing::Number;
using testing::RecordingExecutor;

class EngineTest : public ::testing::Test {
 protected:
  void Build() {
    Number(manifests_);
    EngineOptions options;
    options.check_invariants = true;
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
  const WorkloadRecord& Get(const std::string& key) {
    const WorkloadRecord* r = engine_->Find(key);
    EXPECT_NE(r, nullptr) << key;
    return *r;
  }

  model::ManifestSet manifests_;
  ManualClock clock_;
  RecordingExecutor executor_;
  std::unique_ptr<Engine> engine_;
};

// Two 4-GPU gangs on three 2-GPU nodes: the second waits whole, never 3+3...
// and starts when the first finishes.
TEST_F(EngineTest, GangWaitsWholeAndStartsWhenCapacityFrees) {
  AddQueues(manifests_, 16);
  for (const char* n : {"node-1", "node-2", "node-3"}) manifests_.nodes.push_back(MakeNode(n, 2));
  manifests_.jobs.push_back(MakeJob("a", 4, 1, "lq"));
  manifests_.jobs.push_back(MakeJob("b", 4, 1, "lq"));
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  ASSERT_TRUE(engine_->Submit("ml/b").ok());
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/a").plan.pods.size(), 4u);
  EXPECT_EQ(Get("ml/b").phase, Phase::kPending);
  EXPECT_TRUE(Get("ml/b").plan.pods.empty());
  EXPECT_FALSE(engine_->PendingMessage("ml/b").empty());

  At(100);
  ASSERT_TRUE(engine_->Succeed("ml/a").ok());
  Cycle();
  EXPECT_EQ(Get("ml/a").phase, Phase::kSucceeded);
  EXPECT_EQ(Get("ml/a").finish_time, 100.0);
  EXPECT_EQ(Get("ml/a").plan.pods.size(), 4u) << "a finished gang keeps its last placement";
  EXPECT_EQ(Get("ml/b").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/b").start_time, 100.0);
  EXPECT_EQ(executor_.events,
            (std::vector<std::string>{"start ml/a @0", "done ml/a @100", "start ml/b @100"}));
}

TEST_F(EngineTest, HigherPriorityPreemptsWithinClusterQueue) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("notebook", 1, 8, "lq", "low"));
  manifests_.jobs.push_back(MakeJob("finetune", 1, 4, "lq", "high"));
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/notebook").ok());
  Cycle();
  ASSERT_EQ(Get("ml/notebook").phase, Phase::kRunning);

  At(50);
  ASSERT_TRUE(engine_->Submit("ml/finetune").ok());
  Cycle();
  EXPECT_EQ(Get("ml/finetune").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/finetune").admit_time, 50.0);
  const WorkloadRecord& victim = Get("ml/notebook");
  EXPECT_EQ(victim.phase, Phase::kPending);
  ASSERT_EQ(victim.evictions.size(), 1u);
  EXPECT_EQ(victim.evictions[0].reason, kReasonPreempted);
  EXPECT_EQ(victim.evictions[0].detail, admission::kInClusterQueue);
  EXPECT_EQ(victim.evictions[0].by, "ml/finetune");
  EXPECT_EQ(victim.evictions[0].time, 50.0);
  EXPECT_TRUE(victim.plan.pods.empty());

  At(650);
  ASSERT_TRUE(engine_->Succeed("ml/finetune").ok());
  Cycle();
  EXPECT_EQ(Get("ml/notebook").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/notebook").admit_time, 650.0);
  EXPECT_EQ(Get("ml/notebook").first_admit_time, 0.0);
}

// A control plane's bounded call: the preemption is decided in the first cycle and
// the preemptor admitted in the second, so one cycle per call leaves the engine
// unsettled after the first call and the second call finishes the work.
TEST_F(EngineTest, MaxCyclesPerCallLeavesTheRestToTheNextCall) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("notebook", 1, 8, "lq", "low"));
  manifests_.jobs.push_back(MakeJob("finetune", 1, 4, "lq", "high"));
  Number(manifests_);
  EngineOptions options;
  options.check_invariants = true;
  options.max_cycles_per_call = 1;
  auto engine = Engine::Create(manifests_, clock_, options);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  engine_ = std::move(engine).value();
  engine_->SetExecutor(&executor_);

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/notebook").ok());
  Cycle();
  EXPECT_FALSE(engine_->Settled()) << "the admission changed something: one more cycle is due";
  Cycle();
  EXPECT_TRUE(engine_->Settled());
  ASSERT_EQ(Get("ml/notebook").phase, Phase::kRunning);

  At(50);
  ASSERT_TRUE(engine_->Submit("ml/finetune").ok());
  Cycle();
  EXPECT_FALSE(engine_->Settled());
  EXPECT_EQ(Get("ml/notebook").phase, Phase::kPending) << "preempted in the first cycle";
  EXPECT_EQ(Get("ml/finetune").phase, Phase::kPending);
  for (int i = 0; i < 10 && !engine_->Settled(); ++i) Cycle();
  EXPECT_EQ(Get("ml/finetune").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/finetune").admit_time, 50.0);
}

// Admission's interned pending text reaches the records shared, not copied: two
// workloads short of the same quota hold one text, and what they report and what the
// log says are that text; admitted, a workload has no note.
TEST_F(EngineTest, WorkloadsShortOfTheSameQuotaShareOnePendingText) {
  AddQueues(manifests_, 8);
  for (const char* n : {"node-1", "node-2"}) manifests_.nodes.push_back(MakeNode(n, 8));
  manifests_.jobs.push_back(MakeJob("big", 8, 1, "lq"));
  manifests_.jobs.push_back(MakeJob("b", 2, 1, "lq"));
  manifests_.jobs.push_back(MakeJob("c", 2, 1, "lq"));
  Build();

  At(0);
  for (const char* key : {"ml/big", "ml/b", "ml/c"}) ASSERT_TRUE(engine_->Submit(key).ok());
  Cycle();
  ASSERT_EQ(Get("ml/big").phase, Phase::kRunning);
  const WorkloadRecord::PendingNote& b = Get("ml/b").pending_note;
  const WorkloadRecord::PendingNote& c = Get("ml/c").pending_note;
  ASSERT_TRUE(b.noted);
  ASSERT_NE(b.shared, nullptr) << "copied, not shared";
  EXPECT_EQ(b.shared, c.shared);
  EXPECT_EQ(b.Reason(), b.shared->reason);
  EXPECT_NE(b.Message().find("nvidia.com/gpu"), std::string::npos) << b.Message();
  EXPECT_EQ(engine_->PendingMessage("ml/b"), b.Message());
  EXPECT_EQ(engine_->PendingMessage("ml/c"), b.Message());
  bool logged = false;
  for (const LogEntry& e : engine_->log().entries()) {
    logged = logged || (e.workload == "ml/b" && e.message == b.Message());
  }
  EXPECT_TRUE(logged) << engine_->log().ToString();

  At(10);
  ASSERT_TRUE(engine_->Succeed("ml/big").ok());
  Cycle();
  EXPECT_EQ(Get("ml/b").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/c").phase, Phase::kRunning);
  EXPECT_FALSE(Get("ml/b").pending_note.noted);
  EXPECT_EQ(Get("ml/b").pending_note.shared, nullptr);
}

TEST_F(EngineTest, NodeLossFailsAJobThatDoesNotRestart) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.nodes.push_back(MakeNode("gpu-2", 8));
  manifests_.jobs.push_back(MakeJob("fragile", 1, 8, "lq"));  // backoffLimit 0
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/fragile").ok());
  Cycle();
  ASSERT_EQ(Get("ml/fragile").phase, Phase::kRunning);
  std::string node = engine_->cluster().GetNode(Get("ml/fragile").plan.pods.at(0).node).meta.name;

  At(10);
  ASSERT_TRUE(engine_->NodeLost(node, "node " + node + " failed").ok());
  Cycle();
  const WorkloadRecord& r = Get("ml/fragile");
  EXPECT_EQ(r.phase, Phase::kFailed);
  EXPECT_EQ(r.finish_time, 10.0);
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].reason, kReasonNodeFailure);
  EXPECT_NE(engine_->PendingMessage("ml/fragile").find("failed"), std::string::npos);
}

TEST_F(EngineTest, NodeLossRequeuesARestartableJobOntoAnotherNode) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.nodes.push_back(MakeNode("gpu-2", 8));
  model::BatchJob job = MakeJob("sturdy", 1, 8, "lq");
  job.spec.backoff_limit = 3;
  manifests_.jobs.push_back(job);
  Build();

  At(0);
  ASSERT_TRUE(engine_->Submit("ml/sturdy").ok());
  Cycle();
  ASSERT_EQ(Get("ml/sturdy").phase, Phase::kRunning);
  placement::NodeIndex first = Get("ml/sturdy").plan.pods.at(0).node;
  std::string node = engine_->cluster().GetNode(first).meta.name;

  At(10);
  ASSERT_TRUE(engine_->NodeLost(node, "node failed").ok());
  Cycle();
  const WorkloadRecord& r = Get("ml/sturdy");
  EXPECT_EQ(r.phase, Phase::kRunning);
  EXPECT_EQ(r.start_time, 10.0);
  EXPECT_NE(r.plan.pods.at(0).node, first);
  ASSERT_EQ(r.evictions.size(), 1u);
  EXPECT_EQ(r.evictions[0].reason, kReasonNodeFailure);

  // The node comes back and takes pods again.
  At(20);
  ASSERT_TRUE(engine_->NodeBack(node).ok());
  EXPECT_TRUE(engine_->cluster().NodeReady(first));
}

TEST_F(EngineTest, EventsOnUnknownObjectsAreErrors) {
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  Build();
  EXPECT_EQ(engine_->Submit("ml/nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(engine_->Succeed("ml/nope").code(), StatusCode::kNotFound);
  EXPECT_EQ(engine_->NodeLost("nope", "").code(), StatusCode::kNotFound);
}

TEST_F(EngineTest, DecisionLogTellsTheStory) {
  AddQueues(manifests_, 8);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("a", 1, 4, "lq"));
  Build();
  At(0);
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  Cycle();
  std::vector<std::string> actions;
  for (const auto& e : engine_->log().entries()) actions.push_back(e.action);
  EXPECT_EQ(actions, (std::vector<std::string>{"Submit", "Admit", "Start"}));
}

}  // namespace
}  // namespace muster::engine

namespace muster::engine {
namespace {

// A JobSet's failurePolicy.rules decide for the lifecycle knobs:
// RestartJobSetAndIgnoreMaxRestarts restarts without spending the budget, FailJobSet
// fails although the budget is not spent.
TEST_F(EngineTest, FailureDirectivesOverrideTheRestartBudget) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("node-1", 4));
  model::BatchJob job = MakeJob("a", 1, 1, "lq");
  job.spec.backoff_limit = 1;  // one restart
  manifests_.jobs.push_back(job);
  Build();
  ASSERT_TRUE(engine_->Submit("ml/a").ok());
  Cycle();
  ASSERT_EQ(Get("ml/a").phase, Phase::kRunning);
  for (int i = 0; i < 2; ++i) {
    At(10 * (i + 1));
    ASSERT_TRUE(engine_->FailPods("ml/a", "pod failed", FailureDirective::kRestartUncounted).ok());
    Cycle();
    EXPECT_EQ(Get("ml/a").phase, Phase::kRunning);
  }
  EXPECT_EQ(Get("ml/a").failures, 0);
  EXPECT_EQ(Get("ml/a").uncounted_restarts, 2);
  At(30);
  ASSERT_TRUE(engine_->FailPods("ml/a", "pod failed", FailureDirective::kFail).ok());
  EXPECT_EQ(Get("ml/a").phase, Phase::kFailed);
  EXPECT_NE(Get("ml/a").failure_message.find("its failure policy fails the job"),
            std::string::npos);
}

// The node a preemptor's victim frees is nominated for it: a workload of lower
// priority that would fit in what is free there now is kept off until the
// preemptor is admitted (kube-scheduler's nominatedNodeName), not let in to make
// the preemptor give up and its victim come back.
TEST_F(EngineTest, NominatedNodeIsKeptForThePreemptor) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.jobs.push_back(MakeJob("half", 1, 4, "lq", "low"));
  manifests_.jobs.push_back(MakeJob("whole", 1, 8, "lq", "high"));
  manifests_.jobs.push_back(MakeJob("side", 1, 4, "", "low"));  // no queue: no quota
  Build();
  At(0);
  ASSERT_TRUE(engine_->Submit("ml/half").ok());
  Cycle();
  ASSERT_EQ(Get("ml/half").phase, Phase::kRunning);

  At(10);
  ASSERT_TRUE(engine_->Submit("ml/whole").ok());
  ASSERT_TRUE(engine_->Submit("ml/side").ok());
  Cycle();
  EXPECT_EQ(Get("ml/whole").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/half").phase, Phase::kPending);
  EXPECT_EQ(Get("ml/side").phase, Phase::kPending);
  bool kept = false;
  for (const auto& e : engine_->log().entries()) {
    kept = kept || (e.workload == "ml/side" && e.reason == admission::kReasonNodesNominated &&
                    e.message.find("nominated for ml/whole") != std::string::npos);
  }
  EXPECT_TRUE(kept) << engine_->log().ToString();
}

// When the preemptor is admitted its nomination ends: a workload kept off its node
// (NodesNominated) is tried again at once, and takes what the preemptor left there.
// Before, it waited for the next release or capacity change.
TEST_F(EngineTest, WorkloadKeptOffANominatedNodeTakesWhatThePreemptorLeft) {
  AddQueues(manifests_, 16);
  manifests_.nodes.push_back(MakeNode("gpu-1", 8));
  manifests_.nodes.push_back(MakeNode("gpu-2", 8));
  manifests_.jobs.push_back(MakeJob("big", 1, 6, "lq", "low"));
  manifests_.jobs.push_back(MakeJob("keep", 1, 6, "lq", "high"));
  manifests_.jobs.push_back(MakeJob("side", 1, 3, "", "high"));  // no queue: no quota
  manifests_.jobs.push_back(MakeJob("whole", 1, 4, "lq", "high"));
  Build();
  At(0);
  ASSERT_TRUE(engine_->Submit("ml/big").ok());
  ASSERT_TRUE(engine_->Submit("ml/keep").ok());
  Cycle();
  ASSERT_EQ(Get("ml/big").phase, Phase::kRunning);
  ASSERT_EQ(Get("ml/keep").phase, Phase::kRunning);

  At(10);
  ASSERT_TRUE(engine_->Submit("ml/side").ok());
  ASSERT_TRUE(engine_->Submit("ml/whole").ok());
  Cycle();
  EXPECT_EQ(Get("ml/whole").phase, Phase::kRunning);
  EXPECT_EQ(Get("ml/big").phase, Phase::kPending);
  EXPECT_EQ(Get("ml/side").phase, Phase::kRunning) << engine_->log().ToString();
  EXPECT_EQ(Get("ml/side").admit_time, std::optional<Time>(10));
}

}  // namespace
}  // namespace muster::engine
