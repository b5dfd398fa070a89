#include "server/local_node.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "api/decode.h"
#include "placement/cluster_state.h"
#include "server/api_handler.h"

namespace muster::server {
namespace {

using nlohmann::json;

GpuDevice Gpu(int index, int numa, std::string name = "NVIDIA H100 80GB HBM3") {
  GpuDevice g;
  g.index = index;
  g.name = std::move(name);
  g.uuid = "GPU-" + std::to_string(index);
  g.memory_mib = 81559;
  g.numa_node = numa;
  return g;
}

api::DecodeResult Decode(const std::vector<json>& manifests) {
  api::DecodeResult result;
  for (const auto& m : manifests) api::DecodeText(m.dump(), "local", result);
  return result;
}

std::string Errors(const api::DecodeResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) out += d.ToString() + "\n";
  return out;
}

TEST(LocalNodeParsersTest, MemTotal) {
  EXPECT_EQ(ParseMemTotalBytes("MemTotal:       131981020 kB\nMemFree:  1 kB\n"),
            int64_t{131981020} * 1024);
  EXPECT_EQ(ParseMemTotalBytes("Node 0 MemTotal:        4550128 kB\nNode 0 MemFree: 3 kB\n"),
            int64_t{4550128} * 1024);
  EXPECT_EQ(ParseMemTotalBytes("MemFree: 1 kB\n"), 0);
  EXPECT_EQ(ParseMemTotalBytes(""), 0);
}

TEST(LocalNodeParsersTest, CpuList) {
  EXPECT_EQ(CountCpuList("0-15\n"), 16);
  EXPECT_EQ(CountCpuList("0-15,32-47"), 32);
  EXPECT_EQ(CountCpuList("0,2,4-5"), 4);
  EXPECT_EQ(CountCpuList("\n"), 0);  // a memory-only NUMA node
  EXPECT_EQ(CountCpuList("3-1"), 0);
  EXPECT_EQ(CountCpuList("x"), 0);
}

TEST(LocalNodeParsersTest, NodeName) {
  EXPECT_EQ(NodeNameFromHostname("vm"), "vm");
  EXPECT_EQ(NodeNameFromHostname("GPU_Box-01.Example.com"), "gpu-box-01.example.com");
  EXPECT_EQ(NodeNameFromHostname("-x-"), "x");
  EXPECT_EQ(NodeNameFromHostname(""), "localhost");
}

TEST(LocalNodeManifestsTest, OneGpuWithoutNumaIsOneNode) {
  LocalMachine m{
      "vm", 16, int64_t{131981020} * 1024, {Gpu(0, -1)}, {{0, 16, 4550128 * 1024LL, {10}}}};
  auto manifests = LocalNodeManifests(m);
  ASSERT_EQ(manifests.size(), 1u);
  const json& node = manifests[0];
  EXPECT_EQ(node["metadata"]["name"], "vm");
  EXPECT_EQ(node["metadata"]["labels"]["kubernetes.io/hostname"], "vm");
  EXPECT_EQ(node["metadata"]["labels"]["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(node["metadata"]["annotations"][kGpuIdsAnnotation], "0");
  EXPECT_EQ(node["status"]["allocatable"]["memory"], "131981020Ki");

  auto decoded = Decode(manifests);
  ASSERT_FALSE(decoded.HasErrors()) << Errors(decoded);
  ASSERT_EQ(decoded.manifests.nodes.size(), 1u);
  const model::Node& n = decoded.manifests.nodes[0];
  EXPECT_EQ(n.allocatable.Get(kCpu), 16000);  // milli-cpu
  EXPECT_EQ(n.allocatable.Get(kMemory), int64_t{131981020} * 1024);
  EXPECT_EQ(n.allocatable.Get(kNvidiaGpu), 1);
  EXPECT_EQ(n.allocatable.Get(kPods), 110);
  EXPECT_TRUE(decoded.manifests.node_topologies.empty());
  EXPECT_EQ(PhysicalGpuIds(node), std::vector<std::string>({"0"}));
}

TEST(LocalNodeManifestsTest, NoGpuHasNoGpuResourceOrLabels) {
  LocalMachine m{"cpu-box", 8, int64_t{1} << 34, {}, {}};
  auto manifests = LocalNodeManifests(m);
  ASSERT_EQ(manifests.size(), 1u);
  EXPECT_FALSE(manifests[0]["status"]["allocatable"].contains("nvidia.com/gpu"));
  EXPECT_FALSE(manifests[0]["metadata"]["labels"].contains("nvidia.com/gpu.product"));
  EXPECT_FALSE(manifests[0]["metadata"].contains("annotations"));
  auto decoded = Decode(manifests);
  ASSERT_FALSE(decoded.HasErrors()) << Errors(decoded);
  EXPECT_EQ(decoded.manifests.nodes[0].allocatable.Get(kMemory), int64_t{1} << 34);
  EXPECT_TRUE(PhysicalGpuIds(manifests[0]).empty());
}

// Four GPUs, the first two on NUMA node 1: placement numbers devices zone by zone
// (node-0 first), so device 0 is physical GPU 2.
LocalMachine TwoSocketMachine() {
  return LocalMachine{
      "dgx",
      64,
      int64_t{512} << 30,
      {Gpu(0, 1), Gpu(1, 1), Gpu(2, 0), Gpu(3, 0)},
      {{0, 32, int64_t{256} << 30, {10, 21}}, {1, 32, int64_t{256} << 30, {21, 10}}}};
}

TEST(LocalNodeManifestsTest, GpusAcrossNumaNodesGetATopology) {
  auto manifests = LocalNodeManifests(TwoSocketMachine());
  ASSERT_EQ(manifests.size(), 2u);
  EXPECT_EQ(manifests[0]["metadata"]["annotations"][kGpuIdsAnnotation], "2,3,0,1");
  const json& topo = manifests[1];
  EXPECT_EQ(topo["kind"], "NodeResourceTopology");
  EXPECT_EQ(topo["metadata"]["name"], "dgx");
  ASSERT_EQ(topo["zones"].size(), 2u);
  EXPECT_EQ(topo["zones"][0]["name"], "node-0");
  EXPECT_EQ(topo["zones"][1]["costs"][0], json({{"name", "node-0"}, {"value", 21}}));

  auto decoded = Decode(manifests);
  ASSERT_FALSE(decoded.HasErrors()) << Errors(decoded);
  ASSERT_EQ(decoded.manifests.node_topologies.size(), 1u);
  const model::NodeTopology& t = decoded.manifests.node_topologies[0];
  EXPECT_EQ(t.policy, model::TopologyManagerPolicy::kBestEffort);
  EXPECT_EQ(t.scope, model::TopologyManagerScope::kContainer);
  ASSERT_EQ(t.zones.size(), 2u);
  EXPECT_EQ(t.zones[1].id, 1);
  EXPECT_EQ(t.zones[1].allocatable.Get(kNvidiaGpu), 2);
  EXPECT_EQ(t.zones[1].allocatable.Get(kCpu), 32000);
  EXPECT_EQ(t.zones[1].allocatable.Get(kMemory), int64_t{256} << 30);

  // The placement layer's own numbering: each device's zone must be the NUMA node
  // of the physical GPU the annotation names for it.
  auto state = placement::BuildClusterState(decoded.manifests.nodes,
                                            decoded.manifests.node_topologies, {}, {});
  ASSERT_TRUE(state.ok()) << state.status().message();
  const auto& info = dynamic_cast<const placement::IndexedClusterState&>(**state).Info(0);
  auto ids = PhysicalGpuIds(manifests[0]);
  auto machine = TwoSocketMachine();
  ASSERT_EQ(info.gpus.size(), ids.size());
  for (size_t d = 0; d < ids.size(); ++d) {
    const int physical = std::stoi(ids[d]);
    EXPECT_EQ(info.zones[info.gpus[d].numa_zone].id, machine.gpus[physical].numa_node)
        << "device " << d;
  }
}

TEST(LocalNodeManifestsTest, UnknownGpuNumaMeansNoTopology) {
  LocalMachine m = TwoSocketMachine();
  m.gpus[3].numa_node = -1;
  auto manifests = LocalNodeManifests(m);
  ASSERT_EQ(manifests.size(), 1u);
  EXPECT_EQ(manifests[0]["metadata"]["annotations"][kGpuIdsAnnotation], "0,1,2,3");
  // All GPUs on one of one NUMA node: nothing to align either.
  LocalMachine one{"box", 8, int64_t{1} << 34, {Gpu(0, 0), Gpu(1, 0)}, {{0, 8, 0, {}}}};
  EXPECT_EQ(LocalNodeManifests(one).size(), 1u);
}

// A VM's GPU often has numa_node -1: on a one-node machine it is on that node; on two
// nodes it stays unknown (which socket is a guess).
TEST(LocalNodeManifestsTest, AGpuWithoutNumaOnAOneNodeMachineIsOnThatNode) {
  LocalMachine one{"vm", 16, int64_t{1} << 34, {Gpu(0, -1)}, {{0, 16, 0, {}}}};
  PlaceGpusOfOneNumaNode(one);
  EXPECT_EQ(one.gpus[0].numa_node, 0);
  EXPECT_EQ(DescribeLocalMachine(one),
            "vm: 16 cpu, 16Gi memory, 1 GPU (NVIDIA H100 80GB HBM3, NUMA 0)");
  EXPECT_EQ(LocalNodeManifests(one).size(), 1u) << "one zone: no topology";
  LocalMachine two = TwoSocketMachine();
  two.gpus[3].numa_node = -1;
  PlaceGpusOfOneNumaNode(two);
  EXPECT_EQ(two.gpus[3].numa_node, -1);
}

TEST(PhysicalGpuIdsTest, AnnotationElseCount) {
  json annotated = {{"metadata", {{"annotations", {{kGpuIdsAnnotation, " 3, 1 ,0,2"}}}}},
                    {"status", {{"allocatable", {{"nvidia.com/gpu", "4"}}}}}};
  EXPECT_EQ(PhysicalGpuIds(annotated), std::vector<std::string>({"3", "1", "0", "2"}));
  json counted = {{"metadata", {{"name", "n"}}},
                  {"status", {{"allocatable", {{"nvidia.com/gpu", "3"}}}}}};
  EXPECT_EQ(PhysicalGpuIds(counted), std::vector<std::string>({"0", "1", "2"}));
  json capacity_only = {{"status", {{"capacity", {{"nvidia.com/gpu", 2}}}}}};
  EXPECT_EQ(PhysicalGpuIds(capacity_only), std::vector<std::string>({"0", "1"}));
  EXPECT_TRUE(PhysicalGpuIds(json{{"metadata", {{"name", "cpu"}}}}).empty());
  EXPECT_TRUE(PhysicalGpuIds(json::array()).empty());
}

TEST(DescribeLocalMachineTest, Summary) {
  LocalMachine m{"vm", 16, int64_t{131981020} * 1024, {Gpu(0, -1)}, {}};
  EXPECT_EQ(DescribeLocalMachine(m),
            "vm: 16 cpu, 125Gi memory, 1 GPU (NVIDIA H100 80GB HBM3, NUMA unknown)");
  EXPECT_EQ(DescribeLocalMachine(TwoSocketMachine()),
            "dgx: 64 cpu, 512Gi memory, 4 GPUs (4x NVIDIA H100 80GB HBM3, NUMA 0,1)");
  EXPECT_EQ(DescribeLocalMachine(LocalMachine{"c", 2, int64_t{512} << 20, {}, {}}),
            "c: 2 cpu, 512Mi memory, no GPU");
}

TEST(CreateLocalNodeTest, CreatesThroughTheApi) {
  auto dir =
      std::filesystem::temp_directory_path() / ("muster-local-node-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    auto store = ObjectStore::Open(dir.string());
    ASSERT_TRUE(store.ok());
    ApiHandler handler(**store, "127.0.0.1:1");
    ASSERT_TRUE(CreateLocalNode(handler, LocalNodeManifests(TwoSocketMachine())).ok());
    auto node = (*store)->Get({"nodes", "", "dgx"});
    ASSERT_TRUE(node.ok());
    EXPECT_EQ(PhysicalGpuIds(*node), std::vector<std::string>({"2", "3", "0", "1"}));
    EXPECT_EQ((*node)["status"]["allocatable"]["nvidia.com/gpu"], "4");  // status kept on create
    EXPECT_TRUE((*store)->Get({"noderesourcetopologies.topology.node.k8s.io", "", "dgx"}).ok());
    // A second time the objects exist: the API refuses, and says so.
    Status again = CreateLocalNode(handler, LocalNodeManifests(TwoSocketMachine()));
    EXPECT_EQ(again.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(again.message().find("AlreadyExists"), std::string::npos) << again.message();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace muster::server
