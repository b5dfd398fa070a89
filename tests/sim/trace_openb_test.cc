#include "sim/trace_openb.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/resource_name.h"

namespace muster::sim {
namespace {

const ResourceId kGpuMilli = ResourceNames::Intern(kGpuMilliResourceName);

TEST(CsvTest, SplitsAndDropsCarriageReturn) {
  auto row = csv::SplitLine("a,,c\r");
  ASSERT_EQ(row.size(), 3u);
  EXPECT_EQ(row[0], "a");
  EXPECT_EQ(row[1], "");
  EXPECT_EQ(row[2], "c");
  EXPECT_EQ(csv::ParseInt("8.0", "x").value(), 8);
  EXPECT_FALSE(csv::ParseInt("8.5", "x").ok());
  EXPECT_FALSE(csv::ParseDouble("", "x").ok());
}

TEST(OpenbNodesTest, MapsColumnsToAllocatableAndModelLabel) {
  std::istringstream in(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "n0,96000,786432,8,V100M32\n"
      "n1,32000,262144,0,\n");
  auto nodes = ParseOpenbNodes(in, "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  const model::Node& n0 = (*nodes)[0];
  EXPECT_EQ(n0.meta.name, "n0");
  EXPECT_EQ(n0.allocatable.Get(kCpu), 96000);
  EXPECT_EQ(n0.allocatable.Get(kMemory), int64_t{786432} << 20);
  EXPECT_EQ(n0.allocatable.Get(kNvidiaGpu), 8);
  EXPECT_EQ(n0.meta.labels.at(std::string(kGpuModelLabel)), "V100M32");
  // A CPU-only node has no GPU resource and no model label.
  EXPECT_EQ((*nodes)[1].allocatable.Get(kNvidiaGpu), 0);
  EXPECT_TRUE((*nodes)[1].meta.labels.empty());
}

TEST(OpenbNodesTest, ReportsMissingColumnAndBadNumberWithLine) {
  std::istringstream missing("sn,cpu_milli,gpu\n");
  auto r1 = ParseOpenbNodes(missing, "nodes.csv");
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r1.status().message().find("memory_mib"), std::string::npos);

  std::istringstream bad("sn,cpu_milli,memory_mib,gpu,model\nn0,9x,1,0,\n");
  auto r2 = ParseOpenbNodes(bad, "nodes.csv");
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().message().find("nodes.csv:2: column cpu_milli"), std::string::npos)
      << r2.status().message();
}

constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(OpenbPodsTest, WholeSharedAndCpuOnlyPods) {
  std::istringstream in(std::string(kPodHeader) +
                        "p-whole,88000,327680,8,1000,,Burstable,Succeeded,100,1100,160\n"
                        "p-share,4000,15258,1,220,,BE,Running,50,350,50\n"
                        "p-cpu,2000,1024,0,0,,LS,Running,70,90,70\n"
                        "p-spec,16000,32768,1,1000,V100M32|V100M16,LS,Running,80,95,\n");
  auto pods = ParseOpenbPods(in, "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 4u);
  // Sorted by creation time.
  EXPECT_EQ((*pods)[0].name, "p-share");
  EXPECT_EQ((*pods)[1].name, "p-cpu");
  EXPECT_EQ((*pods)[2].name, "p-spec");
  EXPECT_EQ((*pods)[3].name, "p-whole");

  model::Workload whole = OpenbPodToWorkload((*pods)[3]);
  EXPECT_EQ(whole.key, "default/p-whole");
  EXPECT_EQ(whole.meta.kind, "Pod");
  ASSERT_EQ(whole.pod_sets.size(), 1u);
  EXPECT_EQ(whole.pod_sets[0].requests.Get(kNvidiaGpu), 8);
  EXPECT_EQ(whole.pod_sets[0].requests.Get(kGpuMilli), 0);
  EXPECT_EQ(whole.pod_sets[0].requests.Get(kCpu), 88000);
  EXPECT_EQ(whole.pod_sets[0].requests.Get(kMemory), int64_t{327680} << 20);
  EXPECT_DOUBLE_EQ(whole.sim.submit_at, 100);
  ASSERT_TRUE(whole.sim.duration.has_value());
  EXPECT_DOUBLE_EQ(*whole.sim.duration, 1100 - 160);  // deletion - scheduled
  EXPECT_EQ(WorkloadGpuMilli(whole), 8000);
  EXPECT_EQ(whole.min_available, 1);

  model::Workload share = OpenbPodToWorkload((*pods)[0]);
  EXPECT_EQ(share.pod_sets[0].requests.Get(kNvidiaGpu), 0);
  EXPECT_EQ(share.pod_sets[0].requests.Get(kGpuMilli), 220);
  EXPECT_EQ(WorkloadGpuMilli(share), 220);

  model::Workload cpu = OpenbPodToWorkload((*pods)[1]);
  EXPECT_EQ(WorkloadGpuMilli(cpu), 0);
  EXPECT_TRUE(cpu.pod_sets[0].node_affinity.required.empty());

  // No scheduled_time: duration counts from creation.
  model::Workload spec = OpenbPodToWorkload((*pods)[2]);
  EXPECT_DOUBLE_EQ(*spec.sim.duration, 15);
  ASSERT_EQ(spec.pod_sets[0].node_affinity.required.size(), 1u);
  const auto& req = spec.pod_sets[0].node_affinity.required[0].match_expressions.at(0);
  EXPECT_EQ(req.key, kGpuModelLabel);
  EXPECT_EQ(req.op, model::SelectorOperator::kIn);
  EXPECT_EQ(req.values, (std::vector<std::string>{"V100M16", "V100M32"}));
}

TEST(OpenbPodsTest, ResourceOnlyVariantHasNoTimes) {
  // openb_pod_list_multigpu50.csv carries only the resource columns.
  std::istringstream in("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,2,1000\n");
  auto pods = ParseOpenbPods(in, "pods.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  model::Workload w = OpenbPodToWorkload((*pods)[0]);
  EXPECT_DOUBLE_EQ(w.sim.submit_at, 0);
  EXPECT_FALSE(w.sim.duration.has_value());
  EXPECT_EQ(w.pod_sets[0].requests.Get(kNvidiaGpu), 2);
}

TEST(OpenbPodsTest, RejectsOutOfRangeGpuMilli) {
  std::istringstream in(std::string(kPodHeader) + "p,1,1,1,1500,,LS,Running,0,1,0\n");
  auto pods = ParseOpenbPods(in, "pods.csv");
  ASSERT_FALSE(pods.ok());
  EXPECT_NE(pods.status().message().find("pods.csv:2"), std::string::npos);
}

TEST(OpenbTraceTest, OpenReportsMissingPath) {
  auto r = OpenOpenbTrace("/nonexistent/openb");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// The published trace: counts from the dataset README.
TEST(OpenbTraceTest, ReadsPublishedDefaultTrace) {
  const std::string dir = MUSTER_SHARED_DIR "/traces/alibaba-openb";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no shared traces";
  auto reader = OpenOpenbTrace(dir);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const TraceCluster& cluster = (*reader)->cluster();
  EXPECT_EQ(cluster.nodes.size(), 1213u);  // GPU nodes; all_node has 1,523
  int64_t gpus = 0;
  for (const auto& n : cluster.nodes) gpus += n.allocatable.Get(kNvidiaGpu);
  EXPECT_EQ(gpus, 6212);
  EXPECT_EQ((*reader)->size(), 8152);
  int64_t count = 0, gpu_pods = 0, shared = 0;
  double last_submit = -1;
  while (auto w = (*reader)->Next()) {
    ++count;
    EXPECT_GE(w->sim.submit_at, last_submit);
    last_submit = w->sim.submit_at;
    gpu_pods += WorkloadGpuMilli(*w) > 0;
    shared += w->pod_sets[0].requests.Get(kGpuMilli) > 0;
  }
  EXPECT_EQ(count, 8152);
  EXPECT_EQ(gpu_pods, 8152 - 1088);  // 1,088 CPU-only pods
  EXPECT_EQ(shared, 3078);           // one GPU, gpu_milli < 1000
}

TEST(OpenbTraceTest, AllNodeListAndNamedPodCsv) {
  const std::string dir = MUSTER_SHARED_DIR "/traces/alibaba-openb";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no shared traces";
  OpenbOptions options;
  options.node_list = "openb_node_list_all_node.csv";
  auto reader = OpenOpenbTrace(dir + "/openb_pod_list_gpuspec33.csv", options);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->cluster().nodes.size(), 1523u);
  EXPECT_EQ((*reader)->size(), 8152);
  int64_t constrained = 0;
  while (auto w = (*reader)->Next()) constrained += !w->pod_sets[0].node_affinity.required.empty();
  EXPECT_GT(constrained, 0);
}

}  // namespace
}  // namespace muster::sim
