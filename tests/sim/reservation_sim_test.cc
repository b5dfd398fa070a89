// Starvation end to end (issue 4, point 7): `muster simulate` of a 32-GPU gang on
// 4 x 8 GPUs while a stream of 1-GPU jobs keeps arriving and finishing. Without
// reservationAfter the gang never starts; with it the gang reserves the nodes,
// starts when the jobs there finish, and short jobs backfill meanwhile.
#include <gtest/gtest.h>

#include <string>

#include "api/decode.h"
#include "sim/result_json.h"
#include "sim/simulator.h"

namespace muster::sim {
namespace {

std::string JobYaml(const std::string& name, int pods, int gpus, int submit_at, int duration) {
  return R"(
---
apiVersion: batch/v1
kind: Job
metadata:
  name: )" +
         name + R"(
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: lq}
  annotations: {sim.muster.dev/submit-at: ")" +
         std::to_string(submit_at) + R"(", sim.muster.dev/duration: ")" + std::to_string(duration) +
         R"("}
spec:
  parallelism: )" +
         std::to_string(pods) + R"(
  completions: )" +
         std::to_string(pods) + R"(
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: trainer
        resources:
          requests: {cpu: "1", nvidia.com/gpu: ")" +
         std::to_string(gpus) + R"("}
)";
}

// 4 nodes x 8 GPUs and a queue whose quota never binds (nodes are what is short).
// small-<i>: 1 GPU for 100 s every 5 s from t=0 (about 20 running at any time);
// big: 4 x 8 GPUs at t=10; short-<j>: 1 GPU for 15 s at t=72 and t=77.
std::string Scenario(const std::string& reservation_after) {
  std::string yaml;
  for (int n = 1; n <= 4; ++n) {
    std::string node = "gpu-" + std::to_string(n);
    yaml += R"(
---
apiVersion: v1
kind: Node
metadata:
  name: )" + node +
            R"(
  labels: {kubernetes.io/hostname: )" +
            node + R"(}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
)";
  }
  yaml += R"(
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 1000}
      - {name: nvidia.com/gpu, nominalQuota: 1000}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: team}
---
apiVersion: muster.dev/v1alpha1
kind: SchedulerConfiguration
metadata: {name: default}
scoringPolicy: Binpack
)";
  if (!reservation_after.empty()) yaml += "reservationAfter: " + reservation_after + "\n";
  for (int i = 0; i < 200; ++i) yaml += JobYaml("small-" + std::to_string(i), 1, 1, 5 * i, 100);
  yaml += JobYaml("big", 4, 8, 10, 300);
  yaml += JobYaml("short-0", 1, 1, 72, 15);
  yaml += JobYaml("short-1", 1, 1, 77, 15);
  return yaml;
}

SimulationResult RunStarvation(const std::string& reservation_after) {
  api::DecodeResult decoded;
  api::DecodeText(Scenario(reservation_after), "starvation.yaml", decoded);
  for (const auto& d : decoded.diagnostics) ADD_FAILURE() << d.ToString();
  SimOptions options;
  options.check_invariants = true;
  options.until = 1000;
  auto result = Simulate(decoded.manifests, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : SimulationResult{};
}

const WorkloadResult& FindWorkload(const SimulationResult& r, const std::string& name) {
  for (const auto& w : r.workloads) {
    if (w.name == name) return w;
  }
  ADD_FAILURE() << "no workload " << name;
  static const WorkloadResult kNone;
  return kNone;
}

TEST(ReservationSimTest, WithoutReservationsTheGangStarves) {
  SimulationResult r = RunStarvation("");
  const WorkloadResult& big = FindWorkload(r, "default/big");
  EXPECT_EQ(big.phase, "Pending");
  EXPECT_FALSE(big.start_time.has_value());
  // Every small job that arrived started right away.
  EXPECT_EQ(FindWorkload(r, "default/small-100").start_time, 500.0);
}

TEST(ReservationSimTest, ReservationStartsTheGangAndShortJobsBackfill) {
  SimulationResult r = RunStarvation("60s");
  const WorkloadResult& big = FindWorkload(r, "default/big");
  // Starving from t=70; the small jobs running then end by t=165 (small-13,
  // submitted at 65), and nothing that ends later was placed on its nodes.
  ASSERT_TRUE(big.start_time.has_value()) << big.pending_reason.value_or("");
  EXPECT_EQ(*big.start_time, 165.0);
  EXPECT_EQ(big.finish_time, 465.0);
  // Before the reservation small jobs start on arrival; after it they wait.
  EXPECT_EQ(FindWorkload(r, "default/small-13").start_time, 65.0);
  EXPECT_EQ(FindWorkload(r, "default/small-14").start_time, 465.0);
  // Short jobs end before the gang's earliest start: they backfill at once.
  EXPECT_EQ(FindWorkload(r, "default/short-0").start_time, 72.0);
  EXPECT_EQ(FindWorkload(r, "default/short-1").start_time, 77.0);
  // After the gang the stream runs again.
  EXPECT_EQ(FindWorkload(r, "default/small-199").phase, "Running");
}

TEST(ReservationSimTest, SameInputSameResult) {
  EXPECT_EQ(ToJson(RunStarvation("60s")), ToJson(RunStarvation("60s")));
}

}  // namespace
}  // namespace muster::sim
