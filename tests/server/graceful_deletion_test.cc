// Finalizers and deletionTimestamp (graceful_deletion.h) through the store and the
// API: a delete marks what a finalizer holds, an update that takes the last one off
// removes it, and the mark can be neither moved nor cleared nor given new finalizers.
#include "server/graceful_deletion.h"

#include <ctime>
#include <deque>
#include <optional>
#include <string>

#include "control/job_deadlines.h"
#include "server/api_fixture.h"
#include "server/garbage_collector.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

class GracefulDeletionTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    testing::ApiFixture::SetUp();
    subscription_ =
        store_->hub().Subscribe([this](const WatchHub::ChangePtr& c) { changes_.push_back(*c); });
  }
  void TearDown() override {
    store_->hub().Unsubscribe(subscription_);
    testing::ApiFixture::TearDown();
  }
  // A ConfigMap with these finalizers, through the API.
  void CreateConfigMap(const std::string& name, const json& finalizers) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"finalizers", finalizers}}},
               {"data", {{"k", "v"}}}};
    auto r = Call("POST", "/api/v1/namespaces/default/configmaps", cm.dump());
    ASSERT_EQ(r.code, 201) << r.body;
  }
  std::string Path(const std::string& name) {
    return "/api/v1/namespaces/default/configmaps/" + name;
  }
  std::optional<json> Stored(const std::string& name) {
    auto got = store_->Get({"configmaps", "default", name});
    if (!got.ok()) return std::nullopt;
    return *got;
  }
  // The types of the changes recorded for `name` since the last call.
  std::vector<control::ChangeType> ChangesOf(const std::string& name) {
    std::vector<control::ChangeType> types;
    for (const control::Change& c : changes_) {
      if (c.name == name) types.push_back(c.type);
    }
    changes_.clear();
    return types;
  }

  std::deque<control::Change> changes_;
  WatchHub::SubscriptionId subscription_ = 0;
};

TEST(GracefulDeletion, EveryFinalizerButOrphanHoldsAnObject) {
  EXPECT_FALSE(HeldByFinalizers(json::object()));
  EXPECT_FALSE(HeldByFinalizers({{"metadata", {{"finalizers", json::array()}}}}));
  EXPECT_FALSE(HeldByFinalizers({{"metadata", {{"finalizers", {"orphan"}}}}}));
  // The collector takes it off once the dependents are gone (owner_graph.h).
  EXPECT_TRUE(HeldByFinalizers({{"metadata", {{"finalizers", {"foregroundDeletion"}}}}}));
  EXPECT_TRUE(HeldByFinalizers({{"metadata", {{"finalizers", {"orphan", "example.com/x"}}}}}));
  json marked = {{"metadata", {{"name", "a"}}}};
  EXPECT_FALSE(BeingDeleted(marked));
  MarkForDeletion(marked, "2026-01-01T00:00:00Z");
  EXPECT_TRUE(BeingDeleted(marked));
  MarkForDeletion(marked, "2027-01-01T00:00:00Z");  // the first mark stays
  EXPECT_EQ(marked["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(marked["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(AddedFinalizers({{"metadata", {{"finalizers", {"a"}}}}},
                            {{"metadata", {{"finalizers", {"a", "b"}}}}}),
            std::vector<std::string>{"b"});
}

TEST_F(GracefulDeletionTest, DeleteMarksAndTheLastFinalizerRemovedDeletes) {
  CreateConfigMap("held", {"example.com/a", "example.com/b"});
  changes_.clear();
  auto r = Call("DELETE", Path("held"));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp")) << r.body;
  auto held = Stored("held");
  ASSERT_TRUE(held.has_value()) << "a finalizer holds it";
  EXPECT_TRUE(BeingDeleted(*held));
  EXPECT_EQ((*held)["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(ChangesOf("held"), std::vector{control::ChangeType::kModified});
  const std::string mark = (*held)["metadata"]["deletionTimestamp"];

  // Deleting again changes nothing.
  r = Call("DELETE", Path("held"));
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(ChangesOf("held").empty());

  // A controller takes one finalizer off: still there, the mark unmoved even when
  // the update tries to clear it.
  json next = *held;
  next["metadata"]["finalizers"] = {"example.com/b"};
  next["metadata"].erase("deletionTimestamp");
  next["data"]["k"] = "w";
  r = Call("PUT", Path("held"), next.dump());
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["deletionTimestamp"], mark);
  EXPECT_EQ(ChangesOf("held"), std::vector{control::ChangeType::kModified});

  // No finalizer may be added while it is being deleted.
  json patch = {{"metadata", {{"finalizers", {"example.com/b", "example.com/c"}}}}};
  r = Call("PATCH", Path("held"), patch.dump(), "application/merge-patch+json");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_NE(r.body.find("metadata.finalizers"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("example.com/c"), std::string::npos) << r.body;

  // The last one off: gone, as a DELETED change.
  patch = {{"metadata", {{"finalizers", nullptr}}}};
  r = Call("PATCH", Path("held"), patch.dump(), "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_FALSE(Stored("held").has_value());
  EXPECT_EQ(ChangesOf("held"), std::vector{control::ChangeType::kDeleted});
  EXPECT_EQ(Call("GET", Path("held")).code, 404);
}

TEST_F(GracefulDeletionTest, UnmarkedObjectsTakeAndDropFinalizersFreely) {
  CreateConfigMap("free", json::array());
  json patch = {{"metadata", {{"finalizers", {"example.com/a"}}}}};
  auto r = Call("PATCH", Path("free"), patch.dump(), "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  // A client cannot mark it by writing the field.
  patch = {{"metadata", {{"deletionTimestamp", "2020-01-01T00:00:00Z"}, {"finalizers", nullptr}}}};
  r = Call("PATCH", Path("free"), patch.dump(), "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_TRUE(Stored("free").has_value());
  EXPECT_FALSE(BeingDeleted(*Stored("free")));
  // Without finalizers a delete removes it at once.
  EXPECT_EQ(Call("DELETE", Path("free")).code, 200);
  EXPECT_FALSE(Stored("free").has_value());
}

TEST_F(GracefulDeletionTest, AcceptedWhenDependentsWereAskedToGo) {
  CreateConfigMap("held", {"example.com/a"});
  auto r = Call("DELETE", Path("held") + "?orphanDependents=false");
  EXPECT_EQ(r.code, 202) << r.body;
  EXPECT_TRUE(Stored("held").has_value());
}

TEST_F(GracefulDeletionTest, TheOrphanFinalizerHoldsNothing) {
  // Orphan puts "orphan" on the object; with nothing else there it goes at once.
  CreateConfigMap("orphaned", json::array());
  ASSERT_EQ(Call("DELETE", Path("orphaned") + "?propagationPolicy=Orphan").code, 200);
  EXPECT_FALSE(Stored("orphaned").has_value());
  // With a finalizer of its own it stays, carrying "orphan" for the collector, and
  // goes when the finalizer does.
  CreateConfigMap("both", {"example.com/a"});
  ASSERT_EQ(Call("DELETE", Path("both") + "?propagationPolicy=Orphan").code, 200);
  auto held = Stored("both");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ((*held)["metadata"]["finalizers"], json({"example.com/a", "orphan"}));
  json patch = {{"metadata", {{"finalizers", {"orphan"}}}}};
  ASSERT_EQ(Call("PATCH", Path("both"), patch.dump(), "application/merge-patch+json").code, 200);
  EXPECT_FALSE(Stored("both").has_value());
}

TEST_F(GracefulDeletionTest, AClusterQueueCarriesKueuesFinalizer) {
  const std::string path = "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq";
  json cq = {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
             {"kind", "ClusterQueue"},
             {"metadata", {{"name", "cq"}}},
             {"spec", {{"namespaceSelector", json::object()}}}};
  auto r = Call("POST", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", cq.dump());
  ASSERT_EQ(r.code, 201) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["finalizers"], json({"kueue.x-k8s.io/resource-in-use"}));
  // A replace that drops it gets it back, as Kueue's webhook defaults it.
  json replaced = Body(r);
  replaced["metadata"].erase("finalizers");
  replaced["metadata"]["labels"] = {{"a", "b"}};
  r = Call("PUT", path, replaced.dump());
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["finalizers"], json({"kueue.x-k8s.io/resource-in-use"}));
  // Deleted, it stays until the scheduler takes the finalizer off (not running here);
  // an update while it terminates adds nothing back.
  ASSERT_EQ(Call("DELETE", path).code, 200);
  auto held = store_->Get({"clusterqueues.kueue.x-k8s.io", "", "cq"});
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE(BeingDeleted(*held));
  json patch = {{"metadata", {{"finalizers", nullptr}}}};
  r = Call("PATCH", path, patch.dump(), "application/merge-patch+json");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Call("GET", path).code, 404);
}

TEST_F(GracefulDeletionTest, StatusWritesKeepTheMark) {
  // Store-level: the status scope of a marked object keeps its metadata.
  const control::ObjectKey key{"configmaps", "default", "s"};
  ASSERT_TRUE(store_
                  ->Create(key, {{"metadata", {{"name", "s"}, {"finalizers", {"example.com/a"}}}},
                                 {"data", json::object()}})
                  .ok());
  auto marked = store_->Delete(key);
  ASSERT_TRUE(marked.ok());
  EXPECT_TRUE(BeingDeleted(*marked));
  json next = *marked;
  next["metadata"].erase("deletionTimestamp");
  next["metadata"].erase("finalizers");
  next["status"] = {{"phase", "x"}};
  auto written = store_->Update(key, next, WriteScope::kStatus);
  ASSERT_TRUE(written.ok());
  EXPECT_TRUE(BeingDeleted(*written));
  EXPECT_TRUE(store_->Get(key).ok()) << "a status write takes no finalizer off";
}

// Pods (kube-apiserver's pod strategy): a bound, unfinished pod is marked with its
// grace period and stays until its kubelet deletes it with none.
class GracefulPodDeletionTest : public GracefulDeletionTest {
 protected:
  std::string PodPath(const std::string& name) { return "/api/v1/namespaces/default/pods/" + name; }
  // A Pod bound to node-0 (or to none), with these finalizers and grace period.
  void CreatePod(const std::string& name, bool bound, const json& finalizers = json::array(),
                 std::optional<int64_t> grace = std::nullopt) {
    json spec = {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}};
    if (bound) spec["nodeName"] = "node-0";
    if (grace) spec["terminationGracePeriodSeconds"] = *grace;
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"finalizers", finalizers}}},
                {"spec", spec}};
    auto r = Call("POST", "/api/v1/namespaces/default/pods", pod.dump());
    ASSERT_EQ(r.code, 201) << r.body;
  }
  std::optional<json> StoredPod(const std::string& name) {
    auto got = store_->Get({"pods", "default", name});
    if (!got.ok()) return std::nullopt;
    return *got;
  }
  // Seconds from now to the pod's deletionTimestamp.
  double MarkIn(const json& pod) {
    auto at = control::ParseRfc3339(pod["metadata"].value("deletionTimestamp", ""));
    return at ? *at - static_cast<double>(std::time(nullptr)) : -1e9;
  }
};

TEST(GracefulDeletion, APodsGracePeriodFollowsKubeApiserversPodStrategy) {
  json pod = {{"spec", {{"nodeName", "n"}, {"terminationGracePeriodSeconds", 45}}},
              {"status", {{"phase", "Running"}}}};
  EXPECT_EQ(PodDeletionGracePeriod(pod, std::nullopt), 45);
  EXPECT_EQ(PodDeletionGracePeriod(pod, 5), 5);   // DeleteOptions win
  EXPECT_EQ(PodDeletionGracePeriod(pod, 0), 0);   // now
  EXPECT_EQ(PodDeletionGracePeriod(pod, -3), 1);  // negative: 1
  pod["spec"].erase("terminationGracePeriodSeconds");
  EXPECT_EQ(PodDeletionGracePeriod(pod, std::nullopt), 30);  // the API default
  pod["status"]["phase"] = "Succeeded";
  EXPECT_EQ(PodDeletionGracePeriod(pod, 10), 0);  // nothing runs
  pod["status"]["phase"] = "Pending";
  pod["spec"].erase("nodeName");
  EXPECT_EQ(PodDeletionGracePeriod(pod, 10), 0);  // never bound

  json marked = {{"metadata", {{"name", "p"}}}};
  EXPECT_FALSE(MarkForGracefulDeletion(marked, "2026-01-01T00:00:00Z", 0));
  EXPECT_TRUE(MarkForGracefulDeletion(marked, "2026-01-01T00:00:00Z", 30));
  EXPECT_EQ(marked["metadata"]["deletionTimestamp"], "2026-01-01T00:00:30Z");
  EXPECT_EQ(DeletionGracePeriod(marked), 30);
  // A longer period changes nothing; a shorter one moves the mark.
  EXPECT_FALSE(MarkForGracefulDeletion(marked, "2026-01-01T00:00:10Z", 30));
  EXPECT_TRUE(MarkForGracefulDeletion(marked, "2026-01-01T00:00:10Z", 5));
  EXPECT_EQ(marked["metadata"]["deletionTimestamp"], "2026-01-01T00:00:15Z");
  EXPECT_EQ(DeletionGracePeriod(marked), 5);
  // A delete with no period: now.
  MarkForDeletion(marked, "2026-01-01T00:00:11Z");
  EXPECT_EQ(marked["metadata"]["deletionTimestamp"], "2026-01-01T00:00:11Z");
  EXPECT_EQ(DeletionGracePeriod(marked), 0);
}

TEST_F(GracefulPodDeletionTest, ABoundPodStaysTerminatingUntilDeletedWithNoPeriod) {
  CreatePod("run", /*bound=*/true);
  changes_.clear();
  auto r = Call("DELETE", PodPath("run"));
  ASSERT_EQ(r.code, 200) << r.body;
  auto pod = StoredPod("run");
  ASSERT_TRUE(pod.has_value()) << "it waits for its kubelet";
  EXPECT_EQ((*pod)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_NEAR(MarkIn(*pod), 30, 5);
  EXPECT_EQ(ChangesOf("run"), std::vector{control::ChangeType::kModified});

  // The kubelet writes its status meanwhile: no finalizer, yet it stays.
  json status = *pod;
  status["status"] = {{"phase", "Running"}};
  r = Call("PUT", PodPath("run") + "/status", status.dump());
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_TRUE(StoredPod("run").has_value());

  // A second delete may shorten the period, not lengthen it.
  r = Call("DELETE", PodPath("run") + "?gracePeriodSeconds=60");
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_TRUE(StoredPod("run").has_value());
  EXPECT_EQ((*StoredPod("run"))["metadata"]["deletionGracePeriodSeconds"], 30);
  r = Call("DELETE", PodPath("run"), R"({"kind":"DeleteOptions","gracePeriodSeconds":2})");
  ASSERT_EQ(r.code, 200) << r.body;
  ASSERT_TRUE(StoredPod("run").has_value());
  EXPECT_EQ((*StoredPod("run"))["metadata"]["deletionGracePeriodSeconds"], 2);
  EXPECT_NEAR(MarkIn(*StoredPod("run")), 2, 2);
  changes_.clear();

  // The kubelet's own delete (no period): gone.
  r = Call("DELETE", PodPath("run") + "?gracePeriodSeconds=0");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_FALSE(StoredPod("run").has_value());
  EXPECT_EQ(ChangesOf("run"), std::vector{control::ChangeType::kDeleted});
}

TEST_F(GracefulPodDeletionTest, PodsWithNothingToStopGoAtOnce) {
  CreatePod("unbound", /*bound=*/false);
  ASSERT_EQ(Call("DELETE", PodPath("unbound")).code, 200);
  EXPECT_FALSE(StoredPod("unbound").has_value());

  CreatePod("done", /*bound=*/true);
  json status = *StoredPod("done");
  status["status"] = {{"phase", "Succeeded"}};
  ASSERT_EQ(Call("PUT", PodPath("done") + "/status", status.dump()).code, 200);
  ASSERT_EQ(Call("DELETE", PodPath("done")).code, 200);
  EXPECT_FALSE(StoredPod("done").has_value());

  CreatePod("quick", /*bound=*/true, json::array(), /*grace=*/0);
  ASSERT_EQ(Call("DELETE", PodPath("quick")).code, 200);
  EXPECT_FALSE(StoredPod("quick").has_value());

  // Other kinds have no grace period: a ConfigMap goes at once whatever is asked.
  CreateConfigMap("cm", json::array());
  ASSERT_EQ(Call("DELETE", Path("cm") + "?gracePeriodSeconds=30").code, 200);
  EXPECT_FALSE(Stored("cm").has_value());
}

TEST_F(GracefulPodDeletionTest, AFinalizerHoldsAPodPastItsKubeletsDelete) {
  CreatePod("held", /*bound=*/true, {"example.com/a"});
  ASSERT_EQ(Call("DELETE", PodPath("held")).code, 200);
  EXPECT_EQ(DeletionGracePeriod(*StoredPod("held")), 30);
  // The kubelet is done: the period drops to 0, the finalizer still holds it.
  ASSERT_EQ(Call("DELETE", PodPath("held") + "?gracePeriodSeconds=0").code, 200);
  auto pod = StoredPod("held");
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(DeletionGracePeriod(*pod), 0);
  EXPECT_NEAR(MarkIn(*pod), 0, 5);
  json patch = {{"metadata", {{"finalizers", nullptr}}}};
  ASSERT_EQ(Call("PATCH", PodPath("held"), patch.dump(), "application/merge-patch+json").code, 200);
  EXPECT_FALSE(StoredPod("held").has_value());
}

TEST_F(GracefulPodDeletionTest, ABadGracePeriodIsRefused) {
  CreatePod("p", /*bound=*/true);
  auto r = Call("DELETE", PodPath("p") + "?gracePeriodSeconds=soon");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_NE(r.body.find("gracePeriodSeconds"), std::string::npos) << r.body;
  r = Call("DELETE", PodPath("p"), R"({"gracePeriodSeconds":"30"})");
  EXPECT_EQ(r.code, 400) << r.body;
  EXPECT_FALSE(BeingDeleted(*StoredPod("p")));
}

}  // namespace
}  // namespace muster::server
