// Serve's garbage collector (owner_graph.h, garbage_collector.h) over a real store,
// driven synchronously: the store's changes are queued by a subscription and fed to
// the graph, whose decisions GarbageCollector::Execute carries out, until nothing
// changes. DELETE's propagationPolicy goes through the API handler.
#include "server/garbage_collector.h"

#include <deque>
#include <string>

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
        store_->hub().Subscribe([this](const control::Change& c) { queue_.push_back(c); });
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

TEST_F(GarbageCollectorTest, DependentsOfOwnersGoneWhileDownAreCollectedAtStartUp) {
  CreatePod("stale", {"0b5c1f3e-uid-of-a-job-deleted-while-down"});
  CreatePod("mine", {});
  const std::string a = CreateJob("a");
  CreatePod("a-0", {a});
  OwnerGraph fresh;
  for (const char* resource : {"pods", "jobs.batch"}) {
    auto list = store_->List(resource, "");
    ASSERT_TRUE(list.ok());
    for (const json& o : list->items)
      fresh.Load({resource, "default", o["metadata"]["name"].get<std::string>()}, o);
  }
  GarbageCollector::Execute(*store_, fresh.Sweep());
  EXPECT_FALSE(PodExists("stale"));
  EXPECT_TRUE(PodExists("mine"));
  EXPECT_TRUE(PodExists("a-0"));
}

TEST_F(GarbageCollectorTest, UnsupportedPropagationPolicyIsRefused) {
  CreateJob("a");
  auto r = Call("DELETE", "/apis/batch/v1/namespaces/default/jobs/a?propagationPolicy=Cascade");
  EXPECT_EQ(r.code, 422) << r.body;
  EXPECT_NE(Body(r)["message"].get<std::string>().find("supported values"), std::string::npos);
  EXPECT_TRUE(store_->Get({"jobs.batch", "default", "a"}).ok());
}

// kube-apiserver's --event-ttl (1 h): an event goes an hour after it was last
// recorded, whichever of lastTimestamp, eventTime and creation is the latest.
TEST(EventExpiryTest, EventsGoAnHourAfterTheyWereLastRecorded) {
  const double now = 1764037318;  // 2025-11-25T02:21:58Z
  auto event = [](const std::string& name, const char* field, const std::string& when) {
    json e = {{"metadata", {{"name", name}, {"namespace", "team-a"}}}};
    if (std::string(field) == "creationTimestamp") {
      e["metadata"]["creationTimestamp"] = when;
    } else {
      e["metadata"]["creationTimestamp"] = "2025-11-24T00:00:00Z";
      e[field] = when;
    }
    return e;
  };
  std::vector<json> events = {
      event("old", "creationTimestamp", "2025-11-25T01:21:57Z"),     // 1 h 1 s ago
      event("recent", "creationTimestamp", "2025-11-25T01:22:30Z"),  // 59.5 min ago
      event("repeated", "lastTimestamp", "2025-11-25T02:00:00Z"),    // created long ago
      event("micro", "eventTime", "2025-11-25T02:20:00.123456Z"),    // events.k8s.io style
      event("stale-micro", "eventTime", "2025-11-25T01:00:00.5Z"),
      {{"metadata", {{"name", "no-time"}, {"namespace", "team-a"}}}},  // kept: no time at all
      {{"metadata", {{"name", "garbled"}, {"creationTimestamp", "yesterday"}}}},
  };
  std::vector<std::string> expired;
  for (const auto& key : GarbageCollector::ExpiredEvents(events, now, 3600)) {
    EXPECT_EQ(key.resource, "events");
    expired.push_back(key.name);
  }
  EXPECT_EQ(expired, (std::vector<std::string>{"old", "stale-micro"}));
}

}  // namespace
}  // namespace muster::server
