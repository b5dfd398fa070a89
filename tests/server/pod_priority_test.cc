// The Priority admission plugin for Pods created through the API: spec.priority and
// spec.preemptionPolicy from the PriorityClass, the global default or 0; upstream's 403
// for a class that does not exist and for a stated priority that differs; an update
// that leaves them out keeps the stored ones.
#include "server/pod_priority.h"

#include <gtest/gtest.h>

#include "api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

class PodPriorityTest : public testing::ApiFixture {
 protected:
  ApiResponse CreateClass(const std::string& name, int64_t value, bool global_default = false,
                          const std::string& policy = "") {
    json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
               {"kind", "PriorityClass"},
               {"metadata", {{"name", name}}},
               {"value", value}};
    if (global_default) pc["globalDefault"] = true;
    if (!policy.empty()) pc["preemptionPolicy"] = policy;
    return Call("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", pc.dump());
  }
  ApiResponse CreatePod(const std::string& name, json spec_extra = json::object()) {
    json spec = {{"restartPolicy", "Never"},
                 {"containers", {{{"name", "main"}, {"image", "busybox"}}}}};
    spec.update(spec_extra);
    json pod = {{"metadata", {{"name", name}}}, {"spec", spec}};
    return Call("POST", "/api/v1/namespaces/default/pods", pod.dump());
  }
};

TEST_F(PodPriorityTest, APodGetsItsClassesValueAndPolicy) {
  ASSERT_EQ(CreateClass("batch-low", 100, false, "Never").code, 201);
  auto r = CreatePod("p", {{"priorityClassName", "batch-low"}});
  ASSERT_EQ(r.code, 201) << r.body;
  const json spec = Body(r)["spec"];
  EXPECT_EQ(spec["priority"], 100);
  EXPECT_EQ(spec["preemptionPolicy"], "Never");
  EXPECT_EQ(spec["priorityClassName"], "batch-low");
}

TEST_F(PodPriorityTest, WithoutAClassTheGlobalDefaultElseZero) {
  auto none = CreatePod("before");
  ASSERT_EQ(none.code, 201) << none.body;
  EXPECT_EQ(Body(none)["spec"]["priority"], 0);
  EXPECT_EQ(Body(none)["spec"]["preemptionPolicy"], "PreemptLowerPriority");
  EXPECT_FALSE(Body(none)["spec"].contains("priorityClassName"));

  ASSERT_EQ(CreateClass("other", 50).code, 201);
  ASSERT_EQ(CreateClass("default-low", 10, true).code, 201);
  auto r = CreatePod("after");
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(Body(r)["spec"]["priority"], 10);
  EXPECT_EQ(Body(r)["spec"]["priorityClassName"], "default-low");
}

TEST_F(PodPriorityTest, AClassThatDoesNotExistOrADifferentPriorityIsForbidden) {
  auto missing = CreatePod("p", {{"priorityClassName", "nosuch"}});
  ASSERT_EQ(missing.code, 403) << missing.body;
  EXPECT_EQ(Body(missing)["message"],
            "pods \"p\" is forbidden: no PriorityClass with name nosuch was found");

  ASSERT_EQ(CreateClass("high", 1000).code, 201);
  auto differs = CreatePod("q", {{"priorityClassName", "high"}, {"priority", 7}});
  ASSERT_EQ(differs.code, 403) << differs.body;
  EXPECT_EQ(Body(differs)["message"],
            "pods \"q\" is forbidden: the integer value of priority (7) must not be provided in "
            "pod spec; priority admission controller computed 1000 from the given PriorityClass "
            "name");
  auto policy = CreatePod("r", {{"priorityClassName", "high"}, {"preemptionPolicy", "Never"}});
  ASSERT_EQ(policy.code, 403) << policy.body;
  EXPECT_EQ(Body(policy)["message"],
            "pods \"r\" is forbidden: the string value of PreemptionPolicy (Never) must not be "
            "provided in pod spec; priority admission controller computed PreemptLowerPriority "
            "from the given PriorityClass name");
  // Stated and equal: accepted.
  EXPECT_EQ(CreatePod("s", {{"priorityClassName", "high"}, {"priority", 1000}}).code, 201);
}

TEST_F(PodPriorityTest, AnUpdateThatLeavesThemOutKeepsTheStoredOnes) {
  ASSERT_EQ(CreateClass("high", 1000).code, 201);
  auto created = CreatePod("p", {{"priorityClassName", "high"}});
  ASSERT_EQ(created.code, 201) << created.body;
  json pod = Body(created);
  pod["spec"].erase("priority");
  pod["spec"].erase("preemptionPolicy");
  pod["metadata"]["labels"] = {{"edited", "yes"}};
  auto updated = Call("PUT", "/api/v1/namespaces/default/pods/p", pod.dump());
  ASSERT_EQ(updated.code, 200) << updated.body;
  EXPECT_EQ(Body(updated)["spec"]["priority"], 1000);
  EXPECT_EQ(Body(updated)["metadata"]["labels"]["edited"], "yes");
  // A changed priority is a changed spec, which a pod update may not make.
  json changed = Body(updated);
  changed["spec"]["priority"] = 5;
  EXPECT_EQ(Call("PUT", "/api/v1/namespaces/default/pods/p", changed.dump()).code, 422);
}

}  // namespace
}  // namespace muster::server
