// PriorityClasses as kube-apiserver keeps them: the `system-` prefix reserved, a user
// class's value bounded, one global default (create, update and patch), the system
// classes not deletable.
#include "server/priority_classes.h"

#include <gtest/gtest.h>

#include "api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr char kPath[] = "/apis/scheduling.k8s.io/v1/priorityclasses";

json Class(const std::string& name, int64_t value, bool global_default = false) {
  json pc = {{"apiVersion", "scheduling.k8s.io/v1"},
             {"kind", "PriorityClass"},
             {"metadata", {{"name", name}}},
             {"value", value}};
  if (global_default) pc["globalDefault"] = true;
  return pc;
}

class PriorityClassesTest : public testing::ApiFixture {};

TEST_F(PriorityClassesTest, TheSystemPrefixIsReservedAndAUserValueBounded) {
  auto r = Call("POST", kPath, Class("system-mine", 5).dump());
  ASSERT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(Body(r)["message"],
            "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: "
            "Forbidden: priority class names with 'system-' prefix are reserved for system use "
            "only. error: system-mine is not a known system priority class");
  r = Call("POST", kPath, Class("system-node-critical", 7).dump());
  ASSERT_EQ(r.code, 422) << r.body;
  EXPECT_NE(Body(r)["message"].get<std::string>().find(
                "value of system-node-critical PriorityClass must be 2000001000"),
            std::string::npos);
  r = Call("POST", kPath, Class("huge", 1'000'000'001).dump());
  ASSERT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(Body(r)["message"],
            "PriorityClass.scheduling.k8s.io \"huge\" is invalid: value: Forbidden: maximum "
            "allowed value of a user defined priority is 1000000000");
  EXPECT_EQ(Call("POST", kPath, Class("top", 1'000'000'000).dump()).code, 201);
  // The system classes as upstream stores them are valid.
  for (const json& pc : SystemPriorityClasses()) {
    EXPECT_TRUE(ValidatePriorityClass(pc).empty()) << pc.dump();
  }
}

TEST_F(PriorityClassesTest, OneGlobalDefaultOnCreateUpdateAndPatch) {
  ASSERT_EQ(Call("POST", kPath, Class("first", 1, true).dump()).code, 201);
  auto r = Call("POST", kPath, Class("second", 2, true).dump());
  ASSERT_EQ(r.code, 403) << r.body;
  EXPECT_EQ(Body(r)["message"],
            "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass first is "
            "already marked as default. Only one default can exist");
  auto created = Call("POST", kPath, Class("third", 3).dump());
  ASSERT_EQ(created.code, 201);
  json third = Body(created);
  third["globalDefault"] = true;
  EXPECT_EQ(Call("PUT", std::string(kPath) + "/third", third.dump()).code, 403);
  EXPECT_EQ(Call("PATCH", std::string(kPath) + "/third", R"({"globalDefault":true})",
                 "application/merge-patch+json")
                .code,
            403);
  // The default itself may be updated, and another marked once it is not.
  EXPECT_EQ(Call("PATCH", std::string(kPath) + "/first", R"({"description":"d"})",
                 "application/merge-patch+json")
                .code,
            200);
  EXPECT_EQ(Call("PATCH", std::string(kPath) + "/first", R"({"globalDefault":false})",
                 "application/merge-patch+json")
                .code,
            200);
  EXPECT_EQ(Call("PATCH", std::string(kPath) + "/third", R"({"globalDefault":true})",
                 "application/merge-patch+json")
                .code,
            200);
}

TEST_F(PriorityClassesTest, ASystemClassCannotBeDeleted) {
  for (const json& pc : SystemPriorityClasses()) {
    ASSERT_EQ(Call("POST", kPath, pc.dump()).code, 201);
  }
  auto r = Call("DELETE", std::string(kPath) + "/system-cluster-critical");
  ASSERT_EQ(r.code, 403) << r.body;
  EXPECT_EQ(Body(r)["message"],
            "priorityclasses.scheduling.k8s.io \"system-cluster-critical\" is forbidden: this is "
            "a system priority class and cannot be deleted");
  ASSERT_EQ(Call("POST", kPath, Class("mine", 1).dump()).code, 201);
  EXPECT_EQ(Call("DELETE", std::string(kPath) + "/mine").code, 200);
}

}  // namespace
}  // namespace muster::server
