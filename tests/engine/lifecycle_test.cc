#include "engine/lifecycle.h"

#include <gtest/gtest.h>

namespace muster::engine {
namespace {

TEST(DecideOnFailureTest, NoRestartPolicyFails) {
  model::LifecycleSpec spec;
  EXPECT_EQ(DecideOnFailure(spec, 0, kEventPodFailed).action, FailureAction::kFail);
}

TEST(DecideOnFailureTest, RestartsUntilTheBudgetIsSpent) {
  model::LifecycleSpec spec;
  spec.restart_on_failure = true;
  spec.max_restarts = 2;
  EXPECT_EQ(DecideOnFailure(spec, 0, kEventPodFailed).action, FailureAction::kRestart);
  EXPECT_EQ(DecideOnFailure(spec, 1, kEventPodFailed).action, FailureAction::kRestart);
  FailureVerdict last = DecideOnFailure(spec, 2, kEventPodFailed);
  EXPECT_EQ(last.action, FailureAction::kFail);
  EXPECT_NE(last.why.find("limit 2"), std::string::npos) << last.why;
}

TEST(DecideOnFailureTest, VolcanoPolicyDecidesForItsEvent) {
  model::LifecycleSpec spec;
  spec.restart_on_failure = true;
  spec.max_restarts = 3;
  model::LifecyclePolicy abort;
  abort.events = {"PodFailed"};
  abort.action = "AbortJob";
  spec.volcano_policies = {abort};
  EXPECT_EQ(DecideOnFailure(spec, 0, kEventPodFailed).action, FailureAction::kFail);
  // Another event falls through to the generic knobs.
  EXPECT_EQ(DecideOnFailure(spec, 0, kEventPodEvicted).action, FailureAction::kRestart);
}

TEST(DecideOnFailureTest, VolcanoWildcardRestartHonoursMaxRetry) {
  model::LifecycleSpec spec;
  spec.max_restarts = 1;
  model::LifecyclePolicy restart;
  restart.events = {"*"};
  restart.action = "RestartJob";
  spec.volcano_policies = {restart};
  EXPECT_EQ(DecideOnFailure(spec, 0, kEventPodFailed).action, FailureAction::kRestart);
  EXPECT_EQ(DecideOnFailure(spec, 1, kEventPodFailed).action, FailureAction::kFail);
}

}  // namespace
}  // namespace muster::engine
