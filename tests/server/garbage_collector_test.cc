// Serve's garbage collector (owner_graph.h, garbage_collector.h) over a real store,
// driven synchronously: the store's changes are queued by a subscription and fed to
// the graph, whose decisions GarbageCollector::Execute carries out, until nothing
// changes. DELETE's propagationPolicy goes through the API handler.
#include "server/garbage_collector.h"

#include <cmath>
#include <ctime>
#include <deque>
#include <string>

#include "control/json_fields.h"
#include "control/workload_objects.h"
#include "server/api_fixture.h"
#include "server/object_store.h"

namespace muster::server {
namespace {

using nlohmann::json;

class GarbageCollectorTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    testing::ApiFixture::SetUp();
    subscription_ =
        store_->hub().Subscribe([this](const WatchHub::ChangePtr& c) { queue_.push_back(*c); });
  }
  void TearDown() override {
    store_->hub().Unsubscribe(subscription_);
    testing::ApiFixture::TearDown();
  }
  // Feeds every queued change to the graph and carries out its decisions, which
  // queue changes in turn, until none is left.
  void Pump() {
    while (!queue_.empty()) {
      control::Change c = std::move(queue_.front());
      queue_.pop_front();
      GarbageCollector::Execute(*store_, graph_.Apply(c));
    }
  }
  std::string CreateJob(const std::string& name) {
    json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job","spec":{"template":{"spec":{
      "restartPolicy":"Never","containers":[{"name":"c","image":"img:1"}]}}}})");
    job["metadata"] = {{"name", name}};
    auto r = Call("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
    EXPECT_EQ(r.code, 201) << r.body;
    return Body(r)["metadata"]["uid"].get<std::string>();
  }
  // A bare pod owned by the objects with these uids.
  void CreatePod(const std::string& name, const std::vector<std::string>& owner_uids) {
    json refs = json::array();
    for (const auto& uid : owner_uids) {
      refs.push_back({{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "j"}, {"uid", uid}});
    }
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "img:1"}}})}}}};
    if (!refs.empty()) pod["metadata"]["ownerReferences"] = refs;
    ASSERT_TRUE(store_->Create({"pods", "default", name}, pod).ok());
  }
  // Adds to the object a reference to the owner with this uid, and a finalizer if given.
  void Own(const std::string& resource, const std::string& name, const std::string& owner_uid,
           bool block, const std::string& finalizer = "") {
    auto done = store_->Mutate(
        {resource, "default", name},
        [&](const json& current) -> Result<json> {
          json next = current;
          next["metadata"]["ownerReferences"].push_back({{"apiVersion", "batch/v1"},
                                                         {"kind", "Job"},
                                                         {"name", "owner"},
                                                         {"uid", owner_uid},
                                                         {"blockOwnerDeletion", block}});
          if (!finalizer.empty()) next["metadata"]["finalizers"].push_back(finalizer);
          return next;
        },
        WriteScope::kAll);
    ASSERT_TRUE(done.ok()) << done.status().message();
  }
  void DropFinalizers(const std::string& resource, const std::string& name) {
    auto done = store_->Mutate(
        {resource, "default", name},
        [](const json& current) -> Result<json> {
          json next = current;
          next["metadata"].erase("finalizers");
          return next;
        },
        WriteScope::kAll);
    ASSERT_TRUE(done.ok()) << done.status().message();
  }
  json Stored(const std::string& resource, const std::string& name) {
    auto o = store_->Get({resource, "default", name});
    return o.ok() ? *o : json();
  }
  // A graph loaded from the store's pods and jobs, as a restarted server's is.
  OwnerGraph Reloaded() {
    OwnerGraph graph;
    for (const char* resource : {"pods", "jobs.batch"}) {
      auto list = store_->List(resource, "");
      EXPECT_TRUE(list.ok());
      if (!list.ok()) continue;
      for (const json& o : list->items)
        graph.Load({resource, "default", o["metadata"]["name"].get<std::string>()}, o);
    }
    return graph;
  }
  bool PodExists(const std::string& name) { return store_->Get({"pods", "default", name}).ok(); }
  json Pod(const std::string& name) { return *store_->Get({"pods", "default", name}); }

  OwnerGraph graph_;
  std::deque<control::Change> queue_;
  WatchHub::SubscriptionId subscription_ = 0;
};

TEST_F(GarbageCollectorTest, BackgroundDeletesWhatOnlyTheOwnerHeld) {
  const std::string a = CreateJob("a"), b = CreateJob("b");
  CreatePod("a-0", {a});
  CreatePod("both", {a, b});
  CreatePod("mine", {});
  Pump();
  auto r = Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Background");
  ASSERT_EQ(r.code, 200) << r.body;
  Pump();
  EXPECT_FALSE(PodExists("a-0"));
  EXPECT_TRUE(PodExists("both")) << "job b still owns it";
  EXPECT_TRUE(PodExists("mine"));
  ASSERT_EQ(Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/b",
                 R"({"propagationPolicy":"Foreground"})")
                .code,
            200);
  Pump();
  EXPECT_FALSE(PodExists("both")) << "its last owner is gone";
  EXPECT_TRUE(PodExists("mine"));
}

TEST_F(GarbageCollectorTest, OrphanKeepsDependentsWithoutTheReference) {
  const std::string a = CreateJob("a"), b = CreateJob("b");
  CreatePod("a-0", {a});
  CreatePod("b-0", {b});
  Pump();
  // Explicit Orphan.
  ASSERT_EQ(
      Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Orphan").code,
      200);
  Pump();
  ASSERT_TRUE(PodExists("a-0"));
  EXPECT_FALSE(Pod("a-0")["metadata"].contains("ownerReferences"));
  // No policy on a batch/v1 Job: upstream's default for that version is Orphan too.
  ASSERT_EQ(Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/b").code, 200);
  Pump();
  ASSERT_TRUE(PodExists("b-0"));
  EXPECT_FALSE(Pod("b-0")["metadata"].contains("ownerReferences"));
}

// A decision to collect is made on the version of the dependent the graph has seen;
// one changed since (its reference to the deleted owner taken off, as an orphaning
// does) is judged again by its own change, not deleted on what it was.
TEST_F(GarbageCollectorTest, ADependentChangedSinceTheDecisionIsNotDeleted) {
  const std::string a = CreateJob("a");
  CreatePod("a-0", {a});
  Pump();
  ASSERT_EQ(
      Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Background").code,
      200);
  // Before the collector sees the deletion, another writer takes the reference off.
  auto edited = store_->Mutate(
      {"pods", "default", "a-0"},
      [](const json& current) -> Result<json> {
        json next = current;
        next["metadata"].erase("ownerReferences");
        return next;
      },
      WriteScope::kAll);
  ASSERT_TRUE(edited.ok());
  Pump();
  EXPECT_TRUE(PodExists("a-0")) << "deleted on a version it no longer has";
}

TEST_F(GarbageCollectorTest, DependentsOfOwnersGoneWhileDownAreCollectedAtStartUp) {
  CreatePod("stale", {"0b5c1f3e-uid-of-a-job-deleted-while-down"});
  CreatePod("mine", {});
  const std::string a = CreateJob("a");
  CreatePod("a-0", {a});
  OwnerGraph fresh = Reloaded();
  GarbageCollector::Execute(*store_, fresh.Sweep());
  EXPECT_FALSE(PodExists("stale"));
  EXPECT_TRUE(PodExists("mine"));
  EXPECT_TRUE(PodExists("a-0"));
}

// Foreground, as upstream: the owner stays, marked and holding "foregroundDeletion",
// until every dependent whose reference says blockOwnerDeletion is gone; the others go
// without being waited for; a dependent another owner keeps only loses its reference.
TEST_F(GarbageCollectorTest, ForegroundKeepsTheOwnerUntilItsBlockingDependentsAreGone) {
  const std::string a = CreateJob("a"), b = CreateJob("b");
  CreatePod("blocking", {});
  Own("pods", "blocking", a, true, "example.com/hold");
  CreatePod("loose", {});
  Own("pods", "loose", a, false, "example.com/hold");
  CreatePod("shared", {b});
  Own("pods", "shared", a, true);
  Pump();
  auto r = Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Foreground");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(Body(r)["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  Pump();
  json owner = Stored("jobs.batch", "a");
  ASSERT_FALSE(owner.is_null()) << "held by the blocking dependent";
  EXPECT_EQ(owner["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  EXPECT_TRUE(Pod("blocking")["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(Pod("loose")["metadata"].contains("deletionTimestamp"));
  ASSERT_TRUE(PodExists("shared"));
  EXPECT_EQ(Pod("shared")["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(Pod("shared")["metadata"]["ownerReferences"][0]["uid"], b);
  // A dependent made meanwhile (a controller that did not look) goes at once.
  CreatePod("late", {});
  Own("pods", "late", a, true);
  Pump();
  EXPECT_FALSE(PodExists("late"));

  DropFinalizers("pods", "blocking");
  Pump();
  EXPECT_FALSE(PodExists("blocking"));
  EXPECT_TRUE(Stored("jobs.batch", "a").is_null()) << "nothing blocks it any longer";
  EXPECT_TRUE(PodExists("loose")) << "still held by its own finalizer";
}

// A dependent that owns objects itself is deleted in Foreground too: the deletion
// finishes from the bottom up. An owner with no dependents goes at once.
TEST_F(GarbageCollectorTest, ForegroundGoesThroughOwnersOfOwnersBottomUp) {
  const std::string a = CreateJob("a"), b = CreateJob("b");
  Own("jobs.batch", "b", a, true);
  CreatePod("b-0", {});
  Own("pods", "b-0", b, true, "example.com/hold");
  Pump();
  ASSERT_EQ(Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a",
                 R"({"propagationPolicy":"Foreground"})")
                .code,
            200);
  Pump();
  EXPECT_TRUE(control::DeletingDependents(Stored("jobs.batch", "a")));
  EXPECT_TRUE(control::DeletingDependents(Stored("jobs.batch", "b")));
  EXPECT_TRUE(Pod("b-0")["metadata"].contains("deletionTimestamp"));
  DropFinalizers("pods", "b-0");
  Pump();
  EXPECT_FALSE(PodExists("b-0"));
  EXPECT_TRUE(Stored("jobs.batch", "b").is_null());
  EXPECT_TRUE(Stored("jobs.batch", "a").is_null());

  CreateJob("alone");
  ASSERT_EQ(
      Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/alone?propagationPolicy=Foreground")
          .code,
      200);
  Pump();
  EXPECT_TRUE(Stored("jobs.batch", "alone").is_null());
}

// A foreground deletion the server stopped in the middle of goes on at start-up.
TEST_F(GarbageCollectorTest, AForegroundDeletionLeftAtAStopIsFinishedAtStartUp) {
  const std::string a = CreateJob("a");
  CreatePod("a-0", {a});
  auto r = Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Foreground");
  ASSERT_EQ(r.code, 200) << r.body;
  queue_.clear();  // the server stopped before its collector saw the mark
  ASSERT_TRUE(PodExists("a-0"));
  OwnerGraph fresh = Reloaded();
  GarbageCollector::Execute(*store_, fresh.Sweep());
  EXPECT_FALSE(PodExists("a-0"));
  graph_ = std::move(fresh);
  Pump();
  EXPECT_TRUE(Stored("jobs.batch", "a").is_null());
}

TEST_F(GarbageCollectorTest, UnsupportedPropagationPolicyIsRefused) {
  CreateJob("a");
  auto r = Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Cascade");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_NE(Body(r)["message"].get<std::string>().find("supported values"), std::string::npos);
  EXPECT_TRUE(store_->Get({"jobs.batch", "default", "a"}).ok());
}

// A store over its event limit keeps the newest events: TrimEvents deletes the rest
// in batches and says how many are left.
TEST_F(GarbageCollectorTest, TrimEventsKeepsTheNewestUpToTheLimit) {
  // The store sets creationTimestamp to the wall clock: the events were last
  // recorded after it, one a second, the newest last.
  const double base = std::floor(static_cast<double>(std::time(nullptr))) + 10;
  for (int i = 0; i < 600; ++i) {
    json event = {{"apiVersion", "v1"},
                  {"kind", "Event"},
                  {"metadata", {{"name", "e" + std::to_string(i)}, {"namespace", "default"}}},
                  {"reason", "Started"},
                  {"lastTimestamp", control::Rfc3339(base + i)}};
    ASSERT_TRUE(store_->Create({"events", "default", "e" + std::to_string(i)}, event).ok());
  }
  EventTimes times;
  auto listed = store_->List("events", "");
  ASSERT_TRUE(listed.ok());
  for (const json& e : listed->items) times.Put(e);
  auto left = GarbageCollector::TrimEvents(*store_, times, {3600, 250}, base + 600);
  ASSERT_TRUE(left.ok()) << left.status().message();
  EXPECT_EQ(*left, 250);
  auto events = store_->List("events", "");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->items.size(), 250u);
  EXPECT_FALSE(store_->Get({"events", "default", "e349"}).ok());
  EXPECT_TRUE(store_->Get({"events", "default", "e350"}).ok());
  EXPECT_TRUE(store_->Get({"events", "default", "e599"}).ok());

  // Without a limit only the TTL deletes: nothing is 10 minutes old yet, then the
  // 90 recorded over 10 minutes before base + 1039.5 (e350 to e439) go.
  left = GarbageCollector::TrimEvents(*store_, times, {600, 0}, base + 949.5);
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, 250);
  left = GarbageCollector::TrimEvents(*store_, times, {600, 0}, base + 1039.5);
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(*left, 160);
  EXPECT_FALSE(store_->Get({"events", "default", "e439"}).ok());
  EXPECT_TRUE(store_->Get({"events", "default", "e440"}).ok());
}

TEST(EventRetentionTest, TrimThresholdLeavesATenthOfSlack) {
  EXPECT_EQ(GarbageCollector::TrimThreshold({3600, 10000}), 11000);
  EXPECT_EQ(GarbageCollector::TrimThreshold({3600, 5}), 6);
  EXPECT_EQ(GarbageCollector::TrimThreshold({3600, 0}), INT64_MAX);
}

}  // namespace
}  // namespace muster::server
