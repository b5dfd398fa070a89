#include "core/resource_list.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace muster {
namespace {

Quantity Q(const char* s) { return *Quantity::Parse(s); }

ResourceList List(const std::map<std::string, Quantity>& named) {
  return ResourceList::FromQuantities(named);
}

TEST(ResourceListTest, AmountUsesKubernetesRounding) {
  EXPECT_EQ(ResourceList::Amount(kCpu, Q("500m")), 500);
  EXPECT_EQ(ResourceList::Amount(kCpu, Q("2")), 2000);
  EXPECT_EQ(ResourceList::Amount(kCpu, Q("0.1m")), 1);  // MilliValue rounds up
  EXPECT_EQ(ResourceList::Amount(kMemory, Q("1Gi")), int64_t{1} << 30);
  EXPECT_EQ(ResourceList::Amount(kMemory, Q("1.5Gi")), int64_t{3} << 29);
  EXPECT_EQ(ResourceList::Amount(kMemory, Q("100m")), 1);  // Value rounds up
  EXPECT_EQ(ResourceList::Amount(kNvidiaGpu, Q("8")), 8);
}

TEST(ResourceListTest, FromQuantitiesAndGet) {
  ResourceList r = List({{"cpu", Q("1.5")}, {"memory", Q("2Gi")}, {"nvidia.com/gpu", Q("1")}});
  EXPECT_EQ(r.Get(kCpu), 1500);
  EXPECT_EQ(r.Get(kMemory), int64_t{2} << 30);
  EXPECT_EQ(r.Get(kNvidiaGpu), 1);
  EXPECT_EQ(r.Get(kPods), 0);
  EXPECT_EQ(r.Get(ResourceNames::Intern("example.com/never-set")), 0);
}

TEST(ResourceListTest, AddSubScaled) {
  ResourceList a = List({{"cpu", Q("1")}, {"memory", Q("1Gi")}});
  ResourceList b = List({{"cpu", Q("500m")}, {"nvidia.com/gpu", Q("2")}});
  ResourceList sum = a + b;
  EXPECT_EQ(sum.Get(kCpu), 1500);
  EXPECT_EQ(sum.Get(kMemory), int64_t{1} << 30);
  EXPECT_EQ(sum.Get(kNvidiaGpu), 2);
  ResourceList diff = sum - b;
  EXPECT_EQ(diff, a);
  ResourceList neg = b - sum;
  EXPECT_TRUE(neg.HasNegative());
  EXPECT_EQ(neg.Get(kMemory), -(int64_t{1} << 30));
  EXPECT_EQ(a.Scaled(3).Get(kCpu), 3000);
  ResourceList c = a;
  c += b;
  c -= b;
  EXPECT_EQ(c, a);
  c.Add(kPods, 4);
  EXPECT_EQ(c.Get(kPods), 4);
  EXPECT_TRUE((a - a).IsZero());
}

TEST(ResourceListTest, EqualityIgnoresTrailingZeros) {
  ResourceList a = List({{"cpu", Q("1")}});
  ResourceList b = a;
  b.Set(ResourceNames::Intern("example.com/zeroed"), 5);
  b.Set(ResourceNames::Intern("example.com/zeroed"), 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, List({{"cpu", Q("2")}}));
  EXPECT_TRUE(ResourceList().IsZero());
}

TEST(ResourceListTest, LessEqual) {
  ResourceList small = List({{"cpu", Q("1")}, {"memory", Q("1Gi")}});
  ResourceList big = List({{"cpu", Q("2")}, {"memory", Q("2Gi")}, {"nvidia.com/gpu", Q("1")}});
  EXPECT_TRUE(small.LessEqual(big));
  EXPECT_FALSE(big.LessEqual(small));
  EXPECT_TRUE(small.LessEqual(small));
  EXPECT_TRUE(ResourceList().LessEqual(small));
  EXPECT_FALSE(small.LessEqual(ResourceList()));
  // A resource absent on the left counts as 0, which exceeds a negative right side.
  ResourceList negative;
  negative.Set(kNvidiaGpu, -1);
  EXPECT_FALSE(ResourceList().LessEqual(negative));
  EXPECT_FALSE(small.LessEqual(negative));
  EXPECT_TRUE(negative.LessEqual(ResourceList()));
}

TEST(ResourceListTest, Max) {
  ResourceList a = List({{"cpu", Q("2")}, {"memory", Q("1Gi")}});
  ResourceList b = List({{"cpu", Q("1")}, {"memory", Q("4Gi")}, {"nvidia.com/gpu", Q("1")}});
  ResourceList m = ResourceList::Max(a, b);
  EXPECT_EQ(m.Get(kCpu), 2000);
  EXPECT_EQ(m.Get(kMemory), int64_t{4} << 30);
  EXPECT_EQ(m.Get(kNvidiaGpu), 1);
  EXPECT_EQ(ResourceList::Max(b, a), m);
  ResourceList negative;
  negative.Set(kPods, -3);
  EXPECT_EQ(ResourceList::Max(ResourceList(), negative).Get(kPods), 0);
}

TEST(ResourceListTest, FormatAmount) {
  EXPECT_EQ(ResourceList::FormatAmount(kCpu, 500), "500m");
  EXPECT_EQ(ResourceList::FormatAmount(kCpu, 2000), "2");
  EXPECT_EQ(ResourceList::FormatAmount(kCpu, 1500), "1500m");
  EXPECT_EQ(ResourceList::FormatAmount(kCpu, -250), "-250m");
  EXPECT_EQ(ResourceList::FormatAmount(kMemory, int64_t{16} << 30), "16Gi");
  EXPECT_EQ(ResourceList::FormatAmount(kMemory, int64_t{3} << 29), "1536Mi");
  EXPECT_EQ(ResourceList::FormatAmount(kMemory, 1500), "1500");
  // Binary quantities below 1024 print as DecimalSI in Kubernetes, so 1000 bytes is "1k".
  EXPECT_EQ(ResourceList::FormatAmount(kMemory, 1000), "1k");
  EXPECT_EQ(ResourceList::FormatAmount(kEphemeralStorage, int64_t{1} << 40), "1Ti");
  EXPECT_EQ(ResourceList::FormatAmount(kNvidiaGpu, 8), "8");
  EXPECT_EQ(ResourceList::FormatAmount(kPods, 110), "110");
  EXPECT_EQ(ResourceList::FormatAmount(kPods, 1000), "1k");
  EXPECT_EQ(ResourceList::FormatAmount(kPods, 0), "0");
  EXPECT_EQ(ResourceList::FormatAmount(ResourceNames::Intern("example.com/gpu-memory"), 2048),
            "2Ki");
}

TEST(ResourceListTest, ToStringSortedByName) {
  // Interned in an order different from the name order on purpose.
  ResourceId zeta = ResourceNames::Intern("zeta.example.com/dev");
  ResourceId alpha = ResourceNames::Intern("alpha.example.com/dev");
  ResourceList r = List({{"nvidia.com/gpu", Q("1")}, {"memory", Q("16Gi")}, {"cpu", Q("4")}});
  r.Set(zeta, 2);
  r.Set(alpha, 3);
  r.Set(kPods, 0);
  EXPECT_EQ(r.ToString(),
            "alpha.example.com/dev=3,cpu=4,memory=16Gi,nvidia.com/gpu=1,zeta.example.com/dev=2");
  std::vector<ResourceId> ids = r.SortedIds();
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(ids.front(), alpha);
  EXPECT_EQ(ids.back(), zeta);
  EXPECT_EQ(ResourceList().ToString(), "");
  int visited = 0;
  r.ForEachNonZero([&](ResourceId, int64_t) { ++visited; });
  EXPECT_EQ(visited, 5);
}

}  // namespace
}  // namespace muster
