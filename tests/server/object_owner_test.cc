// muster.dev/owner: recorded from the authenticated user on create, server-set
// (a client's value is overwritten) and immutable through updates and patches.
#include <gtest/gtest.h>

#include "api_fixture.h"
#include "server/auth/owner.h"

namespace muster::server {
namespace {

using nlohmann::json;

class ObjectOwnerTest : public testing::ApiFixture {
 protected:
  const std::string cqs_ = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues";

  ApiResponse As(const std::string& user, std::string method, std::string path,
                 std::string body = "", std::string content_type = "application/json") {
    ApiRequest r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.accept = "application/json";
    r.user.name = user;
    auto result = handler_->Handle(r);
    auto* resp = std::get_if<ApiResponse>(&result);
    return resp ? *resp : ApiResponse{-1, "", "stream"};
  }
  static json Cq(const std::string& name, json annotations = nullptr) {
    json cq = {
        {"apiVersion", "kueue.x-k8s.io/v1beta1"},
        {"kind", "ClusterQueue"},
        {"metadata", {{"name", name}}},
        {"spec", {{"namespaceSelector", json::object()}, {"resourceGroups", json::array()}}}};
    if (!annotations.is_null()) cq["metadata"]["annotations"] = annotations;
    return cq;
  }
  std::string OwnerOf(const std::string& name) {
    json got = Body(Call("GET", cqs_ + "/" + name));
    return got["metadata"]["annotations"].value(auth::kOwnerAnnotation, "<none>");
  }
};

TEST_F(ObjectOwnerTest, CreateRecordsTheAuthenticatedUserOverwritingTheClientsValue) {
  auto created =
      As("alice", "POST", cqs_, Cq("a", {{"muster.dev/owner", "bob"}, {"x", "y"}}).dump());
  ASSERT_EQ(created.code, 201) << created.body;
  EXPECT_EQ(Body(created)["metadata"]["annotations"]["muster.dev/owner"], "alice");
  EXPECT_EQ(Body(created)["metadata"]["annotations"]["x"], "y");
  EXPECT_EQ(OwnerOf("a"), "alice");
  // YAML bodies and objects without annotations too.
  auto yaml = As("carol", "POST", cqs_,
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: b\n"
                 "spec:\n  namespaceSelector: {}\n  resourceGroups: []\n",
                 "application/yaml");
  ASSERT_EQ(yaml.code, 201) << yaml.body;
  EXPECT_EQ(OwnerOf("b"), "carol");
}

TEST_F(ObjectOwnerTest, UnauthenticatedRequestsAreOwnedByTheServersUser) {
  ASSERT_EQ(As("", "POST", cqs_, Cq("a").dump()).code, 201);
  EXPECT_EQ(OwnerOf("a"), auth::ServerUser().name);
  EXPECT_FALSE(auth::ServerUser().name.empty());
}

TEST_F(ObjectOwnerTest, UpdatesAndPatchesCannotChangeOrRemoveTheOwner) {
  ASSERT_EQ(As("alice", "POST", cqs_, Cq("a").dump()).code, 201);
  // PUT of the object as a file has it (kubectl replace): no owner, another owner.
  json put = Body(Call("GET", cqs_ + "/a"));
  put["metadata"]["annotations"] = {{"muster.dev/owner", "mallory"}, {"note", "1"}};
  auto replaced = As("mallory", "PUT", cqs_ + "/a", put.dump());
  ASSERT_EQ(replaced.code, 200) << replaced.body;
  EXPECT_EQ(Body(replaced)["metadata"]["annotations"]["muster.dev/owner"], "alice");
  EXPECT_EQ(OwnerOf("a"), "alice");
  put = Body(Call("GET", cqs_ + "/a"));
  put["metadata"].erase("annotations");
  ASSERT_EQ(As("mallory", "PUT", cqs_ + "/a", put.dump()).code, 200);
  EXPECT_EQ(OwnerOf("a"), "alice");
  // Merge patches: set, delete the key, null the whole map.
  for (const char* patch : {R"({"metadata":{"annotations":{"muster.dev/owner":"mallory"}}})",
                            R"({"metadata":{"annotations":{"muster.dev/owner":null}}})",
                            R"({"metadata":{"annotations":null}})"}) {
    auto patched = As("mallory", "PATCH", cqs_ + "/a", patch, "application/merge-patch+json");
    ASSERT_EQ(patched.code, 200) << patch << " -> " << patched.body;
    EXPECT_EQ(OwnerOf("a"), "alice") << patch;
  }
  // Other annotations still change as asked.
  ASSERT_EQ(As("alice", "PATCH", cqs_ + "/a", R"({"metadata":{"annotations":{"n":"2"}}})",
               "application/merge-patch+json")
                .code,
            200);
  EXPECT_EQ(Body(Call("GET", cqs_ + "/a"))["metadata"]["annotations"]["n"], "2");
}

TEST(ObjectOwner, KeepOwnerOfAnObjectThatNeverHadOneAddsNone) {
  json current = {{"metadata", {{"name", "a"}}}};
  json next = {{"metadata", {{"name", "a"}, {"annotations", {{"muster.dev/owner", "x"}}}}}};
  auth::KeepOwner(current, next);
  EXPECT_EQ(next["metadata"]["annotations"], json::object());
  // Malformed annotations are left for validation to refuse.
  json bad = {{"metadata", {{"annotations", "str"}}}};
  auth::RecordOwner(bad, auth::UserInfo{"a", "", {}});
  EXPECT_EQ(bad["metadata"]["annotations"], "str");
}

}  // namespace
}  // namespace muster::server
