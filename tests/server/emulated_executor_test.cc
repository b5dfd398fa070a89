// The server path with `--executor emulated`: a real store and SchedulerController
// whose executor runs nothing. Pods are Running at once without processes, a gang
// succeeds after its sim.muster.dev/duration, preemption stops a gang at once
// (despite a long grace period), and a restarted controller finishes an adopted
// gang at its original start + duration.
#include "server/emulated_executor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "control/config_objects.h"
#include "server/scheduler_controller.h"

namespace muster::server {
namespace {

using nlohmann::json;

// Generous: these are functional deadlines on a loaded machine, not timings.
constexpr auto kEmulatedDeadline = std::chrono::seconds(30);

class EmulatedExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-emulated-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto s = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    CreateConfig();
  }
  void TearDown() override {
    StopController();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartController() {
    controller_ = std::make_unique<SchedulerController>(ExecutorKind::kEmulated);
    ServeContext context{*store_, dir_.string(), nullptr};
    Status started = controller_->Start(context);
    ASSERT_TRUE(started.ok()) << started.ToString();
  }
  void StopController() {
    if (controller_ != nullptr) controller_->Stop();
    controller_.reset();
  }

  void Create(const std::string& resource, const std::string& ns, const json& object) {
    auto created =
        store_->Create({resource, ns, object["metadata"]["name"].get<std::string>()}, object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // One 4-GPU node shared by team-a and team-b (2 GPUs nominal each, in one cohort:
  // a team may borrow the other's GPUs and the owner reclaims them by preemption).
  void CreateConfig() {
    Create("nodes", "", control::testing::NodeObject("node-0", "16", "64Gi", "4"));
    Create("resourceflavors.kueue.x-k8s.io", "", control::testing::FlavorObject("gpu"));
    for (const char* team : {"team-a", "team-b"}) {
      Create("clusterqueues.kueue.x-k8s.io", "",
             control::testing::ClusterQueueObject(team, "gpu", 8, 2, "lab",
                                                  {{"reclaimWithinCohort", "Any"}}));
      Create("localqueues.kueue.x-k8s.io", "default",
             control::testing::LocalQueueObject(team, "default", team));
    }
  }

  // An Indexed Job of `pods` pods with `gpus` GPUs each; its command would leave a
  // file behind if it ever ran. `duration` empty: no sim.muster.dev/duration.
  json GangJob(const std::string& name, const std::string& queue, int pods, int gpus,
               const std::string& duration) const {
    json container = {
        {"name", "main"},
        {"image", "busybox"},
        {"command", {"sh", "-c", "touch " + (dir_ / ("ran-" + name)).string()}},
        {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
    json metadata = {{"name", name},
                     {"namespace", "default"},
                     {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}};
    if (!duration.empty()) metadata["annotations"] = {{"sim.muster.dev/duration", duration}};
    return {{"apiVersion", "batch/v1"},
            {"kind", "Job"},
            {"metadata", metadata},
            {"spec",
             {{"parallelism", pods},
              {"completions", pods},
              {"completionMode", "Indexed"},
              {"template",
               {{"spec",
                 {{"restartPolicy", "Never"},
                  {"terminationGracePeriodSeconds", 600},
                  {"containers", {container}}}}}}}}};
  }

  // The pods of job `name`, by name.
  std::vector<json> PodsOf(const std::string& name) const {
    std::vector<json> pods;
    auto list = store_->List("pods", "default");
    if (!list.ok()) return pods;
    for (const auto& pod : list->items) {
      if (pod["metadata"]["labels"].value("job-name", "") == name) pods.push_back(pod);
    }
    return pods;
  }

  // Every pod of job `name` (expecting `count`) is in `phase`.
  // Workload default/`name` has condition Admitted=True.
  bool Admitted(const std::string& name) const {
    auto workload = store_->Get({"workloads.kueue.x-k8s.io", "default", name});
    if (!workload.ok()) return false;
    for (const auto& c : (*workload)["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "Admitted" && c.value("status", "") == "True") return true;
    }
    return false;
  }
  bool AllPodsIn(const std::string& name, size_t count, const std::string& phase) const {
    auto pods = PodsOf(name);
    if (pods.size() != count) return false;
    for (const auto& pod : pods) {
      if (pod["status"].value("phase", "") != phase) return false;
    }
    return true;
  }

  bool JobCondition(const std::string& name, const std::string& type) const {
    auto job = store_->Get({"jobs.batch", "default", name});
    if (!job.ok()) return false;
    for (const auto& c : job->value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == type && c.value("status", "") == "True") return true;
    }
    return false;
  }

  static bool WaitFor(const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + kEmulatedDeadline;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<SchedulerController> controller_;
};

TEST_F(EmulatedExecutorTest, GangRunsWithoutProcessesAndSucceedsAfterItsDuration) {
  StartController();
  Create("jobs.batch", "default", GangJob("train", "team-a", 2, 1, "1"));

  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("train", 2, "Running"); }))
      << PodsOf("train").size() << " pods";
  for (const auto& pod : PodsOf("train")) {
    EXPECT_EQ(pod["spec"].value("nodeName", ""), "node-0");
    EXPECT_TRUE(pod["status"].contains("startTime"));
  }

  ASSERT_TRUE(WaitFor([&] { return JobCondition("train", "Complete"); }));
  EXPECT_TRUE(AllPodsIn("train", 2, "Succeeded"));
  auto job = store_->Get({"jobs.batch", "default", "train"});
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["status"].value("succeeded", 0), 2);
  // Nothing ran: the container's command would have created this file.
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ran-train"));
}

TEST_F(EmulatedExecutorTest, PreemptionStopsTheVictimAtOnce) {
  StartController();
  // team-a borrows all 4 GPUs with a job that has no duration (runs until stopped)
  // and a 600 s grace period, which a local process would be given.
  Create("jobs.batch", "default", GangJob("borrower", "team-a", 2, 2, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("borrower", 2, "Running"); }));

  // team-b reclaims its nominal 2 GPUs: the borrower is evicted and, emulated,
  // stops at once, so the reclaimer runs long before any grace period would end.
  Create("jobs.batch", "default", GangJob("reclaimer", "team-b", 2, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("reclaimer", 2, "Running"); }))
      << PodsOf("reclaimer").size() << " pods";
  for (const auto& pod : PodsOf("borrower")) {
    EXPECT_NE(pod["status"].value("phase", ""), "Running") << pod["metadata"]["name"];
  }
  // The Workload object records why (written after the cycle that preempted it).
  EXPECT_TRUE(WaitFor([&] {
    auto workload = store_->Get({"workloads.kueue.x-k8s.io", "default", "job-borrower"});
    if (!workload.ok()) return false;
    for (const auto& c : (*workload)["status"].value("conditions", json::array())) {
      if (c.value("type", "") == "Evicted" && c.value("status", "") == "True") return true;
    }
    return false;
  }));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "ran-borrower"));
}

TEST_F(EmulatedExecutorTest, DeletingARunningJobRemovesItsPods) {
  StartController();
  Create("jobs.batch", "default", GangJob("doomed", "team-a", 2, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("doomed", 2, "Running"); }));
  ASSERT_TRUE(store_->Delete({"jobs.batch", "default", "doomed"}).ok());
  EXPECT_TRUE(WaitFor([&] { return PodsOf("doomed").empty(); })) << [&] {
    std::string out;
    for (const auto& p : PodsOf("doomed")) out += p.dump() + "\n";
    auto job = store_->Get({"jobs.batch", "default", "doomed"});
    out += "job: " + (job.ok() ? job->dump() : job.status().message());
    return out;
  }();
  EXPECT_TRUE(WaitFor([&] {
    return store_->Get({"workloads.kueue.x-k8s.io", "default", "job-doomed"}).status().code() ==
           StatusCode::kNotFound;
  }));
}

// Deleted with its dependents orphaned (the `orphan` finalizer the API puts on it for
// propagationPolicy Orphan): the pods run on, each a one-pod workload adopted where it
// runs, and the Job's Workload (its quota) goes; the GPUs they hold stay taken.
TEST_F(EmulatedExecutorTest, AJobDeletedOrphaningItsPodsLeavesThemRunning) {
  StartController();
  Create("jobs.batch", "default", GangJob("orph", "team-a", 2, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("orph", 2, "Running"); }));
  auto marked = store_->Mutate(
      {"jobs.batch", "default", "orph"},
      [](const json& current) -> Result<json> {
        json next = current;
        next["metadata"]["finalizers"] = {"orphan"};
        return next;
      },
      WriteScope::kAll);
  ASSERT_TRUE(marked.ok());
  ASSERT_TRUE(store_->Delete({"jobs.batch", "default", "orph"}).ok());
  EXPECT_TRUE(WaitFor([&] { return Admitted("pod-orph-0") && Admitted("pod-orph-1"); }));
  EXPECT_TRUE(WaitFor([&] {
    return store_->Get({"workloads.kueue.x-k8s.io", "default", "job-orph"}).status().code() ==
           StatusCode::kNotFound;
  }));
  EXPECT_TRUE(AllPodsIn("orph", 2, "Running"));
  // Two of the node's four GPUs are still theirs: a job that needs all four waits.
  Create("jobs.batch", "default", GangJob("whole", "team-b", 1, 4, ""));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(PodsOf("whole").empty() || !AllPodsIn("whole", 1, "Running"));
  // Deleting one orphan frees its GPU and stops it alone.
  ASSERT_TRUE(store_->Delete({"pods", "default", "orph-0"}).ok());
  EXPECT_TRUE(WaitFor([&] {
    return store_->Get({"workloads.kueue.x-k8s.io", "default", "pod-orph-0"}).status().code() ==
           StatusCode::kNotFound;
  }));
  EXPECT_TRUE(Admitted("pod-orph-1"));
}

// The garbage collector unowns the pods before the Job's deletion arrives: a step
// that sees the unowned pods alone must not take them in as new workloads (they
// would wait for ever behind their own running processes); the deletion's let-go
// adopts them where they run.
TEST_F(EmulatedExecutorTest, PodsUnownedBeforeTheOrphaningDeletionAreAdoptedWhereTheyRun) {
  StartController();
  Create("jobs.batch", "default", GangJob("orph", "team-a", 2, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("orph", 2, "Running"); }));
  auto mutate = [&](const control::ObjectKey& key, std::function<void(json&)> edit) {
    auto done = store_->Mutate(
        key,
        [&](const json& current) -> Result<json> {
          json next = current;
          edit(next);
          return next;
        },
        WriteScope::kAll);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  };
  mutate({"jobs.batch", "default", "orph"},
         [](json& job) { job["metadata"]["finalizers"] = {"orphan"}; });
  for (const char* pod : {"orph-0", "orph-1"}) {
    mutate({"pods", "default", pod}, [](json& p) { p["metadata"].erase("ownerReferences"); });
  }
  // Steps run on the pods' changes alone (the controller wakes on each change).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(store_->Get({"workloads.kueue.x-k8s.io", "default", "pod-orph-0"}).ok());
  ASSERT_TRUE(store_->Delete({"jobs.batch", "default", "orph"}).ok());
  EXPECT_TRUE(WaitFor([&] { return Admitted("pod-orph-0") && Admitted("pod-orph-1"); }));
  EXPECT_TRUE(WaitFor([&] { return AllPodsIn("orph", 2, "Running"); }));
}

TEST_F(EmulatedExecutorTest, AdoptedGangFinishesAtItsOriginalStartPlusDuration) {
  StartController();
  Create("jobs.batch", "default", GangJob("long", "team-a", 2, 1, "10m"));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("long", 2, "Running"); }));
  StopController();

  // As if the server had been down for an hour: the pods started long ago, so a
  // restarted server must finish the 10-minute gang at once, not 10 minutes later.
  for (auto pod : PodsOf("long")) {
    pod["status"]["startTime"] = "2020-01-01T00:00:00Z";
    pod["metadata"].erase("resourceVersion");
    auto updated = store_->Update({"pods", "default", pod["metadata"]["name"].get<std::string>()},
                                  pod, WriteScope::kAll);
    ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  }
  StartController();
  ASSERT_TRUE(WaitFor([&] { return JobCondition("long", "Complete"); }));
  EXPECT_TRUE(AllPodsIn("long", 2, "Succeeded"));
}

// Kueue writes the assigned flavor's nodeLabels and tolerations into the job's pod
// template when it admits the job; the pods muster runs carry them too (a pod on a
// spot node tolerates the spot taint).
TEST_F(EmulatedExecutorTest, PodsCarryTheirFlavorsNodeLabelsAndTolerations) {
  json node = control::testing::NodeObject("spot-0", "16", "64Gi", "4");
  node["metadata"]["labels"]["cloud.google.com/gke-provisioning"] = "spot";
  node["metadata"]["labels"]["team"] = "ml";
  node["spec"]["taints"] = {
      {{"key", "cloud.google.com/gke-spot"}, {"value", "true"}, {"effect", "NoSchedule"}}};
  Create("nodes", "", node);
  json flavor = control::testing::FlavorObject("spot");
  flavor["spec"] = {{"nodeLabels", {{"cloud.google.com/gke-provisioning", "spot"}}},
                    {"tolerations",
                     {{{"key", "cloud.google.com/gke-spot"},
                       {"operator", "Equal"},
                       {"value", "true"},
                       {"effect", "NoSchedule"}}}}};
  Create("resourceflavors.kueue.x-k8s.io", "", flavor);
  Create("clusterqueues.kueue.x-k8s.io", "",
         control::testing::ClusterQueueObject("team-s", "spot", 8, 4));
  Create("localqueues.kueue.x-k8s.io", "default",
         control::testing::LocalQueueObject("team-s", "default", "team-s"));
  StartController();
  json job = GangJob("spotty", "team-s", 2, 1, "");
  job["spec"]["template"]["spec"]["nodeSelector"] = {{"team", "ml"}};
  Create("jobs.batch", "default", job);

  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("spotty", 2, "Running"); }))
      << PodsOf("spotty").size() << " pods";
  for (const auto& pod : PodsOf("spotty")) {
    EXPECT_EQ(pod["spec"].value("nodeName", ""), "spot-0");
    EXPECT_EQ(pod["spec"]["nodeSelector"],
              json({{"cloud.google.com/gke-provisioning", "spot"}, {"team", "ml"}}));
    EXPECT_EQ(pod["spec"]["tolerations"], json::array({{{"key", "cloud.google.com/gke-spot"},
                                                        {"operator", "Equal"},
                                                        {"value", "true"},
                                                        {"effect", "NoSchedule"}}}))
        << pod["spec"].dump();
  }
  // The job's pods on the other flavor's node carry nothing of this one.
  Create("jobs.batch", "default", GangJob("plain", "team-a", 1, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("plain", 1, "Running"); }));
  const json plain = PodsOf("plain").front();
  EXPECT_EQ(plain["spec"].value("nodeName", ""), "node-0");
  EXPECT_FALSE(plain["spec"].contains("nodeSelector")) << plain["spec"].dump();
  EXPECT_FALSE(plain["spec"].contains("tolerations")) << plain["spec"].dump();
}

// A job's pods get what the Priority admission plugin writes into a pod its job's
// controller creates: the template's PriorityClass, else the global default, else 0.
TEST_F(EmulatedExecutorTest, PodsCarryThePriorityOfTheirClass) {
  Create("priorityclasses.scheduling.k8s.io", "",
         {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", "batch-high"}}},
          {"value", 500},
          {"preemptionPolicy", "Never"}});
  StartController();
  json job = GangJob("classy", "team-a", 1, 1, "");
  job["spec"]["template"]["spec"]["priorityClassName"] = "batch-high";
  Create("jobs.batch", "default", job);
  Create("jobs.batch", "default", GangJob("plain", "team-a", 1, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("classy", 1, "Running"); }));
  ASSERT_TRUE(WaitFor([&] { return AllPodsIn("plain", 1, "Running"); }));
  const json classy = PodsOf("classy").front()["spec"];
  EXPECT_EQ(classy["priorityClassName"], "batch-high");
  EXPECT_EQ(classy["priority"], 500);
  EXPECT_EQ(classy["preemptionPolicy"], "Never");
  const json plain = PodsOf("plain").front()["spec"];
  EXPECT_EQ(plain["priority"], 0);
  EXPECT_EQ(plain["preemptionPolicy"], "PreemptLowerPriority");
  EXPECT_FALSE(plain.contains("priorityClassName")) << plain.dump();
}

}  // namespace
}  // namespace muster::server
