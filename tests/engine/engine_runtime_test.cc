// Engine changes of a long-running server: workloads added and deleted at runtime,
// and running workloads adopted by a freshly built engine, with the real admission
// and placement layers and the invariant checker on after every cycle.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "admission/admission.h"
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

// "main-0@node-1[0,1] main-1@node-2[2,3]": where each pod runs, on which GPUs.
std::string PlanString(const placement::GangPlan& plan, const Engine& engine) {
  std::string out;
  for (const auto& pod : plan.pods) {
    out += out.empty() ? "" : " ";
    out += std::to_string(pod.pod_set) + "-" + std::to_string(pod.index) + "@" +
           engine.cluster().GetNode(pod.node).meta.name + "[";
    for (size_t i = 0; i < pod.gpus.size(); ++i) {
      out += (i ? "," : "") + std::to_string(pod.gpus[i]);
    }
    out += "] numa " + std::to_string(pod.numa_zone);
  }
  return out;
}

int64_t FreeGpus(const Engine& engine) {
  static const ResourceId kGpu = ResourceNames::Intern(kGpuResourceName);
  int64_t free = 0;
  for (placement::NodeIndex i = 0; i < engine.cluster().NodeCount(); ++i) {
    free += engine.cluster().Free(i).Get(kGpu);
  }
  return free;
}

class EngineRuntimeTest : public ::testing::Test {
 protected:
  // ClusterQueue "cq" with `quota` GPUs and 4-GPU nodes named `nodes`.
  static model::ManifestSet Cluster(int quota, const std::vector<std::string>& nodes) {
    model::ManifestSet m;
    AddQueues(m, quota);
    for (const auto& n : nodes) m.nodes.push_back(MakeNode(n, 4));
    return m;
  }
  // Engines start with no workloads: every one arrives through AddWorkload.
  std::unique_ptr<Engine> NewEngine(const model::ManifestSet& m, RecordingExecutor* executor) {
    EngineOptions options;
    options.check_invariants = true;
    auto engine = Engine::Create(m, clock_, options);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (!engine.ok()) return nullptr;
    engine.value()->SetExecutor(executor);
    return std::move(engine).value();
  }
  // The workload of a Job of `pods` pods x `gpus` GPUs in LocalQueue "lq", built as
  // the server builds it; later jobs get later input orders.
  model::Workload Job(const std::string& name, int pods, int gpus) {
    model::ManifestSet m = Cluster(8, {});
    m.jobs.push_back(MakeJob(name, pods, gpus, "lq"));
    std::visit([&](auto& j) { j.meta.order = next_order_++; }, m.jobs.back());
    auto built = workloads::BuildWorkloads(m);
    EXPECT_TRUE(built.ok()) << built.status().ToString();
    return built.value().at(0);
  }
  void AddAndSubmit(Engine& engine, const model::Workload& wl) {
    ASSERT_TRUE(engine.AddWorkload(wl).ok());
    ASSERT_TRUE(engine.Submit(wl.key).ok());
  }
  static void Cycle(Engine& engine) {
    Status st = engine.RunCycle();
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << engine.log().ToString();
  }
  static void ExpectInvariants(const Engine& engine) {
    std::vector<std::string> broken = engine.CheckInvariants();
    EXPECT_TRUE(broken.empty()) << broken.front();
  }
  static Phase PhaseOf(const Engine& engine, const std::string& key) {
    const WorkloadRecord* r = engine.Find(key);
    EXPECT_NE(r, nullptr) << key;
    return r == nullptr ? Phase::kFailed : r->phase;
  }

  // Engine A runs ml/train (2 pods x 2 GPUs) and cannot admit ml/second (2 x 3) for
  // quota (4 + 6 > 8).
  void RunOnA() {
    a_ = NewEngine(Cluster(8, {"node-1", "node-2"}), &a_executor_);
    ASSERT_NE(a_, nullptr);
    train_ = Job("train", 2, 2);
    second_ = Job("second", 2, 3);
    AddAndSubmit(*a_, train_);
    AddAndSubmit(*a_, second_);
    Cycle(*a_);
    ASSERT_EQ(PhaseOf(*a_, "ml/train"), Phase::kRunning);
    ASSERT_EQ(PhaseOf(*a_, "ml/second"), Phase::kPending);
  }
  Status AdoptTrainFromA(Engine& engine) {
    const WorkloadRecord& ran = *a_->Find("ml/train");
    return engine.Adopt("ml/train", ran.assignment, ran.plan, 10, 12);
  }

  ManualClock clock_;
  int64_t next_order_ = 0;
  RecordingExecutor a_executor_, b_executor_;
  std::unique_ptr<Engine> a_;
  model::Workload train_, second_;
};

TEST_F(EngineRuntimeTest, AddedWorkloadIsAdmittedAndStarted) {
  auto engine = NewEngine(Cluster(8, {"node-1", "node-2"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->Submit("ml/a").code(), StatusCode::kNotFound);
  uint64_t before = engine->generation();
  model::Workload a = Job("a", 2, 2);
  ASSERT_TRUE(engine->AddWorkload(a).ok());
  EXPECT_NE(engine->generation(), before);
  EXPECT_EQ(engine->AddWorkload(a).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(PhaseOf(*engine, "ml/a"), Phase::kPending);
  EXPECT_FALSE(engine->Find("ml/a")->submitted);

  clock_.Set(5);
  ASSERT_TRUE(engine->Submit("ml/a").ok());
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  EXPECT_EQ(engine->Find("ml/a")->plan.pods.size(), 2u);
  EXPECT_EQ(a_executor_.events, std::vector<std::string>{"start ml/a @5"});

  // Nothing new: another cycle leaves the generation alone.
  uint64_t settled = engine->generation();
  Cycle(*engine);
  EXPECT_EQ(engine->generation(), settled);
}

TEST_F(EngineRuntimeTest, RemovingARunningWorkloadFreesItsQuotaAndNodes) {
  // Nodes hold 16 GPUs, the queue 8: ml/b waits for quota, not for nodes.
  auto engine = NewEngine(Cluster(8, {"node-1", "node-2", "node-3", "node-4"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  model::Workload a = Job("a", 2, 4), b = Job("b", 1, 4), c = Job("c", 1, 4);
  AddAndSubmit(*engine, a);
  AddAndSubmit(*engine, b);
  AddAndSubmit(*engine, c);
  Cycle(*engine);
  ASSERT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  ASSERT_EQ(PhaseOf(*engine, "ml/b"), Phase::kPending);
  ASSERT_EQ(FreeGpus(*engine), 8);

  clock_.Set(30);
  uint64_t before = engine->generation();
  ASSERT_TRUE(engine->RemoveWorkload("ml/a").ok());
  EXPECT_NE(engine->generation(), before);
  EXPECT_EQ(engine->Find("ml/a"), nullptr);
  EXPECT_EQ(FreeGpus(*engine), 16);
  ExpectInvariants(*engine);
  // The records after it moved: the index still finds them.
  ASSERT_NE(engine->Find("ml/b"), nullptr);
  EXPECT_EQ(engine->Find("ml/b")->key(), "ml/b");
  EXPECT_EQ(engine->Find("ml/c")->key(), "ml/c");
  EXPECT_EQ(engine->workloads().size(), 2u);

  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/b"), Phase::kRunning);
  EXPECT_EQ(PhaseOf(*engine, "ml/c"), Phase::kRunning);
  EXPECT_EQ(a_executor_.events, (std::vector<std::string>{"start ml/a @0", "deleted ml/a @30",
                                                          "start ml/b @30", "start ml/c @30"}));

  // A key that is gone, or never was, is NotFound; the name can be used again.
  EXPECT_EQ(engine->RemoveWorkload("ml/a").code(), StatusCode::kNotFound);
  EXPECT_EQ(engine->Submit("ml/a").code(), StatusCode::kNotFound);
  EXPECT_TRUE(engine->AddWorkload(a).ok());
}

TEST_F(EngineRuntimeTest, RemovingAPendingWorkload) {
  auto engine = NewEngine(Cluster(4, {"node-1"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  model::Workload a = Job("a", 1, 4), b = Job("b", 1, 4), never = Job("never", 1, 1);
  AddAndSubmit(*engine, a);
  AddAndSubmit(*engine, b);
  ASSERT_TRUE(engine->AddWorkload(never).ok());  // added, never submitted
  Cycle(*engine);
  ASSERT_EQ(PhaseOf(*engine, "ml/b"), Phase::kPending);

  ASSERT_TRUE(engine->RemoveWorkload("ml/b").ok());
  ASSERT_TRUE(engine->RemoveWorkload("ml/never").ok());
  EXPECT_EQ(engine->Find("ml/b"), nullptr);
  EXPECT_EQ(engine->admitter().QueueOf("ml/b").cluster_queue, "") << "admission forgot it";
  ExpectInvariants(*engine);
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  EXPECT_EQ(a_executor_.events, std::vector<std::string>{"start ml/a @0"})
      << "a pending workload has nothing to stop";
}

TEST_F(EngineRuntimeTest, FreshEngineAdoptsARunningWorkloadWhereItRuns) {
  RunOnA();
  auto b = NewEngine(Cluster(8, {"node-1", "node-2"}), &b_executor_);
  ASSERT_NE(b, nullptr);
  clock_.Set(100);
  AddAndSubmit(*b, train_);
  ASSERT_TRUE(AdoptTrainFromA(*b).ok());
  ExpectInvariants(*b);

  const WorkloadRecord& adopted = *b->Find("ml/train");
  const WorkloadRecord& original = *a_->Find("ml/train");
  EXPECT_EQ(adopted.phase, Phase::kRunning);
  EXPECT_TRUE(adopted.bound);
  EXPECT_EQ(PlanString(adopted.plan, *b), PlanString(original.plan, *a_));
  EXPECT_EQ(adopted.assignment.pod_sets.size(), 1u);
  EXPECT_EQ(adopted.assignment.pod_sets[0].flavors, original.assignment.pod_sets[0].flavors);
  EXPECT_EQ(adopted.admit_time, 10.0);
  EXPECT_EQ(adopted.first_admit_time, 10.0);
  EXPECT_EQ(adopted.start_time, 12.0);
  EXPECT_EQ(adopted.queue.cluster_queue, "cq");
  EXPECT_EQ(FreeGpus(*b), FreeGpus(*a_));

  // Quota is charged as in A: ml/second waits for the same reason.
  AddAndSubmit(*b, second_);
  Cycle(*b);
  EXPECT_EQ(PhaseOf(*b, "ml/second"), Phase::kPending);
  EXPECT_EQ(b->PendingMessage("ml/second"), a_->PendingMessage("ml/second"));
  EXPECT_NE(b->PendingMessage("ml/second").find("request 6 > available 4"), std::string::npos)
      << b->PendingMessage("ml/second");
  EXPECT_TRUE(b_executor_.events.empty()) << "an adopted gang already runs";

  // ... and only as in A: the 4 GPUs left fit a 2 x 2 job.
  model::Workload fill = Job("fill", 2, 2);
  AddAndSubmit(*b, fill);
  Cycle(*b);
  EXPECT_EQ(PhaseOf(*b, "ml/fill"), Phase::kRunning);
  EXPECT_EQ(FreeGpus(*b), 0);

  // Deleting the adopted job stops it like any other.
  ASSERT_TRUE(b->RemoveWorkload("ml/train").ok());
  EXPECT_EQ(b_executor_.events,
            (std::vector<std::string>{"start ml/fill @100", "deleted ml/train @100"}));
  ExpectInvariants(*b);
}

TEST_F(EngineRuntimeTest, AdoptPreconditions) {
  RunOnA();
  auto b = NewEngine(Cluster(8, {"node-1", "node-2"}), &b_executor_);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(AdoptTrainFromA(*b).code(), StatusCode::kNotFound);
  ASSERT_TRUE(b->AddWorkload(train_).ok());
  EXPECT_EQ(AdoptTrainFromA(*b).code(), StatusCode::kFailedPrecondition) << "not submitted";
  ASSERT_TRUE(b->Submit("ml/train").ok());

  const WorkloadRecord& ran = *a_->Find("ml/train");
  placement::GangPlan short_plan = ran.plan;
  short_plan.pods.pop_back();
  Status st = b->Adopt("ml/train", ran.assignment, short_plan, 10, 12);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "cannot adopt ml/train: the plan places 1 pods of main, the assignment admits 2");

  ASSERT_TRUE(AdoptTrainFromA(*b).ok());
  EXPECT_EQ(AdoptTrainFromA(*b).code(), StatusCode::kFailedPrecondition) << "already running";
  ExpectInvariants(*b);
}

// A refused adoption changes nothing: the workload stays pending, admission and
// nodes are as before, and it can be admitted normally later.
void ExpectUntouched(const Engine& engine, int64_t free_gpus) {
  const WorkloadRecord& r = *engine.Find("ml/train");
  EXPECT_EQ(r.phase, Phase::kPending);
  EXPECT_FALSE(r.bound);
  EXPECT_TRUE(r.plan.pods.empty());
  EXPECT_FALSE(r.admit_time.has_value());
  EXPECT_EQ(FreeGpus(engine), free_gpus);
  EXPECT_TRUE(engine.admitter().PendingReason("ml/train").has_value()) << "still queued";
  std::vector<std::string> broken = engine.CheckInvariants();
  EXPECT_TRUE(broken.empty()) << broken.front();
}

TEST_F(EngineRuntimeTest, AdoptFailsOnAMissingOrLostNode) {
  RunOnA();
  {
    SCOPED_TRACE("node index beyond the cluster");
    auto b = NewEngine(Cluster(8, {"node-1"}), &b_executor_);
    ASSERT_NE(b, nullptr);
    AddAndSubmit(*b, train_);
    const WorkloadRecord& ran = *a_->Find("ml/train");
    placement::GangPlan moved = ran.plan;
    for (auto& pod : moved.pods) pod.node = 1;
    Status st = b->Adopt("ml/train", ran.assignment, moved, 10, 12);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(st.message(),
              "cannot adopt ml/train: node index 1 of its plan is not in the cluster");
    ExpectUntouched(*b, 4);
    Cycle(*b);
    EXPECT_EQ(PhaseOf(*b, "ml/train"), Phase::kRunning) << "admitted normally on node-1";
  }
  {
    SCOPED_TRACE("node lost");
    auto b = NewEngine(Cluster(8, {"node-1", "node-2"}), &b_executor_);
    ASSERT_NE(b, nullptr);
    AddAndSubmit(*b, train_);
    const WorkloadRecord& ran = *a_->Find("ml/train");
    std::string node = a_->cluster().GetNode(ran.plan.pods.at(0).node).meta.name;
    ASSERT_TRUE(b->NodeLost(node, "gone").ok());
    Status st = AdoptTrainFromA(*b);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(st.message(), "cannot adopt ml/train: node " + node + " is not ready");
    ExpectUntouched(*b, 8);
  }
  {
    SCOPED_TRACE("node unschedulable in the new configuration");
    model::ManifestSet m = Cluster(8, {"node-1", "node-2"});
    const WorkloadRecord& ran = *a_->Find("ml/train");
    placement::NodeIndex used = ran.plan.pods.at(0).node;
    m.nodes.at(used).unschedulable = true;
    auto b = NewEngine(m, &b_executor_);
    ASSERT_NE(b, nullptr);
    AddAndSubmit(*b, train_);
    Status st = AdoptTrainFromA(*b);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(st.message(),
              "cannot adopt ml/train: node " + m.nodes[used].meta.name + " is unschedulable");
    ExpectUntouched(*b, 8);
  }
}

TEST_F(EngineRuntimeTest, AdoptFailsWhenAnotherWorkloadTookTheGpus) {
  RunOnA();
  auto b = NewEngine(Cluster(8, {"node-1", "node-2"}), &b_executor_);
  ASSERT_NE(b, nullptr);
  // ml/hog takes every GPU (and all the quota) before ml/train arrives.
  model::Workload hog = Job("hog", 2, 4);
  AddAndSubmit(*b, hog);
  Cycle(*b);
  ASSERT_EQ(PhaseOf(*b, "ml/hog"), Phase::kRunning);
  AddAndSubmit(*b, train_);
  Cycle(*b);
  Status st = AdoptTrainFromA(*b);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("no longer fits"), std::string::npos) << st.message();
  ExpectUntouched(*b, 0);

  clock_.Set(50);
  ASSERT_TRUE(b->Succeed("ml/hog").ok());
  Cycle(*b);
  EXPECT_EQ(PhaseOf(*b, "ml/train"), Phase::kRunning);
  EXPECT_EQ(b_executor_.events,
            (std::vector<std::string>{"start ml/hog @0", "done ml/hog @50", "start ml/train @50"}));
}

TEST_F(EngineRuntimeTest, AdoptFailsWhenQuotaNoLongerAllowsIt) {
  RunOnA();
  {
    SCOPED_TRACE("ClusterQueue nominal lowered to 3 GPUs");
    auto b = NewEngine(Cluster(3, {"node-1", "node-2"}), &b_executor_);
    ASSERT_NE(b, nullptr);
    AddAndSubmit(*b, train_);
    Status st = AdoptTrainFromA(*b);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(st.message(),
              "cannot adopt ml/train: 4 nvidia.com/gpu in flavor gpu exceeds what ClusterQueue cq "
              "may use now (3)");
    ExpectUntouched(*b, 8);  // the committed nodes were released again
    Cycle(*b);
    EXPECT_EQ(PhaseOf(*b, "ml/train"), Phase::kPending);
    EXPECT_NE(b->PendingMessage("ml/train").find("insufficient quota"), std::string::npos)
        << b->PendingMessage("ml/train");
  }
  {
    SCOPED_TRACE("quota used by another workload on a node of its own");
    model::ManifestSet m = Cluster(8, {"node-1", "node-2"});
    m.nodes.push_back(MakeNode("node-3", 8));
    auto b = NewEngine(m, &b_executor_);
    ASSERT_NE(b, nullptr);
    model::Workload hog = Job("hog", 1, 8);  // only node-3 holds it
    AddAndSubmit(*b, hog);
    Cycle(*b);
    ASSERT_EQ(PhaseOf(*b, "ml/hog"), Phase::kRunning);
    AddAndSubmit(*b, train_);
    Cycle(*b);
    Status st = AdoptTrainFromA(*b);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(st.message().find("may use now (0)"), std::string::npos) << st.message();
    ExpectUntouched(*b, 8);
    ASSERT_TRUE(b->Succeed("ml/hog").ok());
    Cycle(*b);
    EXPECT_EQ(PhaseOf(*b, "ml/train"), Phase::kRunning) << "admitted normally later";
  }
}

TEST_F(EngineRuntimeTest, NodeEditedInPlaceKeepsItsGangAndTakesNewPodsOnlyWhenSchedulable) {
  auto engine = NewEngine(Cluster(8, {"node-1", "node-2"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  model::Workload a = Job("a", 1, 4), b = Job("b", 1, 4);
  AddAndSubmit(*engine, a);
  Cycle(*engine);
  ASSERT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  const std::string ran_on =
      engine->cluster().GetNode(engine->Find("ml/a")->plan.pods[0].node).meta.name;

  // Both nodes cordoned: ml/a keeps running, ml/b has nowhere to go.
  for (const char* name : {"node-1", "node-2"}) {
    model::Node node = engine->cluster().GetNode(*engine->cluster().FindNode(name));
    node.unschedulable = true;
    ASSERT_TRUE(engine->UpdateNode(node, nullptr).ok());
  }
  clock_.Set(10);
  AddAndSubmit(*engine, b);
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  EXPECT_EQ(PhaseOf(*engine, "ml/b"), Phase::kPending);
  ExpectInvariants(*engine);

  // Refused in place, changing nothing: a node that is not there, or one shrunk
  // under its running pod (the caller reconfigures instead).
  model::Node ghost = MakeNode("node-9", 4);
  EXPECT_EQ(engine->UpdateNode(ghost, nullptr).code(), StatusCode::kNotFound);
  model::Node smaller = engine->cluster().GetNode(*engine->cluster().FindNode(ran_on));
  smaller.unschedulable = false;
  smaller.allocatable.Set(ResourceNames::Intern(kGpuResourceName), 2);
  EXPECT_EQ(engine->UpdateNode(smaller, nullptr).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(engine->cluster().GetNode(*engine->cluster().FindNode(ran_on)).unschedulable);

  // Uncordoned: ml/b starts on the node with room, ml/a never moved.
  clock_.Set(20);
  for (const char* name : {"node-1", "node-2"}) {
    model::Node node = engine->cluster().GetNode(*engine->cluster().FindNode(name));
    node.unschedulable = false;
    ASSERT_TRUE(engine->UpdateNode(node, nullptr).ok());
  }
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/b"), Phase::kRunning);
  EXPECT_NE(engine->cluster().GetNode(engine->Find("ml/b")->plan.pods[0].node).meta.name, ran_on);
  EXPECT_EQ(a_executor_.events, (std::vector<std::string>{"start ml/a @0", "start ml/b @20"}));
  int updates = 0;
  for (const LogEntry& e : engine->log().entries()) {
    if (e.action == "NodeUpdated") {
      ++updates;
      EXPECT_TRUE(e.message == "cordoned" || e.message == "uncordoned") << e.message;
    }
  }
  EXPECT_EQ(updates, 4);
  ExpectInvariants(*engine);
}

TEST_F(EngineRuntimeTest, NodeAddedTakesWaitingPodsAndLeavesRunningGangs) {
  auto engine = NewEngine(Cluster(16, {"node-b"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  model::Workload a = Job("a", 1, 4), b = Job("b", 2, 4);
  AddAndSubmit(*engine, a);
  AddAndSubmit(*engine, b);
  Cycle(*engine);
  ASSERT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  ASSERT_EQ(PhaseOf(*engine, "ml/b"), Phase::kPending);  // quota, but no nodes

  // Two nodes join, one of them named before the node ml/a runs on.
  clock_.Set(10);
  ASSERT_TRUE(engine->AddNode(MakeNode("node-a", 4), nullptr).ok());
  ASSERT_TRUE(engine->AddNode(MakeNode("node-c", 4), nullptr).ok());
  EXPECT_EQ(engine->AddNode(MakeNode("node-c", 4), nullptr).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(engine->cluster().NodeCount(), 3);
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/b"), Phase::kRunning);
  const WorkloadRecord* ra = engine->Find("ml/a");
  EXPECT_EQ(engine->cluster().GetNode(ra->plan.pods[0].node).meta.name, "node-b");
  std::set<std::string> b_nodes;
  for (const auto& pod : engine->Find("ml/b")->plan.pods) {
    b_nodes.insert(engine->cluster().GetNode(pod.node).meta.name);
  }
  EXPECT_EQ(b_nodes, (std::set<std::string>{"node-a", "node-c"}));
  EXPECT_EQ(a_executor_.events, (std::vector<std::string>{"start ml/a @0", "start ml/b @10"}));
  int added = 0;
  for (const LogEntry& e : engine->log().entries()) added += e.action == "NodeAdded" ? 1 : 0;
  EXPECT_EQ(added, 2);
  ExpectInvariants(*engine);
}

TEST_F(EngineRuntimeTest, NodeRemovedRequeuesItsGangsAndLeavesTheOthers) {
  auto engine = NewEngine(Cluster(12, {"node-1", "node-2"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  model::Workload a = Job("a", 1, 4), b = Job("b", 1, 4);
  AddAndSubmit(*engine, a);
  AddAndSubmit(*engine, b);
  Cycle(*engine);
  ASSERT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  ASSERT_EQ(PhaseOf(*engine, "ml/b"), Phase::kRunning);
  const std::string a_node =
      engine->cluster().GetNode(engine->Find("ml/a")->plan.pods[0].node).meta.name;
  const placement::NodeIndex b_index = engine->Find("ml/b")->plan.pods[0].node;

  // ml/a's node goes: ml/a is stopped and waits again (the other node is full);
  // ml/b stays where it runs, at the same node index.
  clock_.Set(10);
  ASSERT_TRUE(engine->RemoveNode(a_node).ok());
  EXPECT_EQ(engine->RemoveNode(a_node).code(), StatusCode::kNotFound);
  EXPECT_EQ(engine->RemoveNode("node-9").code(), StatusCode::kNotFound);
  EXPECT_FALSE(engine->cluster().FindNode(a_node).has_value());
  Cycle(*engine);
  const WorkloadRecord* ra = engine->Find("ml/a");
  EXPECT_EQ(ra->phase, Phase::kPending);
  ASSERT_EQ(ra->evictions.size(), 1u);
  EXPECT_EQ(ra->evictions[0].reason, kReasonNodeFailure);
  EXPECT_EQ(ra->evictions[0].detail, "node " + a_node + " was removed");
  EXPECT_EQ(ra->failures, 0);  // not counted against its restart budget
  EXPECT_EQ(PhaseOf(*engine, "ml/b"), Phase::kRunning);
  EXPECT_EQ(engine->Find("ml/b")->plan.pods[0].node, b_index);
  ExpectInvariants(*engine);

  // A node of the same name joins again: a new node, and ml/a starts on it.
  clock_.Set(20);
  ASSERT_TRUE(engine->AddNode(MakeNode(a_node, 4), nullptr).ok());
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/a"), Phase::kRunning);
  EXPECT_EQ(engine->cluster().GetNode(engine->Find("ml/a")->plan.pods[0].node).meta.name, a_node);
  EXPECT_EQ(a_executor_.events, (std::vector<std::string>{"start ml/a @0", "start ml/b @0",
                                                          "evicted ml/a @10", "start ml/a @20"}));
  int removed = 0;
  for (const LogEntry& e : engine->log().entries()) {
    if (e.action != "NodeRemoved") continue;
    ++removed;
    EXPECT_EQ(e.message, "1 nodes");
  }
  EXPECT_EQ(removed, 1);
  ExpectInvariants(*engine);
}

TEST_F(EngineRuntimeTest, ReadmittedKeepsTheClusterAndRebuildsOnlyTheQueues) {
  auto engine = NewEngine(Cluster(8, {"node-1", "node-2", "node-3"}), &a_executor_);
  ASSERT_NE(engine, nullptr);
  model::Workload a = Job("a", 1, 4), b = Job("b", 1, 4), c = Job("c", 1, 4);
  AddAndSubmit(*engine, a);
  AddAndSubmit(*engine, b);
  AddAndSubmit(*engine, c);
  Cycle(*engine);
  ASSERT_EQ(PhaseOf(*engine, "ml/c"), Phase::kPending);  // quota 8: two of three run
  const placement::ClusterState* cluster = &engine->cluster();
  const std::string a_plan = PlanString(engine->Find("ml/a")->plan, *engine);

  // The queue's quota grows to 12 (and could have changed in any other way): admission
  // is rebuilt, the cluster is the same object with the same bound pods, nothing that
  // runs is stopped, and ml/c starts on the third node.
  clock_.Set(10);
  model::ManifestSet wider = Cluster(12, {"node-1", "node-2", "node-3"});
  auto admitter = admission::MakeAdmitter(wider);
  ASSERT_TRUE(admitter.ok()) << admitter.status().ToString();
  engine = Engine::Readmitted(std::move(engine), wider, std::move(admitter).value());
  EXPECT_EQ(&engine->cluster(), cluster);
  EXPECT_EQ(PlanString(engine->Find("ml/a")->plan, *engine), a_plan);
  EXPECT_EQ(FreeGpus(*engine), 4);
  ExpectInvariants(*engine);
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/c"), Phase::kRunning);
  EXPECT_EQ(a_executor_.events,
            (std::vector<std::string>{"start ml/a @0", "start ml/b @0", "start ml/c @10"}));
  const LogEntry* reconfigured = nullptr;
  for (const LogEntry& e : engine->log().entries()) {
    if (e.action == "Reconfigured") reconfigured = &e;
  }
  ASSERT_NE(reconfigured, nullptr);
  EXPECT_EQ(reconfigured->reason, "QueuesChanged");
  EXPECT_EQ(reconfigured->message, "3 nodes, 2 running gangs kept");

  // The ClusterQueue is gone: what it admitted is stopped, its nodes freed, and it
  // waits again with the reason.
  clock_.Set(20);
  model::ManifestSet queueless = Cluster(12, {"node-1", "node-2", "node-3"});
  queueless.cluster_queues.clear();
  admitter = admission::MakeAdmitter(queueless);
  ASSERT_TRUE(admitter.ok()) << admitter.status().ToString();
  engine = Engine::Readmitted(std::move(engine), queueless, std::move(admitter).value());
  EXPECT_EQ(&engine->cluster(), cluster);
  EXPECT_EQ(FreeGpus(*engine), 12);
  for (const char* key : {"ml/a", "ml/b", "ml/c"}) {
    const WorkloadRecord* r = engine->Find(key);
    EXPECT_EQ(r->phase, Phase::kPending) << key;
    ASSERT_EQ(r->evictions.size(), 1u) << key;
    EXPECT_EQ(r->evictions[0].reason, kReasonConfigurationChanged);
  }
  Cycle(*engine);
  EXPECT_EQ(PhaseOf(*engine, "ml/a"), Phase::kPending);
  EXPECT_EQ(a_executor_.events.size(), 6u);
  ExpectInvariants(*engine);
}

}  // namespace
}  // namespace muster::engine
