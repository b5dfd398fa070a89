// JobSet start order, success policy and failure rules as pure rules over a gang's
// pods (control/gang_policy.h).
#include "control/gang_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace muster::control {
namespace {

using ::testing::HasSubstr;
using Phase = PolicyPodPhase;

model::PodSet Set(const std::string& name, int32_t jobs, int32_t per_job) {
  model::PodSet ps;
  ps.name = name;
  ps.count = jobs * per_job;
  ps.pods_per_job = per_job;
  return ps;
}

// leader: 1 Job of 1 pod; workers: 2 Jobs of 2 pods.
model::Workload JobSetWorkload() {
  model::Workload w;
  w.meta.kind = "JobSet";
  w.pod_sets = {Set("leader", 1, 1), Set("workers", 2, 2)};
  w.gang_policy.child_jobs = true;
  return w;
}

std::vector<PolicyPod> Pods(Phase leader, std::vector<Phase> workers) {
  std::vector<PolicyPod> pods = {{0, 0, leader}};
  for (size_t i = 0; i < workers.size(); ++i) {
    pods.push_back({1, static_cast<int32_t>(i), workers[i]});
  }
  return pods;
}

TEST(GangPolicy, InOrderWaitsForThePreviousSetReady) {
  model::Workload w = JobSetWorkload();
  w.gang_policy.in_order = true;
  w.pod_sets[1].start_after = {{"leader", false}};
  const std::vector<Phase> waiting(4, Phase::kWaiting);
  EXPECT_FALSE(StartBlocker(w, 0, Pods(Phase::kWaiting, waiting)).has_value());
  auto blocker = StartBlocker(w, 1, Pods(Phase::kWaiting, waiting));
  ASSERT_TRUE(blocker.has_value());
  EXPECT_EQ(*blocker, "waiting for replicated job leader to be Ready (startupPolicy InOrder)");
  EXPECT_FALSE(StartBlocker(w, 1, Pods(Phase::kRunning, waiting)).has_value());
  EXPECT_FALSE(StartBlocker(w, 1, Pods(Phase::kSucceeded, waiting)).has_value());
}

TEST(GangPolicy, MpiLauncherWaitsForRunningWorkers) {
  model::Workload w;
  w.meta.kind = "MPIJob";
  w.pod_sets = {Set("launcher", 1, 1), Set("worker", 2, 1)};
  w.pod_sets[0].start_after = {{"worker", false}};
  std::vector<PolicyPod> pods = {
      {0, 0, Phase::kWaiting}, {1, 0, Phase::kRunning}, {1, 1, Phase::kWaiting}};
  auto blocker = StartBlocker(w, 0, pods);
  ASSERT_TRUE(blocker.has_value());
  EXPECT_EQ(*blocker,
            "waiting for the workers to be Ready (launcherCreationPolicy WaitForWorkersReady)");
  EXPECT_FALSE(StartBlocker(w, 1, pods).has_value());
  pods[2].phase = Phase::kRunning;
  EXPECT_FALSE(StartBlocker(w, 0, pods).has_value());
}

TEST(GangPolicy, DependsOnCompleteWaitsForEveryPodToSucceed) {
  model::Workload w = JobSetWorkload();
  w.pod_sets[0].start_after = {{"workers", true}};
  auto blocker = StartBlocker(w, 0,
                              Pods(Phase::kWaiting, {Phase::kSucceeded, Phase::kSucceeded,
                                                     Phase::kRunning, Phase::kSucceeded}));
  ASSERT_TRUE(blocker.has_value());
  EXPECT_THAT(*blocker, HasSubstr("workers to be Complete (dependsOn)"));
  EXPECT_FALSE(StartBlocker(w, 0, Pods(Phase::kWaiting, std::vector<Phase>(4, Phase::kSucceeded)))
                   .has_value());
}

TEST(GangPolicy, SuccessAllCountsEveryChildJob) {
  model::Workload w = JobSetWorkload();
  const Phase S = Phase::kSucceeded, R = Phase::kRunning;
  EXPECT_FALSE(ChildJobSuccessMet(w, Pods(S, {S, S, S, R})));
  EXPECT_TRUE(ChildJobSuccessMet(w, Pods(S, {S, S, S, S})));
  w.gang_policy.success_sets = {"workers"};
  EXPECT_TRUE(ChildJobSuccessMet(w, Pods(R, {S, S, S, S})));
}

TEST(GangPolicy, SuccessAnyNeedsOneWholeChildJobOfATarget) {
  model::Workload w = JobSetWorkload();
  w.gang_policy.success_any = true;
  w.gang_policy.success_sets = {"workers"};
  const Phase S = Phase::kSucceeded, R = Phase::kRunning;
  // One pod of each worker Job: no Job is complete.
  EXPECT_FALSE(ChildJobSuccessMet(w, Pods(S, {S, R, S, R})));
  EXPECT_TRUE(ChildJobSuccessMet(w, Pods(R, {R, R, S, S})));
  // Any over every replicated job: the leader's Job alone.
  w.gang_policy.success_sets.clear();
  EXPECT_TRUE(ChildJobSuccessMet(w, Pods(S, {R, R, R, R})));
}

TEST(GangPolicy, FirstMatchingFailureRuleDecides) {
  model::Workload w = JobSetWorkload();
  w.gang_policy.failure_rules = {
      {"never", "FailJobSet", {"DeadlineExceeded"}, {}, {}},
      {"leader-fatal", "FailJobSet", {kChildJobFailureReason}, {}, {"leader"}},
      {"workers-free", "RestartJobSetAndIgnoreMaxRestarts", {}, {"backoff limit"}, {}},
  };
  FailureRuleMatch m = MatchFailureRule(w, 0, kChildJobFailureReason, kChildJobFailureMessage);
  EXPECT_EQ(m.directive, engine::FailureDirective::kFail);
  EXPECT_EQ(m.why, "failurePolicy rule leader-fatal: FailJobSet");
  m = MatchFailureRule(w, 1, kChildJobFailureReason, kChildJobFailureMessage);
  EXPECT_EQ(m.directive, engine::FailureDirective::kRestartUncounted);
  // No rule matches: RestartJobSet, the lifecycle's maxRestarts decides.
  w.gang_policy.failure_rules[2].on_job_failure_message_patterns = {"^nothing$"};
  m = MatchFailureRule(w, 1, kChildJobFailureReason, kChildJobFailureMessage);
  EXPECT_EQ(m.directive, engine::FailureDirective::kPolicy);
  EXPECT_TRUE(m.why.empty());
}

TEST(GangPolicy, BlockedPodSetsFollowTheStartOrder) {
  model::Workload w = JobSetWorkload();
  EXPECT_FALSE(HasStartOrder(w));
  EXPECT_EQ(BlockedPodSets(w, Pods(Phase::kWaiting, std::vector<Phase>(4, Phase::kWaiting))),
            std::vector<bool>({false, false}));
  w.pod_sets[1].start_after = {{"leader", false}};
  EXPECT_TRUE(HasStartOrder(w));
  EXPECT_EQ(BlockedPodSets(w, Pods(Phase::kWaiting, std::vector<Phase>(4, Phase::kWaiting))),
            std::vector<bool>({false, true}));
  EXPECT_EQ(BlockedPodSets(w, Pods(Phase::kRunning, std::vector<Phase>(4, Phase::kWaiting))),
            std::vector<bool>({false, false}));
}

// Both executors' outcome of a JobSet gang: success first, else the first failed
// pod's failure with the rule it matched.
TEST(GangPolicy, ChildJobOutcomeNamesTheFirstFailedPodAndItsRule) {
  model::Workload w = JobSetWorkload();
  w.gang_policy.failure_rules = {{"workers-fatal", "FailJobSet", {}, {}, {"workers"}}};
  const Phase S = Phase::kSucceeded, R = Phase::kRunning, F = Phase::kFailed;
  EXPECT_FALSE(ChildJobOutcome("ns/js", w, Pods(R, {R, R, R, R})).has_value());
  std::vector<PolicyPod> pods = Pods(R, {R, F, R, F});
  pods[2].failure = "pod js-workers-0-1 failed: exit code 1";
  pods[4].failure = "pod js-workers-1-1 failed: exit code 2";
  auto out = ChildJobOutcome("ns/js", w, pods);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->key, "ns/js");
  EXPECT_FALSE(out->succeeded);
  EXPECT_EQ(out->message,
            "pod js-workers-0-1 failed: exit code 1; failurePolicy rule workers-fatal: FailJobSet");
  EXPECT_EQ(out->directive, engine::FailureDirective::kFail);
  // A met successPolicy is decided before a failure.
  w.gang_policy.success_any = true;
  w.gang_policy.success_sets = {"leader"};
  out = ChildJobOutcome("ns/js", w, Pods(S, {R, F, R, R}));
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->succeeded);
}

}  // namespace
}  // namespace muster::control
