// LimitRanger for Pods created through the API: defaults filled and noted, upstream's
// 403 outside the Container and Pod bounds, nothing done where no range applies.
#include "server/limit_ranger.h"

#include <gtest/gtest.h>

#include "api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

class LimitRangerTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    json range = {{"metadata", {{"name", "bounds"}}},
                  {"spec",
                   {{"limits",
                     {{{"type", "Container"},
                       {"default", {{"cpu", "500m"}, {"memory", "256Mi"}}},
                       {"defaultRequest", {{"cpu", "100m"}}},
                       {"max", {{"cpu", "2"}}},
                       {"min", {{"cpu", "50m"}}}},
                      {{"type", "Pod"}, {"max", {{"memory", "1Gi"}}}}}}}}};
    ASSERT_EQ(Call("POST", "/api/v1/namespaces/team-a/limitranges", range.dump()).code, 201);
  }
  ApiResponse CreatePod(const std::string& ns, const std::string& name, json containers) {
    json pod = {{"metadata", {{"name", name}}}, {"spec", {{"containers", std::move(containers)}}}};
    return Call("POST", "/api/v1/namespaces/" + ns + "/pods", pod.dump());
  }
  static json Container(const std::string& name, json resources) {
    return {{"name", name}, {"image", "busybox"}, {"resources", std::move(resources)}};
  }
};

TEST_F(LimitRangerTest, DefaultsFillWhatAContainerLacksAndAreNoted) {
  auto r = CreatePod("team-a", "p", json::array({Container("main", {{"limits", {{"cpu", "1"}}}})}));
  ASSERT_EQ(r.code, 201) << r.body;
  const json pod = Body(r);
  const json& resources = pod["spec"]["containers"][0]["resources"];
  // The stated limit is also the request; the defaults fill only memory.
  EXPECT_EQ(resources["limits"], (json{{"cpu", "1"}, {"memory", "256Mi"}}));
  EXPECT_EQ(resources["requests"], (json{{"cpu", "1"}, {"memory", "256Mi"}}));
  EXPECT_EQ(pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
            "LimitRanger plugin set: memory request for container main; memory limit for "
            "container main");
}

TEST_F(LimitRangerTest, OutsideTheBoundsIsForbiddenWithUpstreamsMessages) {
  auto r = CreatePod("team-a", "p",
                     json::array({Container("a", {{"limits", {{"cpu", "3"}, {"memory", "2Gi"}}}}),
                                  Container("b", {{"requests", {{"cpu", "10m"}}}})}));
  ASSERT_EQ(r.code, 403) << r.body;
  EXPECT_EQ(Body(r)["reason"], "Forbidden");
  EXPECT_EQ(Body(r)["message"],
            "pods \"p\" is forbidden: [maximum cpu usage per Container is 2, but limit is 3, "
            "minimum cpu usage per Container is 50m, but request is 10m, maximum memory usage "
            "per Pod is 1Gi, but limit is 2304Mi]");
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/team-a/pods/p").code, 404);
}

TEST_F(LimitRangerTest, ANamespaceWithoutRangesKeepsThePodAsSent) {
  auto r = CreatePod("default", "p", json::array({Container("main", json::object())}));
  ASSERT_EQ(r.code, 201) << r.body;
  const json pod = Body(r);
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"], json::object());
  EXPECT_FALSE(
      pod["metadata"].value("annotations", json::object()).contains("kubernetes.io/limit-ranger"));
}

}  // namespace
}  // namespace muster::server
