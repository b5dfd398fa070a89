// The read-only CustomResourceDefinitions (server/crd_catalog.h) and the schemas the
// OpenAPI documents publish (server/openapi_schemas.h): what kubectl get crd and
// kubectl explain read, and what must stay so that kubectl keeps its patch types.
#include "server/crd_catalog.h"

#include <gtest/gtest.h>

#include "api_fixture.h"
#include "server/discovery.h"
#include "server/openapi.h"
#include "server/openapi_schemas.h"

namespace muster::server {
namespace {

using nlohmann::json;

const control::ResourceType& Type(const std::string& group, const std::string& kind) {
  for (const auto& t : control::ResourceTypes()) {
    if (t.group == group && t.kind == kind) return t;
  }
  ADD_FAILURE() << kind;
  return control::ResourceTypes().front();
}

TEST(CrdCatalog, CustomKindsOnly) {
  EXPECT_TRUE(IsCustomResource(Type("kueue.x-k8s.io", "ClusterQueue")));
  EXPECT_TRUE(IsCustomResource(Type("kubeflow.org", "PyTorchJob")));
  EXPECT_TRUE(IsCustomResource(Type("batch.volcano.sh", "Job")));
  EXPECT_FALSE(IsCustomResource(Type("batch", "Job")));
  EXPECT_FALSE(IsCustomResource(Type("", "Pod")));
  EXPECT_FALSE(IsCustomResource(Type("scheduling.k8s.io", "PriorityClass")));
  EXPECT_FALSE(IsCustomResource(Type("muster.dev", "QueueView")));  // the scheduler's view
}

TEST(CrdCatalog, DefinitionOfClusterQueue) {
  const json crd = CustomResourceDefinition(Type("kueue.x-k8s.io", "ClusterQueue"), 0);
  EXPECT_EQ(crd["kind"], "CustomResourceDefinition");
  EXPECT_EQ(crd["apiVersion"], "apiextensions.k8s.io/v1");
  EXPECT_EQ(crd["metadata"]["name"], "clusterqueues.kueue.x-k8s.io");
  EXPECT_EQ(crd["metadata"]["creationTimestamp"], "1970-01-01T00:00:00Z");
  const json& spec = crd["spec"];
  EXPECT_EQ(spec["group"], "kueue.x-k8s.io");
  EXPECT_EQ(spec["scope"], "Cluster");
  EXPECT_EQ(spec["names"]["kind"], "ClusterQueue");
  EXPECT_EQ(spec["names"]["listKind"], "ClusterQueueList");
  EXPECT_EQ(spec["names"]["shortNames"], json::array({"cq"}));
  ASSERT_EQ(spec["versions"].size(), 2u);
  EXPECT_EQ(spec["versions"][0]["name"], "v1beta1");
  EXPECT_TRUE(spec["versions"][0]["storage"].get<bool>());
  EXPECT_FALSE(spec["versions"][1]["storage"].get<bool>());
  EXPECT_TRUE(spec["versions"][1]["served"].get<bool>());
  EXPECT_TRUE(spec["versions"][0].contains("subresources"));
  const json& schema = spec["versions"][0]["schema"]["openAPIV3Schema"];
  EXPECT_TRUE(schema["x-kubernetes-preserve-unknown-fields"].get<bool>());
  EXPECT_TRUE(schema["properties"]["spec"]["properties"].contains("cohort"));
  EXPECT_FALSE(schema.contains("x-kubernetes-group-version-kind"));
  EXPECT_EQ(schema["properties"]["metadata"], json({{"type", "object"}}));
  EXPECT_TRUE(
      spec["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"].contains(
          "cohortName"));
  std::set<std::string> conditions;
  for (const auto& c : crd["status"]["conditions"]) {
    if (c["status"] == "True") conditions.insert(c["type"]);
  }
  EXPECT_EQ(conditions, (std::set<std::string>{"Established", "NamesAccepted"}));
  EXPECT_EQ(crd["status"]["storedVersions"], json::array({"v1beta1"}));
}

class CrdApi : public testing::ApiFixture {};

TEST_F(CrdApi, ListGetTableAndNoWrites) {
  const std::string base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  auto r = Call("GET", base);
  ASSERT_EQ(r.code, 200) << r.body;
  const json list = Body(r);
  EXPECT_EQ(list["kind"], "CustomResourceDefinitionList");
  size_t custom = 0;
  for (const auto& t : control::ResourceTypes()) custom += IsCustomResource(t);
  EXPECT_EQ(list["items"].size(), custom);

  r = Call("GET", base + "?fieldSelector=metadata.name=pytorchjobs.kubeflow.org");
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(Body(r)["items"].size(), 1u);
  r = Call("GET", base + "?labelSelector=app=x");
  ASSERT_EQ(r.code, 200);
  EXPECT_TRUE(Body(r)["items"].empty());

  r = Call("GET", base + "/pytorchjobs.kubeflow.org");
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(Body(r)["spec"]["scope"], "Namespaced");
  r = Call("GET", base + "/jobs.batch");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(Body(r)["message"],
            "customresourcedefinitions.apiextensions.k8s.io \"jobs.batch\" "
            "not found");

  r = Call("GET", base, "", "application/json",
           "application/json;as=Table;v=v1;g=meta.k8s.io,application/json");
  ASSERT_EQ(r.code, 200);
  const json table = Body(r);
  ASSERT_EQ(table["columnDefinitions"].size(), 2u);
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "Created At");
  EXPECT_EQ(table["rows"].size(), custom);

  for (const char* m : {"POST", "PUT", "PATCH", "DELETE"}) {
    r = Call(m, std::string(m) == "POST" ? base : base + "/clusterqueues.kueue.x-k8s.io", "{}");
    EXPECT_EQ(r.code, 405) << m;
    EXPECT_NE(Body(r)["message"].get<std::string>().find("built in"), std::string::npos);
  }
}

// kubectl reads OpenAPI v2 for a kind that neither v3 nor a CRD describes; an empty
// document (an empty protobuf message) lets it say "no matches for kind" as upstream.
TEST_F(CrdApi, OpenApiV2IsAnEmptyProtobufDocument) {
  auto r = Call("GET", "/openapi/v2");
  ASSERT_EQ(r.code, 200);
  EXPECT_EQ(r.content_type, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
  EXPECT_EQ(r.body, "");
}

TEST(Discovery, ListsTheExtraGroups) {
  std::set<std::string> groups;
  const json list = ApiGroupList();
  for (const auto& g : list["groups"]) groups.insert(g["name"]);
  EXPECT_TRUE(groups.count("apiextensions.k8s.io"));
  EXPECT_TRUE(groups.count("visibility.kueue.x-k8s.io"));
  auto crds = ApiResourceList("apiextensions.k8s.io", "v1");
  ASSERT_TRUE(crds);
  EXPECT_EQ((*crds)["resources"][0]["name"], "customresourcedefinitions");
  EXPECT_TRUE(ApiResourceList("visibility.kueue.x-k8s.io", "v1beta2"));
  EXPECT_TRUE(ApiGroupDocument("visibility.kueue.x-k8s.io"));
}

TEST(OpenApi, SchemasWithGroupVersionKindAndPatchOperationsUnchanged) {
  auto doc = OpenApiV3Document("kueue.x-k8s.io", "v1beta1");
  ASSERT_TRUE(doc);
  const json& schemas = (*doc)["components"]["schemas"];
  ASSERT_TRUE(schemas.contains("io.x-k8s.kueue.v1beta1.ClusterQueue"));
  const json& cq = schemas["io.x-k8s.kueue.v1beta1.ClusterQueue"];
  EXPECT_EQ(cq["x-kubernetes-group-version-kind"],
            json::array(
                {{{"group", "kueue.x-k8s.io"}, {"kind", "ClusterQueue"}, {"version", "v1beta1"}}}));
  EXPECT_TRUE(cq["x-kubernetes-preserve-unknown-fields"].get<bool>());
  EXPECT_TRUE(cq["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"].get<bool>());
  EXPECT_FALSE(
      cq["properties"]["spec"]["properties"]["cohort"]["description"].get<std::string>().empty());
  EXPECT_TRUE(schemas.contains(kObjectMetaSchema));
  // kubectl takes a strategic merge patch from an operation only when it lists that
  // media type in its request body: none does, so custom resources keep merge patches.
  for (const auto& [path, item] : (*doc)["paths"].items()) {
    ASSERT_TRUE(item.contains("patch")) << path;
    EXPECT_FALSE(item["patch"].contains("requestBody")) << path;
    bool field_validation = false;
    for (const auto& p : item["patch"]["parameters"]) {
      field_validation = field_validation || p["name"] == "fieldValidation";
    }
    EXPECT_TRUE(field_validation) << path;
  }
  auto batch = OpenApiV3Document("batch", "v1");
  ASSERT_TRUE(batch);
  EXPECT_TRUE((*batch)["components"]["schemas"].contains("io.k8s.api.batch.v1.Job"));
  auto core = OpenApiV3Document("", "v1");
  ASSERT_TRUE(core);
  EXPECT_TRUE((*core)["components"]["schemas"].contains("io.k8s.api.core.v1.Pod"));
  EXPECT_TRUE(OpenApiV3Document("apiextensions.k8s.io", "v1"));
  EXPECT_TRUE(OpenApiV3Index()["paths"].contains("apis/apiextensions.k8s.io/v1"));
}

TEST(OpenApi, EveryServedKindHasADescribedSchema) {
  for (const auto& t : control::ResourceTypes()) {
    if (t.view || t.review) continue;
    for (const auto& v : t.versions) {
      const json s = KindSchema(t, v);
      EXPECT_EQ(s["type"], "object") << t.kind;
      EXPECT_TRUE(s["properties"].contains("apiVersion")) << t.kind;
      EXPECT_NE(s["description"], t.kind) << t.kind << ": no entry in openapi_field_docs.cc";
    }
  }
  EXPECT_EQ(SchemaName(Type("kubeflow.org", "PyTorchJob"), "v1"), "org.kubeflow.v1.PyTorchJob");
  EXPECT_EQ(SchemaName(Type("rbac.authorization.k8s.io", "Role"), "v1"), "io.k8s.api.rbac.v1.Role");
}

}  // namespace
}  // namespace muster::server
