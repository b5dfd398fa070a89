#include "workloads/limit_ranges.h"

#include <gtest/gtest.h>

#include "test_jobs.h"
#include "workloads/workloads.h"

namespace muster::workloads {
namespace {

using testing::BatchJob;
using testing::List;
using testing::MakeContainer;
using testing::Q;
using testing::Res;

model::LimitRange Range(std::string name, std::string ns, model::LimitRangeItem item) {
  model::LimitRange r;
  r.meta.name = std::move(name);
  r.meta.namespace_ = std::move(ns);
  r.limits.push_back(std::move(item));
  return r;
}

model::LimitRangeItem ContainerItem(model::QuantityMap default_request, model::QuantityMap def,
                                    model::QuantityMap max = {}, model::QuantityMap min = {}) {
  model::LimitRangeItem item;
  item.type = "Container";
  item.default_request = std::move(default_request);
  item.default_limit = std::move(def);
  item.max = std::move(max);
  item.min = std::move(min);
  return item;
}

model::Workload BuildWith(const model::BatchJob& job, const model::ManifestSet& m) {
  Result<model::Workload> w = BuildWorkload(job, m);
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : model::Workload();
}

TEST(LimitRangesTest, ContainerDefaultsFillWhatTheTemplateLacks) {
  model::BatchJob job = BatchJob("train", 2);
  job.meta.namespace_ = "ml";
  // cpu asked for; memory not: the defaults give it memory, and a limit.
  job.spec.tmpl.spec.containers = {MakeContainer("main", Res({{"cpu", "2"}}))};
  model::ManifestSet m;
  m.limit_ranges.push_back(
      Range("defaults", "ml",
            ContainerItem(Res({{"cpu", "500m"}, {"memory", "1Gi"}}), Res({{"memory", "2Gi"}}))));
  model::Workload w = BuildWith(job, m);
  ASSERT_EQ(w.pod_sets.size(), 1u);
  EXPECT_EQ(w.pod_sets[0].requests, List({{"cpu", "2"}, {"memory", "1Gi"}}));
  const model::Container& c = w.pod_sets[0].tmpl.spec.containers[0];
  EXPECT_EQ(c.limits.at("memory"), Q("2Gi"));
  EXPECT_EQ(c.requests.at("cpu"), Q("2"));  // its own request stays
  EXPECT_TRUE(w.inadmissible.empty());

  // Another namespace's ranges do not apply.
  job.meta.namespace_ = "other";
  EXPECT_EQ(BuildWith(job, m).pod_sets[0].requests, List({{"cpu", "2"}}));
}

TEST(LimitRangesTest, FirstDefaultByNameLowestMaxHighestMin) {
  model::ManifestSet m;
  m.limit_ranges.push_back(Range(
      "b", "ml", ContainerItem(Res({{"cpu", "3"}}), {}, Res({{"cpu", "8"}}), Res({{"cpu", "1"}}))));
  m.limit_ranges.push_back(
      Range("a", "ml",
            ContainerItem(Res({{"cpu", "2"}}), {}, Res({{"cpu", "4"}}), Res({{"cpu", "500m"}}))));
  LimitRangeSummary s = SummarizeLimitRanges(m.limit_ranges, "ml");
  ASSERT_TRUE(s.has_container);
  EXPECT_FALSE(s.has_pod);
  EXPECT_EQ(s.container.default_request.at("cpu"), Q("2"));  // "a" sorts first
  EXPECT_EQ(s.container.max.at("cpu"), Q("4"));
  EXPECT_EQ(s.container.min.at("cpu"), Q("1"));
}

TEST(LimitRangesTest, OutsideTheBoundsIsInadmissibleWithKueuesMessage) {
  model::BatchJob job = BatchJob("big", 1);
  job.meta.namespace_ = "ml";
  job.spec.tmpl.spec.containers = {MakeContainer("main", Res({{"cpu", "6"}})),
                                   MakeContainer("side", Res({{"cpu", "100m"}}))};
  model::ManifestSet m;
  m.limit_ranges.push_back(
      Range("bounds", "ml", ContainerItem({}, {}, Res({{"cpu", "4"}}), Res({{"cpu", "250m"}}))));
  model::LimitRangeItem pod;
  pod.type = "Pod";
  pod.max = Res({{"cpu", "5"}});
  m.limit_ranges.push_back(Range("pods", "ml", pod));
  model::Workload w = BuildWith(job, m);
  EXPECT_EQ(w.inadmissible,
            "didn't satisfy LimitRange constraints: "
            "podSets.main.containers[0]: Invalid value: []string{\"cpu\"}: requests must not be "
            "above the limitRange max; "
            "podSets.main.containers[1]: Invalid value: []string{\"cpu\"}: requests must not be "
            "below the limitRange min; "
            "podSets.main: Invalid value: []string{\"cpu\"}: requests must not be above the "
            "limitRange max");

  // Within them: admissible.
  job.spec.tmpl.spec.containers = {MakeContainer("main", Res({{"cpu", "2"}}))};
  EXPECT_TRUE(BuildWith(job, m).inadmissible.empty());
}

TEST(LimitRangesTest, AMinimumWithNoRequestIsBroken) {
  model::BatchJob job = BatchJob("tiny", 1);
  job.meta.namespace_ = "ml";
  job.spec.tmpl.spec.containers = {MakeContainer("main", {})};
  model::LimitRangeItem item;
  item.type = "Container";
  item.min = Res({{"memory", "64Mi"}});  // no default request: nothing fills it
  model::ManifestSet m;
  m.limit_ranges.push_back(Range("min", "ml", item));
  EXPECT_NE(BuildWith(job, m).inadmissible.find("podSets.main.containers[0]: Invalid value: "
                                                "[]string{\"memory\"}: requests must not be below"),
            std::string::npos);
}

}  // namespace
}  // namespace muster::workloads
