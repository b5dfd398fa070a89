// --report's page and the report metrics (issue 5) on a hand-computable scenario.
#include <gtest/gtest.h>

#include "api/decode.h"
#include "sim/report_charts.h"
#include "sim/report_html.h"
#include "sim/result_json.h"
#include "sim/simulator.h"

namespace muster::sim {
namespace {

// Two 4-GPU nodes in rack r1; ClusterQueue team-a has 8 GPUs of quota. Three gangs
// of two 2-GPU pods (4 GPUs each), all submitted at 0, 100 s each: a and b run at
// once, c waits for quota until 100 and finishes at 200.
std::string TwoNodeScenario() {
  std::string yaml;
  for (const char* node : {"n1", "n2"}) {
    yaml += std::string(R"(
apiVersion: v1
kind: Node
metadata:
  name: )") +
            node + R"(
  labels: {kubernetes.io/hostname: )" +
            node + R"(, topology.kubernetes.io/rack: r1}
status:
  allocatable: {cpu: "16", memory: 64Gi, nvidia.com/gpu: "4", pods: "110"}
---
)";
  }
  yaml += R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 32}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: team-a}
)";
  for (const char* job : {"a", "b", "c"}) {
    yaml += std::string(R"(
---
apiVersion: batch/v1
kind: Job
metadata:
  name: )") +
            job + R"(
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {sim.muster.dev/duration: "100s"}
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: trainer
        resources:
          requests: {cpu: "4", nvidia.com/gpu: "2"}
)";
  }
  return yaml;
}

SimulationResult RunScenario() {
  api::DecodeResult decoded;
  api::DecodeText(TwoNodeScenario(), "report.yaml", decoded);
  for (const auto& d : decoded.diagnostics) ADD_FAILURE() << d.ToString();
  SimOptions options;
  options.check_invariants = true;
  auto result = Simulate(decoded.manifests, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : SimulationResult{};
}

TEST(ReportMetricsTest, HandComputedValues) {
  SimulationResult r = RunScenario();
  const Summary& s = r.summary;
  EXPECT_EQ(s.succeeded, 3);
  EXPECT_DOUBLE_EQ(r.end_time, 200);
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 1200.0 / 1600.0);  // 4 GPUs x 100 s x 3 / (8 x 200)
  EXPECT_DOUBLE_EQ(s.cpu_utilization, 2400.0 / 6400.0);  // 8 cpu x 100 s x 3 / (32 x 200)
  EXPECT_DOUBLE_EQ(s.jct.p50, 100);
  EXPECT_DOUBLE_EQ(s.jct.p90, 200);
  EXPECT_DOUBLE_EQ(s.queueing_delay.mean, 100.0 / 3);
  EXPECT_DOUBLE_EQ(s.gang_wait.p99, 100);
  EXPECT_EQ(s.multi_pod_gangs, 3);
  ASSERT_TRUE(s.gangs_within_one_rack.has_value());
  EXPECT_DOUBLE_EQ(*s.gangs_within_one_rack, 1.0);
  EXPECT_FALSE(s.pods_within_one_numa.has_value()) << "no NUMA alignment asked for";
  EXPECT_EQ(s.fragmented_gpus, 0) << "nothing waits at the end";

  ASSERT_EQ(r.gpu_utilization.size(), 3u);
  EXPECT_DOUBLE_EQ(r.gpu_utilization[0].value, 1.0);
  EXPECT_DOUBLE_EQ(r.gpu_utilization[1].time, 100);
  EXPECT_DOUBLE_EQ(r.gpu_utilization[1].value, 0.5);
  EXPECT_DOUBLE_EQ(r.gpu_utilization[2].value, 0.0);
  EXPECT_DOUBLE_EQ(r.cpu_utilization[0].value, 0.5);

  ASSERT_EQ(r.queues.size(), 1u);
  const QueueResult& q = r.queues[0];
  EXPECT_EQ(q.name, "team-a");
  EXPECT_EQ(q.workloads, 3);
  ASSERT_TRUE(q.gpu_quota.has_value());
  EXPECT_DOUBLE_EQ(*q.gpu_quota, 8);
  EXPECT_DOUBLE_EQ(q.queueing_delay.p99, 100);
  ASSERT_FALSE(q.gpu_usage.empty());
  EXPECT_DOUBLE_EQ(q.gpu_usage.front().value, 8);
  EXPECT_DOUBLE_EQ(q.gpu_usage.back().value, 0);
}

TEST(ReportMetricsTest, JsonKeepsTheContractKeysFirst) {
  std::string json = ToJson(RunScenario());
  EXPECT_LT(json.find("\"preemptions\""), json.find("\"cpuUtilization\""));
  EXPECT_LT(json.find("\"gpuHoursLost\""), json.find("\"queues\""));
  EXPECT_LT(json.find("\"p99\""), json.find("\"p90\""));
}

TEST(ReportHtmlTest, PageHasChartsAndQueues) {
  std::string page = RenderReportHtml(RunScenario());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // Three chart containers, drawn by the dashboard's own chart module, embedded.
  size_t charts = 0;
  for (size_t at = page.find("<div class=\"chart\""); at != std::string::npos;
       at = page.find("<div class=\"chart\"", at + 1)) {
    charts++;
  }
  EXPECT_EQ(charts, 3u);
  EXPECT_NE(page.find("root.MusterChart = {"), std::string::npos);
  EXPECT_NE(page.find(".mchart-line"), std::string::npos);  // its stylesheet
  EXPECT_NE(page.find("MusterChart.line(document.getElementById(c.id), c.spec)"),
            std::string::npos);
  // The data: the queue's usage and its quota as a dashed line.
  EXPECT_NE(page.find("\"name\":\"team-a\""), std::string::npos);
  EXPECT_NE(page.find("\"name\":\"team-a quota\""), std::string::npos);
  EXPECT_NE(page.find("\"dashed\":true"), std::string::npos);
  // Self-contained: no script or stylesheet from anywhere.
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

TEST(ReportHtmlTest, SameInputsSameBytes) {
  EXPECT_EQ(RenderReportHtml(RunScenario()), RenderReportHtml(RunScenario()));
}

TEST(ReportChartsTest, DownsampleKeepsEndsAndSpikes) {
  std::vector<SeriesPoint> points;
  for (int i = 0; i < 10000; ++i) points.push_back({double(i), i == 5000 ? 9.0 : 1.0});
  auto out = Downsample(points, 2000);
  EXPECT_LE(out.size(), 2000u);
  EXPECT_DOUBLE_EQ(out.front().time, 0);
  EXPECT_DOUBLE_EQ(out.back().time, 9999);
  bool spike = false;
  for (const auto& p : out) spike = spike || p.value == 9.0;
  EXPECT_TRUE(spike);
}

TEST(ReportChartsTest, DataCannotEndItsScriptElement) {
  ChartSpec c;
  c.id = "x";
  c.title = "a</script><b>";
  c.series.push_back({"q&1", "#000", {{0, 1}, {10, 2}}});
  std::string json = ChartsJson({c});
  EXPECT_EQ(json.find("</"), std::string::npos);
  EXPECT_NE(json.find("a<\\/script><b>"), std::string::npos);
  EXPECT_NE(json.find("\"q&1\""), std::string::npos);
  EXPECT_NE(json.find("[[0.0,1.0],[10.0,2.0]]"), std::string::npos);
}

}  // namespace
}  // namespace muster::sim
