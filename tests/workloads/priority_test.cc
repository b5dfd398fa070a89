#include <gtest/gtest.h>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using testing::PriorityClass;
using testing::Task;
using testing::VolcanoJob;
using testing::WorkloadPriorityClass;

model::ManifestSet Classes() {
  model::ManifestSet m;
  m.priority_classes = {PriorityClass("high", 1000), PriorityClass("low", 10),
                        PriorityClass("batch-default", 5, /*global_default=*/true),
                        PriorityClass("gentle", 500, false, /*preemption_never=*/true)};
  m.workload_priority_classes = {WorkloadPriorityClass("gold", 9000)};
  return m;
}

struct PriorityCase {
  const char* name;
  const char* wpc_label;       // "" = none
  const char* template_class;  // on the first task's template
  const char* spec_class;      // Volcano spec.priorityClassName
  int32_t want_priority;
  const char* want_class;
  bool want_never;
};

void PrintTo(const PriorityCase& c, std::ostream* os) { *os << c.name; }

class PriorityResolution : public ::testing::TestWithParam<PriorityCase> {};

TEST_P(PriorityResolution, FollowsPrecedence) {
  const PriorityCase& c = GetParam();
  model::VolcanoJob job = VolcanoJob("v", {Task("t", 1)});
  if (*c.wpc_label) job.meta.labels["kueue.x-k8s.io/priority-class"] = c.wpc_label;
  job.tasks[0].tmpl.spec.priority_class_name = c.template_class;
  job.priority_class_name = c.spec_class;
  Result<model::Workload> w = BuildWorkload(job, Classes());
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->priority, c.want_priority) << c.name;
  EXPECT_EQ(w->priority_class, c.want_class) << c.name;
  EXPECT_EQ(w->preemption_never, c.want_never) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, PriorityResolution,
    ::testing::Values(
        PriorityCase{"workload priority class wins", "gold", "high", "low", 9000, "gold", false},
        PriorityCase{"template class beats spec class", "", "high", "low", 1000, "high", false},
        PriorityCase{"spec class", "", "", "low", 10, "low", false},
        PriorityCase{"global default", "", "", "", 5, "", false},
        PriorityCase{"preemptionPolicy Never", "", "gentle", "", 500, "gentle", true},
        PriorityCase{"WPC keeps the pods' Never", "gold", "gentle", "", 9000, "gold", true}));

TEST(PriorityTest, NoClassesMeansZero) {
  Result<model::Workload> w = BuildWorkload(VolcanoJob("v", {Task("t", 1)}), {});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->priority, 0);
  EXPECT_EQ(w->priority_class, "");
  EXPECT_FALSE(w->preemption_never);
}

TEST(PriorityTest, LowestGlobalDefaultWins) {
  model::ManifestSet m;
  m.priority_classes = {PriorityClass("a", 100, true), PriorityClass("b", 50, true)};
  Result<model::Workload> w = BuildWorkload(VolcanoJob("v", {Task("t", 1)}), m);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->priority, 50);
}

TEST(PriorityTest, KubeflowSchedulingPolicyClass) {
  model::KubeflowJob job = testing::Kubeflow("PyTorchJob", "pt", {testing::Replica("Worker", 1)});
  job.run_policy.scheduling_policy = model::SchedulingPolicy{};
  job.run_policy.scheduling_policy->priority_class = "high";
  Result<model::Workload> w = BuildWorkload(job, Classes());
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->priority, 1000);
}

TEST(PriorityTest, UnknownClassesAreErrors) {
  struct Case {
    const char* wpc;
    const char* tmpl;
    const char* spec;
    const char* want;
  };
  for (const Case& c :
       {Case{"silver", "", "",
             "Job default/v: metadata.labels[kueue.x-k8s.io/priority-class]: "
             "WorkloadPriorityClass \"silver\" not found; define it or remove the reference"},
        Case{"", "nope", "",
             "Job default/v: spec.tasks[0].template.spec.priorityClassName: PriorityClass "
             "\"nope\" not found; define it or remove the reference"},
        Case{"", "", "nope",
             "Job default/v: spec.priorityClassName: PriorityClass \"nope\" not found; define "
             "it or remove the reference"}}) {
    model::VolcanoJob job = VolcanoJob("v", {Task("t", 1)});
    if (*c.wpc) job.meta.labels["kueue.x-k8s.io/priority-class"] = c.wpc;
    job.tasks[0].tmpl.spec.priority_class_name = c.tmpl;
    job.priority_class_name = c.spec;
    Result<model::Workload> w = BuildWorkload(job, Classes());
    ASSERT_FALSE(w.ok()) << c.want;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(w.status().message(), c.want);
  }
}

}  // namespace
}  // namespace muster::workloads
