// A Job's podFailurePolicy over a gang's failed pods, and the ttl-after-finished
// tracker: pure decisions, no processes, no clock.
#include "server/job_failure_policy.h"

#include <gtest/gtest.h>

#include "server/ttl_after_finished.h"

namespace muster::server {
namespace {

using Policy = control::GangOutcome::Policy;

model::PodFailurePolicyRule ExitRule(std::string action, std::string op,
                                     std::vector<int32_t> values,
                                     std::optional<std::string> container = std::nullopt) {
  model::PodFailurePolicyRule r;
  r.action = std::move(action);
  r.op = std::move(op);
  r.values = std::move(values);
  r.container_name = std::move(container);
  return r;
}

TEST(PodFailurePolicy, FirstMatchingRuleWins) {
  std::vector<model::PodFailurePolicyRule> rules = {
      ExitRule("Ignore", "In", {42}, "sidecar"),
      ExitRule("FailJob", "In", {42}),
      ExitRule("Ignore", "NotIn", {1}),
  };
  EXPECT_EQ(MatchPodFailureRule(rules, {"ns", "p", "main", 42}), 1u);
  EXPECT_EQ(MatchPodFailureRule(rules, {"ns", "p", "sidecar", 42}), 0u);
  EXPECT_EQ(MatchPodFailureRule(rules, {"ns", "p", "main", 7}), 2u);
  EXPECT_EQ(MatchPodFailureRule(rules, {"ns", "p", "main", 1}), std::nullopt);
  // A container that succeeded matches no exit-code rule, NotIn included.
  EXPECT_EQ(MatchPodFailureRule(rules, {"ns", "p", "main", 0}), std::nullopt);
}

TEST(PodFailurePolicy, FailJobMessageAsUpstream) {
  control::GangOutcome o{"ns/j", false, "pod j-0 failed: exit code 42"};
  ApplyPodFailurePolicy({ExitRule("Count", "In", {1}), ExitRule("FailJob", "In", {42})},
                        {{"ns", "j-0", "main", 42}}, o);
  EXPECT_EQ(o.policy, Policy::kFail);
  EXPECT_EQ(o.reason, "PodFailurePolicy");
  EXPECT_EQ(o.message,
            "Container main for pod ns/j-0 failed with exit code 42 matching FailJob rule at "
            "index 1");
}

TEST(PodFailurePolicy, IgnoreOnlyWhenEveryFailureIsIgnored) {
  std::vector<model::PodFailurePolicyRule> rules = {ExitRule("Ignore", "In", {3})};
  control::GangOutcome ignored{"ns/j", false, "m"};
  ApplyPodFailurePolicy(rules, {{"ns", "a", "main", 3}, {"ns", "b", "main", 3}}, ignored);
  EXPECT_EQ(ignored.policy, Policy::kIgnore);
  control::GangOutcome counted{"ns/j", false, "m"};
  ApplyPodFailurePolicy(rules, {{"ns", "a", "main", 3}, {"ns", "b", "main", 4}}, counted);
  EXPECT_EQ(counted.policy, Policy::kCount);
  EXPECT_EQ(counted.message, "m");  // the executor's own message stays
}

TEST(PodFailurePolicy, FailIndexFailsTheWholeGang) {
  control::GangOutcome o{"ns/j", false, "m"};
  ApplyPodFailurePolicy({ExitRule("FailIndex", "In", {5})}, {{"ns", "j-2", "main", 5}}, o);
  EXPECT_EQ(o.policy, Policy::kFail);
  EXPECT_EQ(o.reason, "FailedIndexes");
}

TEST(PodFailurePolicy, NoRulesCount) {
  control::GangOutcome o{"ns/j", false, "m"};
  ApplyPodFailurePolicy({}, {{"ns", "j-0", "main", 42}}, o);
  EXPECT_EQ(o.policy, Policy::kCount);
}

control::Change JobChange(const std::string& name, nlohmann::json status, int ttl = 10,
                          control::ChangeType type = control::ChangeType::kModified) {
  control::Change c;
  c.type = type;
  c.resource = "jobs.batch";
  c.namespace_ = "default";
  c.name = name;
  c.SetObject(nlohmann::json{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", name + "-uid"}}},
      {"spec", {{"ttlSecondsAfterFinished", ttl}}},
      {"status", std::move(status)}});
  return c;
}

nlohmann::json Finished(const std::string& type, const std::string& at) {
  return {{"conditions", {{{"type", type}, {"status", "True"}, {"lastTransitionTime", at}}}}};
}

TEST(TtlTracker, ExpiresTtlAfterTheFinishCondition) {
  TtlTracker t;
  t.Apply(JobChange("running", nlohmann::json::object()));
  EXPECT_EQ(t.size(), 0u);  // not finished: nothing to wait for
  // 2026-11-27T15:00:00Z = 1795791600.
  t.Apply(JobChange("done", Finished("Complete", "2026-11-27T15:00:00Z")));
  t.Apply(JobChange("failed", Finished("Failed", "2026-11-27T15:00:05Z"), 0));
  ASSERT_EQ(t.Next(), 1795791605.0);
  auto due = t.TakeDue(1795791605.0);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].key.name, "failed");
  EXPECT_EQ(due[0].uid, "failed-uid");
  EXPECT_EQ(t.Next(), 1795791610.0);
  EXPECT_TRUE(t.TakeDue(1795791609.0).empty());
  // Deleted meanwhile: forgotten.
  t.Apply(JobChange("done", Finished("Complete", "2026-11-27T15:00:00Z"), 10,
                    control::ChangeType::kDeleted));
  EXPECT_EQ(t.Next(), std::nullopt);
}

}  // namespace
}  // namespace muster::server
