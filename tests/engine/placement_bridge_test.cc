// PlacementBridge's hand-over of committed plans (engine/placement_bridge.h): what
// Commit binds is taken once, by key, in any order; what nobody takes is reported
// as untaken, so the engine can release it.
#include "engine/placement_bridge.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "placement/placement.h"

namespace muster::engine {
namespace {

model::Node BridgeNode(const std::string& name) {
  model::Node n;
  n.meta.name = name;
  n.meta.labels["kubernetes.io/hostname"] = name;
  n.allocatable.Set(kCpu, 64000);
  n.allocatable.Set(kMemory, int64_t{512} << 30);
  n.allocatable.Set(kNvidiaGpu, 8);
  n.allocatable.Set(kPods, 110);
  return n;
}

// One pod of two GPUs.
model::Workload BridgeWorkload(const std::string& key) {
  model::Workload w;
  w.key = key;
  w.meta.name = key.substr(key.find('/') + 1);
  model::PodSet ps;
  ps.name = "main";
  ps.count = ps.min_count = 1;
  ps.requests.Set(kCpu, 1000);
  ps.requests.Set(kMemory, int64_t{1} << 30);
  ps.requests.Set(kNvidiaGpu, 2);
  w.pod_sets.push_back(ps);
  w.min_available = 1;
  return w;
}

class PlacementBridgeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto state = placement::BuildClusterState({BridgeNode("n1"), BridgeNode("n2")}, {}, {}, {});
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    state_ = std::move(state).value();
    planner_ = placement::MakeGangPlanner(model::SchedulerConfiguration{});
    bridge_ = std::make_unique<PlacementBridge>(std::vector<model::ResourceFlavor>{}, *state_);
    bridge_->SetPlanner(planner_.get());
    for (const char* name : {"ml/a", "ml/b", "ml/c"}) {
      workloads_.push_back(BridgeWorkload(name));
    }
  }
  // CanPlace, then Commit, as admission does for a workload it admits.
  void Admit(const model::Workload& w) {
    admission::Assignment none;
    ASSERT_TRUE(bridge_->CanPlace(w, none, {}).fits) << w.key;
    bridge_->Commit(w, none);
  }

  std::unique_ptr<placement::ClusterState> state_;
  std::unique_ptr<placement::GangPlanner> planner_;
  std::unique_ptr<PlacementBridge> bridge_;
  std::vector<model::Workload> workloads_;
};

TEST_F(PlacementBridgeTest, CommittedPlansAreTakenOnceByKeyInAnyOrder) {
  for (const auto& w : workloads_) Admit(w);
  EXPECT_EQ(bridge_->UntakenKeys(), (std::vector<std::string>{"ml/a", "ml/b", "ml/c"}));

  // Out of commit order: b first, then a.
  auto b = bridge_->TakeCommitted("ml/b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->pods.size(), 1u);
  EXPECT_FALSE(bridge_->TakeCommitted("ml/b").has_value()) << "taken twice";
  EXPECT_EQ(bridge_->UntakenKeys(), (std::vector<std::string>{"ml/a", "ml/c"}));
  EXPECT_TRUE(bridge_->TakeCommitted("ml/a").has_value());
  EXPECT_FALSE(bridge_->TakeCommitted("ml/unknown").has_value());
  EXPECT_EQ(bridge_->UntakenKeys(), (std::vector<std::string>{"ml/c"}));
  EXPECT_TRUE(bridge_->TakeCommitted("ml/c").has_value());
  EXPECT_TRUE(bridge_->UntakenKeys().empty());

  // A later pass commits into the same storage.
  state_->Release("ml/a");
  Admit(workloads_[0]);
  EXPECT_EQ(bridge_->UntakenKeys(), (std::vector<std::string>{"ml/a"}));
  EXPECT_TRUE(bridge_->TakeCommitted("ml/a").has_value());
  EXPECT_TRUE(state_->CheckInvariants().empty());
}

TEST_F(PlacementBridgeTest, AWorkloadCommittedWithoutAFitPlansAgain) {
  // No CanPlace first: Commit plans and binds on its own.
  admission::Assignment none;
  bridge_->Commit(workloads_[2], none);
  auto plan = bridge_->TakeCommitted("ml/c");
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->pods.size(), 1u);
  EXPECT_EQ(bridge_->CommitError("ml/c"), "");
}

}  // namespace
}  // namespace muster::engine
