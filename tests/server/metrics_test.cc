#include "server/metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "api_fixture.h"
#include "server/api_handler.h"

namespace muster::server {
namespace {

TEST(MetricsRegistryTest, RendersCounterGaugeAndHistogram) {
  MetricsRegistry r;
  r.DeclareCounter("b_requests_total", "Requests.\nBy code, with a \\ backslash");
  r.DeclareGauge("a_queue_depth", "Depth per queue");
  r.DeclareHistogram("c_wait_seconds", "Wait", {1, 2.5, 0.5});  // unsorted on purpose
  r.Add("b_requests_total", {{"code", "200"}});
  r.Add("b_requests_total", {{"code", "200"}}, 2);
  r.Add("b_requests_total", {{"code", "404"}});
  r.Set("a_queue_depth", {{"queue", "team \"b\"\\x\ny"}}, 3);
  r.Set("a_queue_depth", {{"queue", "team-a"}}, 0.25);
  r.Observe("c_wait_seconds", {{"cq", "a"}}, 0.5);  // on a bound: counts in le="0.5"
  r.Observe("c_wait_seconds", {{"cq", "a"}}, 2);
  r.Observe("c_wait_seconds", {{"cq", "a"}}, 100);  // only in +Inf
  r.Observe("c_wait_seconds", {}, 1);
  EXPECT_EQ(r.Render(),
            "# HELP a_queue_depth Depth per queue\n"
            "# TYPE a_queue_depth gauge\n"
            "a_queue_depth{queue=\"team \\\"b\\\"\\\\x\\ny\"} 3\n"
            "a_queue_depth{queue=\"team-a\"} 0.25\n"
            "# HELP b_requests_total Requests.\\nBy code, with a \\\\ backslash\n"
            "# TYPE b_requests_total counter\n"
            "b_requests_total{code=\"200\"} 3\n"
            "b_requests_total{code=\"404\"} 1\n"
            "# HELP c_wait_seconds Wait\n"
            "# TYPE c_wait_seconds histogram\n"
            "c_wait_seconds_bucket{le=\"0.5\"} 0\n"
            "c_wait_seconds_bucket{le=\"1\"} 1\n"
            "c_wait_seconds_bucket{le=\"2.5\"} 1\n"
            "c_wait_seconds_bucket{le=\"+Inf\"} 1\n"
            "c_wait_seconds_sum 1\n"
            "c_wait_seconds_count 1\n"
            "c_wait_seconds_bucket{cq=\"a\",le=\"0.5\"} 1\n"
            "c_wait_seconds_bucket{cq=\"a\",le=\"1\"} 1\n"
            "c_wait_seconds_bucket{cq=\"a\",le=\"2.5\"} 2\n"
            "c_wait_seconds_bucket{cq=\"a\",le=\"+Inf\"} 3\n"
            "c_wait_seconds_sum{cq=\"a\"} 102.5\n"
            "c_wait_seconds_count{cq=\"a\"} 3\n");
}

TEST(MetricsRegistryTest, WrongTypeUndeclaredAndClear) {
  MetricsRegistry r;
  EXPECT_TRUE(r.DeclareGauge("g", "G"));
  EXPECT_FALSE(r.DeclareCounter("g", "other"));  // first declaration wins
  r.Add("g", {}, 5);                             // not a counter: ignored
  r.Observe("g", {}, 5);                         // not a histogram: ignored
  r.Set("missing", {}, 1);                       // undeclared: ignored
  r.Set("g", {{"k", "1"}}, 1);
  r.Set("g", {{"k", "2"}}, 2);
  EXPECT_EQ(r.Render(), "# HELP g G\n# TYPE g gauge\ng{k=\"1\"} 1\ng{k=\"2\"} 2\n");
  r.ClearGauge("g");
  EXPECT_EQ(r.Render(), "# HELP g G\n# TYPE g gauge\n");
}

TEST(MetricsRegistryTest, SchedulerFamiliesAsKueue) {
  MetricsRegistry r;
  DeclareSchedulerMetrics(r);
  r.Set(kGpusTotal, {}, 8);
  r.Set(kKueuePendingWorkloads, {{"cluster_queue", "team-a"}, {"status", kPendingStatusActive}}, 2);
  r.Observe(kKueueAdmissionWaitTimeSeconds, {{"cluster_queue", "team-a"}}, 3);
  DeclareSchedulerMetrics(r);  // again: must not reset what is set
  const std::string text = r.Render();
  for (const char* want : {
           "# TYPE kueue_pending_workloads gauge\n",
           "kueue_pending_workloads{cluster_queue=\"team-a\",status=\"active\"} 2\n",
           "# HELP kueue_admitted_workloads_total The total number of admitted workloads per "
           "'cluster_queue'\n",
           "# TYPE kueue_evicted_workloads_total counter\n",
           "# TYPE kueue_cluster_queue_resource_usage gauge\n",
           "# TYPE kueue_cluster_queue_nominal_quota gauge\n",
           "# TYPE kueue_reserving_active_workloads gauge\n",
           "# TYPE kueue_admitted_active_workloads gauge\n",
           // Kueue's buckets: 1, 2.5, 5, ... 10240.
           "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"2.5\"} 0\n",
           "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"5\"} 1\n",
           "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",le=\"10240\"} 1\n",
           "# TYPE muster_scheduling_cycle_duration_seconds histogram\n",
           "muster_pods_placed_total 0\n",
           "muster_gpus_allocated 0\n",
           "muster_gpus_total 8\n",
           "muster_running_processes 0\n",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\nin:\n" << text;
  }
  EXPECT_EQ(text.find("le=\"20480\""), std::string::npos);
}

class MetricsEndpointTest : public testing::ApiFixture {
 protected:
  ApiResponse Get(const std::string& path, std::map<std::string, std::string> query = {}) {
    ApiRequest r;
    r.method = "GET";
    r.path = path;
    r.query = std::move(query);
    auto result = handler_->Handle(r);
    auto* resp = std::get_if<ApiResponse>(&result);
    return resp != nullptr ? *resp : ApiResponse{-1, "", "stream"};
  }
};

TEST_F(MetricsEndpointTest, ServesRegistryAndCountsRequests) {
  EXPECT_EQ(Get("/metrics").code, 404);  // no registry yet
  MetricsRegistry metrics;
  DeclareApiMetrics(metrics);
  DeclareSchedulerMetrics(metrics);
  handler_->set_metrics(&metrics);
  EXPECT_EQ(Get("/api/v1/namespaces").code, 200);
  EXPECT_EQ(Get("/api/v1/namespaces/").code, 200);
  EXPECT_EQ(Get("/api/v1/nodes/absent").code, 404);
  EXPECT_EQ(Get("/healthz").code, 200);
  EXPECT_EQ(Get("/apis/kueue.x-k8s.io/v1beta1/clusterqueues", {{"watch", "1"}}).code, -1);
  auto m = Get("/metrics");
  EXPECT_EQ(m.code, 200);
  EXPECT_EQ(m.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* want : {
           "muster_api_requests_total{verb=\"LIST\",resource=\"namespaces\",code=\"200\"} 2\n",
           "muster_api_requests_total{verb=\"GET\",resource=\"nodes\",code=\"404\"} 1\n",
           "muster_api_requests_total{verb=\"WATCH\",resource=\"clusterqueues\",code=\"200\"} 1\n",
           "muster_api_requests_total{verb=\"GET\",resource=\"\",code=\"200\"} 1\n",
           "# TYPE kueue_pending_workloads gauge\n",
       }) {
    EXPECT_NE(m.body.find(want), std::string::npos) << want << "\nin:\n" << m.body;
  }
}

}  // namespace
}  // namespace muster::server
