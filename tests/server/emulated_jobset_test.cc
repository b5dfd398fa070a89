// JobSet policies in the emulated executor, driven directly with an injected clock
// (no controller, no sleeps): startupPolicy InOrder and dependsOn hold replicated
// jobs Pending (WaitingForReplicatedJob) until their turn, a pod set's own
// sim.muster.dev/duration and sim.muster.dev/fail-after model its run, and the
// shared successPolicy and failurePolicy rules (control/gang_policy.h) decide the
// gang's outcome.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "server/emulated_executor.h"
#include "server/object_store.h"
#include "workloads/workloads.h"

namespace muster::server {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

model::PodSet Set(const std::string& name, int32_t pods) {
  model::PodSet ps;
  ps.name = name;
  ps.count = pods;
  ps.min_count = pods;
  ps.pods_per_job = 1;  // one child Job per pod
  return ps;
}

class EmulatedJobSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-emujs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto s = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    executor_ = std::make_unique<EmulatedExecutor>(*store_);
    record_.workload.meta.kind = "JobSet";
    record_.workload.meta.name = "js";
    record_.workload.meta.namespace_ = "default";
    record_.workload.key = "default/js";
    record_.workload.gang_policy.child_jobs = true;
  }
  void TearDown() override {
    executor_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Adds pod set `ps` with its placement (node indices do not matter here).
  void AddSet(model::PodSet ps) {
    const auto s = static_cast<int32_t>(record_.workload.pod_sets.size());
    for (int32_t i = 0; i < ps.count; ++i) {
      placement::PodPlacement p;
      p.pod_set = s;
      p.index = i;
      record_.plan.pods.push_back(p);
    }
    record_.workload.pod_sets.push_back(std::move(ps));
  }

  json Pod(int32_t pod_set, int32_t index) const {
    auto pod = store_->Get(
        {"pods", "default", workloads::DefaultHostname(record_.workload, pod_set, index)});
    EXPECT_TRUE(pod.ok()) << pod.status().ToString();
    return pod.ok() ? *pod : json::object();
  }
  std::string Phase(int32_t pod_set, int32_t index) const {
    return Pod(pod_set, index)["status"].value("phase", "");
  }
  // The waiting reason and message of the pod's container.
  std::pair<std::string, std::string> Waiting(int32_t pod_set, int32_t index) const {
    json status = Pod(pod_set, index)["status"];
    json waiting = status["containerStatuses"][0]["state"].value("waiting", json::object());
    return {waiting.value("reason", ""), waiting.value("message", "")};
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<EmulatedExecutor> executor_;
  engine::WorkloadRecord record_;
};

TEST_F(EmulatedJobSetTest, InOrderHoldsTheNextReplicatedJobPendingForOnePoll) {
  record_.workload.gang_policy.in_order = true;
  AddSet(Set("leader", 1));
  model::PodSet workers = Set("workers", 2);
  workers.start_after = {{"leader", false}};
  AddSet(workers);

  executor_->Started(record_, 0);
  EXPECT_TRUE(executor_->Poll(0).empty());
  EXPECT_EQ(Phase(0, 0), "Running");
  EXPECT_EQ(Phase(1, 0), "Pending");
  EXPECT_EQ(Waiting(1, 1),
            std::make_pair(std::string("WaitingForReplicatedJob"),
                           std::string("waiting for replicated job leader to be Ready "
                                       "(startupPolicy InOrder)")));
  EXPECT_EQ(executor_->Counts("default/js").waiting, 2);
  EXPECT_FALSE(executor_->PodsReady("default/js"));

  // The leader is Ready: the workers start at the next Poll, from then.
  EXPECT_TRUE(executor_->Poll(1).empty());
  EXPECT_EQ(Phase(1, 0), "Running");
  EXPECT_EQ(Phase(1, 1), "Running");
  EXPECT_EQ(Pod(1, 0)["status"].value("startTime", ""), "1970-01-01T00:00:01Z");
  EXPECT_EQ(Pod(0, 0)["status"].value("startTime", ""), "1970-01-01T00:00:00Z");
  EXPECT_TRUE(executor_->PodsReady("default/js"));
}

TEST_F(EmulatedJobSetTest, DependsOnCompleteWaitsForTheSetsOwnDuration) {
  record_.workload.sim.duration = 100;
  model::PodSet init = Set("initializer", 1);
  init.tmpl.annotations["sim.muster.dev/duration"] = "5s";
  AddSet(init);
  model::PodSet trainer = Set("trainer", 2);
  trainer.start_after = {{"initializer", true}};
  AddSet(trainer);

  executor_->Started(record_, 0);
  EXPECT_TRUE(executor_->Poll(0).empty());
  EXPECT_TRUE(executor_->Poll(4).empty());
  EXPECT_EQ(Phase(1, 0), "Pending");
  EXPECT_THAT(Waiting(1, 0).second, HasSubstr("initializer to be Complete (dependsOn)"));

  // The initializer ends after its own 5 s; the trainer starts then and runs the
  // job's 100 s.
  EXPECT_TRUE(executor_->Poll(5).empty());
  EXPECT_EQ(Phase(0, 0), "Succeeded");
  EXPECT_EQ(Phase(1, 1), "Running");
  EXPECT_EQ(Pod(1, 1)["status"].value("startTime", ""), "1970-01-01T00:00:05Z");
  EXPECT_TRUE(executor_->Poll(104).empty());
  auto outcomes = executor_->Poll(105);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].succeeded);
  EXPECT_EQ(executor_->Counts("default/js").succeeded, 3);
}

TEST_F(EmulatedJobSetTest, SuccessPolicyAnyEndsTheJobSetAndStopsTheOthers) {
  record_.workload.gang_policy.success_any = true;
  record_.workload.gang_policy.success_sets = {"leader"};
  model::PodSet leader = Set("leader", 1);
  leader.tmpl.annotations["sim.muster.dev/duration"] = "10";
  AddSet(leader);
  AddSet(Set("workers", 2));  // no duration: they run until stopped

  executor_->Started(record_, 0);
  EXPECT_TRUE(executor_->Poll(0).empty());
  EXPECT_TRUE(executor_->Poll(9).empty());
  auto outcomes = executor_->Poll(10);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].key, "default/js");
  EXPECT_TRUE(outcomes[0].succeeded);
  EXPECT_TRUE(executor_->Poll(11).empty());  // reported once

  executor_->Stopped(record_, 11, engine::StopCause::kSucceeded);
  EXPECT_EQ(Phase(0, 0), "Succeeded");
  EXPECT_EQ(Phase(1, 0), "Failed");  // upstream deletes the still-active Jobs
  EXPECT_EQ(executor_->RunningGangs(), 0u);
}

TEST_F(EmulatedJobSetTest, FailAfterFailsThePodAndTheMatchingRuleDecides) {
  record_.workload.sim.duration = 100;
  model::JobSetFailureRule rule;
  rule.name = "workers-fail";
  rule.action = "FailJobSet";
  rule.target_replicated_jobs = {"workers"};
  record_.workload.gang_policy.failure_rules = {rule};
  AddSet(Set("leader", 1));
  model::PodSet workers = Set("workers", 2);
  workers.tmpl.annotations["sim.muster.dev/fail-after"] = "30s";
  AddSet(workers);

  executor_->Started(record_, 0);
  EXPECT_TRUE(executor_->Poll(29).empty());
  auto outcomes = executor_->Poll(30);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].succeeded);
  EXPECT_EQ(outcomes[0].directive, engine::FailureDirective::kFail);
  EXPECT_THAT(outcomes[0].message, HasSubstr("failed after its sim.muster.dev/fail-after"));
  EXPECT_THAT(outcomes[0].message, HasSubstr("failurePolicy rule workers-fail: FailJobSet"));
  EXPECT_EQ(Phase(1, 0), "Failed");
  EXPECT_EQ(Phase(0, 0), "Running");
  EXPECT_EQ(Pod(1, 0)["status"]["containerStatuses"][0]["state"]["terminated"].value("exitCode", 0),
            1);
}

TEST_F(EmulatedJobSetTest, AFailureNoRuleMatchesCountsTowardMaxRestarts) {
  model::JobSetFailureRule rule;
  rule.action = "FailJobSet";
  rule.target_replicated_jobs = {"leader"};
  record_.workload.gang_policy.failure_rules = {rule};
  AddSet(Set("leader", 1));
  model::PodSet workers = Set("workers", 1);
  // Fails only when that comes before the set's duration.
  workers.tmpl.annotations["sim.muster.dev/duration"] = "20";
  workers.tmpl.annotations["sim.muster.dev/fail-after"] = "5";
  AddSet(workers);

  executor_->Started(record_, 0);
  auto outcomes = executor_->Poll(5);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].succeeded);
  EXPECT_EQ(outcomes[0].directive, engine::FailureDirective::kPolicy);
}

TEST_F(EmulatedJobSetTest, AnAdoptedJobSetKeepsItsHeldPodsPending) {
  record_.workload.sim.duration = 50;
  model::PodSet init = Set("initializer", 1);
  init.tmpl.annotations["sim.muster.dev/duration"] = "10";
  AddSet(init);
  model::PodSet trainer = Set("trainer", 1);
  trainer.start_after = {{"initializer", true}};
  AddSet(trainer);
  executor_->Started(record_, 0);
  executor_->Poll(0);

  // A new server adopts the gang at 7: the initializer keeps its start (ends at 10),
  // the trainer waits for it again.
  executor_ = std::make_unique<EmulatedExecutor>(*store_);
  executor_->Adopt(record_, 7);
  EXPECT_TRUE(executor_->Poll(7).empty());
  EXPECT_EQ(Phase(0, 0), "Running");
  EXPECT_EQ(Phase(1, 0), "Pending");
  EXPECT_EQ(Waiting(1, 0).first, "WaitingForReplicatedJob");
  EXPECT_TRUE(executor_->Poll(9).empty());
  EXPECT_EQ(Phase(1, 0), "Pending");
  EXPECT_TRUE(executor_->Poll(10).empty());
  EXPECT_EQ(Phase(0, 0), "Succeeded");
  EXPECT_EQ(Phase(1, 0), "Running");
  auto outcomes = executor_->Poll(60);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].succeeded);
}

TEST_F(EmulatedJobSetTest, AJobPodThatFailsFailsTheGang) {
  record_.workload.meta.kind = "Job";
  record_.workload.gang_policy = {};
  model::PodSet main = Set("main", 2);
  main.pods_per_job = 0;
  main.tmpl.annotations["sim.muster.dev/fail-after"] = "3";
  AddSet(main);
  executor_->Started(record_, 0);
  EXPECT_TRUE(executor_->Poll(2).empty());
  auto outcomes = executor_->Poll(3);
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_FALSE(outcomes[0].succeeded);
  EXPECT_EQ(executor_->Counts("default/js").failed, 2);
}

}  // namespace
}  // namespace muster::server
