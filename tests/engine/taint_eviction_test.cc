// NoExecute taints on the nodes gangs run on (Kubernetes' taint manager): a pod that
// does not tolerate one is evicted at once, one that tolerates it for
// tolerationSeconds when they have passed, unless the taint goes first; a toleration
// without tolerationSeconds keeps the pod for ever. The gang goes with its pod.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/scenario.h"
#include "workloads/workloads.h"

namespace muster::engine {
namespace {

using testing::AddQueues;
using testing::MakeJob;
using testing::MakeNode;
using testing::ManualClock;
using testing::RecordingExecutor;

model::Taint NoExecute(const std::string& key) {
  return model::Taint{key, "", model::TaintEffect::kNoExecute};
}

model::Toleration Tolerates(const std::string& key, std::optional<int64_t> seconds) {
  model::Toleration t;
  t.key = key;
  t.op = model::TolerationOperator::kExists;
  t.effect = model::TaintEffect::kNoExecute;
  t.toleration_seconds = seconds;
  return t;
}

class TaintEvictionTest : public ::testing::Test {
 protected:
  // ClusterQueue "cq" with 8 GPUs over two 4-GPU nodes; ml/a on one, ml/b on the
  // other, each with `tolerations`.
  void RunTwo(const std::vector<model::Toleration>& tolerations) {
    model::ManifestSet m;
    AddQueues(m, 8);
    for (const char* n : {"node-1", "node-2"}) m.nodes.push_back(MakeNode(n, 4));
    nodes_ = m.nodes;
    EngineOptions options;
    options.check_invariants = true;
    auto engine = Engine::Create(m, clock_, options);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    engine_->SetExecutor(&executor_);
    for (const char* name : {"a", "b"}) {
      model::ManifestSet jobs;
      AddQueues(jobs, 8);
      jobs.jobs.push_back(MakeJob(name, 1, 4, "lq"));
      auto built = workloads::BuildWorkloads(jobs);
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      model::Workload wl = built.value().at(0);
      wl.meta.order = name[0];
      wl.pod_sets[0].tolerations = tolerations;
      ASSERT_TRUE(engine_->AddWorkload(wl).ok());
      ASSERT_TRUE(engine_->Submit(wl.key).ok());
    }
    Cycle();
    ASSERT_EQ(Phase("ml/a"), Phase::kRunning);
    ASSERT_EQ(Phase("ml/b"), Phase::kRunning);
  }
  void Cycle() {
    Status st = engine_->RunCycle();
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<std::string> broken = engine_->CheckInvariants();
    EXPECT_TRUE(broken.empty()) << broken.front();
  }
  engine::Phase Phase(const std::string& key) const { return engine_->Find(key)->phase; }
  std::string NodeOf(const std::string& key) const {
    return engine_->cluster().GetNode(engine_->Find(key)->plan.pods.at(0).node).meta.name;
  }
  // Sets the taints of the node `name` (in place, as a server edits it).
  void Taint(const std::string& name, std::vector<model::Taint> taints) {
    for (model::Node& n : nodes_) {
      if (n.meta.name != name) continue;
      n.taints = std::move(taints);
      ASSERT_TRUE(engine_->UpdateNode(n, nullptr).ok());
    }
  }

  ManualClock clock_;
  RecordingExecutor executor_;
  std::unique_ptr<Engine> engine_;
  std::vector<model::Node> nodes_;
};

TEST_F(TaintEvictionTest, AnUntoleratedNoExecuteTaintEvictsTheGangAtOnce) {
  RunTwo({});
  const std::string a_node = NodeOf("ml/a");
  clock_.Set(10);
  // NoSchedule keeps what runs; NoExecute turns it out.
  Taint(a_node, {model::Taint{"maintenance", "", model::TaintEffect::kNoSchedule}});
  EXPECT_EQ(Phase("ml/a"), Phase::kRunning);
  Taint(a_node, {NoExecute("maintenance")});
  const WorkloadRecord* a = engine_->Find("ml/a");
  EXPECT_EQ(a->phase, Phase::kPending);
  ASSERT_EQ(a->evictions.size(), 1u);
  EXPECT_EQ(a->evictions[0].reason, kReasonTaintEviction);
  EXPECT_EQ(a->evictions[0].detail, "node " + a_node +
                                        " has taint maintenance:NoExecute, which pod main-0 "
                                        "does not tolerate");
  EXPECT_EQ(a->failures, 0);  // not its own failure
  EXPECT_EQ(Phase("ml/b"), Phase::kRunning);
  // It cannot go back to the tainted node, and the other is full: it waits.
  Cycle();
  EXPECT_EQ(Phase("ml/a"), Phase::kPending);
  EXPECT_EQ(executor_.events,
            (std::vector<std::string>{"start ml/a @0", "start ml/b @0", "evicted ml/a @10"}));
}

TEST_F(TaintEvictionTest, TolerationSecondsEvictLaterUnlessTheTaintGoesFirst) {
  RunTwo({Tolerates("maintenance", 30)});
  const std::string a_node = NodeOf("ml/a");
  EXPECT_FALSE(engine_->NextTimedEvent().has_value());

  clock_.Set(10);
  Taint(a_node, {NoExecute("maintenance")});
  EXPECT_EQ(Phase("ml/a"), Phase::kRunning);
  EXPECT_EQ(engine_->NextTimedEvent(), 40.0);
  clock_.Set(20);
  Taint(a_node, {});  // removed in time: cancelled
  EXPECT_FALSE(engine_->NextTimedEvent().has_value());

  clock_.Set(25);
  Taint(a_node, {NoExecute("maintenance")});
  clock_.Set(40);
  // An unrelated taint edit keeps the scheduled time.
  Taint(a_node, {NoExecute("maintenance"), model::Taint{"x", "", model::TaintEffect::kNoSchedule}});
  EXPECT_EQ(engine_->NextTimedEvent(), 55.0);
  Cycle();
  EXPECT_EQ(Phase("ml/a"), Phase::kRunning);
  clock_.Set(55);
  Cycle();
  const WorkloadRecord* a = engine_->Find("ml/a");
  EXPECT_EQ(a->phase, Phase::kPending);
  ASSERT_EQ(a->evictions.size(), 1u);
  EXPECT_EQ(a->evictions[0].detail, "node " + a_node +
                                        " has taint maintenance:NoExecute, which pod main-0 "
                                        "tolerates for 30s");
  EXPECT_EQ(Phase("ml/b"), Phase::kRunning);
  EXPECT_FALSE(engine_->NextTimedEvent().has_value());
}

TEST_F(TaintEvictionTest, ATolerationWithoutSecondsKeepsThePodForEver) {
  RunTwo({Tolerates("maintenance", std::nullopt)});
  clock_.Set(10);
  Taint(NodeOf("ml/a"), {NoExecute("maintenance")});
  EXPECT_FALSE(engine_->NextTimedEvent().has_value());
  clock_.Set(100000);
  Cycle();
  EXPECT_EQ(Phase("ml/a"), Phase::kRunning);
}

TEST_F(TaintEvictionTest, AGangPlacedOnATaintedNodeItToleratesForAWhileIsEvictedThen) {
  RunTwo({Tolerates("maintenance", 60)});
  const std::string b_node = NodeOf("ml/b");
  // ml/b's node is tainted (ml/b tolerates it for a minute) and ml/b finishes: a
  // third gang, tolerating it as long, lands on that free node and is due a minute
  // after its start.
  clock_.Set(5);
  Taint(b_node, {NoExecute("maintenance")});
  ASSERT_TRUE(engine_->Succeed("ml/b").ok());
  EXPECT_FALSE(engine_->NextTimedEvent().has_value());  // ml/b's eviction went with it
  model::ManifestSet jobs;
  AddQueues(jobs, 8);
  jobs.jobs.push_back(MakeJob("c", 1, 4, "lq"));
  auto built = workloads::BuildWorkloads(jobs);
  ASSERT_TRUE(built.ok());
  model::Workload c = built.value().at(0);
  c.pod_sets[0].tolerations = {Tolerates("maintenance", 60)};
  ASSERT_TRUE(engine_->AddWorkload(c).ok());
  ASSERT_TRUE(engine_->Submit(c.key).ok());
  clock_.Set(7);
  Cycle();
  ASSERT_EQ(Phase("ml/c"), Phase::kRunning);
  EXPECT_EQ(NodeOf("ml/c"), b_node);
  EXPECT_EQ(engine_->NextTimedEvent(), 67.0);
  clock_.Set(67);
  Cycle();
  EXPECT_EQ(engine_->Find("ml/c")->evictions.size(), 1u);
}

}  // namespace
}  // namespace muster::engine
