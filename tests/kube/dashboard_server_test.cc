// `muster kube --dashboard-port`: the dashboard's listener against the fake API server
// (API reads and watches forwarded; the scheduler's view published by the controller)
// and against a recording upstream that checks whose credentials reach the API server
// and answers SelfSubjectAccessReviews (RBAC on the muster.dev views).
#include "kube/dashboard_server.h"

#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "kube/fake_api_server.h"
#include "kube/kube_controller.h"
#include "kube/reflector.h"
#include "kube/wait_for.h"
#include "ui/view_reader.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

// An API server stand-in that records the Authorization header of every request and
// decides SelfSubjectAccessReviews by token: "alice" may read workloadviews and
// clusterviews, nobody but "carol" may read nodeviews, "carol" may read workloadviews
// in namespace team-a only, "mallory" may read nothing.
class RecordingUpstream {
 public:
  RecordingUpstream() {
    server_.Post(
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        [this](const httplib::Request& req, httplib::Response& res) {
          Record(req);
          json review = json::parse(req.body);
          const json attrs = review["spec"]["resourceAttributes"];
          {
            std::lock_guard<std::mutex> lock(mu_);
            reviews_.push_back(attrs);
          }
          const std::string resource = attrs.value("resource", "");
          const std::string who = req.get_header_value("Authorization");
          const bool muster = attrs.value("group", "") == "muster.dev";
          const bool allowed =
              (who == "Bearer alice" && muster && resource != "nodeviews") ||
              (who == "Bearer carol" && muster &&
               (resource == "nodeviews" ||
                (resource == "workloadviews" && attrs.value("namespace", "") == "team-a")));
          review["status"] = {{"allowed", allowed}, {"reason", allowed ? "" : "no RBAC rule"}};
          res.set_content(review.dump(), "application/json");
        });
    server_.Get("/api/v1/namespaces/default/pods", [this](const httplib::Request& req,
                                                          httplib::Response& res) {
      Record(req);
      if (req.get_header_value("Authorization") == "Bearer mallory") {
        res.status = 403;
        res.set_content(R"({"kind":"Status","code":403,"reason":"Forbidden"})", "application/json");
        return;
      }
      if (req.has_param("watch")) {
        res.set_content(
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\"}}}\n",
            "application/json");
        return;
      }
      res.set_content(R"({"kind":"PodList","items":[{"metadata":{"name":"p"}}]})",
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~RecordingUpstream() {
    server_.stop();
    thread_.join();
  }
  ClusterConnection Connection() const {
    ClusterConnection c;
    c.server = "http://127.0.0.1:" + std::to_string(port_);
    c.token = "muster-service-account-token";  // must never be forwarded
    c.source = "test";
    return c;
  }
  std::vector<std::string> Authorizations() const {
    std::lock_guard<std::mutex> lock(mu_);
    return auth_;
  }
  std::vector<json> Reviews() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reviews_;
  }

 private:
  void Record(const httplib::Request& req) {
    std::lock_guard<std::mutex> lock(mu_);
    auth_.push_back(req.get_header_value("Authorization"));
  }
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<std::string> auth_;
  std::vector<json> reviews_;
};

httplib::Result Get(int port, const std::string& path, const std::string& token = "") {
  httplib::Client client("127.0.0.1", port);
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  return client.Get(path, headers);
}

control::SchedulerView SmallView() {
  control::SchedulerView v;
  v.generation = 3;
  control::WorkloadView w;
  w.namespace_ = "default";
  w.name = "job-a";
  w.key = "default/a";
  w.state = "Pending";
  v.workloads.push_back(w);
  control::WorkloadView b = w;
  b.namespace_ = "team-a";
  b.name = "job-b";
  b.key = "team-a/b";
  b.state = "Running";
  v.workloads.push_back(b);
  control::NodeView n;
  n.name = "node-1";
  n.gpus.push_back({0, 0, -1, 1000, "default/a", "main-0"});
  n.gpus.push_back({1, 0, -1, 1000, "team-a/b", "main-0"});
  n.workloads = {"default/a", "team-a/b"};
  v.nodes.push_back(n);
  return v;
}

TEST(DashboardServerTest, ForwardsTheUsersTokenNeverMusters) {
  RecordingUpstream upstream;
  DashboardServerOptions o;
  o.upstream = upstream.Connection();
  DashboardServer dashboard(o);
  ASSERT_TRUE(dashboard.Start().ok());

  auto page = Get(dashboard.port(), "/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_NE(page->body.find("<title>muster</title>"), std::string::npos);

  auto as_alice = Get(dashboard.port(), "/api/v1/namespaces/default/pods", "alice");
  ASSERT_TRUE(as_alice);
  EXPECT_EQ(as_alice->status, 200);
  EXPECT_EQ(json::parse(as_alice->body)["items"][0]["metadata"]["name"], "p");
  auto anonymous = Get(dashboard.port(), "/api/v1/namespaces/default/pods");
  ASSERT_TRUE(anonymous);
  auto denied = Get(dashboard.port(), "/api/v1/namespaces/default/pods", "mallory");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403);  // the API server's answer, passed on
  EXPECT_EQ(upstream.Authorizations(),
            (std::vector<std::string>{"Bearer alice", "", "Bearer mallory"}));

  // Read only: nothing but GET is forwarded.
  httplib::Client client("127.0.0.1", dashboard.port());
  auto post = client.Post("/api/v1/namespaces/default/pods", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(upstream.Authorizations().size(), 3u);
}

TEST(DashboardServerTest, StreamsWatchesAndPassesRefusalsAsErrorEvents) {
  RecordingUpstream upstream;
  DashboardServerOptions o;
  o.upstream = upstream.Connection();
  DashboardServer dashboard(o);
  ASSERT_TRUE(dashboard.Start().ok());
  auto watch = Get(dashboard.port(), "/api/v1/namespaces/default/pods?watch=1", "alice");
  ASSERT_TRUE(watch);
  EXPECT_EQ(watch->status, 200);
  EXPECT_EQ(watch->body,
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
            "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"b\"}}}\n");
  auto refused = Get(dashboard.port(), "/api/v1/namespaces/default/pods?watch=1", "mallory");
  ASSERT_TRUE(refused);
  json event = json::parse(refused->body);
  EXPECT_EQ(event["type"], "ERROR");
  EXPECT_EQ(event["object"]["code"], 403);
}

// The listener over `upstream`, serving SmallView().
class ViewDashboard {
 public:
  explicit ViewDashboard(const RecordingUpstream& upstream) {
    views_.Publish(SmallView());
    DashboardServerOptions o;
    o.upstream = upstream.Connection();
    o.views = &views_;
    server_ = std::make_unique<DashboardServer>(o);
  }
  Status Start() { return server_->Start(); }
  int port() const { return server_->port(); }

 private:
  ui::ViewPublisher views_;
  std::unique_ptr<DashboardServer> server_;
};

TEST(DashboardServerTest, ViewsNeedTheUsersPermission) {
  RecordingUpstream upstream;
  ViewDashboard dashboard(upstream);
  ASSERT_TRUE(dashboard.Start().ok());

  auto list = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/workloadviews?limit=10", "alice");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  json body = json::parse(list->body);
  EXPECT_EQ(body["kind"], "WorkloadViewList");
  EXPECT_EQ(body["items"][0]["metadata"]["name"], "job-a");
  auto one = Get(dashboard.port(),
                 "/apis/muster.dev/v1alpha1/namespaces/default/workloadviews/job-a", "alice");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200);
  auto nodes = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/nodeviews", "alice");
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->status, 403);
  EXPECT_NE(nodes->body.find("no RBAC rule"), std::string::npos);
  // A list across namespaces is cut to what the user may read, not refused.
  auto mallory = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/workloadviews", "mallory");
  ASSERT_TRUE(mallory);
  EXPECT_EQ(mallory->status, 200);
  EXPECT_TRUE(json::parse(mallory->body)["items"].empty()) << mallory->body;
  auto mallory_one =
      Get(dashboard.port(), "/apis/muster.dev/v1alpha1/namespaces/default/workloadviews/job-a",
          "mallory");
  ASSERT_TRUE(mallory_one);
  EXPECT_EQ(mallory_one->status, 403);

  // The reviews asked exactly what was read: verb, resource, namespace, name.
  bool saw_get = false;
  for (const auto& r : upstream.Reviews()) {
    if (r.value("verb", "") == "get" && r.value("resource", "") == "workloadviews") {
      saw_get = true;
      EXPECT_EQ(r["namespace"], "default");
      EXPECT_EQ(r["name"], "job-a");
      EXPECT_EQ(r["group"], "muster.dev");
    }
  }
  EXPECT_TRUE(saw_get);
  // A decision is reused for a while: reading the list again asks nothing new.
  const size_t asked = upstream.Reviews().size();
  ASSERT_TRUE(Get(dashboard.port(), "/apis/muster.dev/v1alpha1/workloadviews?limit=10", "alice"));
  EXPECT_EQ(upstream.Reviews().size(), asked);
  for (const auto& a : upstream.Authorizations()) {
    EXPECT_NE(a, "Bearer muster-service-account-token");
  }
}

// A user who may read WorkloadViews in one namespace sees that namespace's, and other
// namespaces' workloads without their names (ui/view_reader.h), as muster serve shows.
TEST(DashboardServerTest, AUserOfOneNamespaceSeesItsWorkloadsOnly) {
  RecordingUpstream upstream;
  ViewDashboard dashboard(upstream);
  ASSERT_TRUE(dashboard.Start().ok());

  auto list = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/workloadviews", "carol");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200) << list->body;
  json items = json::parse(list->body)["items"];
  ASSERT_EQ(items.size(), 1u) << list->body;
  EXPECT_EQ(items[0]["metadata"]["namespace"], "team-a");
  auto node = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/nodeviews/node-1", "carol");
  ASSERT_TRUE(node);
  ASSERT_EQ(node->status, 200) << node->body;
  json n = json::parse(node->body);
  EXPECT_EQ(n["gpus"][0]["workload"], ui::kWithheldWorkload);
  EXPECT_EQ(n["gpus"][1]["workload"], "team-a/b");
  EXPECT_EQ(node->body.find("default/a"), std::string::npos) << node->body;
  // alice may list everywhere: nothing is withheld from her.
  auto all = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/workloadviews", "alice");
  ASSERT_TRUE(all);
  EXPECT_EQ(json::parse(all->body)["items"].size(), 2u);
}

// The fake API server: forwarded lists and watches are the API server's own answers,
// the controller publishes the view the listener serves, and without a
// SelfSubjectAccessReview API (the fake has none) the views fail closed.
TEST(DashboardServerTest, AgainstTheFakeApiServerWithTheController) {
  FakeApiServer fake;
  for (const auto& o : json::parse(R"([
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1"},
     "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4", "pods": "110"}}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "gpu"}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "research"},
     "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"],
       "flavors": [{"name": "gpu", "resources": [{"name": "cpu", "nominalQuota": 64},
                                                 {"name": "nvidia.com/gpu", "nominalQuota": 4}]}]}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
     "metadata": {"name": "research", "namespace": "default"}, "spec": {"clusterQueue": "research"}}
  ])")) {
    fake.Create(o);
  }
  KubeClient client(fake.connection());
  ObjectCache cache;
  ui::ViewPublisher views;
  KubeOptions options;
  options.resync_seconds = 0.2;
  options.views = &views;
  std::vector<std::unique_ptr<Reflector>> reflectors;
  for (const control::ResourceType* t : WatchedResources()) {
    options.watched.push_back(t->StoreKey());
    reflectors.push_back(std::make_unique<Reflector>(client, *t, cache, ReflectorOptions{}));
  }
  KubeController controller(client, cache, options);
  controller.Start();
  for (auto& r : reflectors) r->Start();

  DashboardServerOptions o;
  o.upstream = fake.connection();
  o.views = &views;
  DashboardServer dashboard(o);
  ASSERT_TRUE(dashboard.Start().ok());

  // The controller publishes its view once it has synced: the queue tree is there.
  EXPECT_TRUE(WaitFor([&] {
    auto v = views.Current();
    return v != nullptr && !v->queues.empty() && !v->nodes.empty();
  }));
  EXPECT_EQ(views.Current()->queues.front().name, "clusterqueue.research");

  auto nodes = Get(dashboard.port(), "/api/v1/nodes");
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->status, 200);
  EXPECT_EQ(json::parse(nodes->body)["items"][0]["metadata"]["name"], "gpu-1");
  auto cqs = Get(dashboard.port(), "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/research");
  ASSERT_TRUE(cqs);
  EXPECT_EQ(json::parse(cqs->body)["metadata"]["name"], "research");
  EXPECT_EQ(Get(dashboard.port(), "/api/v1/namespaces/default/pods/nope")->status, 404);

  // A watch forwarded from a resourceVersion sees a node created after it.
  const std::string rv = json::parse(nodes->body)["metadata"]["resourceVersion"];
  std::thread creator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fake.Create(json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-2"},
      "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "1", "pods": "110"}}})"));
  });
  httplib::Client watcher("127.0.0.1", dashboard.port());
  std::string seen;
  watcher.Get("/api/v1/nodes?watch=1&timeoutSeconds=5&resourceVersion=" + rv,
              [&](const char* data, size_t n) {
                seen.append(data, n);
                return seen.find("gpu-2") == std::string::npos;  // stop once it came
              });
  creator.join();
  EXPECT_NE(seen.find("\"ADDED\""), std::string::npos);
  EXPECT_NE(seen.find("gpu-2"), std::string::npos);

  // The views are served only when the API server says the user may read them: the
  // fake answers SelfSubjectAccessReviews as muster serve does (when it does at all);
  // without that API the views fail closed.
  httplib::Client direct("127.0.0.1", std::stoi(fake.url().substr(fake.url().rfind(':') + 1)));
  auto review =
      direct.Post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                  R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
                                "spec":{"resourceAttributes":{"group":"muster.dev","resource":"queueviews","verb":"list"}}})",
                  "application/json");
  ASSERT_TRUE(review);
  const bool allowed =
      review->status / 100 == 2 && json::parse(review->body)["status"].value("allowed", false);
  auto queues = Get(dashboard.port(), "/apis/muster.dev/v1alpha1/queueviews");
  ASSERT_TRUE(queues);
  if (allowed) {
    EXPECT_EQ(queues->status, 200);
    EXPECT_EQ(json::parse(queues->body)["items"][0]["metadata"]["name"], "clusterqueue.research");
  } else {
    EXPECT_EQ(queues->status, 403);
    EXPECT_NE(queues->body.find("SelfSubjectAccessReview"), std::string::npos);
  }

  dashboard.Stop();
  controller.Stop();
  for (auto& r : reflectors) r->Stop();
}

}  // namespace
}  // namespace muster::kube
