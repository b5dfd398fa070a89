#include <gtest/gtest.h>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using testing::BatchJob;
using testing::List;

model::Workload Build(const model::JobObject& job, const model::ManifestSet& m = {}) {
  Result<model::Workload> w = BuildWorkload(job, m);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : model::Workload();
}

struct CountCase {
  int32_t parallelism;
  std::optional<int32_t> completions;
  int32_t want_count;
};

void PrintTo(const CountCase& c, std::ostream* os) {
  *os << c.parallelism << "/" << c.completions.value_or(-1);
}

class BatchCount : public ::testing::TestWithParam<CountCase> {};

TEST_P(BatchCount, ParallelismCappedByCompletions) {
  model::Workload w = Build(BatchJob("j", GetParam().parallelism, GetParam().completions));
  ASSERT_EQ(w.pod_sets.size(), 1u);
  EXPECT_EQ(w.pod_sets[0].name, "main");
  EXPECT_EQ(w.pod_sets[0].count, GetParam().want_count);
  EXPECT_EQ(w.pod_sets[0].min_count, GetParam().want_count);
  EXPECT_EQ(w.min_available, GetParam().want_count);
}

INSTANTIATE_TEST_SUITE_P(Table, BatchCount,
                         ::testing::Values(CountCase{4, std::nullopt, 4}, CountCase{4, 8, 4},
                                           CountCase{4, 2, 2}, CountCase{1, 1, 1},
                                           CountCase{0, std::nullopt, 0}));

TEST(BatchJobTest, CopiesIdentityPlacementAndLifecycle) {
  model::BatchJob job = BatchJob("train", 2, 2);
  job.meta.namespace_ = "ml";
  job.spec.backoff_limit = 3;
  job.spec.completion_mode = model::CompletionMode::kIndexed;
  job.spec.tmpl.spec.node_selector = {{"gpu", "a100"}};
  job.spec.tmpl.spec.tolerations.push_back({"gpu", model::TolerationOperator::kExists, "", {}, {}});
  job.spec.tmpl.spec.node_affinity.required.push_back(
      {{{"zone", model::SelectorOperator::kIn, {"a"}}}, {}});
  job.spec.tmpl.spec.scheduler_name = "muster";
  job.spec.tmpl.spec.restart_policy = "Never";

  model::Workload w = Build(job);
  EXPECT_EQ(w.key, "ml/train");
  EXPECT_EQ(w.meta.name, "train");
  EXPECT_EQ(w.meta.kind, "Job");
  EXPECT_EQ(w.scheduler_name, "muster");
  const model::PodSet& ps = w.pod_sets[0];
  EXPECT_EQ(ps.requests, List({{"cpu", "1"}}));
  EXPECT_EQ(ps.node_selector, (model::StringMap{{"gpu", "a100"}}));
  ASSERT_EQ(ps.tolerations.size(), 1u);
  EXPECT_EQ(ps.tolerations[0].key, "gpu");
  ASSERT_EQ(ps.node_affinity.required.size(), 1u);
  EXPECT_EQ(ps.node_affinity.required[0].match_expressions[0].key, "zone");
  EXPECT_EQ(ps.restart_policy, "Never");
  EXPECT_TRUE(ps.indexed);
  EXPECT_EQ(w.lifecycle.max_restarts, 3);
  EXPECT_TRUE(w.lifecycle.restart_on_failure);
}

TEST(BatchJobTest, MinParallelismAnnotationAllowsPartialAdmission) {
  model::BatchJob job = BatchJob("j", 8);
  job.meta.annotations["kueue.x-k8s.io/job-min-parallelism"] = "3";
  model::Workload w = Build(job);
  EXPECT_EQ(w.pod_sets[0].count, 8);
  EXPECT_EQ(w.pod_sets[0].min_count, 3);
  EXPECT_EQ(w.min_available, 3);
}

TEST(BatchJobTest, BadMinParallelismIsAnError) {
  for (const char* bad : {"0", "9", "x", "-1", "2.5", ""}) {
    model::BatchJob job = BatchJob("j", 8);
    job.meta.annotations["kueue.x-k8s.io/job-min-parallelism"] = bad;
    Result<model::Workload> w = BuildWorkload(job, {});
    ASSERT_FALSE(w.ok()) << bad;
    EXPECT_EQ(w.status().message(),
              std::string("Job default/j: metadata.annotations[kueue.x-k8s.io/"
                          "job-min-parallelism]: \"") +
                  bad + "\" must be an integer from 1 to the pod count 8");
  }
}

TEST(QueueTest, KueueLabelAndVolcanoAnnotation) {
  model::BatchJob job = BatchJob("j", 1);
  job.meta.labels["kueue.x-k8s.io/queue-name"] = "team-a";
  model::Workload w = Build(job);
  EXPECT_EQ(w.local_queue, "team-a");
  EXPECT_EQ(w.volcano_queue, "");

  model::BatchJob vjob = BatchJob("v", 1);
  vjob.meta.annotations["scheduling.volcano.sh/queue-name"] = "research";
  w = Build(vjob);
  EXPECT_EQ(w.local_queue, "");
  EXPECT_EQ(w.volcano_queue, "research");

  // Volcano reads the queue annotation from the pods too.
  model::BatchJob tjob = BatchJob("t", 1);
  tjob.spec.tmpl.annotations["scheduling.volcano.sh/queue-name"] = "pods-queue";
  EXPECT_EQ(Build(tjob).volcano_queue, "pods-queue");

  // Pods for the Volcano scheduler without a queue go to its "default" queue.
  model::BatchJob sjob = BatchJob("s", 1);
  sjob.spec.tmpl.spec.scheduler_name = "volcano";
  EXPECT_EQ(Build(sjob).volcano_queue, "default");

  EXPECT_EQ(Build(BatchJob("none", 1)).volcano_queue, "");
}

TEST(TopologyTest, KueueAnnotationsOnTheTemplate) {
  using Mode = model::TopologyRequest::Mode;
  struct Case {
    const char* key;
    const char* value;
    Mode mode;
    const char* level;
  };
  for (const Case& c :
       {Case{"kueue.x-k8s.io/podset-required-topology", "cloud.com/rack", Mode::kRequired,
             "cloud.com/rack"},
        Case{"kueue.x-k8s.io/podset-preferred-topology", "cloud.com/block", Mode::kPreferred,
             "cloud.com/block"},
        Case{"kueue.x-k8s.io/podset-unconstrained-topology", "true", Mode::kUnconstrained, ""},
        Case{"kueue.x-k8s.io/podset-unconstrained-topology", "false", Mode::kNone, ""}}) {
    model::BatchJob job = BatchJob("j", 2);
    job.spec.tmpl.annotations[c.key] = c.value;
    model::Workload w = Build(job);
    EXPECT_EQ(w.pod_sets[0].topology.mode, c.mode) << c.key;
    EXPECT_EQ(w.pod_sets[0].topology.level, c.level) << c.key;
  }
  EXPECT_EQ(Build(BatchJob("j", 2)).pod_sets[0].topology.mode, Mode::kNone);
}

TEST(TopologyTest, ConflictingAnnotationsAreAnError) {
  model::BatchJob job = BatchJob("j", 2);
  job.spec.tmpl.annotations["kueue.x-k8s.io/podset-required-topology"] = "rack";
  job.spec.tmpl.annotations["kueue.x-k8s.io/podset-preferred-topology"] = "block";
  Result<model::Workload> w = BuildWorkload(job, {});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("only one of kueue.x-k8s.io/podset-required-topology"),
            std::string::npos)
      << w.status().message();

  model::BatchJob bad = BatchJob("j", 2);
  bad.spec.tmpl.annotations["kueue.x-k8s.io/podset-unconstrained-topology"] = "yes";
  w = BuildWorkload(bad, {});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "Job default/j: spec.template.metadata.annotations[kueue.x-k8s.io/"
            "podset-unconstrained-topology]: \"yes\" is not a boolean: use \"true\" or "
            "\"false\"");
}

TEST(SimAnnotationsTest, ParsedFromTheJob) {
  model::BatchJob job = BatchJob("j", 1);
  job.meta.annotations["sim.muster.dev/submit-at"] = "15m";
  job.meta.annotations["sim.muster.dev/duration"] = "1h30m";
  job.meta.annotations["sim.muster.dev/checkpoint-interval"] = "600";
  model::Workload w = Build(job);
  EXPECT_DOUBLE_EQ(w.sim.submit_at, 900);
  ASSERT_TRUE(w.sim.duration);
  EXPECT_DOUBLE_EQ(*w.sim.duration, 5400);
  ASSERT_TRUE(w.sim.checkpoint_interval);
  EXPECT_DOUBLE_EQ(*w.sim.checkpoint_interval, 600);

  model::Workload plain = Build(BatchJob("p", 1));
  EXPECT_DOUBLE_EQ(plain.sim.submit_at, 0);
  EXPECT_FALSE(plain.sim.duration);
  EXPECT_FALSE(plain.sim.checkpoint_interval);

  model::BatchJob fractional = BatchJob("f", 1);
  fractional.meta.annotations["sim.muster.dev/submit-at"] = "1.5";
  EXPECT_DOUBLE_EQ(Build(fractional).sim.submit_at, 1.5);
}

TEST(SimAnnotationsTest, BadValuesNameTheAnnotation) {
  struct Case {
    const char* key;
    const char* value;
    const char* want;
  };
  for (const Case& c :
       {Case{"sim.muster.dev/duration", "soon",
             "Job default/j: metadata.annotations[sim.muster.dev/duration]: \"soon\" is not a "
             "duration: use seconds (\"90\", \"1.5\") or a Go duration (\"90s\", \"15m\", "
             "\"2h\", \"1h30m\")"},
        Case{"sim.muster.dev/submit-at", "-5s",
             "Job default/j: metadata.annotations[sim.muster.dev/submit-at]: \"-5s\" must be "
             "zero or more"},
        Case{"sim.muster.dev/checkpoint-interval", "0",
             "Job default/j: metadata.annotations[sim.muster.dev/checkpoint-interval]: \"0\" "
             "must be greater than zero"}}) {
    model::BatchJob job = BatchJob("j", 1);
    job.meta.annotations[c.key] = c.value;
    Result<model::Workload> w = BuildWorkload(job, {});
    ASSERT_FALSE(w.ok()) << c.key;
    EXPECT_EQ(w.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(w.status().message(), c.want);
  }
}

TEST(BuildWorkloadsTest, KeepsInputOrderAndStopsAtTheFirstError) {
  model::ManifestSet m;
  m.jobs.push_back(BatchJob("b", 1));
  m.jobs.push_back(testing::VolcanoJob("a", {testing::Task("t", 1)}));
  m.jobs.push_back(BatchJob("c", 1));
  Result<std::vector<model::Workload>> all = BuildWorkloads(m);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].key, "default/b");
  EXPECT_EQ((*all)[1].key, "default/a");
  EXPECT_EQ((*all)[2].key, "default/c");

  model::BatchJob bad = BatchJob("bad", 1);
  bad.meta.annotations["sim.muster.dev/duration"] = "x";
  m.jobs.push_back(bad);
  EXPECT_FALSE(BuildWorkloads(m).ok());
}

}  // namespace
}  // namespace muster::workloads
