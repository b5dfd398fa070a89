// Kueue's visibility API (server/kueue_visibility.h): pending workloads in the
// admitter's order from the published view, LocalQueue positions per namespace,
// limit/offset, 404/405/503, and reads racing the scheduler's publishing.
#include "server/kueue_visibility.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api_fixture.h"
#include "ui/view_publisher.h"

namespace muster::server {
namespace {

using nlohmann::json;

control::WorkloadView Pending(std::string ns, std::string job, std::string lq, int32_t priority,
                              int32_t position, std::string cq = "team-cq") {
  control::WorkloadView w;
  w.namespace_ = std::move(ns);
  w.name = "job-" + job;
  w.key = w.namespace_ + "/" + job;
  w.job_kind = "Job";
  w.job_name = job;
  w.state = "Pending";
  w.local_queue = std::move(lq);
  w.cluster_queue = std::move(cq);
  w.priority = priority;
  w.position_in_cluster_queue = position;
  w.submitted = 1700000000 + position;
  return w;
}

// The view lists workloads by (namespace, name); positions say the queue order.
control::SchedulerView View() {
  control::SchedulerView v;
  control::QueueView q;
  q.name = "clusterqueue.team-cq";
  q.kind = "ClusterQueue";
  q.queue = "team-cq";
  v.queues.push_back(q);
  v.workloads = {
      Pending("a", "low", "team", 0, 2),  Pending("a", "top", "team", 100, 0),
      Pending("b", "mid", "team", 50, 1), Pending("b", "other-cq", "team", 500, 0, "other-cq"),
      Pending("c", "last", "team", 0, 3),
  };
  control::WorkloadView running = Pending("a", "running", "team", 900, -1);
  running.state = "Running";
  v.workloads.push_back(running);
  return v;
}

std::vector<std::string> Names(const json& summary) {
  std::vector<std::string> out;
  for (const auto& i : summary["items"]) {
    out.push_back(i["metadata"]["namespace"].get<std::string>() + "/" +
                  i["metadata"]["name"].get<std::string>() + "@" +
                  std::to_string(i["positionInClusterQueue"].get<int>()) + "," +
                  std::to_string(i["positionInLocalQueue"].get<int>()));
  }
  return out;
}

TEST(KueueVisibility, ClusterQueueInAdmitterOrderWithLocalQueuePositionsPerNamespace) {
  const json s = PendingWorkloadsSummary(View(), "v1beta1", "team-cq", "", "", {}, nullptr);
  EXPECT_EQ(s["kind"], "PendingWorkloadsSummary");
  EXPECT_EQ(s["apiVersion"], "visibility.kueue.x-k8s.io/v1beta1");
  // LocalQueue "team" of namespaces a, b and c are three queues.
  EXPECT_EQ(Names(s), (std::vector<std::string>{"a/job-top@0,0", "b/job-mid@1,0", "a/job-low@2,1",
                                                "c/job-last@3,0"}));
  const json& first = s["items"][0];
  EXPECT_EQ(first["priority"], 100);
  EXPECT_EQ(first["localQueueName"], "team");
  EXPECT_EQ(first["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
}

TEST(KueueVisibility, LimitAndOffsetWindowTheQueue) {
  PendingWorkloadsQuery q;
  q.limit = 2;
  q.offset = 1;
  EXPECT_EQ(Names(PendingWorkloadsSummary(View(), "v1beta2", "team-cq", "", "", q, nullptr)),
            (std::vector<std::string>{"b/job-mid@1,0", "a/job-low@2,1"}));
  q.offset = 10;
  EXPECT_TRUE(
      PendingWorkloadsSummary(View(), "v1beta2", "team-cq", "", "", q, nullptr)["items"].empty());
}

TEST(KueueVisibility, LocalQueueKeepsItsPositionsInBothQueues) {
  PendingWorkloadsQuery q;
  EXPECT_EQ(Names(PendingWorkloadsSummary(View(), "v1beta1", "team-cq", "a", "team", q, nullptr)),
            (std::vector<std::string>{"a/job-top@0,0", "a/job-low@2,1"}));
  q.offset = 1;
  EXPECT_EQ(Names(PendingWorkloadsSummary(View(), "v1beta1", "team-cq", "a", "team", q, nullptr)),
            (std::vector<std::string>{"a/job-low@2,1"}));
}

TEST(KueueVisibility, QueryIsBoundedAsUpstream) {
  auto parse = [](std::map<std::string, std::string> q) { return ParsePendingWorkloadsQuery(q); };
  auto d = parse({});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->limit, 1000);
  EXPECT_EQ(d->offset, 0);
  EXPECT_EQ(parse({{"limit", "0"}})->limit, 1000);       // defaulted
  EXPECT_EQ(parse({{"limit", "-3"}})->limit, 0);         // bounded
  EXPECT_EQ(parse({{"limit", "999999"}})->limit, 1000);  // at most
  EXPECT_EQ(parse({{"offset", "-1"}})->offset, 0);
  EXPECT_EQ(parse({{"offset", "7"}})->offset, 7);
  auto bad = parse({{"limit", "ten"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("limit"), std::string::npos);
  EXPECT_FALSE(parse({{"offset", "99999999999999999999"}}).ok());
  EXPECT_FALSE(parse({{"offset", ""}}).ok());
}

TEST(KueueVisibility, DiscoveryListsTheSubresources) {
  const json r = VisibilityApiResources("v1beta1");
  bool cq = false, lq = false;
  for (const auto& e : r) {
    if (e["name"] == "clusterqueues/pendingworkloads") cq = !e["namespaced"].get<bool>();
    if (e["name"] == "localqueues/pendingworkloads") lq = e["namespaced"].get<bool>();
  }
  EXPECT_TRUE(cq && lq);
  EXPECT_TRUE(VisibilityApiResources("v1").empty());
}

class KueueVisibilityApi : public testing::ApiFixture {
 protected:
  void Store(const std::string& yaml_json) {
    const json o = json::parse(yaml_json);
    const std::string path = o["kind"] == "ClusterQueue"
                                 ? "/apis/kueue.x-k8s.io/v1beta1/clusterqueues"
                                 : "/apis/kueue.x-k8s.io/v1beta1/namespaces/" +
                                       o["metadata"]["namespace"].get<std::string>() +
                                       "/localqueues";
    ASSERT_EQ(Call("POST", path, yaml_json).code, 201) << yaml_json;
  }
  static constexpr const char* kBase = "/apis/visibility.kueue.x-k8s.io/v1beta1";
  ui::ViewPublisher views_;
};

TEST_F(KueueVisibilityApi, UnknownQueuesAre404sNamingThem) {
  handler_->set_views(&views_);
  auto r = Call("GET", std::string(kBase) + "/clusterqueues/nope/pendingworkloads");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(Body(r)["message"], "clusterqueue.visibility.kueue.x-k8s.io \"nope\" not found");
  r = Call("GET", std::string(kBase) + "/namespaces/a/localqueues/nope/pendingworkloads");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(Body(r)["message"], "localqueue.visibility.kueue.x-k8s.io \"nope\" not found");
  EXPECT_EQ(Call("GET", std::string(kBase) + "/clusterqueues/x").code, 404);
  EXPECT_EQ(Call("GET", "/apis/visibility.kueue.x-k8s.io/v9/clusterqueues/x/pendingworkloads").code,
            404);
}

TEST_F(KueueVisibilityApi, ServesThePublishedViewReadOnly) {
  handler_->set_views(&views_);
  Store(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
            "metadata":{"name":"team-cq"},"spec":{"namespaceSelector":{}}})");
  Store(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
            "metadata":{"name":"team","namespace":"a"},"spec":{"clusterQueue":"team-cq"}})");
  const std::string cq = std::string(kBase) + "/clusterqueues/team-cq/pendingworkloads";
  EXPECT_EQ(Call("GET", cq).code, 503);  // nothing published yet
  views_.Publish(View());
  auto r = Call("GET", cq + "?limit=1");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Names(Body(r)), (std::vector<std::string>{"a/job-top@0,0"}));
  r = Call("GET", std::string(kBase) + "/namespaces/a/localqueues/team/pendingworkloads");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Names(Body(r)), (std::vector<std::string>{"a/job-top@0,0", "a/job-low@2,1"}));
  EXPECT_EQ(Call("GET", cq + "?offset=x").code, 400);
  EXPECT_EQ(Call("POST", cq, "{}").code, 405);
}

// Requests read the view while the scheduler publishes new ones (TSan runs this).
TEST_F(KueueVisibilityApi, ReadsRaceWithPublishing) {
  handler_->set_views(&views_);
  Store(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
            "metadata":{"name":"team-cq"},"spec":{"namespaceSelector":{}}})");
  views_.Publish(View());
  std::atomic<bool> stop{false};
  std::thread publisher([&] {
    for (int64_t g = 0; !stop.load(); ++g) {
      auto v = View();
      v.generation = g;
      views_.Publish(std::move(v));
    }
  });
  const std::string cq = std::string(kBase) + "/clusterqueues/team-cq/pendingworkloads";
  for (int i = 0; i < 100; ++i) {
    auto r = Call("GET", cq);
    ASSERT_EQ(r.code, 200);
    ASSERT_EQ(Body(r)["items"].size(), 4u);
  }
  stop = true;
  publisher.join();
}

}  // namespace
}  // namespace muster::server
