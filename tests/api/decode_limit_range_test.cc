#include <gtest/gtest.h>

#include <algorithm>

#include "core/quantity.h"
#include "test_util.h"

namespace muster::api {
namespace {

using testing::Decode;
using testing::Lines;

Quantity Qty(std::string_view text) { return Quantity::Parse(text).value(); }

TEST(DecodeLimitRange, ContainerItemsAreDefaultedAsUpstream) {
  auto r = Decode(R"(apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: ml}
spec:
  limits:
  - type: Container
    max: {cpu: "4", memory: 8Gi}
    min: {cpu: 100m}
    default: {memory: 2Gi}
  - type: Pod
    max: {nvidia.com/gpu: "8"}
)");
  ASSERT_TRUE(Lines(r).empty()) << Lines(r)[0];
  ASSERT_EQ(r.manifests.limit_ranges.size(), 1u);
  const model::LimitRange& lr = r.manifests.limit_ranges[0];
  EXPECT_EQ(lr.meta.namespace_, "ml");
  ASSERT_EQ(lr.limits.size(), 2u);
  const model::LimitRangeItem& c = lr.limits[0];
  // default from max where unset; defaultRequest from default, then from min.
  EXPECT_EQ(c.default_limit.at("cpu"), Qty("4"));
  EXPECT_EQ(c.default_limit.at("memory"), Qty("2Gi"));
  EXPECT_EQ(c.default_request.at("cpu"), Qty("4"));
  EXPECT_EQ(c.default_request.at("memory"), Qty("2Gi"));
  // A Pod item gets no defaults.
  EXPECT_TRUE(lr.limits[1].default_request.empty());
  EXPECT_EQ(lr.limits[1].max.at("nvidia.com/gpu"), Qty("8"));
}

TEST(DecodeLimitRange, RefusedAsKubeApiserverRefuses) {
  auto r = Decode(R"(apiVersion: v1
kind: LimitRange
metadata: {name: bad, namespace: ml}
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
    min: {cpu: "2"}
    maxLimitRequestRatio: {memory: 500m}
  - type: Pod
    default: {cpu: "1"}
  - type: Container
  - type: Widget
  - type: Container
    default: {nvidia.com/gpu: "2", gpus: "1"}
    defaultRequest: {nvidia.com/gpu: "1"}
  - type: PersistentVolumeClaim
    max: {cpu: "1"}
)");
  std::vector<std::string> want = {
      "LimitRange ml/bad: spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 "
      "is greater than max value 1",
      "LimitRange ml/bad: spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: "
      "\"500m\": ratio 500m is less than 1",
      "LimitRange ml/bad: spec.limits[1].default: Forbidden: may not be specified when "
      "`type` is 'Pod'",
      "LimitRange ml/bad: spec.limits[2].type: Duplicate value: \"Container\"",
      "LimitRange ml/bad: spec.limits[3].type: Invalid value: \"Widget\": must be a "
      "standard limit type or fully qualified",
  };
  std::vector<std::string> got = Lines(r);
  auto has = [&](std::string_view part) {
    return std::any_of(got.begin(), got.end(),
                       [&](const std::string& l) { return l.find(part) != std::string::npos; });
  };
  for (const std::string& line : want) EXPECT_TRUE(has(line)) << line;
  // The GPU defaults must agree; "gpus" is no container resource; a claim item
  // needs storage bounds.
  EXPECT_TRUE(
      has("spec.limits[4].defaultRequest[nvidia.com/gpu]: Invalid value: \"1\": default "
          "value 2 must equal to defaultRequest value 1 in nvidia.com/gpu"));
  EXPECT_TRUE(
      has("spec.limits[4].default[gpus]: Invalid value: \"gpus\": must be a standard "
          "resource for containers"));
  EXPECT_TRUE(has("spec.limits[5].limits: Required value: either minimum or maximum storage"));
  EXPECT_TRUE(r.manifests.limit_ranges.empty());
}

}  // namespace
}  // namespace muster::api
