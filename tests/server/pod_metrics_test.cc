// metrics.k8s.io for kubectl top: usage read from cgroup files (v1 and v2, in a fake
// cgroup tree), a CPU rate from two samples of a supervised process's cgroup, and the
// routes' documents, discovery and errors.
#include "server/pod_metrics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api_fixture.h"
#include "server/discovery.h"
#include "server/pod_cgroup.h"
#include "server/pod_paths.h"
#include "server/process_supervisor.h"

namespace muster::server {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void WriteCgroupFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

class PodMetricsTest : public testing::ApiFixture {};

TEST_F(PodMetricsTest, ReadsTheWorkingSetAndCpuTimeOfV1AndV2) {
  const fs::path v1 = dir_ / "v1";
  WriteCgroupFile(v1 / "cpuacct" / "cpuacct.usage", "2500000000\n");
  WriteCgroupFile(v1 / "memory" / "memory.usage_in_bytes", "10485760\n");
  WriteCgroupFile(v1 / "memory" / "memory.stat", "cache 1\ntotal_inactive_file 2097152\n");
  CgroupUsage u = ReadCgroupUsage({(v1 / "memory").string(), (v1 / "cpuacct").string()});
  EXPECT_EQ(u.cpu_ns, 2500000000u);
  EXPECT_EQ(u.memory_bytes, 8u << 20);

  const fs::path v2 = dir_ / "v2";
  WriteCgroupFile(v2 / "cpu.stat", "usage_usec 1500\nuser_usec 1000\n");
  WriteCgroupFile(v2 / "memory.current", "4096\n");
  WriteCgroupFile(v2 / "memory.stat", "anon 4096\ninactive_file 8192\n");
  u = ReadCgroupUsage({v2.string()});
  EXPECT_EQ(u.cpu_ns, 1500000u);
  EXPECT_EQ(u.memory_bytes, 0u);  // never negative

  EXPECT_FALSE(ReadCgroupUsage({(dir_ / "none").string()}).cpu_ns);
}

TEST(PodMetricsRateTest, ARateFromTwoSamples) {
  uint64_t cpu_ns = 1000000000;
  PodMetrics metrics([&](const std::string& id) -> std::optional<CgroupUsage> {
    if (id != PodProcessId("default", "p")) return std::nullopt;
    return CgroupUsage{cpu_ns, 2u << 20};
  });
  // First look: two samples a second apart; nothing ran between them.
  auto usage = metrics.Sample({{"default", "p"}, {"default", "absent"}});
  ASSERT_EQ(usage.size(), 1u);
  const PodMetrics::Usage first = usage.begin()->second;
  EXPECT_EQ(first.nanocores, 0);
  EXPECT_EQ(first.memory_bytes, 2 << 20);
  EXPECT_GE(first.window_seconds, 1.0);
  // Two CPU-seconds later: a rate over the window since the first sample.
  cpu_ns += 2000000000;
  usage = metrics.Sample({{"default", "p"}});
  ASSERT_EQ(usage.size(), 1u);
  const PodMetrics::Usage second = usage.begin()->second;
  EXPECT_GT(second.nanocores, 0);
  EXPECT_NEAR(static_cast<double>(second.nanocores) * second.window_seconds, 2e9, 1e7);
  // A new container's counters start over: no negative rate.
  cpu_ns = 5;
  usage = metrics.Sample({{"default", "p"}});
  EXPECT_GE(usage.begin()->second.nanocores, 0);
  // No reader (the emulated executor): nothing.
  EXPECT_TRUE(PodMetrics(static_cast<const ProcessSupervisor*>(nullptr))
                  .Sample({{"default", "p"}})
                  .empty());
}

TEST_F(PodMetricsTest, RoutesServeMetricsServersDocuments) {
  ASSERT_EQ(
      Call(
          "POST", "/api/v1/namespaces/default/pods",
          R"({"metadata":{"name":"p","labels":{"app":"x"}},"spec":{"containers":[{"name":"main","image":"b"}]}})")
          .code,
      201);
  // Discovery names the group, as kubectl top looks for it.
  EXPECT_NE(ApiGroupList().dump().find("metrics.k8s.io"), std::string::npos);
  auto resources = ApiResourceList("metrics.k8s.io", "v1beta1");
  ASSERT_TRUE(resources);
  EXPECT_EQ((*resources)["resources"][0]["kind"], "PodMetrics");
  // No executor: no pod has metrics.
  ApiResponse r = Call("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods");
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(Body(r)["kind"], "PodMetricsList");
  EXPECT_TRUE(Body(r)["items"].empty());
  r = Call("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/p");
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(Body(r)["message"], "podmetrics.metrics.k8s.io \"default/p\" not found");
  r = Call("GET", "/apis/metrics.k8s.io/v1beta1/nodes");
  EXPECT_EQ(Body(r)["kind"], "NodeMetricsList");
  EXPECT_EQ(Call("GET", "/apis/metrics.k8s.io/v1beta1/pods/p").code, 404);
  EXPECT_EQ(Call("DELETE", "/apis/metrics.k8s.io/v1beta1/nodes/n").code, 405);
  EXPECT_EQ(
      Call("GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=a in (b")
          .code,
      400);
}

}  // namespace
}  // namespace muster::server
