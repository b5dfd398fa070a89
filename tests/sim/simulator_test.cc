// End-to-end simulations from YAML manifests: event handling, restarts with
// checkpoints, --until, and byte-identical output.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "api/decode.h"
#include "sim/result_json.h"
#include "sim/result_table.h"

namespace muster::sim {
namespace {

constexpr const char* kTwoNodes = R"(
apiVersion: v1
kind: Node
metadata:
  name: gpu-1
  labels: {kubernetes.io/hostname: gpu-1}
  annotations:
    sim.muster.dev/fail-at: "250"
    sim.muster.dev/recover-at: "2000"
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-2
  labels: {kubernetes.io/hostname: gpu-2}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
)";

std::string Job(const std::string& name, const std::string& annotations, int gpus,
                int backoff_limit) {
  return R"(
---
apiVersion: batch/v1
kind: Job
metadata:
  name: )" +
         name + R"(
  annotations: {)" +
         annotations + R"(}
spec:
  backoffLimit: )" +
         std::to_string(backoff_limit) + R"(
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {kubernetes.io/hostname: gpu-1}
      containers:
      - name: c
        image: trainer
        resources:
          requests: {cpu: "1", nvidia.com/gpu: ")" +
         std::to_string(gpus) + R"("}
)";
}

model::ManifestSet Decode(const std::string& yaml) {
  api::DecodeResult out;
  api::DecodeText(yaml, "test.yaml", out);
  for (const auto& d : out.diagnostics) ADD_FAILURE() << d.ToString();
  return out.manifests;
}

SimulationResult RunSim(const model::ManifestSet& m, SimOptions options = {}) {
  options.check_invariants = true;
  auto result = Simulate(m, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : SimulationResult{};
}

const WorkloadResult& Find(const SimulationResult& r, const std::string& name) {
  for (const auto& w : r.workloads) {
    if (w.name == name) return w;
  }
  static WorkloadResult none;
  ADD_FAILURE() << name << " not in the result";
  return none;
}

TEST(SimulatorTest, NodeFailureRestartsFromTheLastCheckpoint) {
  // Pinned to gpu-1, which fails at 250 and recovers at 2000. The job checkpoints
  // every 100 s: 200 s of work survive, 50 s x 8 GPUs are lost, and the remaining
  // 800 s run from 2000.
  auto m = Decode(std::string(kTwoNodes) + Job("ckpt",
                                               R"("sim.muster.dev/duration": "1000s", )"
                                               R"("sim.muster.dev/checkpoint-interval": "100s")",
                                               8, 2));
  SimulationResult r = RunSim(m);
  const WorkloadResult& w = Find(r, "default/ckpt");
  EXPECT_EQ(w.phase, "Succeeded");
  ASSERT_EQ(w.evictions.size(), 1u);
  EXPECT_EQ(w.evictions[0].reason, "NodeFailure");
  EXPECT_DOUBLE_EQ(w.evictions[0].time, 250);
  EXPECT_EQ(w.start_time, 2000.0);
  EXPECT_EQ(w.finish_time, 2800.0);
  EXPECT_NEAR(w.gpu_hours_lost, 50.0 * 8 / 3600, 1e-9);
  EXPECT_DOUBLE_EQ(r.end_time, 2800);
}

TEST(SimulatorTest, NodeFailureFailsAJobWithoutRetries) {
  auto m =
      Decode(std::string(kTwoNodes) + Job("once", R"("sim.muster.dev/duration": "1000s")", 8, 0));
  SimulationResult r = RunSim(m);
  const WorkloadResult& w = Find(r, "default/once");
  EXPECT_EQ(w.phase, "Failed");
  EXPECT_EQ(w.finish_time, 250.0);
  ASSERT_TRUE(w.pending_reason.has_value());
  EXPECT_EQ(r.summary.failed, 1);
}

TEST(SimulatorTest, SpotReclaimCheckpointsAtTheNoticeAndMovesTheJob) {
  // At 0 only spot-1 is up (on-demand-1 is down until 50). spot-1 is reclaimed:
  // notice at 100 (the job checkpoints then), loss at 130. 100 s of work survive,
  // 30 s x 8 GPUs are lost, and the remaining 900 s run on on-demand-1 from 130.
  auto m = Decode(R"(
apiVersion: v1
kind: Node
metadata:
  name: spot-1
  annotations: {sim.muster.dev/reclaim-at: "100"}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: v1
kind: Node
metadata:
  name: on-demand-1
  annotations: {sim.muster.dev/fail-at: "0", sim.muster.dev/recover-at: "50"}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations:
    sim.muster.dev/duration: "1000s"
    sim.muster.dev/checkpoint-interval: "300s"
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: trainer
        resources:
          requests: {cpu: "1", nvidia.com/gpu: "8"}
)");
  SimulationResult r = RunSim(m);
  const WorkloadResult& w = Find(r, "default/train");
  EXPECT_EQ(w.phase, "Succeeded");
  ASSERT_EQ(w.evictions.size(), 1u);
  EXPECT_EQ(w.evictions[0].reason, "NodeFailure");
  EXPECT_DOUBLE_EQ(w.evictions[0].time, 130);
  EXPECT_EQ(w.start_time, 130.0);
  EXPECT_EQ(w.finish_time, 1030.0);
  ASSERT_EQ(w.pods.size(), 1u);
  EXPECT_EQ(w.pods[0].node, "on-demand-1");
  EXPECT_NEAR(w.gpu_hours_lost, 30.0 * 8 / 3600, 1e-9);
}

TEST(SimulatorTest, UntilStopsTheClock) {
  auto m =
      Decode(std::string(kTwoNodes) + Job("late", R"("sim.muster.dev/submit-at": "1h")", 1, 0));
  SimOptions options;
  options.until = 600;
  SimulationResult r = RunSim(m, options);
  EXPECT_DOUBLE_EQ(r.end_time, 600);
  const WorkloadResult& w = Find(r, "default/late");
  EXPECT_EQ(w.phase, "Pending");
  EXPECT_FALSE(w.submit_time.has_value());
  ASSERT_TRUE(w.pending_reason.has_value());
}

TEST(SimulatorTest, OutputIsByteIdenticalRunToRun) {
  std::filesystem::path cases = std::filesystem::path(MUSTER_SHARED_DIR) / "conformance/cases";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no conformance cases at " << cases;
  for (const auto& entry : std::filesystem::directory_iterator(cases)) {
    api::DecodeResult decoded = api::LoadPaths({(entry.path() / "input").string()});
    if (decoded.HasErrors()) continue;
    auto a = Simulate(decoded.manifests, {});
    auto b = Simulate(decoded.manifests, {});
    ASSERT_TRUE(a.ok() && b.ok()) << entry.path();
    EXPECT_EQ(ToJson(*a), ToJson(*b)) << entry.path();
    EXPECT_EQ(ToTable(*a), ToTable(*b)) << entry.path();
  }
}

TEST(ResultJsonTest, FollowsTheContractShape) {
  SimulationResult r;
  r.end_time = 100;
  WorkloadResult w;
  w.name = "ml/a";
  w.kind = "Job";
  w.phase = "Succeeded";
  w.submit_time = 0;
  w.finish_time = 0.1 + 0.2;  // printed rounded, not as 0.30000000000000004
  w.pods.push_back({"main", 0, "n1", {}, -1});
  w.evictions.push_back({50, "Preempted", "InClusterQueue", "ml/b"});
  r.workloads.push_back(w);
  std::string json = ToJson(r);
  EXPECT_NE(json.find(R"("apiVersion": "muster.dev/v1alpha1")"), std::string::npos);
  EXPECT_NE(json.find(R"("finishTime": 0.3)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("admitTime": null)"), std::string::npos);
  EXPECT_NE(json.find(R"("endTime": 100.0)"), std::string::npos);
  EXPECT_EQ(json.find("gpus"), std::string::npos) << "no gpus key when none are tracked";
  EXPECT_LT(json.find("\"apiVersion\""), json.find("\"kind\""));
}

}  // namespace
}  // namespace muster::sim
