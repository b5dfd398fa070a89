#include "server/strategic_merge_patch.h"

#include <gtest/gtest.h>

#include "control/resource_types.h"

namespace muster::server {
namespace {

using nlohmann::json;

const PatchSchema* PodSchema() { return SchemaOf(*control::FindByKind("v1", "Pod")); }

json PodDoc() {
  return json::parse(R"({"metadata":{"name":"p","finalizers":["a","b"]},
    "spec":{"containers":[
      {"name":"main","image":"i:1","args":["x"],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
       "volumeMounts":[{"name":"v","mountPath":"/v"}]},
      {"name":"side","image":"s:1"}],
     "tolerations":[{"key":"k1"}],
     "volumes":[{"name":"v","emptyDir":{}}]}})");
}

json Patched(const std::string& patch, const PatchSchema* schema = PodSchema()) {
  auto r = ApplyStrategicMergePatch(PodDoc(), json::parse(patch), schema);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : json();
}

TEST(StrategicMergePatchTest, ListsMergeByTheirKeys) {
  json p = Patched(R"({"spec":{"containers":[
      {"name":"main","env":[{"name":"B","value":"3"},{"name":"C","value":"4"}],
       "args":["y"]}]}})");
  const json& main = p["spec"]["containers"][0];
  EXPECT_EQ(main["image"], "i:1");  // untouched members stay
  EXPECT_EQ(main["env"], json::parse(R"([{"name":"A","value":"1"},{"name":"B","value":"3"},
                                         {"name":"C","value":"4"}])"));
  EXPECT_EQ(main["args"], json::parse(R"(["y"])"));  // atomic: replaced
  EXPECT_EQ(p["spec"]["containers"].size(), 2u);     // side kept
  // A merge patch would have replaced the list, losing `side`.
  json q = Patched(R"({"spec":{"tolerations":[{"key":"k2"}]}})");
  EXPECT_EQ(q["spec"]["tolerations"], json::parse(R"([{"key":"k2"}])"));
}

TEST(StrategicMergePatchTest, Directives) {
  json del = Patched(R"({"spec":{"containers":[{"name":"side","$patch":"delete"},
      {"name":"main","env":[{"name":"A","$patch":"delete"}]}]}})");
  ASSERT_EQ(del["spec"]["containers"].size(), 1u);
  EXPECT_EQ(del["spec"]["containers"][0]["env"], json::parse(R"([{"name":"B","value":"2"}])"));
  json rep = Patched(R"({"spec":{"containers":[{"name":"only","image":"o"},
      {"$patch":"replace"}]}})");
  EXPECT_EQ(rep["spec"]["containers"], json::parse(R"([{"name":"only","image":"o"}])"));
  json map_rep = Patched(R"({"metadata":{"$patch":"replace","name":"p"}})");
  EXPECT_EQ(map_rep["metadata"], json::parse(R"({"name":"p"})"));
  json prim = Patched(R"({"metadata":{"finalizers":["c"],
      "$deleteFromPrimitiveList/finalizers":["a"]}})");
  EXPECT_EQ(prim["metadata"]["finalizers"], json::parse(R"(["b","c"])"));
  json retain = Patched(R"({"spec":{"volumes":[{"name":"v","$retainKeys":["name","hostPath"],
      "hostPath":{"path":"/h"}}],"$setElementOrder/volumes":[{"name":"v"}]}})");
  EXPECT_EQ(retain["spec"]["volumes"], json::parse(R"([{"name":"v","hostPath":{"path":"/h"}}])"));
  EXPECT_FALSE(retain["spec"].contains("$setElementOrder/volumes"));
  json nulls = Patched(R"({"spec":{"containers":[{"name":"new","image":"n","$patch":"merge",
      "env":[{"name":"Z","value":null}]}],"tolerations":null}})");
  EXPECT_EQ(nulls["spec"]["containers"][2], json::parse(R"({"name":"new","image":"n",
                                                          "env":[{"name":"Z"}]})"));
  EXPECT_FALSE(nulls["spec"].contains("tolerations"));
}

TEST(StrategicMergePatchTest, SetElementOrder) {
  json p = Patched(R"({"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"main"}],
      "containers":[{"name":"main","$setElementOrder/env":[{"name":"C"},{"name":"B"},{"name":"A"}],
                     "env":[{"name":"C","value":"3"}]}]}})");
  EXPECT_EQ(p["spec"]["containers"][0]["name"], "side");
  EXPECT_EQ(p["spec"]["containers"][1]["env"],
            json::parse(R"([{"name":"C","value":"3"},{"name":"B","value":"2"},
                            {"name":"A","value":"1"}])"));
  // Elements only the server has stay where they were among the named ones.
  json q = Patched(R"({"spec":{"containers":[{"name":"main",
      "$setElementOrder/env":[{"name":"B"},{"name":"D"}],"env":[{"name":"D","value":"4"}]}]}})");
  EXPECT_EQ(q["spec"]["containers"][0]["env"],
            json::parse(R"([{"name":"A","value":"1"},{"name":"B","value":"2"},
                            {"name":"D","value":"4"}])"));
  json f = Patched(R"({"metadata":{"$setElementOrder/finalizers":["b","c","a"],
      "finalizers":["c"]}})");
  EXPECT_EQ(f["metadata"]["finalizers"], json::parse(R"(["b","c","a"])"));
  EXPECT_FALSE(
      ApplyStrategicMergePatch(
          PodDoc(), json::parse(R"({"spec":{"$setElementOrder/containers":1}})"), PodSchema())
          .ok());
}

TEST(StrategicMergePatchTest, Errors) {
  auto no_key = ApplyStrategicMergePatch(
      PodDoc(), json::parse(R"({"spec":{"containers":[{"image":"x"}]}})"), PodSchema());
  ASSERT_FALSE(no_key.ok());
  EXPECT_EQ(no_key.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no_key.status().message().find("does not contain declared merge key: name"),
            std::string::npos);
  auto bad = ApplyStrategicMergePatch(PodDoc(), json::parse(R"({"spec":{"$patch":"bogus"}})"),
                                      PodSchema());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  for (const char* odd :
       {R"({"spec":{"$patch":7}})", R"({"spec":{"containers":[{"name":"a","$patch":{}}]}})",
        R"({"spec":{"tolerations":{"$patch":1}}})"}) {
    auto r = ApplyStrategicMergePatch(PodDoc(), json::parse(odd), PodSchema());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << odd;
  }
  auto retain = ApplyStrategicMergePatch(
      PodDoc(), json::parse(R"({"spec":{"$retainKeys":["volumes"],"tolerations":[]}})"),
      PodSchema());
  EXPECT_EQ(retain.status().code(), StatusCode::kFailedPrecondition);
}

TEST(StrategicMergePatchTest, SchemaPerKind) {
  const auto* svc = SchemaOf(*control::FindByKind("v1", "Service"));
  ASSERT_NE(svc, nullptr);
  json s = json::parse(R"({"spec":{"ports":[{"port":80,"name":"http"},{"port":443}]}})");
  auto r = ApplyStrategicMergePatch(s, json::parse(R"({"spec":{"ports":[{"port":80,
      "targetPort":8080}]}})"),
                                    svc);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["spec"]["ports"], json::parse(R"([{"port":80,"name":"http","targetPort":8080},
                                                  {"port":443}])"));
  const auto* job = SchemaOf(*control::FindByKind("batch/v1", "Job"));
  ASSERT_NE(job, nullptr);
  const PatchField* tmpl = job->Find("spec")->schema->Find("template");
  ASSERT_NE(tmpl, nullptr);
  EXPECT_EQ(tmpl->schema->Find("spec")->schema->Find("containers")->merge_key, "name");
  EXPECT_EQ(SchemaOf(*control::FindByKind("kueue.x-k8s.io/v1beta1", "ClusterQueue")), nullptr);
}

}  // namespace
}  // namespace muster::server
