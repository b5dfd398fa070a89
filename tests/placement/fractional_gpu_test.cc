#include <gtest/gtest.h>

#include "placement/node_info.h"
#include "placement/placement.h"
#include "placement_test_util.h"

namespace muster::placement {
namespace {

using namespace testing;  // NOLINT: test builders

model::Workload Fraction(const std::string& key, int32_t count, int64_t milli) {
  auto ps = MakePodSet("main", count, 0, 500);
  ps.requests.Set(GpuMilliId(), milli);
  return MakeWorkload(key, {ps});
}

TEST(FractionalGpu, PodsShareOneDevice) {
  auto s = Build({MakeNode("a", 2)});
  for (auto policy : {model::ScoringPolicy::kBinpack, model::ScoringPolicy::kFgd,
                      model::ScoringPolicy::kGpuPacking}) {
    auto st = Build({MakeNode("a", 2)});
    model::SchedulerConfiguration cfg;
    cfg.scoring = policy;
    auto planner = MakeGangPlanner(cfg);
    // Four quarter-GPU pods pack onto device 0, leaving device 1 whole.
    for (int i = 0; i < 4; ++i) {
      auto w = Fraction("ns/q" + std::to_string(i), 1, 250);
      auto p = planner->Plan(*st, Request(w));
      ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
      EXPECT_EQ(std::get<GangPlan>(p).pods[0].gpus, std::vector<int32_t>{0});
      ASSERT_TRUE(st->Commit(std::get<GangPlan>(p), w).ok());
    }
    EXPECT_EQ(st->Free(0).Get(kNvidiaGpu), 1);
    auto whole = MakeWorkload("ns/whole", {MakePodSet("main", 1, 1)});
    auto p = planner->Plan(*st, Request(whole));
    ASSERT_TRUE(std::holds_alternative<GangPlan>(p));
    EXPECT_EQ(std::get<GangPlan>(p).pods[0].gpus, std::vector<int32_t>{1});
    EXPECT_TRUE(st->CheckInvariants().empty());
  }
}

TEST(FractionalGpu, OverCommitRefused) {
  auto s = Build({MakeNode("a", 1)});
  auto w = Fraction("ns/w", 3, 400);  // 1200 milli on one device
  auto p = MakeGangPlanner({})->Plan(*s, Request(w));
  ASSERT_TRUE(std::holds_alternative<PlacementFailure>(p));
  auto ok = Fraction("ns/ok", 2, 400);
  auto q = MakeGangPlanner({})->Plan(*s, Request(ok));
  ASSERT_TRUE(std::holds_alternative<GangPlan>(q));
  ASSERT_TRUE(s->Commit(std::get<GangPlan>(q), ok).ok());
  // A whole-GPU pod cannot use a partly shared device.
  auto whole = MakeWorkload("ns/whole", {MakePodSet("main", 1, 1)});
  EXPECT_TRUE(
      std::holds_alternative<PlacementFailure>(MakeGangPlanner({})->Plan(*s, Request(whole))));
  EXPECT_EQ(s->Free(0).Get(GpuMilliId()), 200);
  s->Release("ns/ok");
  EXPECT_EQ(s->Free(0).Get(GpuMilliId()), 1000);
  EXPECT_TRUE(s->CheckInvariants().empty());
}

TEST(FractionalGpu, MigProfilesArePlainResources) {
  auto n = MakeNode("a", 0);
  n.allocatable.Set(ResourceNames::Intern("nvidia.com/mig-1g.10gb"), 7);
  auto s = Build({n});
  auto ps = MakePodSet("main", 7, 0, 100);
  ps.requests.Set(ResourceNames::Intern("nvidia.com/mig-1g.10gb"), 1);
  auto w = MakeWorkload("ns/mig", {ps});
  EXPECT_TRUE(std::holds_alternative<GangPlan>(MakeGangPlanner({})->Plan(*s, Request(w))));
  w.pod_sets[0].count = 8;
  EXPECT_TRUE(std::holds_alternative<PlacementFailure>(MakeGangPlanner({})->Plan(*s, Request(w))));
}

}  // namespace
}  // namespace muster::placement
