// The RBAC kinds through the API: validation with upstream's messages, roleRef
// immutability, 403s from a store-backed authorizer that sees new bindings at once,
// the self reviews, protobuf bodies of typed kubectl commands and the default roles'
// reconciliation.
#include <gtest/gtest.h>

#include "api_fixture.h"
#include "server/auth/bootstrap_policy.h"
#include "server/auth/rbac_authorizer.h"
#include "server/rbac_escalation.h"

namespace muster::server {
namespace {

using nlohmann::json;

const char kRbac[] = "/apis/rbac.authorization.k8s.io/v1";

class RbacApiTest : public testing::ApiFixture {
 protected:
  ApiResponse As(const auth::UserInfo& user, const std::string& method, const std::string& path,
                 const std::string& body = "", const std::string& type = "application/json") {
    ApiRequest r;
    r.method = method;
    r.path = path.substr(0, path.find('?'));
    if (auto q = path.find('?'); q != std::string::npos) {  // one key=value
      const std::string kv = path.substr(q + 1);
      r.query[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    }
    r.body = body;
    r.content_type = type;
    r.user = user;
    auto result = handler_->Handle(r);
    auto* resp = std::get_if<ApiResponse>(&result);
    return resp != nullptr ? *resp : ApiResponse{0, "", "stream"};
  }
  std::string Causes(const ApiResponse& r) {
    json b = json::parse(r.body, nullptr, false);
    std::string out = std::to_string(r.code);
    if (b.is_object() && b.contains("details") && b["details"].contains("causes")) {
      for (const auto& c : b["details"]["causes"]) {
        out += " " + c.value("field", "") + ": " + c.value("message", "");
      }
    }
    return out;
  }
  static json Binding(const std::string& role, const std::string& user) {
    return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", "RoleBinding"},
            {"metadata", {{"name", user + "-" + role}}},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
            {"subjects",
             {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", user}}}}};
  }
  const auth::UserInfo root_{"root", "0", {auth::kMastersGroup, auth::kAuthenticatedGroup}};
  const auth::UserInfo bob_{"bob", "2", {auth::kAuthenticatedGroup}};
};

TEST_F(RbacApiTest, RulesAreValidatedAsUpstream) {
  json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "Role"},
               {"metadata", {{"name", "r"}}},
               {"rules",
                {{{"apiGroups", {""}}, {"resources", {"pods"}}},
                 {{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz"}}},
                 {{"verbs", {"get"}}, {"resources", {"pods"}}}}}};
  std::string out = Causes(Call("POST", std::string(kRbac) + "/namespaces/a/roles", role.dump()));
  EXPECT_NE(out.find("422 rules[0].verbs: Required value: verbs must contain at least one value"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("rules[1].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules "
                     "cannot apply to non-resource URLs"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("rules[2].apiGroups: Required value: resource rules must supply at least "
                     "one api group"),
            std::string::npos)
      << out;
  // A ClusterRole may name URLs, and names may hold colons (path segments).
  json cluster = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "ClusterRole"},
                  {"metadata", {{"name", "team:urls"}}},
                  {"rules", {{{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz"}}}}}};
  EXPECT_EQ(Call("POST", std::string(kRbac) + "/clusterroles", cluster.dump()).code, 201);
  // Bounded: too many verbs in one rule.
  cluster["metadata"]["name"] = "big";
  cluster["rules"][0]["verbs"] = json(std::vector<std::string>(300, "get"));
  EXPECT_NE(Causes(Call("POST", std::string(kRbac) + "/clusterroles", cluster.dump()))
                .find("rules[0].verbs: Too many: must have at most 256 items"),
            std::string::npos);
}

TEST_F(RbacApiTest, BindingsAreValidatedAndRoleRefIsImmutable) {
  json b = Binding("view", "bob");
  b["roleRef"]["kind"] = "Role2";
  b["subjects"].push_back({{"kind", "Robot"}, {"name", "r"}});
  b["subjects"].push_back({{"kind", "User"}});
  std::string out =
      Causes(Call("POST", std::string(kRbac) + "/namespaces/a/rolebindings", b.dump()));
  EXPECT_NE(out.find("roleRef.kind: Unsupported value: \"Role2\": supported values: \"Role\", "
                     "\"ClusterRole\""),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("subjects[1].kind: Unsupported value: \"Robot\""), std::string::npos) << out;
  EXPECT_NE(out.find("subjects[2].name: Required value"), std::string::npos) << out;
  // A ClusterRoleBinding's service account names its namespace.
  json crb = Binding("view", "bob");
  crb["kind"] = "ClusterRoleBinding";
  crb["subjects"] = {{{"kind", "ServiceAccount"}, {"name", "bot"}}};
  EXPECT_NE(Causes(Call("POST", std::string(kRbac) + "/clusterrolebindings", crb.dump()))
                .find("subjects[0].namespace: Required value"),
            std::string::npos);

  ASSERT_EQ(
      Call("POST", std::string(kRbac) + "/namespaces/a/rolebindings", Binding("view", "bob").dump())
          .code,
      201);
  auto r = Call("PATCH", std::string(kRbac) + "/namespaces/a/rolebindings/bob-view",
                R"({"roleRef":{"name":"edit"}})", "application/merge-patch+json");
  EXPECT_NE(Causes(r).find("422 roleRef: Invalid value:"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("cannot change roleRef"), std::string::npos);
  EXPECT_EQ(Call("PATCH", std::string(kRbac) + "/namespaces/a/rolebindings/bob-view",
                 R"({"subjects":[{"kind":"Group","name":"g"}]})", "application/merge-patch+json")
                .code,
            200);
}

TEST_F(RbacApiTest, AuthorizerSeesBindingsAtOnce) {
  ASSERT_TRUE(auth::ReconcileBootstrapPolicy(*store_).ok());
  auth::RbacAuthorizer authorizer(*store_);
  handler_->set_authorizer(&authorizer);
  const std::string pods = "/api/v1/namespaces/a/pods";
  auto denied = As(bob_, "GET", pods);
  EXPECT_EQ(denied.code, 403);
  EXPECT_NE(
      denied.body.find("pods is forbidden: User \\\"bob\\\" cannot list resource \\\"pods\\\" "
                       "in API group \\\"\\\" in the namespace \\\"a\\\""),
      std::string::npos)
      << denied.body;
  // bob cannot bind himself.
  EXPECT_EQ(As(bob_, "POST", std::string(kRbac) + "/namespaces/a/rolebindings",
               Binding("view", "bob").dump())
                .code,
            403);
  EXPECT_EQ(As(root_, "POST", std::string(kRbac) + "/namespaces/a/rolebindings",
               Binding("view", "bob").dump())
                .code,
            201);
  EXPECT_EQ(As(bob_, "GET", pods).code, 200);
  EXPECT_EQ(As(bob_, "GET", "/api/v1/namespaces/b/pods").code, 403);
  EXPECT_EQ(As(root_, "DELETE", std::string(kRbac) + "/namespaces/a/rolebindings/bob-view").code,
            200);
  EXPECT_EQ(As(bob_, "GET", pods).code, 403);
  // Health checks and in-process callers carry no user: never judged.
  EXPECT_EQ(As({}, "GET", pods).code, 200);
  EXPECT_EQ(As(bob_, "GET", "/healthz").code, 200);
}

TEST_F(RbacApiTest, SelfReviews) {
  ASSERT_TRUE(auth::ReconcileBootstrapPolicy(*store_).ok());
  auth::RbacAuthorizer authorizer(*store_);
  handler_->set_authorizer(&authorizer);
  ASSERT_EQ(As(root_, "POST", std::string(kRbac) + "/namespaces/a/rolebindings",
               Binding("edit", "bob").dump())
                .code,
            201);
  const std::string ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  auto review = [&](const std::string& verb, const std::string& ns) {
    json body = {
        {"apiVersion", "authorization.k8s.io/v1"},
        {"kind", "SelfSubjectAccessReview"},
        {"spec",
         {{"resourceAttributes",
           {{"verb", verb}, {"group", "batch"}, {"resource", "jobs"}, {"namespace", ns}}}}}};
    auto r = As(bob_, "POST", ssar, body.dump());
    EXPECT_EQ(r.code, 201) << r.body;
    return json::parse(r.body)["status"];
  };
  EXPECT_TRUE(review("create", "a")["allowed"].get<bool>());
  EXPECT_NE(review("create", "a")["reason"].get<std::string>().find("RoleBinding \"bob-edit/a\""),
            std::string::npos);
  EXPECT_FALSE(review("create", "b")["allowed"].get<bool>());
  EXPECT_EQ(As(bob_, "GET", ssar).code, 403);  // authorized as list first
  EXPECT_EQ(As(root_, "GET", ssar).code, 405);
  EXPECT_EQ(As(bob_, "POST", ssar, R"({"spec":{}})").code, 422);

  auto rules = As(bob_, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                  R"({"spec":{"namespace":"a"}})");
  ASSERT_EQ(rules.code, 201);
  json status = json::parse(rules.body)["status"];
  EXPECT_GT(status["resourceRules"].size(), 5u);
  EXPECT_FALSE(status["nonResourceRules"].empty());
  EXPECT_FALSE(status["incomplete"].get<bool>());

  // Without an authorizer everything is allowed.
  handler_->set_authorizer(nullptr);
  EXPECT_TRUE(review("delete", "b")["allowed"].get<bool>());
}

TEST_F(RbacApiTest, NoGrantingMoreThanOneHolds) {
  ASSERT_TRUE(auth::ReconcileBootstrapPolicy(*store_).ok());
  auth::RbacAuthorizer authorizer(*store_);
  handler_->set_authorizer(&authorizer);
  ASSERT_EQ(As(root_, "POST", std::string(kRbac) + "/namespaces/a/rolebindings",
               Binding("admin", "bob").dump())
                .code,
            201);
  const std::string bindings = std::string(kRbac) + "/namespaces/a/rolebindings";
  // admin holds all of edit and view: binding them is fine, cluster-admin is not.
  json edit = Binding("edit", "carol");
  EXPECT_EQ(As(bob_, "POST", bindings, edit.dump()).code, 201);
  auto denied = As(bob_, "POST", bindings, Binding("cluster-admin", "bob").dump());
  EXPECT_EQ(denied.code, 403);
  EXPECT_NE(denied.body.find("is attempting to grant RBAC permissions not currently held"),
            std::string::npos)
      << denied.body;
  // Nor may a binding be patched into one (roleRef is immutable; subjects are not).
  EXPECT_EQ(As(bob_, "POST", std::string(kRbac) + "/namespaces/b/rolebindings",
               Binding("view", "carol").dump())
                .code,
            403);
  json role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "Role"},
      {"metadata", {{"name", "jobs"}}},
      {"rules", {{{"apiGroups", {"batch"}}, {"resources", {"jobs"}}, {"verbs", {"get"}}}}}};
  EXPECT_EQ(As(bob_, "POST", std::string(kRbac) + "/namespaces/a/roles", role.dump()).code, 201);
  auto wider = As(bob_, "PATCH", std::string(kRbac) + "/namespaces/a/roles/jobs",
                  R"({"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]})",
                  "application/merge-patch+json");
  EXPECT_EQ(wider.code, 403) << wider.body;
  EXPECT_EQ(As(bob_, "PATCH", std::string(kRbac) + "/namespaces/a/roles/jobs",
               R"({"rules":[{"apiGroups":["batch"],"resources":["jobs/status"],"verbs":["get"]}]})",
               "application/merge-patch+json")
                .code,
            200);
  // Every patch type is checked as the object it would write.
  auto json_patch = As(bob_, "PATCH", std::string(kRbac) + "/namespaces/a/roles/jobs",
                       R"([{"op":"add","path":"/rules/-",
                            "value":{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}}])",
                       "application/json-patch+json");
  EXPECT_EQ(json_patch.code, 403) << json_patch.body;
  auto apply = As(bob_, "PATCH", std::string(kRbac) + "/namespaces/a/roles/wide?fieldManager=bob",
                  R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
                      "metadata":{"name":"wide"},
                      "rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]})",
                  "application/apply-patch+yaml");
  EXPECT_EQ(apply.code, 403) << apply.body;
}

TEST(RulesCoveredTest, UpstreamCoverage) {
  auto rule = [](std::vector<std::string> verbs, std::vector<std::string> groups,
                 std::vector<std::string> resources, std::vector<std::string> names = {}) {
    auth::PolicyRule r;
    r.verbs = verbs;
    r.api_groups = groups;
    r.resources = resources;
    r.resource_names = names;
    return r;
  };
  const std::vector<auth::PolicyRule> owner = {rule({"get", "list"}, {"batch"}, {"jobs"}),
                                               rule({"get"}, {"*"}, {"*/status"}),
                                               rule({"delete"}, {""}, {"pods"}, {"p"})};
  EXPECT_TRUE(RulesCovered(owner, {rule({"get"}, {"batch"}, {"jobs", "jobs/status"})}));
  EXPECT_FALSE(RulesCovered(owner, {rule({"*"}, {"batch"}, {"jobs"})}));
  EXPECT_FALSE(RulesCovered(owner, {rule({"get"}, {"batch"}, {"*"})}));
  EXPECT_TRUE(RulesCovered(owner, {rule({"delete"}, {""}, {"pods"}, {"p"})}));
  EXPECT_FALSE(RulesCovered(owner, {rule({"delete"}, {""}, {"pods"})}));
}

// Protobuf: a field key, then a length-delimited value.
std::string Field(int number, const std::string& value) {
  std::string out(1, static_cast<char>(number << 3 | 2));
  out += static_cast<char>(value.size());  // short values: one-byte varint
  return out + value;
}

TEST_F(RbacApiTest, ProtobufBodiesOfTypedCommands) {
  const std::string subject =
      Field(1, "User") + Field(2, "rbac.authorization.k8s.io") + Field(3, "bob");
  const std::string ref =
      Field(1, "rbac.authorization.k8s.io") + Field(2, "ClusterRole") + Field(3, "view");
  const std::string raw = Field(1, Field(1, "pb")) + Field(2, subject) + Field(3, ref);
  const std::string type = Field(1, "rbac.authorization.k8s.io/v1") + Field(2, "RoleBinding");
  const std::string body = std::string("k8s\0", 4) + Field(1, type) + Field(2, raw);
  auto r = Call("POST", std::string(kRbac) + "/namespaces/a/rolebindings", body,
                "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(r.code, 201) << r.body;
  json created = json::parse(r.body);
  EXPECT_EQ(created["metadata"]["name"], "pb");
  EXPECT_EQ(created["roleRef"]["name"], "view");
  EXPECT_EQ(created["subjects"][0]["name"], "bob");
  // Truncated bytes are a 400, an unknown kind still a 415.
  EXPECT_EQ(Call("POST", std::string(kRbac) + "/namespaces/a/rolebindings",
                 body.substr(0, body.size() - 3), "application/vnd.kubernetes.protobuf")
                .code,
            400);
  const std::string pod = std::string("k8s\0", 4) + Field(1, Field(1, "v1") + Field(2, "Pod"));
  EXPECT_EQ(
      Call("POST", "/api/v1/namespaces/a/pods", pod, "application/vnd.kubernetes.protobuf").code,
      415);
}

TEST_F(RbacApiTest, BootstrapIsReconciled) {
  auto first = auth::ReconcileBootstrapPolicy(*store_);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->created, 13);
  // A removed rule comes back; an opted-out role is left alone.
  ASSERT_EQ(Call("PATCH", std::string(kRbac) + "/clusterroles/view", R"({"rules":[]})",
                 "application/merge-patch+json")
                .code,
            200);
  ASSERT_EQ(
      Call(
          "PATCH", std::string(kRbac) + "/clusterroles/edit",
          R"({"metadata":{"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"false"}},"rules":[]})",
          "application/merge-patch+json")
          .code,
      200);
  ASSERT_EQ(Call("DELETE", std::string(kRbac) + "/clusterrolebindings/cluster-admin").code, 200);
  auto second = auth::ReconcileBootstrapPolicy(*store_);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->created, 1);
  EXPECT_EQ(second->updated, 1);
  EXPECT_FALSE(
      json::parse(Call("GET", std::string(kRbac) + "/clusterroles/view").body)["rules"].empty());
  EXPECT_TRUE(
      json::parse(Call("GET", std::string(kRbac) + "/clusterroles/edit").body)["rules"].empty());
}

}  // namespace
}  // namespace muster::server
