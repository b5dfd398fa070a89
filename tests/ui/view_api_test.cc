// The muster.dev/v1alpha1 view API over a hand-made view: get, list, pagination with
// continue tokens, field and label selectors, subresources and errors.
#include "ui/view_api.h"

#include <gtest/gtest.h>

#include "ui/view_json.h"

namespace muster::ui {
namespace {

using nlohmann::json;

control::SchedulerView MakeView() {
  control::SchedulerView v;
  v.generation = 7;
  for (const auto& [ns, name, state, cq] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"a", "job-1", "Running", "team-a"},
           {"a", "job-2", "Pending", "team-a"},
           {"b", "job-1", "Pending", "team-b"},
           {"b", "job-3", "Succeeded", "team-b"}}) {
    control::WorkloadView w;
    w.namespace_ = ns;
    w.name = name;
    w.key = ns + "/" + name.substr(4);
    w.state = state;
    w.cluster_queue = cq;
    w.requests = {{"cpu", 1500}, {"nvidia.com/gpu", 2}, {"memory", int64_t{1} << 30}};
    if (state == "Pending") {
      w.position_in_cluster_queue = 0;
      w.shortfall.push_back({"gpu", "nvidia.com/gpu", 2, 1});
    }
    v.workloads.push_back(w);
  }
  control::QueueView q;
  q.name = "clusterqueue.team-a";
  q.kind = "ClusterQueue";
  q.queue = "team-a";
  q.quota.push_back({"gpu", "nvidia.com/gpu", 4, 4, std::nullopt, 6, 2, 0, 2});
  v.queues.push_back(q);
  control::NodeView n;
  n.name = "n1";
  n.gpus.push_back({0, 0, -1, 1000, "a/1", "main-0"});
  v.nodes.push_back(n);
  for (int i = 0; i < 5; ++i) {
    v.cluster.timeline.push_back({100.0 + i, "Admit", "a/" + std::to_string(i), "team-a", "", ""});
  }
  v.cluster.utilization.time = {100, 200};
  v.cluster.utilization.gpus_used = {0, 2};
  v.cluster.utilization.gpus_total = {8, 8};
  v.cluster.utilization.cpu_used = {0, 1500};
  v.cluster.utilization.cpu_total = {64000, 64000};
  v.cluster.utilization.running = {0, 1};
  v.cluster.utilization.pending = {0, 2};
  return v;
}

ViewResponse Get(const control::SchedulerView* v, const std::string& plural,
                 const std::string& ns = "", const std::string& name = "",
                 std::map<std::string, std::string> query = {}, const std::string& sub = "") {
  ViewRequest r;
  r.plural = plural;
  r.namespace_ = ns;
  r.name = name;
  r.subresource = sub;
  r.query = std::move(query);
  return HandleViewRead(v, r);
}

std::vector<std::string> Names(const json& list) {
  std::vector<std::string> out;
  for (const auto& i : list["items"]) {
    out.push_back(i["metadata"].value("namespace", "") + "/" +
                  i["metadata"]["name"].get<std::string>());
  }
  return out;
}

TEST(ViewApiTest, GetAndListWorkloadViews) {
  auto v = MakeView();
  auto one = Get(&v, "workloadviews", "a", "job-2");
  ASSERT_EQ(one.code, 200);
  EXPECT_EQ(one.body["kind"], "WorkloadView");
  EXPECT_EQ(one.body["apiVersion"], "muster.dev/v1alpha1");
  EXPECT_EQ(one.body["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(one.body["state"], "Pending");
  EXPECT_EQ(one.body["requests"]["cpu"], "1500m");
  EXPECT_EQ(one.body["requests"]["memory"], "1Gi");
  EXPECT_EQ(one.body["shortfall"][0]["missing"], "1");
  EXPECT_EQ(one.body["positionInClusterQueue"], 0);

  auto all = Get(&v, "workloadviews");
  ASSERT_EQ(all.code, 200);
  EXPECT_EQ(all.body["kind"], "WorkloadViewList");
  EXPECT_EQ(Names(all.body),
            (std::vector<std::string>{"a/job-1", "a/job-2", "b/job-1", "b/job-3"}));
  EXPECT_FALSE(all.body["metadata"].contains("continue"));
  EXPECT_EQ(Names(Get(&v, "workloadviews", "b").body),
            (std::vector<std::string>{"b/job-1", "b/job-3"}));
  EXPECT_EQ(Get(&v, "workloadviews", "b", "job-2").code, 404);
}

TEST(ViewApiTest, PagesWithContinueTokens) {
  auto v = MakeView();
  auto p1 = Get(&v, "workloadviews", "", "", {{"limit", "3"}});
  EXPECT_EQ(Names(p1.body), (std::vector<std::string>{"a/job-1", "a/job-2", "b/job-1"}));
  ASSERT_TRUE(p1.body["metadata"].contains("continue"));
  EXPECT_EQ(p1.body["metadata"]["remainingItemCount"], 1);
  auto token = p1.body["metadata"]["continue"].get<std::string>();
  auto p2 = Get(&v, "workloadviews", "", "", {{"limit", "3"}, {"continue", token}});
  EXPECT_EQ(Names(p2.body), (std::vector<std::string>{"b/job-3"}));
  EXPECT_FALSE(p2.body["metadata"].contains("continue"));
  // A token stays valid while the view changes: it names where the last page ended.
  v.workloads.erase(v.workloads.begin());
  auto p2b = Get(&v, "workloadviews", "", "", {{"limit", "3"}, {"continue", token}});
  EXPECT_EQ(Names(p2b.body), (std::vector<std::string>{"b/job-3"}));
  EXPECT_EQ(Get(&v, "workloadviews", "", "", {{"continue", "garbage"}}).code, 400);
  EXPECT_EQ(Get(&v, "workloadviews", "", "", {{"limit", "-1"}}).code, 400);
  EXPECT_EQ(Get(&v, "workloadviews", "", "", {{"limit", "x"}}).code, 400);
}

TEST(ViewApiTest, FieldAndLabelSelectors) {
  auto v = MakeView();
  EXPECT_EQ(Names(Get(&v, "workloadviews", "", "", {{"fieldSelector", "state=Pending"}}).body),
            (std::vector<std::string>{"a/job-2", "b/job-1"}));
  EXPECT_EQ(Names(Get(&v, "workloadviews", "", "",
                      {{"fieldSelector", "state!=Pending,queue.clusterQueue=team-b"}})
                      .body),
            (std::vector<std::string>{"b/job-3"}));
  // A path only the JSON has (built on demand).
  EXPECT_EQ(Names(Get(&v, "workloadviews", "", "", {{"fieldSelector", "requests.cpu=1500m"}}).body)
                .size(),
            4u);
  // Paging counts only matching items.
  auto p = Get(&v, "workloadviews", "", "", {{"fieldSelector", "state=Pending"}, {"limit", "1"}});
  EXPECT_EQ(Names(p.body), (std::vector<std::string>{"a/job-2"}));
  EXPECT_EQ(p.body["metadata"]["remainingItemCount"], 1);
  EXPECT_EQ(Get(&v, "workloadviews", "", "", {{"fieldSelector", "=x"}}).code, 400);
  // Views have no labels: a positive requirement matches nothing, a negative one all.
  EXPECT_TRUE(Names(Get(&v, "workloadviews", "", "", {{"labelSelector", "app=x"}}).body).empty());
  EXPECT_EQ(Names(Get(&v, "workloadviews", "", "", {{"labelSelector", "!app"}}).body).size(), 4u);
}

TEST(ViewApiTest, OtherKindsAndSubresources) {
  auto v = MakeView();
  auto q = Get(&v, "queueviews", "", "clusterqueue.team-a");
  ASSERT_EQ(q.code, 200);
  EXPECT_EQ(q.body["quota"][0]["nominal"], "4");
  EXPECT_EQ(q.body["quota"][0]["borrowed"], "2");
  EXPECT_EQ(q.body["quota"][0]["borrowingLimit"], "4");
  EXPECT_FALSE(q.body["quota"][0].contains("lendingLimit"));
  auto n = Get(&v, "nodeviews", "", "n1");
  EXPECT_EQ(n.body["gpus"][0]["workload"], "a/1");
  auto c = Get(&v, "clusterviews", "", "cluster");
  EXPECT_EQ(c.code, 200);
  EXPECT_FALSE(c.body.contains("timeline"));  // subresources carry the heavy parts
  auto tl = Get(&v, "clusterviews", "", "cluster", {{"limit", "2"}}, "timeline");
  ASSERT_EQ(tl.code, 200);
  ASSERT_EQ(tl.body["entries"].size(), 2u);
  EXPECT_EQ(tl.body["entries"][1]["workload"], "a/4");  // the latest, oldest first
  auto u = Get(&v, "clusterviews", "", "cluster", {}, "utilization");
  EXPECT_EQ(u.body["utilization"]["gpusUsed"], json({0, 2}));
  EXPECT_EQ(Get(&v, "clusterviews", "", "cluster", {}, "status").code, 404);
  EXPECT_EQ(Get(&v, "clusterviews", "", "other").code, 404);
}

TEST(ViewApiTest, Errors) {
  auto v = MakeView();
  auto none = Get(nullptr, "workloadviews");
  EXPECT_EQ(none.code, 503);
  EXPECT_EQ(none.body["kind"], "Status");
  EXPECT_EQ(none.body["reason"], "ServiceUnavailable");
  EXPECT_EQ(Get(&v, "nosuchviews").code, 404);
  auto watch = Get(&v, "workloadviews", "", "", {{"watch", "1"}});
  EXPECT_EQ(watch.code, 405);
  EXPECT_NE(watch.body["message"].get<std::string>().find("watch workloads"), std::string::npos);
  auto missing = Get(&v, "nodeviews", "", "nx");
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(missing.body["details"]["name"], "nx");
  EXPECT_EQ(missing.body["details"]["group"], "muster.dev");
}

}  // namespace
}  // namespace muster::ui
