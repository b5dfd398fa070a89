// Elastic gangs in the engine: admitted with what fits, grown when capacity frees,
// shrunk for a preemptor instead of evicted; quota and nodes follow what runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "admission/admission.h"
#include "engine/engine.h"
#include "engine/scenario.h"

namespace muster::engine {
namespace {

using namespace testing;  // NOLINT: scenario builders
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A PyTorchJob of `workers` one-GPU workers with elasticPolicy min..max, in "ml".
model::KubeflowJob ElasticJob(const std::string& name, int workers, int min,
                              const std::string& queue, const std::string& klass = "") {
  model::KubeflowJob job;
  job.meta.api_version = "kubeflow.org/v1";
  job.meta.kind = "PyTorchJob";
  job.meta.name = name;
  job.meta.namespace_ = "ml";
  if (!queue.empty()) job.meta.labels["kueue.x-k8s.io/queue-name"] = queue;
  model::ReplicaSpec worker;
  worker.type = "Worker";
  worker.replicas = workers;
  worker.restart_policy = "OnFailure";
  worker.tmpl.spec.priority_class_name = klass;
  model::Container c;
  c.name = "pytorch";
  c.image = "trainer:latest";
  c.requests = Q({{"cpu", "1"}, {"nvidia.com/gpu", "1"}});
  c.limits = Q({{"nvidia.com/gpu", "1"}});
  worker.tmpl.spec.containers.push_back(c);
  job.replica_specs.push_back(worker);
  model::ElasticPolicy policy;
  policy.min_replicas = min;
  policy.max_replicas = workers;
  job.elastic_policy = policy;
  return job;
}

int32_t Pods(const Engine& e, const std::string& key) {
  return static_cast<int32_t>(e.Find(key)->plan.pods.size());
}

struct Fixture {
  ManualClock clock;
  RecordingExecutor exec;
  std::unique_ptr<Engine> engine;

  explicit Fixture(model::ManifestSet m) {
    Number(m);
    auto e = Engine::Create(m, clock, EngineOptions{true, 1000});
    EXPECT_TRUE(e.ok()) << e.status().message();
    engine = std::move(e).value();
    engine->SetExecutor(&exec);
  }
  void At(Time t) { clock.Set(t); }
  void Cycle() { ASSERT_TRUE(engine->RunCycle().ok()) << engine->CheckInvariants().size(); }
};

model::ManifestSet TwoNodes(int quota_gpus) {
  model::ManifestSet m;
  m.nodes = {MakeNode("gpu-1", 4), MakeNode("gpu-2", 4)};
  AddQueues(m, quota_gpus);
  return m;
}

// The example: 8 one-GPU workers, minReplicas 2, 4 GPUs free.
TEST(ElasticEngine, AdmittedWithWhatFitsThenGrows) {
  model::ManifestSet m = TwoNodes(8);
  m.jobs.push_back(MakeJob("blocker", 1, 4, "lq"));
  m.jobs.push_back(ElasticJob("elastic", 8, 2, "lq"));
  Fixture f(m);
  ASSERT_TRUE(f.engine->Submit("ml/blocker").ok());
  f.Cycle();
  f.At(10);
  ASSERT_TRUE(f.engine->Submit("ml/elastic").ok());
  f.Cycle();
  const WorkloadRecord* r = f.engine->Find("ml/elastic");
  EXPECT_EQ(r->phase, Phase::kRunning);
  EXPECT_EQ(r->admit_time, 10);
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 4);
  EXPECT_EQ(r->assignment.pod_sets[0].count, 4);
  // Quota is charged for the 4 that run: nothing else fits in the 8-GPU queue.
  EXPECT_THAT(f.engine->CheckInvariants(), IsEmpty());

  f.At(600);
  ASSERT_TRUE(f.engine->Succeed("ml/blocker").ok());
  f.Cycle();
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 8);
  EXPECT_EQ(r->assignment.pod_sets[0].count, 8);
  ASSERT_EQ(r->resizes.size(), 1u);
  EXPECT_EQ(r->resizes[0].kind, "Grow");
  EXPECT_EQ(r->resizes[0].from, 4);
  EXPECT_EQ(r->resizes[0].to, 8);
  // New pods take the next indices 4..7.
  for (int32_t i = 0; i < 8; ++i) EXPECT_EQ(r->plan.pods[i].index, i);
  EXPECT_THAT(f.exec.events, ElementsAre("start ml/blocker @0", "start ml/elastic @10",
                                         "done ml/blocker @600", "resize ml/elastic +4 -0 @600"));
  EXPECT_THAT(f.engine->CheckInvariants(), IsEmpty());
}

// The queues rebuilt under it (Readmitted, as for a new ClusterQueue) and the whole
// engine rebuilt (Reconfigured): still below its counts, it still grows.
TEST(ElasticEngine, StillGrowsAfterItsEngineIsRebuilt) {
  for (bool placement_kept : {true, false}) {
    model::ManifestSet m = TwoNodes(8);
    m.jobs.push_back(MakeJob("blocker", 1, 4, "lq"));
    m.jobs.push_back(ElasticJob("elastic", 8, 2, "lq"));
    Fixture f(m);
    ASSERT_TRUE(f.engine->Submit("ml/blocker").ok());
    ASSERT_TRUE(f.engine->Submit("ml/elastic").ok());
    f.Cycle();
    ASSERT_EQ(Pods(*f.engine, "ml/elastic"), 4);
    model::ManifestSet config = m;
    config.jobs.clear();
    if (placement_kept) {
      auto admitter = admission::MakeAdmitter(config);
      ASSERT_TRUE(admitter.ok());
      f.engine = Engine::Readmitted(std::move(f.engine), config, std::move(admitter).value());
    } else {
      auto parts = BuildEngineParts(config);
      ASSERT_TRUE(parts.ok());
      f.engine = Engine::Reconfigured(std::move(f.engine), config, std::move(parts).value());
    }
    f.At(600);
    ASSERT_TRUE(f.engine->Succeed("ml/blocker").ok());
    f.Cycle();
    EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 8) << placement_kept;
    EXPECT_THAT(f.engine->CheckInvariants(), IsEmpty());
  }
}

// Not even the minimum fits: it waits whole, like any gang.
TEST(ElasticEngine, WaitsWhenItsMinimumDoesNotFit) {
  model::ManifestSet m = TwoNodes(8);
  m.jobs.push_back(MakeJob("blocker", 7, 1, "lq"));
  m.jobs.push_back(ElasticJob("elastic", 8, 2, "lq"));
  Fixture f(m);
  ASSERT_TRUE(f.engine->Submit("ml/blocker").ok());
  ASSERT_TRUE(f.engine->Submit("ml/elastic").ok());
  f.Cycle();
  EXPECT_EQ(f.engine->Find("ml/elastic")->phase, Phase::kPending);
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 0);
}

TEST(ElasticEngine, ShrinksForAPreemptorInsteadOfBeingEvicted) {
  model::ManifestSet m = TwoNodes(8);
  m.jobs.push_back(ElasticJob("elastic", 8, 2, "lq", "low"));
  m.jobs.push_back(MakeJob("urgent", 1, 4, "lq", "high"));
  Fixture f(m);
  ASSERT_TRUE(f.engine->Submit("ml/elastic").ok());
  f.Cycle();
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 8);
  f.At(100);
  ASSERT_TRUE(f.engine->Submit("ml/urgent").ok());
  f.Cycle();
  const WorkloadRecord* e = f.engine->Find("ml/elastic");
  EXPECT_EQ(e->phase, Phase::kRunning);
  EXPECT_THAT(e->evictions, IsEmpty());
  // Keeping workers 0-3 frees gpu-2 whole, which the 4-GPU pod needs.
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 4);
  ASSERT_EQ(e->resizes.size(), 1u);
  EXPECT_EQ(e->resizes[0].kind, "Shrink");
  EXPECT_EQ(e->resizes[0].by, "ml/urgent");
  EXPECT_EQ(e->resizes[0].detail, "InClusterQueue");
  EXPECT_EQ(f.engine->Find("ml/urgent")->phase, Phase::kRunning);
  EXPECT_THAT(f.engine->CheckInvariants(), IsEmpty());
  // The preemptor ends: the elastic job grows back.
  f.At(700);
  ASSERT_TRUE(f.engine->Succeed("ml/urgent").ok());
  f.Cycle();
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 8);
  EXPECT_THAT(f.exec.events, ElementsAre("start ml/elastic @0", "resize ml/elastic +0 -4 @100",
                                         "start ml/urgent @100", "done ml/urgent @700",
                                         "resize ml/elastic +4 -0 @700"));
}

// Giving up pods down to its minimum would not free what the preemptor needs: the
// elastic job is evicted whole, as any victim.
TEST(ElasticEngine, EvictedWholeWhenItsMinimumIsInTheWay) {
  model::ManifestSet m = TwoNodes(8);
  m.jobs.push_back(ElasticJob("elastic", 8, 6, "lq", "low"));
  m.jobs.push_back(MakeJob("urgent", 1, 4, "lq", "high"));
  Fixture f(m);
  ASSERT_TRUE(f.engine->Submit("ml/elastic").ok());
  f.Cycle();
  f.At(100);
  ASSERT_TRUE(f.engine->Submit("ml/urgent").ok());
  f.Cycle();
  const WorkloadRecord* e = f.engine->Find("ml/elastic");
  ASSERT_EQ(e->evictions.size(), 1u);
  EXPECT_EQ(e->evictions[0].by, "ml/urgent");
  EXPECT_THAT(e->resizes, IsEmpty());
  EXPECT_EQ(f.engine->Find("ml/urgent")->phase, Phase::kRunning);
}

// Without a queue there is no quota: it starts with the free GPUs and grows.
TEST(ElasticEngine, NoQueueGrowsIntoFreedNodes) {
  model::ManifestSet m;
  m.nodes = {MakeNode("gpu-1", 4)};
  m.jobs.push_back(MakeJob("blocker", 1, 3, ""));
  m.jobs.push_back(ElasticJob("elastic", 4, 1, ""));
  Fixture f(m);
  ASSERT_TRUE(f.engine->Submit("ml/blocker").ok());
  ASSERT_TRUE(f.engine->Submit("ml/elastic").ok());
  f.Cycle();
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 1);
  f.At(50);
  ASSERT_TRUE(f.engine->Succeed("ml/blocker").ok());
  f.Cycle();
  EXPECT_EQ(Pods(*f.engine, "ml/elastic"), 4);
}

}  // namespace
}  // namespace muster::engine
