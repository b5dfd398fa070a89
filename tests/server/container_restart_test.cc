// The kubelet's in-place restart of a bare pod's container: which policies restart
// which ends, and the back-off (at once, then 10 s doubling to 5 minutes, forgotten
// after 10 minutes of running).
#include "server/container_restart.h"

#include <gtest/gtest.h>

#include <vector>

namespace muster::server {
namespace {

TEST(ContainerRestartTest, AlwaysRestartsEveryEndOnFailureOnlyAFailure) {
  EXPECT_TRUE(RestartsInPlace("Always", 0));
  EXPECT_TRUE(RestartsInPlace("Always", 1));
  EXPECT_TRUE(RestartsInPlace("", 0));  // unset is Always, a pod's default
  EXPECT_FALSE(RestartsInPlace("OnFailure", 0));
  EXPECT_TRUE(RestartsInPlace("OnFailure", 137));
  EXPECT_FALSE(RestartsInPlace("Never", 1));
}

TEST(ContainerRestartTest, BackOffStartsAtOnceThenDoublesFromTenSecondsToFiveMinutes) {
  RestartBackOff b;
  std::vector<double> waits;
  for (int i = 0; i < 8; ++i) waits.push_back(b.Wait(1));
  EXPECT_EQ(waits, (std::vector<double>{0, 10, 20, 40, 80, 160, 300, 300}));
}

TEST(ContainerRestartTest, TenMinutesOfRunningStartsTheBackOffOver) {
  RestartBackOff b;
  b.Wait(1);
  b.Wait(1);
  EXPECT_EQ(b.Wait(599), 20);
  EXPECT_EQ(b.Wait(600), 0);
  EXPECT_EQ(b.Wait(1), 10);
}

}  // namespace
}  // namespace muster::server
