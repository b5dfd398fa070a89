// Reflector against the in-process fake API server: list then watch, paging, dropped
// streams, 410 Gone, bookmarks, errors and backoff, resources that are not served.
// Every wait polls a condition under a generous deadline; no test asserts a duration.
#include "kube/reflector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "kube/fake_api_server.h"

namespace muster::kube {
namespace {

using control::ChangeType;
using nlohmann::json;
using testing::FakeApiServer;
using testing::FakeApiServerOptions;

const control::ResourceType& TypeOf(const std::string& group, const std::string& kind) {
  for (const auto& t : control::ResourceTypes()) {
    if (t.group == group && t.kind == kind) return t;
  }
  ADD_FAILURE() << "no resource type " << group << " " << kind;
  return control::ResourceTypes().front();
}

json ListedPodJson(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
}

json NodeJson(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
}

// The resourceVersion query parameter of a logged request; -1 when absent.
int64_t WatchedFrom(const std::string& logged) {
  const std::string key = "resourceVersion=";
  const size_t at = logged.find(key);
  if (at == std::string::npos) return -1;
  return std::strtoll(logged.c_str() + at + key.size(), nullptr, 10);
}

class ReflectorTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer({}); }

  void StartServer(FakeApiServerOptions options) {
    reflector_.reset();
    client_.reset();
    server_ = std::make_unique<FakeApiServer>(options);
    // As in any cluster: so no list answers resourceVersion "0", which a watch reads as
    // "start anywhere" (current objects as ADDED, not the changes since the list).
    server_->Create(
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}});
    client_ = std::make_unique<KubeClient>(server_->connection());
    cache_ = std::make_unique<ObjectCache>();
    cache_->Subscribe([this](const control::Change& c) {
      std::lock_guard<std::mutex> lock(mu_);
      changes_.push_back(c);
    });
  }

  // Fast, deterministic backoff (jitter drawn as 0.5) and a captured log.
  ReflectorOptions Options() {
    ReflectorOptions o;
    o.backoff.initial = std::chrono::milliseconds(5);
    o.backoff.max = std::chrono::milliseconds(40);
    o.random = [] { return 0.5; };
    o.absent_recheck = std::chrono::milliseconds(20);
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(line);
    };
    return o;
  }

  Reflector& Start(const control::ResourceType& type, ReflectorOptions options) {
    reflector_ = std::make_unique<Reflector>(*client_, type, *cache_, std::move(options));
    reflector_->Start();
    return *reflector_;
  }
  Reflector& StartPods() { return Start(TypeOf("", "Pod"), Options()); }

  template <typename Pred>
  static bool WaitFor(Pred pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  std::vector<control::Change> Changes() {
    std::lock_guard<std::mutex> lock(mu_);
    return changes_;
  }
  size_t ChangeCount() { return Changes().size(); }
  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  int LogLines(const std::string& part) {
    auto lines = Log();
    return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const auto& l) {
      return l.find(part) != std::string::npos;
    }));
  }
  // "ADDED a", "DELETED b"... for the changes from index `from` on.
  std::vector<std::string> Summary(size_t from = 0) {
    std::vector<std::string> out;
    auto changes = Changes();
    for (size_t i = from; i < changes.size(); ++i) {
      out.push_back(std::string(control::ChangeTypeName(changes[i].type)) + " " + changes[i].name);
    }
    return out;
  }
  std::vector<std::string> CachedPodNames() {
    std::vector<std::string> names;
    const Result<control::ListResult> list = cache_->List("pods", "");
    if (!list.ok()) return names;
    for (const auto& p : list.value().items) names.push_back(p["metadata"]["name"]);
    return names;
  }
  void Label(const std::string& pod, const std::string& value) {
    auto updated = server_->store().Mutate(
        {"pods", "default", pod},
        [&](const json& current) -> Result<json> {
          json next = current;
          next["metadata"]["labels"]["step"] = value;
          return next;
        },
        server::WriteScope::kAll);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  }
  void Delete(const std::string& resource, const std::string& ns, const std::string& name) {
    ASSERT_TRUE(server_->store().Delete({resource, ns, name}).ok());
  }

  // Destroyed bottom-up: the reflector stops before the client, the server and what
  // its callbacks write to go.
  std::mutex mu_;
  std::vector<control::Change> changes_;
  std::vector<std::string> log_;
  std::unique_ptr<FakeApiServer> server_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<ObjectCache> cache_;
  std::unique_ptr<Reflector> reflector_;
};

TEST_F(ReflectorTest, PagedInitialListFillsTheCacheAndMarksSynced) {
  for (const char* name : {"a", "b", "c"}) server_->Create(ListedPodJson(name));
  server_->Create(NodeJson("gpu-0"));  // another resource: not mirrored here
  ReflectorOptions options = Options();
  options.page_size = 2;
  Reflector& r = Start(TypeOf("", "Pod"), options);
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  EXPECT_TRUE(cache_->Synced({"pods"}));
  EXPECT_FALSE(cache_->Synced({"nodes"}));
  EXPECT_EQ(CachedPodNames(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED b", "ADDED c"}));
  // List items lack apiVersion/kind upstream; the cache's copies have them.
  json a = cache_->Get({"pods", "default", "a"}).value();
  EXPECT_EQ(a["apiVersion"], "v1");
  EXPECT_EQ(a["kind"], "Pod");
  // Two pages: the second asked with the first's continue token.
  EXPECT_EQ(server_->CountRequests("GET", "/api/v1/pods?limit=2"), 1);
  EXPECT_EQ(server_->CountRequests("GET", "continue="), 1);
  EXPECT_EQ(r.counters().lists, 1u);
  EXPECT_EQ(r.resource_version(), std::to_string(server_->store().resource_version()));
  ASSERT_TRUE(WaitFor([&] { return server_->CountRequests("GET", "watch=1") >= 1; }));
  const auto log = server_->RequestLog();
  auto watch = std::find_if(log.begin(), log.end(),
                            [](const auto& l) { return l.find("watch=1") != std::string::npos; });
  EXPECT_NE(watch->find("allowWatchBookmarks=true"), std::string::npos) << *watch;
  EXPECT_EQ(WatchedFrom(*watch), server_->store().resource_version()) << *watch;
}

TEST_F(ReflectorTest, ManagedFieldsAreNotMirrored) {
  // Written straight into the store: as a real API server serves them.
  auto with_fields = [](const std::string& name) {
    json pod = ListedPodJson(name);
    pod["metadata"]["managedFields"] = {{{"manager", "kubectl"},
                                         {"operation", "Update"},
                                         {"fieldsV1", {{"f:spec", json::object()}}}}};
    return pod;
  };
  ASSERT_TRUE(server_->store().Create({"pods", "default", "listed"}, with_fields("listed")).ok());
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  ASSERT_TRUE(server_->store().Create({"pods", "default", "watched"}, with_fields("watched")).ok());
  ASSERT_TRUE(WaitFor([&] { return cache_->Get({"pods", "default", "watched"}).ok(); }));
  for (const char* name : {"listed", "watched"}) {
    const json pod = cache_->Get({"pods", "default", name}).value();
    EXPECT_FALSE(pod["metadata"].contains("managedFields")) << name;
    EXPECT_EQ(pod["metadata"]["name"], name);
  }
}

TEST_F(ReflectorTest, WatchDeliversChangesInOrder) {
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  EXPECT_TRUE(Changes().empty());
  server_->Create(ListedPodJson("a"));
  server_->Create(ListedPodJson("b"));
  Label("a", "1");
  Delete("pods", "default", "b");
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 4; }));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED b", "MODIFIED a", "DELETED b"}));
  EXPECT_EQ(CachedPodNames(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(cache_->Get({"pods", "default", "a"})->at("metadata").at("labels").at("step"), "1");
  EXPECT_EQ(r.counters().lists, 1u);
  EXPECT_EQ(r.counters().events, 4u);
  EXPECT_EQ(r.resource_version(), std::to_string(server_->store().resource_version()));
}

TEST_F(ReflectorTest, DroppedStreamsResumeFromTheLastVersionWithoutRelist) {
  server_->Create(ListedPodJson("a"));
  server_->EndWatchesAfter(1);  // every watch ends after one event
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  server_->Create(ListedPodJson("b"));
  Label("a", "1");
  server_->Create(ListedPodJson("c"));
  Label("a", "2");
  Delete("pods", "default", "b");
  Label("c", "1");
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 7; }));
  // Give a lost or repeated event the chance to show up before comparing.
  // (six one-event watches, and the seventh waiting for more).
  ASSERT_TRUE(WaitFor([&] { return server_->CountRequests("GET", "watch=1") >= 7; }));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED b", "MODIFIED a", "ADDED c",
                                                 "MODIFIED a", "DELETED b", "MODIFIED c"}));
  EXPECT_EQ(r.counters().lists, 1u);
  EXPECT_EQ(r.counters().relists_410, 0u);
  EXPECT_EQ(r.counters().events, 6u);
  // Each watch resumed where the previous one stopped: strictly newer versions.
  int64_t last = 0;
  int watches = 0;
  for (const auto& line : server_->RequestLog()) {
    if (line.find("watch=1") == std::string::npos) continue;
    const int64_t from = WatchedFrom(line);
    EXPECT_GT(from, last) << line;
    last = from;
    ++watches;
  }
  EXPECT_GE(watches, 7);
  EXPECT_EQ(server_->CountRequests("GET", "/api/v1/pods?limit="), 1);
}

TEST_F(ReflectorTest, GoneWatchEventRelistsAndReportsDeletionsMissedMeanwhile) {
  server_->Create(ListedPodJson("a"));
  server_->Create(ListedPodJson("b"));
  server_->FailNext("GET", "watch=1", 500, 1000000);  // no watch runs until cleared
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced() && r.counters().errors >= 2; }));
  // Changes the reflector cannot see as events.
  Delete("pods", "default", "b");
  server_->Create(ListedPodJson("c"));
  server_->GoneOnNextWatch("watch=1");  // answered before the failures
  ASSERT_TRUE(WaitFor([&] { return r.counters().relists_410 == 1 && r.counters().lists == 2; }));
  server_->ClearFailures();
  // The relist reports what it finds new, then what vanished.
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED b", "ADDED c", "DELETED b"}));
  EXPECT_EQ(CachedPodNames(), (std::vector<std::string>{"a", "c"}));
  // After the relist the watch continues as usual.
  server_->Create(ListedPodJson("d"));
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 5; }));
  EXPECT_EQ(Summary(4), (std::vector<std::string>{"ADDED d"}));
  EXPECT_EQ(r.counters().lists, 2u);
  EXPECT_EQ(LogLines("too old"), 1);
}

TEST_F(ReflectorTest, CompactedHistoryAnswers410AndTheRelistCatchesUp) {
  StartServer({.event_retention = 3});
  server_->Create(ListedPodJson("a"));
  server_->FailNext("GET", "watch=1", 503, 1000000);
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced() && r.counters().errors >= 1; }));
  // More changes than the server retains: the list's version is compacted away.
  Delete("pods", "default", "a");
  for (const char* name : {"p1", "p2", "p3", "p4"}) server_->Create(ListedPodJson(name));
  server_->ClearFailures();
  // The real handler answers the watch with HTTP 410; the reflector relists.
  ASSERT_TRUE(WaitFor([&] { return r.counters().lists == 2; }));
  EXPECT_EQ(r.counters().relists_410, 1u);
  EXPECT_GE(server_->CountRequests("GET", "watch=1"), 2);
  EXPECT_EQ(CachedPodNames(), (std::vector<std::string>{"p1", "p2", "p3", "p4"}));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED p1", "ADDED p2", "ADDED p3",
                                                 "ADDED p4", "DELETED a"}));
}

TEST_F(ReflectorTest, BookmarkAdvancesTheVersionOnly) {
  server_->Create(ListedPodJson("a"));
  server_->FailNext("GET", "watch=1", 500, 1000000);
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced() && r.counters().errors >= 1; }));
  const std::string listed = r.resource_version();
  server_->Create(NodeJson("gpu-0"));  // moves the store's version, not the pods'
  const int64_t bookmark = server_->store().resource_version();
  ASSERT_GT(bookmark, std::stoll(listed));
  server_->BookmarkOnNextWatch("watch=1", "v1", "Pod", bookmark);
  ASSERT_TRUE(WaitFor([&] { return r.resource_version() == std::to_string(bookmark); }));
  server_->ClearFailures();
  const std::string resumed = "resourceVersion=" + std::to_string(bookmark) + "&";
  ASSERT_TRUE(WaitFor([&] { return server_->CountRequests("GET", resumed) >= 1; }));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a"}));  // no change from a bookmark
  EXPECT_EQ(r.counters().events, 1u);
  EXPECT_EQ(r.counters().lists, 1u);
  server_->Create(ListedPodJson("b"));
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 2; }));
  EXPECT_EQ(Summary(1), (std::vector<std::string>{"ADDED b"}));
}

TEST_F(ReflectorTest, ServerErrorsBackOffThenRecover) {
  server_->Create(ListedPodJson("a"));
  server_->FailNext("GET", "/api/v1/pods?limit=", 500, 3);
  server_->FailNext("GET", "watch=1", 503, 2);
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  EXPECT_EQ(r.counters().lists, 1u);
  EXPECT_EQ(server_->CountRequests("GET", "/api/v1/pods?limit="), 4);
  ASSERT_TRUE(WaitFor([&] { return r.counters().errors == 5; }));
  server_->Create(ListedPodJson("b"));
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 2; }));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED b"}));
  EXPECT_EQ(r.counters().errors, 5u);
  // One line per failure streak, one when it ends: no log flood while a server is down.
  EXPECT_EQ(LogLines("HTTP 500"), 1);
  EXPECT_EQ(LogLines("HTTP 503"), 1);
  EXPECT_EQ(LogLines("recovered"), 2);
  EXPECT_EQ(r.counters().relists_410, 0u);
}

TEST_F(ReflectorTest, WatchErrorEventOtherThanGoneRewatchesWithoutRelist) {
  server_->FailNext("GET", "watch=1", 500, 1000000);
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced() && r.counters().errors >= 1; }));
  const uint64_t errors = r.counters().errors;  // the ERROR event adds one more
  json status = {
      {"kind", "Status"}, {"code", 500}, {"reason", "InternalError"}, {"message", "etcd hiccup"}};
  server_->InjectNextWatch("watch=1", json{{"type", "ERROR"}, {"object", status}}.dump() + "\n");
  server_->ClearFailures();
  server_->Create(ListedPodJson("a"));
  // The watch that delivers "a" comes after the one answered with the ERROR event.
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 1; }));
  EXPECT_GT(r.counters().errors, errors);
  EXPECT_EQ(r.counters().lists, 1u);
  EXPECT_EQ(r.counters().relists_410, 0u);
}

TEST_F(ReflectorTest, SlowResponsesStillSync) {
  server_->Create(ListedPodJson("a"));
  server_->SetDelay(std::chrono::milliseconds(50));
  Reflector& r = StartPods();
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  server_->Create(ListedPodJson("b"));
  ASSERT_TRUE(WaitFor([&] { return ChangeCount() >= 2; }));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED a", "ADDED b"}));
  EXPECT_EQ(r.counters().errors, 0u);
}

TEST_F(ReflectorTest, AbsentResourceIsSyncedEmptyAndPickedUpWhenInstalled) {
  server_->SetAbsent("/apis/kubeflow.org/", true);
  Reflector& r = Start(TypeOf("kubeflow.org", "PyTorchJob"), Options());
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  EXPECT_TRUE(r.absent());
  EXPECT_TRUE(cache_->Synced({"pytorchjobs.kubeflow.org"}));
  const Result<control::ListResult> jobs = cache_->List("pytorchjobs.kubeflow.org", "");
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs.value().items.empty());
  // Re-checked periodically, logged once.
  ASSERT_TRUE(WaitFor([&] { return server_->CountRequests("GET", "/pytorchjobs?limit=") >= 3; }));
  EXPECT_EQ(LogLines("not served"), 1);
  EXPECT_EQ(r.counters().errors, 0u);
  EXPECT_EQ(server_->CountRequests("GET", "watch=1"), 0);

  // The CRD is installed and a job created.
  server_->Create({{"apiVersion", "kubeflow.org/v1"},
                   {"kind", "PyTorchJob"},
                   {"metadata", {{"name", "bert"}, {"namespace", "team-a"}}},
                   {"spec", json::object()}});
  server_->SetAbsent("/apis/kubeflow.org/", false);
  ASSERT_TRUE(WaitFor([&] { return !r.absent() && ChangeCount() >= 1; }));
  EXPECT_EQ(Summary(), (std::vector<std::string>{"ADDED bert"}));
  EXPECT_EQ(LogLines("served now"), 1);
  ASSERT_TRUE(WaitFor([&] { return server_->CountRequests("GET", "watch=1") >= 1; }));
}

TEST_F(ReflectorTest, FallsBackToAnotherServedVersion) {
  // A Kueue that serves only v1beta2.
  server_->SetAbsent("/apis/kueue.x-k8s.io/v1beta1/", true);
  server_->Create({{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                   {"kind", "ResourceFlavor"},
                   {"metadata", {{"name", "a100"}}},
                   {"spec", json::object()}});
  Reflector& r = Start(TypeOf("kueue.x-k8s.io", "ResourceFlavor"), Options());
  ASSERT_TRUE(WaitFor([&] { return r.synced(); }));
  EXPECT_FALSE(r.absent());
  EXPECT_EQ(r.version(), "v1beta2");
  json flavor = cache_->Get({"resourceflavors.kueue.x-k8s.io", "", "a100"}).value();
  EXPECT_EQ(flavor["apiVersion"], "kueue.x-k8s.io/v1beta2");
  ASSERT_TRUE(WaitFor([&] {
    return server_->CountRequests("GET", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors?") >= 2;
  }));
  EXPECT_EQ(server_->CountRequests("GET", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors?allow"), 0);
}

TEST_F(ReflectorTest, StopReturnsFromAnOpenWatchAndFromABackoff) {
  Reflector& watching = StartPods();
  ASSERT_TRUE(WaitFor([&] { return watching.synced() && watching.counters().watches == 1; }));
  watching.Stop();
  watching.Stop();  // idempotent

  server_->FailNext("GET", "/api/v1/nodes", 500, 1000000);
  ReflectorOptions slow = Options();
  slow.backoff.initial = std::chrono::hours(1);
  slow.backoff.max = std::chrono::hours(1);
  Reflector& backing_off = Start(TypeOf("", "Node"), slow);
  ASSERT_TRUE(WaitFor([&] { return backing_off.counters().errors == 1; }));
  backing_off.Stop();
  EXPECT_FALSE(backing_off.synced());
}

TEST(BackoffTest, DoublesToTheCapWithJitterAndResets) {
  BackoffPolicy policy;
  policy.initial = std::chrono::milliseconds(100);
  policy.max = std::chrono::milliseconds(1000);
  policy.factor = 2;
  policy.jitter = 0.5;
  Backoff b(policy, [] { return 0.5; });  // each delay is base * 1.25
  std::vector<int64_t> delays;
  for (int i = 0; i < 6; ++i) delays.push_back(b.Next().count());
  EXPECT_EQ(delays, (std::vector<int64_t>{125, 250, 500, 1000, 1250, 1250}));
  EXPECT_EQ(b.failures(), 6);
  b.Reset();
  EXPECT_EQ(b.Next().count(), 125);
  Backoff no_jitter(policy, [] { return 0.0; });
  EXPECT_EQ(no_jitter.Next().count(), 100);
}

TEST(WatchedResourcesTest, CoversTheKindsMusterReads) {
  const auto& watched = WatchedResources();
  std::vector<std::string> keys;
  for (const auto* t : watched) keys.push_back(t->StoreKey());
  for (const char* key : {"nodes",
                          "namespaces",
                          "pods",
                          "limitranges",
                          "priorityclasses.scheduling.k8s.io",
                          "noderesourcetopologies.topology.node.k8s.io",
                          "jobs.batch",
                          "jobsets.jobset.x-k8s.io",
                          "pytorchjobs.kubeflow.org",
                          "mpijobs.kubeflow.org",
                          "tfjobs.kubeflow.org",
                          "jobs.batch.volcano.sh",
                          "podgroups.scheduling.volcano.sh",
                          "queues.scheduling.volcano.sh",
                          "hypernodes.topology.volcano.sh",
                          "resourceflavors.kueue.x-k8s.io",
                          "clusterqueues.kueue.x-k8s.io",
                          "localqueues.kueue.x-k8s.io",
                          "cohorts.kueue.x-k8s.io",
                          "workloadpriorityclasses.kueue.x-k8s.io",
                          "topologies.kueue.x-k8s.io",
                          "workloads.kueue.x-k8s.io",
                          "schedulerconfigurations.muster.dev"}) {
    EXPECT_EQ(std::count(keys.begin(), keys.end(), key), 1) << key;
  }
  EXPECT_EQ(keys.size(), 23u);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "events"), 0);
}

}  // namespace
}  // namespace muster::kube
