// The kube benchmark's scenario (tests/kube/kube_load.h) at smoke size with muster
// kube in this process: every pod of every gang that fits is bound, the Jobs that do
// not fit stay pending, and deleting the Jobs removes every pod. No timing is
// asserted; bench/kube_fake/ runs the same scenario at full size and reports figures.
#include "kube/kube_load.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

namespace muster::kube::testing {
namespace {

TEST(KubeLoadTest, BindsEveryFittingPodAndCleansUp) {
  LoadOptions o;
  o.nodes = 20;
  o.jobs = 24;  // 160 GPUs: 20 gangs of 8 fit, 4 Jobs stay suspended
  o.delay = std::chrono::milliseconds(2);
  o.settle_seconds = 0.2;
  o.idle_seconds = 0.5;
  o.stall_seconds = 60;
  auto scheduler = InProcessScheduler(0.2);
  LoadResult r = RunLoad(o, *scheduler);
  std::cout << "kube load: " << r.Line() << std::endl;
  EXPECT_EQ(r.stalled, "");
  EXPECT_EQ(r.fitting, 160);
  EXPECT_EQ(r.bound, 160);
  EXPECT_GE(r.pods_created, 160);
  EXPECT_GT(r.requests, 0);
  EXPECT_FALSE(r.cpu_s.has_value());  // not separable in one process
}

}  // namespace
}  // namespace muster::kube::testing
