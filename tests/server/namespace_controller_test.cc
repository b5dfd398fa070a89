// Namespace lifecycle (namespace_lifecycle.h) through the API, and the namespace
// controller's passes (namespace_controller.h) driven directly: a deleted Namespace is
// marked Terminating, refuses new content, is emptied, says what holds it, and goes.
#include "server/namespace_controller.h"

#include <string>

#include "server/api_fixture.h"
#include "server/graceful_deletion.h"
#include "server/namespace_lifecycle.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr char kMarkedAt[] = "2026-12-03T10:00:00Z";
constexpr char kPassLater[] = "2026-12-03T10:05:00Z";

class NamespaceLifecycleTest : public testing::ApiFixture {
 protected:
  void CreateNamespace(const std::string& name) {
    auto r = Call(
        "POST", "/api/v1/namespaces",
        json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}}.dump());
    ASSERT_EQ(r.code, 201) << r.body;
  }
  void CreateConfigMap(const std::string& ns, const std::string& name,
                       const json& finalizers = json::array()) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"finalizers", finalizers}}},
               {"data", {{"k", "v"}}}};
    auto r = Call("POST", "/api/v1/namespaces/" + ns + "/configmaps", cm.dump());
    ASSERT_EQ(r.code, 201) << r.body;
  }
  bool Exists(const std::string& resource, const std::string& ns, const std::string& name) {
    return store_->Get({resource, ns, name}).ok();
  }
  json Namespace(const std::string& name) {
    auto got = store_->Get({"namespaces", "", name});
    return got.ok() ? *got : json();
  }
  // The stored Namespace's condition of `type`.
  json Condition(const std::string& ns, const std::string& type) {
    const json stored = Namespace(ns);
    for (const json& c : stored["status"]["conditions"]) {
      if (c["type"] == type) return c;
    }
    return json();
  }
};

TEST_F(NamespaceLifecycleTest, ACreatedNamespaceIsActiveWithTheKubernetesFinalizerAndItsNameLabel) {
  auto r = Call("POST", "/api/v1/namespaces",
                R"({"apiVersion":"v1","kind":"Namespace","metadata":{"generateName":"team-",
                    "labels":{"kubernetes.io/metadata.name":"other"}},
                    "spec":{"finalizers":["example.com/x"]},"status":{"phase":"Terminating"}})");
  ASSERT_EQ(r.code, 201) << r.body;
  json ns = Body(r);
  const std::string name = ns["metadata"]["name"];
  EXPECT_EQ(name.rfind("team-", 0), 0u);
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], name);
  EXPECT_EQ(ns["spec"]["finalizers"], json({"example.com/x", "kubernetes"}));
  EXPECT_EQ(ns["status"], json({{"phase", "Active"}}));

  // An update keeps spec.finalizers and the status, and the label follows the name.
  ns["spec"]["finalizers"] = json::array();
  ns["metadata"]["labels"]["kubernetes.io/metadata.name"] = "moved";
  ns["metadata"]["labels"]["team"] = "ml";
  r = Call("PUT", "/api/v1/namespaces/" + name, ns.dump());
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["finalizers"], json({"example.com/x", "kubernetes"}));
  EXPECT_EQ(Body(r)["metadata"]["labels"]["kubernetes.io/metadata.name"], name);
  EXPECT_EQ(Body(r)["metadata"]["labels"]["team"], "ml");
  r = Call("PATCH", "/api/v1/namespaces/" + name, R"({"spec":{"finalizers":null}})",
           "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["finalizers"], json({"example.com/x", "kubernetes"}));

  // A write into a namespace that does not exist makes it, the same way.
  CreateConfigMap("made", "c");
  EXPECT_EQ(Namespace("made")["spec"]["finalizers"], json({"kubernetes"}));
  EXPECT_EQ(Namespace("made")["metadata"]["labels"]["kubernetes.io/metadata.name"], "made");
}

TEST_F(NamespaceLifecycleTest, TheSystemNamespacesMayNotBeDeleted) {
  CreateNamespace("kube-public");
  for (const char* name : {"default", "kube-system", "kube-public"}) {
    CreateConfigMap(name, "c");
    auto r = Call("DELETE", std::string("/api/v1/namespaces/") + name);
    EXPECT_EQ(r.code, 403) << name;
    EXPECT_EQ(Body(r)["reason"], "Forbidden");
    EXPECT_EQ(Body(r)["message"], std::string("namespaces \"") + name +
                                      "\" is forbidden: this namespace may not be deleted");
    EXPECT_FALSE(BeingDeleted(Namespace(name))) << name;
  }
}

TEST_F(NamespaceLifecycleTest, DeletingMarksItTerminatingAndRefusesNewContentOnly) {
  CreateNamespace("doomed");
  CreateConfigMap("doomed", "kept");
  auto r = Call("DELETE", "/api/v1/namespaces/doomed");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["status"]["phase"], "Terminating");
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp"));
  // Still there (the controller empties it), and a second delete changes nothing.
  const json marked = Namespace("doomed");
  EXPECT_TRUE(BeingDeleted(marked));
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/doomed").code, 200);
  EXPECT_EQ(Namespace("doomed")["metadata"]["resourceVersion"],
            marked["metadata"]["resourceVersion"]);

  r = Call("POST", "/api/v1/namespaces/doomed/configmaps",
           R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}})");
  ASSERT_EQ(r.code, 403) << r.body;
  const json status = Body(r);
  EXPECT_EQ(status["reason"], "Forbidden");
  EXPECT_EQ(status["message"],
            "configmaps \"late\" is forbidden: unable to create new content in namespace doomed "
            "because it is being terminated");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "NamespaceTerminating");
  EXPECT_EQ(status["details"]["causes"][0]["field"], "metadata.namespace");
  EXPECT_FALSE(Exists("configmaps", "doomed", "late"));
  r = Call("POST", "/apis/batch/v1/namespaces/doomed/jobs",
           R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"j-"}})");
  EXPECT_EQ(r.code, 403) << r.body;
  EXPECT_EQ(Body(r)["message"].get<std::string>().rfind("jobs.batch \"j-", 0), 0u) << r.body;

  // What is there may still change and go; other namespaces are untouched.
  r = Call("PATCH", "/api/v1/namespaces/doomed/configmaps/kept", R"({"data":{"k":"w"}})",
           "application/merge-patch+json");
  EXPECT_EQ(r.code, 200) << r.body;
  CreateConfigMap("default", "elsewhere");
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/doomed/configmaps/kept").code, 200);
}

TEST_F(NamespaceLifecycleTest, APassEmptiesTheNamespaceAndItGoes) {
  CreateNamespace("team");
  CreateConfigMap("team", "a");
  CreateConfigMap("team", "b");
  auto r = Call("POST", "/apis/batch/v1/namespaces/team/jobs", R"({
    "apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},
    "spec":{"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"c","image":"busybox"}]}}}})");
  ASSERT_EQ(r.code, 201) << r.body;
  CreateConfigMap("default", "elsewhere");
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/team").code, 200);

  auto done = NamespaceDeleter::Sync(*store_, "team", kMarkedAt);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_TRUE(*done);
  EXPECT_FALSE(Exists("configmaps", "team", "a"));
  EXPECT_FALSE(Exists("configmaps", "team", "b"));
  EXPECT_FALSE(Exists("jobs.batch", "team", "j"));
  EXPECT_FALSE(Exists("namespaces", "", "team"));
  EXPECT_TRUE(Exists("configmaps", "default", "elsewhere"));
  // Gone: nothing more to do.
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "team", kMarkedAt));
}

TEST_F(NamespaceLifecycleTest, WhatAFinalizerHoldsKeepsItTerminatingAndTheConditionsSayWhat) {
  CreateNamespace("team");
  CreateConfigMap("team", "held", {"example.com/hold"});
  CreateConfigMap("team", "also-held", {"example.com/hold", "example.com/other"});
  CreateConfigMap("team", "free");
  auto r = Call("POST", "/api/v1/namespaces/team/secrets",
                R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}})");
  ASSERT_EQ(r.code, 201) << r.body;
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/team").code, 200);

  auto done = NamespaceDeleter::Sync(*store_, "team", kMarkedAt);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_FALSE(*done);
  EXPECT_FALSE(Exists("configmaps", "team", "free"));
  EXPECT_FALSE(Exists("secrets", "team", "s"));
  EXPECT_TRUE(BeingDeleted(*store_->Get({"configmaps", "team", "held"})));
  const json ns = Namespace("team");
  EXPECT_EQ(ns["status"]["phase"], "Terminating");
  ASSERT_EQ(ns["status"]["conditions"].size(), 5u);
  // Upstream's five, in its order.
  const char* types[] = {"NamespaceDeletionDiscoveryFailure",
                         "NamespaceDeletionGroupVersionParsingFailure",
                         "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
                         "NamespaceFinalizersRemaining"};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(ns["status"]["conditions"][i]["type"], types[i]);
    EXPECT_EQ(ns["status"]["conditions"][i]["lastTransitionTime"], kMarkedAt);
  }
  EXPECT_EQ(Condition("team", "NamespaceDeletionContentFailure")["status"], "False");
  EXPECT_EQ(Condition("team", "NamespaceDeletionContentFailure")["reason"], "ContentDeleted");
  const json content = Condition("team", "NamespaceContentRemaining");
  EXPECT_EQ(content["status"], "True");
  EXPECT_EQ(content["reason"], "SomeResourcesRemain");
  EXPECT_EQ(content["message"],
            "Some resources are remaining: configmaps. has 2 resource instances");
  const json finalizers = Condition("team", "NamespaceFinalizersRemaining");
  EXPECT_EQ(finalizers["status"], "True");
  EXPECT_EQ(finalizers["reason"], "SomeFinalizersRemain");
  EXPECT_EQ(finalizers["message"],
            "Some content in the namespace has finalizers remaining: example.com/hold in 2 "
            "resource instances, example.com/other in 1 resource instances");

  // Nothing changed: another pass writes nothing.
  const json before = Namespace("team");
  EXPECT_FALSE(*NamespaceDeleter::Sync(*store_, "team", kPassLater));
  EXPECT_EQ(Namespace("team"), before);

  // One finalizer off: the counts move, the times stay (the statuses did not change).
  r = Call("PATCH", "/api/v1/namespaces/team/configmaps/held",
           R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_FALSE(*NamespaceDeleter::Sync(*store_, "team", kPassLater));
  EXPECT_EQ(Condition("team", "NamespaceContentRemaining")["message"],
            "Some resources are remaining: configmaps. has 1 resource instances");
  EXPECT_EQ(Condition("team", "NamespaceContentRemaining")["lastTransitionTime"], kMarkedAt);

  // The last one off: the namespace goes at the next pass.
  r = Call("PATCH", "/api/v1/namespaces/team/configmaps/also-held",
           R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "team", kPassLater));
  EXPECT_FALSE(Exists("namespaces", "", "team"));
}

TEST_F(NamespaceLifecycleTest, APassLeavesANamespaceNotBeingDeletedAlone) {
  CreateNamespace("live");
  CreateConfigMap("live", "c");
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "live", kMarkedAt));
  EXPECT_TRUE(Exists("configmaps", "live", "c"));
  EXPECT_FALSE(Namespace("live")["status"].contains("conditions"));
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "missing", kMarkedAt));
}

TEST_F(NamespaceLifecycleTest, ANamespaceWaitingOnAnotherFinalizerStaysOnceEmptied) {
  auto r = Call("POST", "/api/v1/namespaces",
                R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"},
                    "spec":{"finalizers":["example.com/x"]}})");
  ASSERT_EQ(r.code, 201) << r.body;
  CreateConfigMap("other", "c");
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/other").code, 200);
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "other", kMarkedAt));
  EXPECT_FALSE(Exists("configmaps", "other", "c"));
  // "kubernetes" is off; the other finalizer is someone else's to take off.
  EXPECT_EQ(Namespace("other")["spec"]["finalizers"], json({"example.com/x"}));
  EXPECT_TRUE(BeingDeleted(Namespace("other")));
}

TEST_F(NamespaceLifecycleTest, TheFinalizeSubresourceAloneChangesSpecFinalizers) {
  auto r = Call("POST", "/api/v1/namespaces",
                R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"stuck"},
                    "spec":{"finalizers":["example.com/x"]}})");
  ASSERT_EQ(r.code, 201) << r.body;
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/stuck").code, 200);
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "stuck", kMarkedAt));
  ASSERT_TRUE(Exists("namespaces", "", "stuck"));  // example.com/x holds it

  // Only PUT, only spec.finalizers, only standard or qualified names.
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/stuck/finalize").code, 405);
  r = Call("PUT", "/api/v1/namespaces/stuck/finalize",
           R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"stuck"},
               "spec":{"finalizers":["unqualified"]}})");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_EQ(Body(r)["details"]["causes"][0]["field"], "spec.finalizers[0]");
  EXPECT_EQ(Call("PUT", "/api/v1/configmaps/finalize", "{}").code, 404);
  r = Call("PUT", "/api/v1/namespaces/stuck/finalize",
           R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"stuck",
               "labels":{"ignored":"yes"}},"spec":{"finalizers":["example.com/y"]}})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["finalizers"], json({"example.com/y"}));
  EXPECT_FALSE(Body(r)["metadata"]["labels"].contains("ignored"));
  // The last one off: the Namespace goes.
  r = Call("PUT", "/api/v1/namespaces/stuck/finalize",
           R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"stuck"},"spec":{}})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_FALSE(Exists("namespaces", "", "stuck"));
  EXPECT_EQ(Call("PUT", "/api/v1/namespaces/stuck/finalize", R"({"spec":{}})").code, 404);
}

TEST_F(NamespaceLifecycleTest, NamespacesStoredBeforeLifecycleAreAdopted) {
  auto made = store_->Create({"namespaces", "", "old"}, {{"apiVersion", "v1"},
                                                         {"kind", "Namespace"},
                                                         {"metadata", {{"name", "old"}}},
                                                         {"status", {{"phase", "Active"}}}});
  ASSERT_TRUE(made.ok());
  NamespaceDeleter::AdoptLegacyNamespaces(*store_);
  EXPECT_EQ(Namespace("old")["spec"]["finalizers"], json({"kubernetes"}));
  EXPECT_EQ(Namespace("old")["metadata"]["labels"]["kubernetes.io/metadata.name"], "old");
  EXPECT_EQ(Namespace("old")["status"]["phase"], "Active");
  // Deleting it now empties it first.
  CreateConfigMap("old", "c");
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/old").code, 200);
  EXPECT_TRUE(Exists("namespaces", "", "old"));
  EXPECT_TRUE(*NamespaceDeleter::Sync(*store_, "old", kMarkedAt));
  EXPECT_FALSE(Exists("configmaps", "old", "c"));
  EXPECT_FALSE(Exists("namespaces", "", "old"));
}

}  // namespace
}  // namespace muster::server
