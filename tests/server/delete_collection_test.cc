// DELETE on a collection (kube-apiserver's DeleteCollection): what the selectors match
// in the namespace goes, with the request's DeleteOptions, and the answer lists it.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "server/api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

class DeleteCollectionTest : public testing::ApiFixture {
 protected:
  void CreateConfigMap(const std::string& ns, const std::string& name, const std::string& team,
                       const json& finalizers = json()) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"labels", {{"team", team}}}}}};
    if (!finalizers.is_null()) cm["metadata"]["finalizers"] = finalizers;
    auto r = Call("POST", "/api/v1/namespaces/" + ns + "/configmaps", cm.dump());
    ASSERT_EQ(r.code, 201) << r.body;
  }
  std::set<std::string> Names(const json& list) {
    std::set<std::string> names;
    for (const json& item : list["items"])
      names.insert(item["metadata"]["name"].get<std::string>());
    return names;
  }
  std::set<std::string> Stored(const std::string& ns) {
    return Names(Body(Call("GET", "/api/v1/namespaces/" + ns + "/configmaps")));
  }
};

TEST_F(DeleteCollectionTest, DeletesWhatTheSelectorsMatchInTheNamespaceAndListsIt) {
  CreateConfigMap("default", "a", "x");
  CreateConfigMap("default", "b", "x");
  CreateConfigMap("default", "c", "y");
  CreateConfigMap("other", "d", "x");
  auto r = Call("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=team=x");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["kind"], "ConfigMapList");
  EXPECT_EQ(Body(r)["apiVersion"], "v1");
  EXPECT_EQ(Names(Body(r)), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(Stored("default"), std::set<std::string>{"c"});
  EXPECT_EQ(Stored("other"), std::set<std::string>{"d"});

  r = Call("DELETE", "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name=none");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(Body(r)["items"].empty());
  // No selector: everything in the namespace.
  r = Call("DELETE", "/api/v1/namespaces/default/configmaps");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Names(Body(r)), std::set<std::string>{"c"});
  EXPECT_TRUE(Stored("default").empty());
}

TEST_F(DeleteCollectionTest, DryRunDeletesNothingAndFinalizersHoldWhatTheyName) {
  CreateConfigMap("default", "kept", "x");
  CreateConfigMap("default", "held", "x", json::array({"example.com/hold"}));
  auto r = Call("DELETE", "/api/v1/namespaces/default/configmaps?dryRun=All");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Names(Body(r)), (std::set<std::string>{"held", "kept"}));
  EXPECT_EQ(Stored("default"), (std::set<std::string>{"held", "kept"}));
  // The request's options reach every object: Foreground marks each one.
  r = Call("DELETE", "/api/v1/namespaces/default/configmaps",
           R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"})");
  ASSERT_EQ(r.code, 200) << r.body;
  const json marked = Body(r);
  ASSERT_EQ(marked["items"].size(), 2u);
  for (const json& item : marked["items"]) {
    EXPECT_TRUE(item["metadata"].contains("deletionTimestamp")) << item.dump();
    EXPECT_NE(item["metadata"]["finalizers"].dump().find("foregroundDeletion"), std::string::npos);
  }
  EXPECT_EQ(Stored("default"), (std::set<std::string>{"held", "kept"}))
      << "held by finalizers (the collector releases foregroundDeletion)";
}

TEST_F(DeleteCollectionTest, RefusedForNamespacesAcrossNamespacesAndWithBadSelectors) {
  // Discovery says so, as upstream's does.
  std::map<std::string, json> verbs;
  const json discovery = Body(Call("GET", "/api/v1"));
  for (const json& r : discovery["resources"]) verbs[r["name"]] = r["verbs"];
  EXPECT_NE(verbs["configmaps"].dump().find("deletecollection"), std::string::npos);
  EXPECT_EQ(verbs["namespaces"].dump().find("deletecollection"), std::string::npos);
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces").code, 405);
  EXPECT_EQ(Call("DELETE", "/api/v1/configmaps").code, 405);
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=a in").code, 400);
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/default/configmaps?propagationPolicy=Cascade").code,
            422);
}

}  // namespace
}  // namespace muster::server
