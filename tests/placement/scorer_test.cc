// One typed suite runs the same checks over every scorer, then per-policy checks.
#include <gtest/gtest.h>

#include <memory>

#include "placement/scorers/best_fit_scorer.h"
#include "placement/scorers/binpack_scorer.h"
#include "placement/scorers/fgd_scorer.h"
#include "placement/scorers/gpu_packing_scorer.h"
#include "placement/scorers/least_allocated_scorer.h"
#include "placement/scorers/taint_penalty_scorer.h"

namespace muster::placement {
namespace {

struct NodeCase {
  ResourceList alloc, used, request;
  std::vector<int32_t> device_used, chosen;
  int32_t milli = 0;
  std::vector<model::Taint> taints;
  std::vector<model::Toleration> tolerations;
  ScoreInput Input() const {
    return ScoreInput{alloc, used, request, device_used, chosen, milli, taints, tolerations};
  }
};

NodeCase Case(int64_t gpus, int64_t used_gpus, int64_t want_gpus) {
  NodeCase c;
  c.alloc.Set(kCpu, 64000);
  c.alloc.Set(kMemory, 512);
  c.alloc.Set(kNvidiaGpu, gpus);
  c.used.Set(kCpu, 8000 * used_gpus);
  c.used.Set(kNvidiaGpu, used_gpus);
  c.request.Set(kCpu, 8000 * want_gpus);
  c.request.Set(kNvidiaGpu, want_gpus);
  c.device_used.assign(gpus, 0);
  for (int64_t d = 0; d < used_gpus; ++d) c.device_used[d] = 1000;
  for (int64_t d = used_gpus; d < used_gpus + want_gpus; ++d)
    c.chosen.push_back(static_cast<int32_t>(d));
  return c;
}

template <typename T>
class ScorerSuite : public ::testing::Test {
 protected:
  T scorer_;
};

using AllScorers = ::testing::Types<BinpackScorer, LeastAllocatedScorer, GpuPackingScorer,
                                    BestFitScorer, FgdScorer, TaintPenaltyScorer>;
TYPED_TEST_SUITE(ScorerSuite, AllScorers);

TYPED_TEST(ScorerSuite, ScoresInRangeAndDeterministic) {
  for (int64_t used = 0; used <= 7; ++used) {
    NodeCase c = Case(8, used, 1);
    int64_t s = this->scorer_.Score(c.Input());
    EXPECT_GE(s, 0);
    EXPECT_LE(s, kMaxScore);
    EXPECT_EQ(s, this->scorer_.Score(c.Input()));
  }
  EXPECT_FALSE(this->scorer_.Name().empty());
}

TYPED_TEST(ScorerSuite, HandlesNodesWithoutGpus) {
  NodeCase c = Case(0, 0, 0);
  int64_t s = this->scorer_.Score(c.Input());
  EXPECT_GE(s, 0);
  EXPECT_LE(s, kMaxScore);
}

TYPED_TEST(ScorerSuite, OrderingMatchesPreference) {
  if (std::string(this->scorer_.Name()) == "taint-penalty") GTEST_SKIP();
  NodeCase fuller = Case(8, 6, 1);
  NodeCase emptier = Case(8, 0, 1);
  int64_t f = this->scorer_.Score(fuller.Input());
  int64_t e = this->scorer_.Score(emptier.Input());
  if (this->scorer_.PrefersFullNodes()) {
    EXPECT_GE(f, e);
  } else {
    EXPECT_GT(e, f);
  }
}

TEST(Binpack, VolcanoFormula) {
  BinpackScorer s({{"cpu", 1}, {"nvidia.com/gpu", 3}});
  NodeCase c = Case(8, 2, 2);  // cpu (16+16)/64 = 0.5, gpu 4/8 = 0.5
  EXPECT_EQ(s.Score(c.Input()), 500);
  NodeCase full = Case(8, 6, 2);  // cpu 64/64 = 1, gpu 8/8 = 1
  EXPECT_EQ(s.Score(full.Input()), 1000);
}

TEST(MulDiv, ExactInSixtyFourBitsAndBeyond) {
  EXPECT_EQ(MulDiv(7, 1000, 8), 875);
  EXPECT_EQ(MulDiv(0, 1000, 3), 0);
  // 1 TiB of memory times kMaxScore fits in 64 bits; the quotient truncates as before.
  const int64_t tib = int64_t{1} << 40;
  EXPECT_EQ(MulDiv(tib - 1, kMaxScore, tib), 999);
  // A product past 64 bits is computed in 128, exactly.
  const int64_t big = INT64_MAX / 3;
  EXPECT_EQ(MulDiv(big, 1000, big), 1000);
  EXPECT_EQ(MulDiv(big, 6, 4), static_cast<int64_t>(static_cast<__int128>(big) * 6 / 4));
}

TEST(TaintPenalty, PreferNoScheduleCostsScore) {
  TaintPenaltyScorer s;
  NodeCase c = Case(8, 0, 1);
  EXPECT_EQ(s.Score(c.Input()), kMaxScore);
  c.taints = {{"soft", "", model::TaintEffect::kPreferNoSchedule}};
  EXPECT_LT(s.Score(c.Input()), kMaxScore);
  c.tolerations = {{"soft", model::TolerationOperator::kExists, "", std::nullopt, {}}};
  EXPECT_EQ(s.Score(c.Input()), kMaxScore);
}

TEST(Fgd, PrefersFillingAPartlySharedDevice) {
  FgdScorer s;
  NodeCase c;
  c.alloc.Set(kNvidiaGpu, 2);
  c.device_used = {500, 0};
  c.milli = 500;
  c.chosen = {0};
  int64_t shared = s.Score(c.Input());
  c.chosen = {1};
  int64_t fresh = s.Score(c.Input());
  EXPECT_GT(shared, fresh);
}

}  // namespace
}  // namespace muster::placement
