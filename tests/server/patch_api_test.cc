// PATCH through the API handler: each patch type's answers (Status bodies as
// kube-apiserver writes them), server-side apply creating, conflicting and dry-run,
// and managedFields kept by updates.
#include <gtest/gtest.h>

#include "api_fixture.h"

namespace muster::server {
namespace {

using nlohmann::json;

class PatchApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    ASSERT_EQ(Call("POST", cms_, R"({"metadata":{"name":"c"},"data":{"a":"1"}})").code, 201);
  }
  ApiResponse Patch(const std::string& path, const std::string& body, const std::string& type) {
    return Call("PATCH", path, body, type);
  }
  const std::string cms_ = "/api/v1/namespaces/default/configmaps";
  const std::string cm_ = cms_ + "/c";
  const std::string kJson = "application/json-patch+json";
  const std::string kApply = "application/apply-patch+yaml";
};

TEST_F(PatchApiTest, JsonPatchAnswers) {
  auto ok = Patch(cm_, R"([{"op":"add","path":"/data/b","value":"2"}])", kJson);
  ASSERT_EQ(ok.code, 200) << ok.body;
  EXPECT_EQ(Body(ok)["data"], json::parse(R"({"a":"1","b":"2"})"));
  auto failed = Patch(cm_, R"([{"op":"test","path":"/data/a","value":"9"}])", kJson);
  EXPECT_EQ(failed.code, 422);
  json status = Body(failed);
  EXPECT_EQ(status["reason"], "Invalid");
  EXPECT_EQ(status["message"], "the server rejected our request due to an error in our request");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "UnexpectedServerResponse");
  EXPECT_EQ(status["details"]["causes"][0]["message"], "testing value /data/a failed: test failed");
  EXPECT_EQ(Patch(cm_, R"({"op":"add"})", kJson).code, 400);
  EXPECT_EQ(Patch(cms_ + "/missing", "[]", kJson).code, 404);
  json many = json::array();
  for (int i = 0; i < 10001; ++i)
    many.push_back({{"op", "test"}, {"path", "/data/a"}, {"value", "1"}});
  EXPECT_EQ(Patch(cm_, many.dump(), kJson).code, 413);
  // Immutability and validation run on the patched object, as for any update.
  auto invalid = Patch(cm_, R"([{"op":"add","path":"/data/bad key","value":"x"}])", kJson);
  EXPECT_EQ(invalid.code, 422) << invalid.body;
  EXPECT_EQ(Body(Call("GET", cm_))["data"], json::parse(R"({"a":"1","b":"2"})"));
}

TEST_F(PatchApiTest, StrategicMergePatchOfAPod) {
  ASSERT_EQ(Call("POST", "/api/v1/namespaces/default/pods",
                 R"({"metadata":{"name":"p"},"spec":{"containers":[
                     {"name":"a","image":"busybox"},{"name":"b","image":"busybox"}]}})")
                .code,
            201);
  auto r = Patch("/api/v1/namespaces/default/pods/p",
                 R"({"spec":{"containers":[{"name":"b","image":"busybox:2"}]}})",
                 "application/strategic-merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["containers"][0]["image"], "busybox");
  EXPECT_EQ(Body(r)["spec"]["containers"][1]["image"], "busybox:2");
  auto no_key =
      Patch("/api/v1/namespaces/default/pods/p", R"({"spec":{"containers":[{"image":"x"}]}})",
            "application/strategic-merge-patch+json");
  EXPECT_EQ(no_key.code, 422) << no_key.body;
}

TEST_F(PatchApiTest, PatchOptions) {
  auto no_manager = Patch(cm_, R"({"data":{"a":"2"}})", kApply);
  EXPECT_EQ(no_manager.code, 422);
  EXPECT_EQ(Body(no_manager)["message"],
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
            "required for apply patch");
  EXPECT_EQ(Patch(cm_ + "?force=true", "{}", "application/merge-patch+json").code, 422);
  // No apply on a subresource: muster records no managedFields there.
  EXPECT_EQ(Call("POST", "/api/v1/namespaces/default/services",
                 R"({"metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}})")
                .code,
            201);
  auto status = Patch("/api/v1/namespaces/default/services/s/status?fieldManager=m",
                      R"({"apiVersion":"v1","kind":"Service","status":{}})", kApply);
  EXPECT_EQ(status.code, 415) << status.body;
  EXPECT_EQ(Body(status)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/strategic-merge-patch+json");
}

TEST_F(PatchApiTest, ServerSideApply) {
  const std::string config =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"1","y":"2"}})";
  auto created = Patch(cms_ + "/s?fieldManager=one", config, kApply);
  ASSERT_EQ(created.code, 201) << created.body;
  json entry = Body(created)["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "one");
  EXPECT_EQ(entry["operation"], "Apply");
  EXPECT_EQ(entry["fieldsV1"], json::parse(R"({"f:data":{"f:x":{},"f:y":{}}})"));
  // YAML, with y left out: removed.
  auto again =
      Patch(cms_ + "/s?fieldManager=one",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: {x: \"1\"}\n", kApply);
  ASSERT_EQ(again.code, 200) << again.body;
  EXPECT_EQ(Body(again)["data"], json::parse(R"({"x":"1"})"));
  const std::string other =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s"},"data":{"x":"9"}})";
  auto conflict = Patch(cms_ + "/s?fieldManager=two", other, kApply);
  EXPECT_EQ(conflict.code, 409);
  json status = Body(conflict);
  EXPECT_EQ(status["reason"], "Conflict");
  EXPECT_EQ(status["message"], "Apply failed with 1 conflict: conflict with \"one\": .data.x");
  EXPECT_EQ(status["details"]["causes"][0],
            json::parse(R"({"reason":"FieldManagerConflict","message":"conflict with \"one\"",
                            "field":".data.x"})"));
  auto dry = Patch(cms_ + "/s?fieldManager=two&force=true&dryRun=All", other, kApply);
  ASSERT_EQ(dry.code, 200) << dry.body;
  EXPECT_EQ(Body(dry)["data"]["x"], "9");
  EXPECT_EQ(Body(Call("GET", cms_ + "/s"))["data"]["x"], "1");
  auto forced = Patch(cms_ + "/s?fieldManager=two&force=true", other, kApply);
  ASSERT_EQ(forced.code, 200) << forced.body;
  EXPECT_EQ(Body(forced)["metadata"]["managedFields"].size(), 1u);
  // managedFields a client wrote in a shape no apply reads are dropped, not a 500.
  auto garbage =
      Patch(cms_ + "/s", R"({"metadata":{"managedFields":[{"manager":7,"fieldsV1":[]},"x"]}})",
            "application/merge-patch+json");
  ASSERT_EQ(garbage.code, 200) << garbage.body;
  auto after = Patch(cms_ + "/s?fieldManager=two&force=true", other, kApply);
  ASSERT_EQ(after.code, 200) << after.body;
  EXPECT_EQ(Body(after)["metadata"]["managedFields"].size(), 1u);
  // A PUT that leaves managedFields out keeps them.
  json put = Body(after);
  put["metadata"].erase("managedFields");
  put["data"]["z"] = "3";
  auto updated = Call("PUT", cms_ + "/s", put.dump());
  ASSERT_EQ(updated.code, 200) << updated.body;
  EXPECT_EQ(Body(updated)["metadata"]["managedFields"][0]["manager"], "two");
  // An apply's version and kind must be the path's.
  auto kind = Patch(cms_ + "/s?fieldManager=one", R"({"apiVersion":"v1","kind":"Secret"})", kApply);
  EXPECT_EQ(kind.code, 400);
  auto version =
      Patch(cms_ + "/s?fieldManager=one", R"({"apiVersion":"v2","kind":"ConfigMap"})", kApply);
  EXPECT_EQ(version.code, 400);
  EXPECT_EQ(Body(version)["message"],
            "Incorrect version specified in apply patch. Specified patch version: v2, expected: "
            "v1");
}

TEST_F(PatchApiTest, NamedWritersOwnWhatTheyChange) {
  auto created = Call("POST", cms_ + "?fieldManager=maker",
                      R"({"metadata":{"name":"u","labels":{"l":"1"}},"data":{"x":"1","y":"2"}})");
  ASSERT_EQ(created.code, 201) << created.body;
  json entry = Body(created)["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "maker");
  EXPECT_EQ(entry["operation"], "Update");
  EXPECT_EQ(entry["fieldsV1"]["f:data"], json::parse(R"({"f:x":{},"f:y":{}})"));
  // A patch takes the fields it changes; what it removes leaves every set.
  auto patched = Patch(cms_ + "/u?fieldManager=patcher", R"({"data":{"x":"5","y":null}})",
                       "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200) << patched.body;
  json managed = Body(patched)["metadata"]["managedFields"];
  ASSERT_EQ(managed.size(), 2u);
  EXPECT_FALSE(managed[0]["fieldsV1"].contains("f:data"));
  EXPECT_EQ(managed[1]["manager"], "patcher");
  EXPECT_EQ(managed[1]["fieldsV1"], json::parse(R"({"f:data":{"f:x":{}}})"));
  // An apply of another value of a field an Update manager owns is a conflict.
  auto conflict = Patch(
      cms_ + "/u?fieldManager=applier",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"data":{"x":"1"}})", kApply);
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(Body(conflict)["message"],
            "Apply failed with 1 conflict: conflict with \"patcher\" using v1: .data.x");
  // Lists the merge key cannot key (validation refuses them) never take the server down.
  const std::string pods = "/api/v1/namespaces/default/pods";
  const std::string unnamed = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},
      "spec":{"containers":[{"image":"a"},{"image":"b"},"c"]}})";
  EXPECT_EQ(Call("POST", pods + "?fieldManager=m", unnamed).code, 422);
  EXPECT_EQ(Patch(pods + "/q?fieldManager=m", unnamed, kApply).code / 100, 4);
  // Without a fieldManager nothing is recorded.
  auto anonymous = Patch(cms_ + "/u", R"({"data":{"z":"1"}})", "application/merge-patch+json");
  EXPECT_EQ(Body(anonymous)["metadata"]["managedFields"].size(), 2u);
}

}  // namespace
}  // namespace muster::server
