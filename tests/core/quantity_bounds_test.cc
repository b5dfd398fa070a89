// The bounds every resource amount must respect (core/quantity_bounds.h).
#include "core/quantity_bounds.h"

#include <gtest/gtest.h>

#include <string>

namespace muster {
namespace {

std::string Check(const std::string& name, const std::string& text, QuantityScope scope) {
  auto q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text;
  return q.ok() ? CheckQuantityBound(name, *q, scope) : "unparsable";
}

TEST(QuantityBounds, IntegerResourcesFollowKubernetes) {
  EXPECT_TRUE(IsIntegerResource("nvidia.com/gpu"));
  EXPECT_TRUE(IsIntegerResource("muster.dev/gpu-milli"));
  EXPECT_TRUE(IsIntegerResource("pods"));
  EXPECT_TRUE(IsIntegerResource("count/jobs.batch"));
  EXPECT_FALSE(IsIntegerResource("cpu"));
  EXPECT_FALSE(IsIntegerResource("memory"));
  EXPECT_FALSE(IsIntegerResource("kubernetes.io/foo"));
  EXPECT_FALSE(IsIntegerResource("requests.nvidia.com/gpu"));
  EXPECT_TRUE(IsByteResource("hugepages-2Mi"));
  EXPECT_TRUE(IsByteResource("ephemeral-storage"));
}

TEST(QuantityBounds, AcceptsWhatRealManifestsCarry) {
  for (auto scope : {QuantityScope::kNode, QuantityScope::kWorkload, QuantityScope::kQuota}) {
    EXPECT_EQ(Check("cpu", "250m", scope), "");
    EXPECT_EQ(Check("cpu", "512", scope), "");
    EXPECT_EQ(Check("memory", "2Ti", scope), "");
    EXPECT_EQ(Check("memory", "8Pi", scope), "");
    EXPECT_EQ(Check("nvidia.com/gpu", "8", scope), "");
    EXPECT_EQ(Check("nvidia.com/gpu", "1024", scope), "");
    EXPECT_EQ(Check("pods", "110", scope), "");
  }
  EXPECT_EQ(Check("nvidia.com/gpu", "100000", QuantityScope::kQuota), "");
  EXPECT_EQ(Check("cpu", "1G", QuantityScope::kQuota), "");
}

TEST(QuantityBounds, RefusesWhatTheEngineCannotHold) {
  EXPECT_EQ(Check("nvidia.com/gpu", "2147483648", QuantityScope::kWorkload),
            "must be less than or equal to 1000000000");
  EXPECT_EQ(Check("nvidia.com/gpu", "1e30", QuantityScope::kQuota),
            "must be less than or equal to 1000000000");
  EXPECT_EQ(Check("nvidia.com/gpu", "1025", QuantityScope::kNode),
            "must be less than or equal to 1024 (the most GPUs one node may have)");
  EXPECT_EQ(Check("nvidia.com/gpu", "1.5", QuantityScope::kWorkload), "must be an integer");
  EXPECT_EQ(Check("nvidia.com/gpu", "500m", QuantityScope::kWorkload), "must be an integer");
  EXPECT_EQ(Check("memory", "9999999999999Ti", QuantityScope::kNode),
            "must be less than or equal to 8Pi");
  EXPECT_EQ(Check("memory", "8193Ti", QuantityScope::kQuota), "must be less than or equal to 8Pi");
  EXPECT_EQ(Check("cpu", "1e30", QuantityScope::kQuota), "must be less than or equal to 1G");
  EXPECT_EQ(Check("cpu", "1000000001", QuantityScope::kWorkload),
            "must be less than or equal to 1G");
  EXPECT_EQ(Check("cpu", "-1", QuantityScope::kWorkload), "must be greater than or equal to 0");
}

}  // namespace
}  // namespace muster
