#include "server/api_handler.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

class ApiHandlerTest : public testing::ApiFixture {
 protected:
  const std::string cqs_ = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues";
  const std::string cq_json_ =
      R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
          "metadata":{"name":"team-a","labels":{"team":"a"}},
          "spec":{"cohort":"org","namespaceSelector":{},"resourceGroups":[]}})";
};

TEST_F(ApiHandlerTest, Discovery) {
  auto groups = Body(Call("GET", "/apis"));
  EXPECT_EQ(groups["kind"], "APIGroupList");
  auto list = Body(Call("GET", "/apis/kueue.x-k8s.io/v1beta1"));
  bool found = false;
  for (const auto& r : list["resources"]) {
    if (r["name"] == "clusterqueues") {
      found = true;
      EXPECT_EQ(r["shortNames"], json({"cq"}));
      EXPECT_EQ(r["namespaced"], false);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(Call("GET", "/apis/nope.io/v1").code, 404);
  EXPECT_EQ(Call("GET", "/version").code, 200);
}

TEST_F(ApiHandlerTest, CreateGetConflictDelete) {
  auto created = Call("POST", cqs_, cq_json_);
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(Call("POST", cqs_, cq_json_).code, 409);
  auto got = Body(Call("GET", cqs_ + "/team-a"));
  EXPECT_EQ(got["spec"]["cohort"], "org");
  json stale = got;
  got["spec"]["cohort"] = "b";
  ASSERT_EQ(Call("PUT", cqs_ + "/team-a", got.dump()).code, 200);
  stale["spec"]["cohort"] = "c";
  auto conflict = Call("PUT", cqs_ + "/team-a", stale.dump());
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(Body(conflict)["reason"], "Conflict");
  // Kueue's resource-in-use finalizer holds a deleted ClusterQueue until the scheduler
  // (not running here) takes it off.
  EXPECT_EQ(Call("DELETE", cqs_ + "/team-a").code, 200);
  EXPECT_TRUE(Body(Call("GET", cqs_ + "/team-a"))["metadata"].contains("deletionTimestamp"));
  ASSERT_EQ(Call("PATCH", cqs_ + "/team-a", R"({"metadata":{"finalizers":null}})",
                 "application/merge-patch+json")
                .code,
            200);
  auto missing = Call("GET", cqs_ + "/team-a");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(Body(missing)["reason"], "NotFound");
}

// Kueue's webhooks put the resource-in-use finalizer on ResourceFlavors too (and keep
// it there), and on no other Kueue kind.
TEST_F(ApiHandlerTest, ResourceFlavorsCarryKueuesResourceInUseFinalizer) {
  const std::string flavors = "/apis/kueue.x-k8s.io/v1beta1/resourceflavors";
  auto created = Call("POST", flavors,
                      R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ResourceFlavor",
                          "metadata":{"name":"a100","finalizers":["example.com/keep"]}})");
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(Body(created)["metadata"]["finalizers"],
            json({"example.com/keep", "kueue.x-k8s.io/resource-in-use"}));
  ASSERT_EQ(Call("PATCH", flavors + "/a100", R"({"metadata":{"finalizers":null}})",
                 "application/merge-patch+json")
                .code,
            200);
  EXPECT_EQ(Body(Call("GET", flavors + "/a100"))["metadata"]["finalizers"],
            json({"kueue.x-k8s.io/resource-in-use"}));
  auto lq = Call("POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/ml/localqueues",
                 R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
                     "metadata":{"name":"team","namespace":"ml"},"spec":{"clusterQueue":"x"}})");
  ASSERT_EQ(lq.code, 201) << lq.body;
  EXPECT_FALSE(Body(lq)["metadata"].contains("finalizers"));
}

TEST_F(ApiHandlerTest, InvalidObjectIs422WithCauses) {
  json bad = json::parse(cq_json_);
  bad["spec"]["resourceGroups"] = {
      {{"coveredResources", {"cpu"}},
       {"flavors",
        {{{"name", "f"}, {"resources", {{{"name", "cpu"}, {"nominalQuota", "12x"}}}}}}}}};
  auto r = Call("POST", cqs_, bad.dump());
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(Body(r)["reason"], "Invalid");
  EXPECT_FALSE(Body(r)["details"]["causes"].empty());
  EXPECT_EQ(Call("POST", cqs_, "{not json").code, 400);
  EXPECT_EQ(Call("POST", cqs_, "[]").code, 400);
}

TEST_F(ApiHandlerTest, PatchAndStatusSubresource) {
  ASSERT_EQ(Call("POST", cqs_, cq_json_).code, 201);
  auto patched = Call("PATCH", cqs_ + "/team-a",
                      R"({"metadata":{"labels":{"x":"y"}},"status":{"pendingWorkloads":5}})",
                      "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200) << patched.body;
  EXPECT_EQ(Body(patched)["metadata"]["labels"]["x"], "y");
  EXPECT_FALSE(Body(patched).contains("status"));
  auto status = Call("PATCH", cqs_ + "/team-a/status", R"({"status":{"pendingWorkloads":5}})",
                     "application/merge-patch+json");
  ASSERT_EQ(status.code, 200);
  EXPECT_EQ(Body(status)["status"]["pendingWorkloads"], 5);
  EXPECT_EQ(Call("PATCH", cqs_ + "/team-a", "[]", "application/json-patch+json").code, 200);
  // A custom resource takes no strategic merge patch (kube-apiserver's 415).
  auto smp = Call("PATCH", cqs_ + "/team-a", "{}", "application/strategic-merge-patch+json");
  EXPECT_EQ(smp.code, 415);
  EXPECT_EQ(Body(smp)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/apply-patch+yaml");
  EXPECT_EQ(Call("PATCH", cqs_ + "/team-a", "{}", "text/plain").code, 415);
}

TEST_F(ApiHandlerTest, SelectorsAndTable) {
  ASSERT_EQ(Call("POST", cqs_, cq_json_).code, 201);
  EXPECT_EQ(Body(Call("GET", cqs_ + "?labelSelector=team=a"))["items"].size(), 1u);
  EXPECT_EQ(Body(Call("GET", cqs_ + "?labelSelector=team!=a"))["items"].size(), 0u);
  EXPECT_EQ(Call("GET", cqs_ + "?labelSelector=a in").code, 400);
  auto table = Body(Call("GET", cqs_, "", "", "application/json;as=Table;v=v1;g=meta.k8s.io"));
  ASSERT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "Cohort");
  EXPECT_EQ(table["rows"][0]["cells"][0], "team-a");
  EXPECT_EQ(table["rows"][0]["cells"][1], "org");
}

// Suffixes for generateName, in order; the last one repeats.
std::vector<std::string> suffixes;
size_t next_suffix = 0;
std::string NextSuffix() {
  const std::string& s = suffixes[std::min(next_suffix, suffixes.size() - 1)];
  ++next_suffix;
  return s;
}

TEST_F(ApiHandlerTest, AGeneratedNameThatCollidesIsDrawnAgainUpToEightTimes) {
  const std::string cms = "/api/v1/namespaces/team-a/configmaps";
  const std::string body = R"({"metadata":{"generateName":"cm-"}})";
  suffixes = {"bbbbb", "bbbbb", "ccccc"};
  next_suffix = 0;
  SetNameSuffixSourceForTesting(NextSuffix);
  auto first = Call("POST", cms, body);
  auto second = Call("POST", cms, body);
  // Every draw collides: AlreadyExists after the eighth.
  next_suffix = 0;
  suffixes = {"bbbbb"};
  auto third = Call("POST", cms, body);
  const size_t draws = next_suffix;
  // A name the client gave is never replaced.
  auto named = Call("POST", cms, R"({"metadata":{"name":"cm-bbbbb","generateName":"cm-"}})");
  SetNameSuffixSourceForTesting(nullptr);
  ASSERT_EQ(first.code, 201);
  EXPECT_EQ(Body(first)["metadata"]["name"], "cm-bbbbb");
  ASSERT_EQ(second.code, 201) << second.body;
  EXPECT_EQ(Body(second)["metadata"]["name"], "cm-ccccc");
  EXPECT_EQ(third.code, 409);
  EXPECT_EQ(draws, 8u);
  EXPECT_EQ(named.code, 409);
}

TEST_F(ApiHandlerTest, NamespacedObjectsAndWatch) {
  const std::string pods = "/api/v1/namespaces/team-a/pods";
  ASSERT_EQ(Call("POST", pods,
                 R"({"metadata":{"generateName":"p-"},"spec":{"containers":[{"name":"c"}]}})")
                .code,
            201);
  EXPECT_EQ(Body(Call("GET", "/api/v1/pods"))["items"].size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/team-a").code, 200);  // created on demand
  ApiRequest w;
  w.method = "GET";
  w.path = pods;
  w.query = {{"watch", "1"}, {"timeoutSeconds", "1"}};
  auto result = handler_->Handle(w);
  auto* stream = std::get_if<std::unique_ptr<WatchStream>>(&result);
  ASSERT_TRUE(stream);
  auto first = (*stream)->Next(std::chrono::milliseconds(10));
  ASSERT_TRUE(first.has_value());
  EXPECT_NE(first->find("\"ADDED\""), std::string::npos);
  w.query["resourceVersion"] = "999999";
  w.query.erase("timeoutSeconds");
  EXPECT_TRUE(std::holds_alternative<std::unique_ptr<WatchStream>>(handler_->Handle(w)));
}

}  // namespace
}  // namespace muster::server
