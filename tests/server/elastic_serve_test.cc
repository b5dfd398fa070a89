// Elastic gangs in `muster serve`, end to end through a real store and the
// SchedulerController, with either executor (emulated pods, and local processes):
// the issue's example. Two nodes of 4 GPUs, a ClusterQueue of 8 GPUs; a blocker holds
// 4 GPUs for a few seconds; a PyTorchJob with elasticPolicy minReplicas 2 and 8
// one-GPU workers is admitted at once with 4 running pods and grows to 8 when the
// blocker ends. A higher-priority job then needs one whole node: the elastic job
// shrinks to 4 workers (its pods 4-7 stop and their Pod objects go) instead of being
// evicted, a restarted controller adopts it at 4, and it grows back to 8 once the
// preemptor ends. Events record each resize.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "control/resource_types.h"
#include "server/process_test_util.h"
#include "server/scheduler_controller.h"
#include "server/yaml_json.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr auto kDeadline = std::chrono::seconds(60);

constexpr char kConfig[] = R"(
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "4", pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-2}
status:
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "4", pods: "110"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: training}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: 128}
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: training, namespace: ml}
spec: {clusterQueue: training}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
)";

// A one-pod batch Job of `gpus` GPUs that runs `seconds` (emulated: its duration;
// local: sleep).
json OnePodJob(const std::string& name, int gpus, int seconds, const std::string& priority) {
  json spec = {{"restartPolicy", "Never"},
               {"terminationGracePeriodSeconds", 1},
               {"containers",
                {{{"name", "c"},
                  {"image", "busybox"},
                  {"command", {"sleep", std::to_string(seconds)}},
                  {"resources",
                   {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}};
  if (!priority.empty()) spec["priorityClassName"] = priority;
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "training"}}},
            {"annotations", {{"sim.muster.dev/duration", std::to_string(seconds) + "s"}}}}},
          {"spec", {{"template", {{"spec", spec}}}}}};
}

// The issue's elastic PyTorchJob: 8 one-GPU workers, minReplicas 2; runs until
// deleted.
json ElasticJob() {
  json container = {{"name", "pytorch"},
                    {"image", "trainer:latest"},
                    {"command", {"sleep", "600"}},
                    {"resources", {{"requests", {{"cpu", "4"}, {"nvidia.com/gpu", "1"}}}}}};
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", "elastic"},
            {"namespace", "ml"},
            {"labels", {{"kueue.x-k8s.io/queue-name", "training"}}}}},
          {"spec",
           {{"elasticPolicy",
             {{"rdzvBackend", "c10d"}, {"minReplicas", 2}, {"maxReplicas", 8}, {"maxRestarts", 3}}},
            {"pytorchReplicaSpecs",
             {{"Worker",
               {{"replicas", 8},
                {"restartPolicy", "OnFailure"},
                {"template",
                 {{"spec",
                   {{"terminationGracePeriodSeconds", 1}, {"containers", {container}}}}}}}}}}}}};
}

class ElasticServeTest : public ::testing::TestWithParam<ExecutorKind> {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) c = c == '/' ? '-' : c;
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-elastic-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(dir_);
    auto s = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    auto docs = ParseDocuments(kConfig);
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    for (const json& doc : *docs) Create(doc);
  }
  void TearDown() override {
    // Local processes outlive a stopped controller: the jobs go first.
    if (controller_ != nullptr) {
      for (const char* job :
           {"pytorchjobs.kubeflow.org/elastic", "jobs.batch/blocker", "jobs.batch/urgent"}) {
        std::string key = job;
        auto slash = key.find('/');
        store_->Delete({key.substr(0, slash), "ml", key.substr(slash + 1)});
      }
      EXPECT_TRUE(WaitFor([&] { return RunningPods("").empty(); }));
    }
    StopController();
    store_.reset();
    testing_util::RemoveDataDir(dir_);
  }

  void StartController() {
    controller_ = std::make_unique<SchedulerController>(GetParam());
    ServeContext context{*store_, dir_.string(), nullptr};
    Status started = controller_->Start(context);
    ASSERT_TRUE(started.ok()) << started.ToString();
  }
  void StopController() {
    if (controller_ != nullptr) controller_->Stop();
    controller_.reset();
  }

  void Create(const json& object) {
    const auto* type =
        control::FindByKind(object.value("apiVersion", ""), object.value("kind", ""));
    ASSERT_NE(type, nullptr) << object.dump();
    const json& meta = object["metadata"];
    auto created = store_->Create(
        {type->StoreKey(), meta.value("namespace", ""), meta.value("name", "")}, object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // Names of the Running pods whose name starts with `prefix`.
  std::vector<std::string> RunningPods(const std::string& prefix) const {
    std::vector<std::string> out;
    auto list = store_->List("pods", "ml");
    if (!list.ok()) return out;
    for (const auto& pod : list->items) {
      std::string name = pod["metadata"].value("name", "");
      if (name.rfind(prefix, 0) == 0 && pod["status"].value("phase", "") == "Running")
        out.push_back(name);
    }
    return out;
  }
  size_t PodObjects(const std::string& prefix) const {
    size_t n = 0;
    auto list = store_->List("pods", "ml");
    if (!list.ok()) return 0;
    for (const auto& pod : list->items)
      n += pod["metadata"].value("name", "").rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }
  // The admitted worker count the Workload of the elastic job records.
  int AdmittedWorkers() const {
    auto w = store_->Get({"workloads.kueue.x-k8s.io", "ml", "pytorchjob-elastic"});
    if (!w.ok()) return -1;
    const json status = w->value("status", json::object());
    for (const auto& psa :
         status.value("admission", json::object()).value("podSetAssignments", json::array()))
      return psa.value("count", -1);
    return -1;
  }
  bool HasEvent(const std::string& reason, const std::string& text) const {
    auto list = store_->List("events", "ml");
    if (!list.ok()) return false;
    for (const auto& e : list->items) {
      if (e.value("reason", "") == reason &&
          e.value("message", "").find(text) != std::string::npos &&
          e["involvedObject"].value("name", "") == "elastic")
        return true;
    }
    return false;
  }
  // Starts of pod `name` before its current one (restartCount): a gang restarted
  // after a failure starts every pod again.
  int Restarts(const std::string& name) const {
    auto pod = store_->Get({"pods", "ml", name});
    if (!pod.ok()) return -1;
    for (const auto& c :
         pod->value("status", json::object()).value("containerStatuses", json::array()))
      return c.value("restartCount", -1);
    return -1;
  }
  bool WorkloadEvicted() const {
    auto w = store_->Get({"workloads.kueue.x-k8s.io", "ml", "pytorchjob-elastic"});
    if (!w.ok()) return false;
    for (const auto& c : w->value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "Evicted" && c.value("status", "") == "True") return true;
    }
    return false;
  }
  std::string Describe() const {
    std::string out = "running:";
    for (const auto& p : RunningPods("")) out += " " + p;
    out += "; admitted workers " + std::to_string(AdmittedWorkers());
    return out;
  }

  static bool WaitFor(const std::function<bool()>& done) {
    return testing_util::WaitFor(done, kDeadline);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<SchedulerController> controller_;
};

TEST_P(ElasticServeTest, GrowsIntoFreedGpusAndShrinksForAPreemptor) {
  StartController();
  Create(OnePodJob("blocker", 4, 4, ""));
  ASSERT_TRUE(WaitFor([&] { return RunningPods("blocker").size() == 1; })) << Describe();

  // 4 GPUs free: admitted at once with 4 workers, not held back for 8.
  Create(ElasticJob());
  ASSERT_TRUE(WaitFor([&] { return RunningPods("elastic-worker-").size() == 4; })) << Describe();
  EXPECT_EQ(RunningPods("blocker").size(), 1u) << "the blocker still runs";
  EXPECT_EQ(PodObjects("elastic-worker-"), 4u);
  EXPECT_TRUE(WaitFor([&] { return AdmittedWorkers() == 4; })) << Describe();

  // The blocker ends: the same gang grows to 8 (workers 4-7 added; 0-3 keep running).
  ASSERT_TRUE(WaitFor([&] { return RunningPods("elastic-worker-").size() == 8; })) << Describe();
  EXPECT_TRUE(WaitFor([&] { return AdmittedWorkers() == 8; })) << Describe();
  EXPECT_TRUE(WaitFor([&] { return HasEvent("Resized", "4 -> 8 pods"); }));

  // A higher-priority job needs a whole node: the elastic job gives up workers 4-7.
  Create(OnePodJob("urgent", 4, 4, "urgent"));
  ASSERT_TRUE(WaitFor([&] { return RunningPods("urgent").size() == 1; })) << Describe();
  ASSERT_TRUE(WaitFor([&] { return PodObjects("elastic-worker-") == 4; })) << Describe();
  std::vector<std::string> kept = RunningPods("elastic-worker-");
  EXPECT_EQ(kept, (std::vector<std::string>{"elastic-worker-0", "elastic-worker-1",
                                            "elastic-worker-2", "elastic-worker-3"}));
  EXPECT_FALSE(WorkloadEvicted());
  EXPECT_TRUE(WaitFor([&] { return AdmittedWorkers() == 4; })) << Describe();
  // The stopped workers' exits (SIGTERM) did not fail the job: the kept workers run
  // on, never restarted.
  for (const auto& pod : kept) EXPECT_EQ(Restarts(pod), 0) << pod;
  EXPECT_TRUE(WaitFor([&] { return HasEvent("Shrunk", "8 -> 4 pods"); }));
  EXPECT_TRUE(HasEvent("Shrunk", "ml/urgent"));

  // A restarted server adopts the gang at its current size (4), not its first or its
  // largest, and keeps its running pods. A Pod object of a worker the gang no longer
  // runs (as if the previous server stopped in the middle of a shrink) is dropped.
  StopController();
  auto stray = store_->Get({"pods", "ml", "elastic-worker-0"});
  ASSERT_TRUE(stray.ok());
  (*stray)["metadata"]["name"] = "elastic-worker-6";
  for (const char* server_set : {"uid", "resourceVersion", "creationTimestamp"})
    (*stray)["metadata"].erase(server_set);
  ASSERT_TRUE(store_->Create({"pods", "ml", "elastic-worker-6"}, *stray).ok());
  StartController();
  EXPECT_EQ(RunningPods("elastic-worker-").size(), 4u) << Describe();
  EXPECT_EQ(PodObjects("elastic-worker-"), 4u) << Describe();

  // The preemptor ends: the elastic job grows back to 8.
  ASSERT_TRUE(WaitFor([&] { return RunningPods("elastic-worker-").size() == 8; })) << Describe();
  EXPECT_FALSE(WorkloadEvicted());
  EXPECT_TRUE(WaitFor([&] { return AdmittedWorkers() == 8; })) << Describe();
  EXPECT_EQ(Restarts("elastic-worker-0"), 0);
  // Workers 4-7 are new pods (their objects were deleted), not restarts.
  EXPECT_EQ(Restarts("elastic-worker-7"), 0);
}

INSTANTIATE_TEST_SUITE_P(Executors, ElasticServeTest,
                         ::testing::Values(ExecutorKind::kEmulated, ExecutorKind::kLocal),
                         [](const ::testing::TestParamInfo<ExecutorKind>& info) {
                           return info.param == ExecutorKind::kEmulated ? "Emulated" : "Local";
                         });

}  // namespace
}  // namespace muster::server
