// batch/v1 Job podFailurePolicy, backoffLimitPerIndex, maxFailedIndexes,
// ttlSecondsAfterFinished, activeDeadlineSeconds: decoded, validated as upstream,
// and a warning for each part muster does not act on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "test_util.h"

namespace muster::api {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using testing::Decode;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::Lines;

const model::BatchJob& OnlyJob(const DecodeResult& r) {
  return std::get<model::BatchJob>(r.manifests.jobs.at(0));
}

TEST(DecodeJobPolicies, ActedOnFieldsDecodeWithoutWarnings) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  activeDeadlineSeconds: 2
  ttlSecondsAfterFinished: 1
  podFailurePolicy:
    rules:
    - action: FailJob
      onExitCodes: {containerName: main, operator: In, values: [42]}
    - action: Ignore
      onExitCodes: {operator: NotIn, values: [1, 2]}
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
)");
  ASSERT_THAT(Lines(r), IsEmpty());
  const auto& spec = OnlyJob(r).spec;
  EXPECT_EQ(spec.active_deadline_seconds, 2);
  EXPECT_EQ(spec.ttl_seconds_after_finished, 1);
  ASSERT_EQ(spec.pod_failure_policy.size(), 2u);
  EXPECT_EQ(spec.pod_failure_policy[0].action, "FailJob");
  EXPECT_EQ(spec.pod_failure_policy[0].container_name, "main");
  EXPECT_EQ(spec.pod_failure_policy[0].op, "In");
  EXPECT_EQ(spec.pod_failure_policy[0].values, std::vector<int32_t>{42});
  EXPECT_EQ(spec.pod_failure_policy[1].action, "Ignore");
  EXPECT_FALSE(spec.pod_failure_policy[1].container_name);
  EXPECT_EQ(spec.pod_failure_policy[1].op, "NotIn");
}

TEST(DecodeJobPolicies, PerIndexFieldsAndPodConditionsWarn) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  completions: 4
  parallelism: 4
  completionMode: Indexed
  backoffLimitPerIndex: 2
  maxFailedIndexes: 1
  podFailurePolicy:
    rules:
    - action: FailIndex
      onExitCodes: {operator: In, values: [3]}
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
)");
  auto lines = Lines(r);
  EXPECT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines, Contains(AllOf(HasSubstr("spec.backoffLimitPerIndex: warning: not acted on "
                                              "per index"),
                                    HasSubstr("at most 2 times"))));
  EXPECT_THAT(lines, Contains(HasSubstr("spec.maxFailedIndexes: warning: not acted on")));
  EXPECT_THAT(lines, Contains(HasSubstr("spec.podFailurePolicy.rules[0].action: warning: FailIndex "
                                        "fails the whole Job")));
  EXPECT_THAT(lines, Contains(HasSubstr("spec.podFailurePolicy.rules[1].onPodConditions: warning: "
                                        "never matches")));
  // Upstream defaults backoffLimit to the int32 maximum here; the whole gang's
  // restarts are bounded by the per-index limit instead.
  EXPECT_EQ(OnlyJob(r).spec.backoff_limit, 2);
  EXPECT_EQ(OnlyJob(r).spec.pod_failure_policy[1].on_pod_conditions.at(0).second, "True");
}

TEST(DecodeJobPolicies, UpstreamValidation) {
  auto r = Decode(R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
spec:
  backoffLimitPerIndex: 1
  maxFailedIndexes: 1
  podFailurePolicy:
    rules:
    - action: Explode
      onExitCodes: {operator: In, values: [0]}
    - action: FailIndex
      onExitCodes: {operator: Between, values: [1]}
    - action: Count
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: main, image: busybox}]
)");
  auto lines = Lines(r);
  EXPECT_THAT(lines, Contains(HasSubstr("spec.backoffLimitPerIndex: requires indexed completion")));
  EXPECT_THAT(lines, Contains(HasSubstr("restartPolicy: only \"Never\" is supported")));
  EXPECT_THAT(lines, Contains(HasSubstr("spec.podFailurePolicy.rules[0].action: ")));
  EXPECT_THAT(lines, Contains(HasSubstr("rules[0].onExitCodes.values[0]: must not be 0")));
  EXPECT_THAT(lines, Contains(HasSubstr("rules[1].onExitCodes.operator: ")));
  EXPECT_THAT(lines, Contains(HasSubstr("rules[2]: specifying one of onExitCodes and "
                                        "onPodConditions is required")));
  EXPECT_TRUE(r.manifests.jobs.empty());
}

TEST(DecodeJobPolicies, JobSetTemplateFieldsWarn) {
  auto r = Decode(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: default}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        ttlSecondsAfterFinished: 5
        template:
          spec:
            containers: [{name: main, image: busybox}]
)");
  EXPECT_THAT(Lines(r), Contains(HasSubstr("ttlSecondsAfterFinished: warning: not acted on in a "
                                           "JobSet's job template")));
}

}  // namespace
}  // namespace muster::api
