// JobSet policies (jobset.x-k8s.io/v1alpha2): dependsOn and failurePolicy.rules are
// decoded with upstream's webhook checks; what muster does not act on is warned.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;
using ::testing::Not;

std::string All(const DecodeResult& r) {
  std::string all;
  for (const auto& l : Lines(r)) all += l + "\n";
  return all;
}

constexpr char kPodSpec[] = "{spec: {template: {spec: {containers: [{name: c}]}}}}";

TEST(DecodeJobSet, DependsOnAndFailureRules) {
  auto r = Decode(std::string(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - name: fatal
      action: FailJobSet
      onJobFailureReasons: [BackoffLimitExceeded]
      targetReplicatedJobs: [driver]
    - action: RestartJobSetAndIgnoreMaxRestarts
      onJobFailureMessagePatterns: ["backoff"]
  replicatedJobs:
  - name: driver
    template: )") +
                  kPodSpec + R"(
  - name: workers
    dependsOn: [{name: driver, status: Complete}]
    template: )" + kPodSpec +
                  "\n");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& js = std::get<model::JobSet>(r.manifests.jobs.at(0));
  ASSERT_EQ(js.replicated_jobs.at(1).depends_on.size(), 1u);
  EXPECT_EQ(js.replicated_jobs[1].depends_on[0].name, "driver");
  EXPECT_EQ(js.replicated_jobs[1].depends_on[0].status, "Complete");
  ASSERT_EQ(js.failure_policy.rules.size(), 2u);
  EXPECT_EQ(js.failure_policy.rules[0].name, "fatal");
  EXPECT_EQ(js.failure_policy.rules[0].action, "FailJobSet");
  EXPECT_EQ(js.failure_policy.rules[0].target_replicated_jobs.at(0), "driver");
  EXPECT_EQ(js.failure_policy.rules[1].action, "RestartJobSetAndIgnoreMaxRestarts");
  EXPECT_EQ(js.failure_policy.rules[1].on_job_failure_message_patterns.at(0), "backoff");
}

TEST(DecodeJobSet, WebhookChecksOnDependsOn) {
  auto r = Decode(std::string(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  startupPolicy: {startupPolicyOrder: InOrder}
  replicatedJobs:
  - name: a
    dependsOn: [{name: b, status: Ready}]
    template: )") +
                  kPodSpec + R"(
  - name: b
    dependsOn: [{name: nowhere, status: Ready}]
    template: )" + kPodSpec +
                  "\n");
  const std::string all = All(r);
  EXPECT_THAT(all, HasSubstr("DependsOn can't be set for the first ReplicatedJob"));
  EXPECT_THAT(all, HasSubstr("replicatedJob: a cannot depend on replicatedJob: b"));
  EXPECT_THAT(all, HasSubstr("replicatedJob: b cannot depend on replicatedJob: nowhere"));
  EXPECT_THAT(all, HasSubstr("StartupPolicy and DependsOn APIs are mutually exclusive"));
  EXPECT_TRUE(r.manifests.jobs.empty());
}

TEST(DecodeJobSet, FieldsNotActedOnAreWarned) {
  auto r = Decode(std::string(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  network: {subdomain: other, enableDNSHostnames: false}
  coordinator: {replicatedJob: a}
  managedBy: kueue.x-k8s.io/multikueue
  ttlSecondsAfterFinished: 60
  failurePolicy:
    restartStrategy: InPlaceRestart
    rules:
    - action: RestartJob
      onJobFailureReasons: [PodFailurePolicy]
  replicatedJobs:
  - name: a
    groupName: g
    template: )") +
                  kPodSpec + "\n");
  ASSERT_EQ(r.manifests.jobs.size(), 1u);  // warnings only
  const std::string all = All(r);
  EXPECT_THAT(all, HasSubstr("spec.network.subdomain: warning: not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.network.enableDNSHostnames: warning: not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.coordinator: warning: not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.managedBy: warning: not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.ttlSecondsAfterFinished: warning: not acted on"));
  EXPECT_THAT(all, HasSubstr("spec.failurePolicy.restartStrategy: warning"));
  EXPECT_THAT(all, HasSubstr("spec.failurePolicy.rules[0].action: warning: RestartJob is not"));
  EXPECT_THAT(all, HasSubstr("onJobFailureReasons[0]: warning: muster records a failed child"));
  EXPECT_THAT(all, HasSubstr("spec.replicatedJobs[0].groupName: warning"));
  const auto& js = std::get<model::JobSet>(r.manifests.jobs.at(0));
  EXPECT_EQ(js.failure_policy.rules.at(0).action, "RestartJobSet");
}

TEST(DecodeJobSet, ActedOnFieldsAreNotWarned) {
  auto r = Decode(std::string(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  managedBy: jobset.sigs.k8s.io/jobset-controller
  network: {enableDNSHostnames: true}
  successPolicy: {operator: Any, targetReplicatedJobs: [a]}
  startupPolicy: {startupPolicyOrder: InOrder}
  failurePolicy:
    maxRestarts: 1
    restartStrategy: Recreate
    rules: [{action: FailJobSet, onJobFailureReasons: [BackoffLimitExceeded]}]
  replicatedJobs:
  - name: a
    template: )") +
                  kPodSpec + "\n");
  EXPECT_THAT(All(r), Not(HasSubstr("warning")));
}

}  // namespace
}  // namespace muster::api
