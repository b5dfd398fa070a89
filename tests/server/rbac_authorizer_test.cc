// RBAC evaluation as kube-apiserver's: request attributes from paths, rule matching
// (verbs, groups, resources, subresources, resourceNames, "*", non-resource URLs),
// cluster and namespaced bindings, the default roles and upstream's 403 wording.
#include "server/auth/rbac_authorizer.h"

#include <gtest/gtest.h>

#include "server/auth/bootstrap_policy.h"

namespace muster::server::auth {
namespace {

using nlohmann::json;

UserInfo User(const std::string& name, std::vector<std::string> groups = {}) {
  groups.push_back(kAuthenticatedGroup);
  return {name, "1", groups};
}

RequestAttributes Req(const UserInfo& user, const std::string& method, const std::string& path,
                      std::map<std::string, std::string> query = {}) {
  return AttributesOf(method, path, query, user);
}

json Role(const std::string& ns, const std::string& name, json rules) {
  json md = {{"name", name}};
  if (!ns.empty()) md["namespace"] = ns;
  return {{"metadata", md}, {"rules", rules}};
}

json Binding(const std::string& ns, const std::string& name, const std::string& kind,
             const std::string& role, json subjects) {
  json md = {{"name", name}};
  if (!ns.empty()) md["namespace"] = ns;
  return {{"metadata", md},
          {"roleRef", {{"apiGroup", kRbacGroup}, {"kind", kind}, {"name", role}}},
          {"subjects", subjects}};
}

json UserSubject(const std::string& name) {
  return {{"kind", "User"}, {"apiGroup", kRbacGroup}, {"name", name}};
}

TEST(RequestAttributesTest, VerbsAndResourcesFromPaths) {
  const UserInfo u = User("bob");
  auto a = Req(u, "GET", "/apis/batch/v1/namespaces/team-a/jobs");
  EXPECT_TRUE(a.resource_request);
  EXPECT_EQ(a.verb, "list");
  EXPECT_EQ(a.api_group, "batch");
  EXPECT_EQ(a.namespace_, "team-a");
  EXPECT_EQ(a.resource, "jobs");
  EXPECT_EQ(Req(u, "GET", "/apis/batch/v1/jobs", {{"watch", "true"}}).verb, "watch");
  EXPECT_EQ(Req(u, "GET", "/apis/batch/v1/watch/namespaces/a/jobs").verb, "watch");
  EXPECT_EQ(Req(u, "DELETE", "/apis/batch/v1/namespaces/a/jobs").verb, "deletecollection");
  EXPECT_EQ(Req(u, "DELETE", "/apis/batch/v1/namespaces/a/jobs/x").verb, "delete");
  EXPECT_EQ(Req(u, "POST", "/apis/batch/v1/namespaces/a/jobs").verb, "create");
  EXPECT_EQ(Req(u, "PUT", "/apis/batch/v1/namespaces/a/jobs/x").verb, "update");
  auto status = Req(u, "PATCH", "/apis/batch/v1/namespaces/a/jobs/x/status");
  EXPECT_EQ(status.verb, "patch");
  EXPECT_EQ(status.name, "x");
  EXPECT_EQ(status.subresource, "status");
  auto log = Req(u, "GET", "/api/v1/namespaces/a/pods/p/log");
  EXPECT_EQ(log.api_group, "");
  EXPECT_EQ(log.resource, "pods");
  EXPECT_EQ(log.subresource, "log");
  // A Namespace is in its own namespace; its status is its subresource.
  auto ns = Req(u, "GET", "/api/v1/namespaces/team-a");
  EXPECT_EQ(ns.resource, "namespaces");
  EXPECT_EQ(ns.name, "team-a");
  EXPECT_EQ(ns.namespace_, "team-a");
  EXPECT_EQ(Req(u, "PUT", "/api/v1/namespaces/team-a/status").subresource, "status");
  // kubectl get x -w lists one name.
  EXPECT_EQ(Req(u, "GET", "/apis/batch/v1/namespaces/a/jobs",
                {{"watch", "1"}, {"fieldSelector", "metadata.name=x"}})
                .name,
            "x");
}

TEST(RequestAttributesTest, DiscoveryAndHealthAreNonResource) {
  for (const char* path : {"/api", "/api/v1", "/apis", "/apis/batch", "/apis/batch/v1", "/healthz",
                           "/version", "/metrics", "/openapi/v3"}) {
    auto a = Req(User("eve"), "GET", path);
    EXPECT_FALSE(a.resource_request) << path;
    EXPECT_EQ(a.verb, "get") << path;
    EXPECT_EQ(a.path, path);
  }
  EXPECT_EQ(Req(User("eve"), "POST", "/healthz").verb, "post");
}

class EvaluateTest : public ::testing::Test {
 protected:
  bool Allowed(const RequestAttributes& a) { return Evaluate(policy_, a).allowed; }
  RbacPolicy policy_;
};

TEST_F(EvaluateTest, RoleBindingAppliesInItsNamespaceOnly) {
  policy_ = BuildPolicy({},
                        {Role("team-a", "jobs",
                              json::array({{{"apiGroups", {"batch"}},
                                            {"resources", {"jobs"}},
                                            {"verbs", {"get", "create"}}}}))},
                        {}, {Binding("team-a", "b", "Role", "jobs", {UserSubject("alice")})});
  const UserInfo alice = User("alice");
  EXPECT_TRUE(Allowed(Req(alice, "POST", "/apis/batch/v1/namespaces/team-a/jobs")));
  EXPECT_TRUE(Allowed(Req(alice, "GET", "/apis/batch/v1/namespaces/team-a/jobs/x")));
  EXPECT_FALSE(Allowed(Req(alice, "DELETE", "/apis/batch/v1/namespaces/team-a/jobs/x")));
  EXPECT_FALSE(Allowed(Req(alice, "POST", "/apis/batch/v1/namespaces/team-b/jobs")));
  EXPECT_FALSE(Allowed(Req(alice, "GET", "/apis/batch/v1/jobs")));  // all namespaces
  // Another group's "jobs" (Volcano) is another resource.
  EXPECT_FALSE(
      Allowed(Req(alice, "POST", "/apis/batch.volcano.sh/v1alpha1/namespaces/team-a/jobs")));
  EXPECT_FALSE(Allowed(Req(User("bob"), "GET", "/apis/batch/v1/namespaces/team-a/jobs/x")));
  // A subresource needs its own rule.
  EXPECT_FALSE(Allowed(Req(alice, "GET", "/apis/batch/v1/namespaces/team-a/jobs/x/status")));
}

TEST_F(EvaluateTest, ClusterRoleBoundInANamespaceOrClusterWide) {
  json rules = json::array({{{"apiGroups", {"kueue.x-k8s.io"}},
                             {"resources", {"clusterqueues", "localqueues"}},
                             {"verbs", {"list"}}}});
  policy_ = BuildPolicy(
      {Role("", "reader", rules)}, {},
      {Binding("", "c", "ClusterRole", "reader", {{{"kind", "Group"}, {"name", "ops"}}})},
      {Binding("team-a", "r", "ClusterRole", "reader", {UserSubject("alice")})});
  const UserInfo alice = User("alice");
  EXPECT_TRUE(
      Allowed(Req(alice, "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues")));
  // A RoleBinding grants nothing cluster-scoped, nor in other namespaces.
  EXPECT_FALSE(Allowed(Req(alice, "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues")));
  EXPECT_FALSE(Allowed(Req(alice, "GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/b/localqueues")));
  const UserInfo op = User("carol", {"ops"});
  EXPECT_TRUE(Allowed(Req(op, "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues")));
  EXPECT_TRUE(Allowed(Req(op, "GET", "/apis/kueue.x-k8s.io/v1beta1/localqueues")));
  EXPECT_FALSE(Allowed(Req(op, "PATCH", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq")));
}

TEST_F(EvaluateTest, WildcardsSubresourcesAndResourceNames) {
  json rules = json::array({
      {{"apiGroups", {"*"}}, {"resources", {"*/status"}}, {"verbs", {"get"}}},
      {{"apiGroups", {""}}, {"resources", {"pods/log"}}, {"verbs", {"*"}}},
      {{"apiGroups", {"batch"}},
       {"resources", {"jobs"}},
       {"resourceNames", {"train"}},
       {"verbs", {"get", "delete", "watch"}}},
  });
  policy_ = BuildPolicy({Role("", "r", rules)}, {},
                        {Binding("", "c", "ClusterRole", "r", {UserSubject("u")})}, {});
  const UserInfo u = User("u");
  EXPECT_TRUE(Allowed(Req(u, "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq/status")));
  EXPECT_FALSE(Allowed(Req(u, "GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq")));
  EXPECT_TRUE(Allowed(Req(u, "GET", "/api/v1/namespaces/a/pods/p/log")));
  EXPECT_FALSE(Allowed(Req(u, "GET", "/api/v1/namespaces/a/pods/p")));
  EXPECT_TRUE(Allowed(Req(u, "DELETE", "/apis/batch/v1/namespaces/a/jobs/train")));
  EXPECT_FALSE(Allowed(Req(u, "DELETE", "/apis/batch/v1/namespaces/a/jobs/other")));
  // A list has no name: resourceNames never allow it, unless it selects that name.
  EXPECT_FALSE(Allowed(Req(u, "GET", "/apis/batch/v1/namespaces/a/jobs", {{"watch", "1"}})));
  EXPECT_TRUE(Allowed(Req(u, "GET", "/apis/batch/v1/namespaces/a/jobs",
                          {{"watch", "1"}, {"fieldSelector", "metadata.name=train"}})));
}

TEST_F(EvaluateTest, NonResourceUrlsAndServiceAccounts) {
  json rules = json::array({{{"nonResourceURLs", {"/healthz", "/apis/*"}}, {"verbs", {"get"}}}});
  policy_ =
      BuildPolicy({Role("", "urls", rules)}, {},
                  {Binding("", "c", "ClusterRole", "urls",
                           {{{"kind", "ServiceAccount"}, {"name", "bot"}, {"namespace", "ci"}}})},
                  {});
  const UserInfo bot = User("system:serviceaccount:ci:bot");
  EXPECT_TRUE(Allowed(Req(bot, "GET", "/healthz")));
  EXPECT_TRUE(Allowed(Req(bot, "GET", "/apis/batch/v1")));
  EXPECT_FALSE(Allowed(Req(bot, "GET", "/apis")));  // the prefix is "/apis/"
  EXPECT_FALSE(Allowed(Req(bot, "POST", "/healthz")));
  EXPECT_FALSE(Allowed(Req(User("system:serviceaccount:other:bot"), "GET", "/healthz")));
}

TEST_F(EvaluateTest, MissingRoleIsTheReason) {
  policy_ =
      BuildPolicy({}, {}, {}, {Binding("a", "b", "ClusterRole", "ghost", {UserSubject("u")})});
  Decision d = Evaluate(policy_, Req(User("u"), "GET", "/api/v1/namespaces/a/pods"));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason, "RBAC: clusterrole.rbac.authorization.k8s.io \"ghost\" not found");
}

TEST(ForbiddenErrorTest, UpstreamWording) {
  const UserInfo bob = User("bob");
  ApiError e = ForbiddenError(Req(bob, "DELETE", "/apis/batch/v1/namespaces/team-a/jobs/x"), "");
  EXPECT_EQ(e.code, 403);
  EXPECT_EQ(e.reason, "Forbidden");
  EXPECT_EQ(e.message,
            "jobs.batch \"x\" is forbidden: User \"bob\" cannot delete resource \"jobs\" in API "
            "group \"batch\" in the namespace \"team-a\"");
  EXPECT_EQ(ForbiddenError(Req(bob, "GET", "/api/v1/nodes"), "").message,
            "nodes is forbidden: User \"bob\" cannot list resource \"nodes\" in API group \"\" at "
            "the cluster scope");
  EXPECT_EQ(
      ForbiddenError(Req(bob, "PUT", "/apis/batch/v1/namespaces/a/jobs/x/status"), "r").message,
      "jobs.batch \"x\" is forbidden: User \"bob\" cannot update resource \"jobs/status\" in "
      "API group \"batch\" in the namespace \"a\": r");
  EXPECT_EQ(ForbiddenError(Req(bob, "GET", "/metrics"), "").message,
            "forbidden: User \"bob\" cannot get path \"/metrics\"");
}

class BootstrapTest : public EvaluateTest {
 protected:
  void SetUp() override {
    policy_ = BuildPolicy(BootstrapClusterRoles(), {}, BootstrapClusterRoleBindings(),
                          {Binding("team-a", "e", "ClusterRole", "edit", {UserSubject("alice")}),
                           Binding("team-a", "v", "ClusterRole", "view", {UserSubject("bob")}),
                           Binding("team-a", "a", "ClusterRole", "admin", {UserSubject("dana")})});
  }
};

TEST_F(BootstrapTest, DefaultRoles) {
  const UserInfo alice = User("alice"), bob = User("bob"), dana = User("dana"), eve = User("eve");
  const std::string jobs = "/apis/batch/v1/namespaces/team-a/jobs";
  EXPECT_TRUE(Allowed(Req(alice, "POST", jobs)));
  EXPECT_TRUE(Allowed(Req(alice, "DELETE", jobs + "/x")));
  EXPECT_FALSE(Allowed(Req(alice, "PATCH", jobs + "/x/status")));
  EXPECT_TRUE(Allowed(Req(alice, "GET", jobs + "/x/status")));
  EXPECT_FALSE(Allowed(
      Req(alice, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings")));
  EXPECT_TRUE(Allowed(
      Req(dana, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings")));
  EXPECT_TRUE(
      Allowed(Req(dana, "POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues")));
  EXPECT_FALSE(
      Allowed(Req(alice, "POST", "/apis/kueue.x-k8s.io/v1beta1/namespaces/team-a/localqueues")));
  EXPECT_TRUE(Allowed(Req(bob, "GET", jobs + "/x")));
  EXPECT_TRUE(Allowed(Req(bob, "GET", "/api/v1/namespaces/team-a/pods/p/log")));
  EXPECT_FALSE(Allowed(Req(bob, "DELETE", jobs + "/x")));
  EXPECT_FALSE(Allowed(Req(bob, "GET", "/api/v1/namespaces/team-a/secrets")));
  EXPECT_TRUE(Allowed(Req(alice, "GET", "/api/v1/namespaces/team-a/secrets")));
  // Nobody but cluster admins writes cluster-scoped objects.
  for (const UserInfo& u : {alice, bob, dana, eve}) {
    EXPECT_FALSE(Allowed(Req(u, "PATCH", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq")));
    EXPECT_FALSE(Allowed(Req(u, "POST", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors")));
    EXPECT_FALSE(Allowed(Req(u, "DELETE", "/api/v1/nodes/n")));
    EXPECT_FALSE(Allowed(Req(u, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues")));
  }
  // Any authenticated user: discovery, health, version and self reviews.
  EXPECT_TRUE(Allowed(Req(eve, "GET", "/apis/batch/v1")));
  EXPECT_TRUE(Allowed(Req(eve, "GET", "/api")));
  EXPECT_TRUE(Allowed(Req(eve, "GET", "/version")));
  EXPECT_TRUE(Allowed(Req(eve, "GET", "/readyz")));
  EXPECT_TRUE(Allowed(Req(eve, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")));
  EXPECT_FALSE(Allowed(Req(eve, "GET", "/metrics")));
  EXPECT_FALSE(Allowed(Req(eve, "GET", "/api/v1/namespaces/team-a/pods")));
  // system:masters through the cluster-admin binding (the authorizer also short-cuts it).
  const UserInfo root = {"root", "0", {kMastersGroup}};
  EXPECT_TRUE(Allowed(Req(root, "DELETE", "/api/v1/nodes/n")));
  EXPECT_TRUE(Allowed(Req(root, "GET", "/metrics")));
}

TEST_F(BootstrapTest, RulesForAUser) {
  UserRules rules = RulesFor(policy_, User("bob"), "team-a");
  EXPECT_TRUE(rules.errors.empty());
  bool jobs = false;
  for (const auto& r : rules.resource_rules) {
    for (const auto& res : r.resources) jobs = jobs || res == "jobs";
  }
  EXPECT_TRUE(jobs);
  EXPECT_FALSE(rules.non_resource_rules.empty());  // system:discovery
  EXPECT_LT(RulesFor(policy_, User("bob"), "team-b").resource_rules.size(),
            rules.resource_rules.size());
}

}  // namespace
}  // namespace muster::server::auth
