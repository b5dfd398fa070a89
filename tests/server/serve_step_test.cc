// ServeStep against a real store whose batches fail on demand (StoreOptions::
// batch_fault), with a manual clock and a recording executor: a gang starts only once
// the store committed the Workload that records its admission. A failed batch starts
// nothing; the next stored step starts the gang exactly once; quota is charged once;
// a restart after the failure admits and starts the job once. No threads, no sleeps.
#include "server/serve_step.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "control/config_objects.h"
#include "control/store_snapshot.h"
#include "server/graceful_deletion.h"
#include "server/local_kubelet.h"
#include "server/process_test_util.h"
#include "server/store_sink.h"

namespace muster::server {
namespace {

using nlohmann::json;

class ManualClock : public Clock {
 public:
  Time Now() const override { return now_; }
  void Advance(Time seconds) { now_ += seconds; }

 private:
  Time now_ = 1'800'000'000;
};

// Runs nothing: records which gangs it was told to start, and when it launched them.
class RecordingExecutor : public ServeExecutor {
 public:
  struct Gang {
    size_t pods = 0;
    bool released = false;
    bool launched = false;
  };
  std::map<std::string, Gang> gangs;    // current gangs by key
  std::map<std::string, int> launches;  // launches by key, over all gangs
  std::map<std::string, int> started;   // Started calls by key
  std::function<void()> on_release;     // called at each Release (a test's fault)

  void SetEngine(const engine::Engine* /*engine*/) override {}
  void Started(const engine::WorkloadRecord& record, Time /*now*/) override {
    ++started[record.key()];
    gangs[record.key()] = Gang{record.plan.pods.size(), false, false};
  }
  void Stopped(const engine::WorkloadRecord& record, Time /*now*/,
               engine::StopCause /*cause*/) override {
    gangs.erase(record.key());
  }
  void AdoptRecovered(const engine::WorkloadRecord& record, Time /*now*/,
                      const std::map<std::string, RecoveredProcess>& /*recovered*/) override {
    gangs[record.key()] = Gang{record.plan.pods.size(), true, true};
  }
  bool Release(const std::string& key) override {
    if (on_release) on_release();
    auto it = gangs.find(key);
    if (it == gangs.end() || it->second.released) return false;
    it->second.released = true;
    return true;
  }
  void Run(Time /*now*/) override {
    for (auto& [key, gang] : gangs) {
      if (gang.launched || !gang.released) continue;
      gang.launched = true;
      ++launches[key];
      MarkChanged(key);
    }
  }
  std::vector<control::GangOutcome> Poll(Time /*now*/) override { return {}; }
  control::GangPodCounts Counts(const std::string& key) const override {
    control::GangPodCounts counts;
    auto it = gangs.find(key);
    if (it == gangs.end()) return counts;
    (it->second.launched ? counts.running : counts.waiting) = static_cast<int32_t>(it->second.pods);
    return counts;
  }
  bool PodsReady(const std::string& key) const override {
    auto it = gangs.find(key);
    return it != gangs.end() && it->second.launched;
  }
  int32_t RunningProcesses() const override { return 0; }
};

// A reconciler, its sink, executor and step over the fixture's store: what
// SchedulerController holds, without its thread.
struct Server {
  Server(ObjectStore& store, const Clock& clock, std::vector<std::string>& log,
         std::unique_ptr<ServeExecutor> executor)
      : store(store), sink(store), executor(std::move(executor)) {
    control::ReconcilerOptions options;
    options.mode = control::ReconcilerMode::kServe;
    reconciler = std::make_unique<control::Reconciler>(clock, sink, this->executor.get(), options);
    step = std::make_unique<ServeStep>(store, *reconciler, *this->executor, clock,
                                       [&log](const std::string& line) { log.push_back(line); });
    subscription = store.hub().Subscribe([this](const WatchHub::ChangePtr& change) {
      if (control::IsConfigResource(change->resource) || control::IsJobResource(change->resource) ||
          change->resource == "workloads.kueue.x-k8s.io")
        changes.push_back(change);
    });
    reconciler->Build(store);
    changes.clear();
  }
  ~Server() {
    store.hub().Unsubscribe(subscription);
    executor->Shutdown();
  }
  // The controller's loop, once: the changes so far, then a step.
  control::Reconciler::StepResult Step() {
    std::vector<WatchHub::ChangePtr> pending;
    pending.swap(changes);
    for (const auto& c : pending) reconciler->Apply(*c);
    return step->Run();
  }

  RecordingExecutor& recording() { return static_cast<RecordingExecutor&>(*executor); }

  ObjectStore& store;
  StoreSink sink;
  std::unique_ptr<ServeExecutor> executor;
  std::unique_ptr<control::Reconciler> reconciler;
  std::unique_ptr<ServeStep> step;
  std::vector<WatchHub::ChangePtr> changes;
  WatchHub::SubscriptionId subscription = 0;
};

class ServeStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-serve-step-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Open();
    CreateConfig();
  }
  void TearDown() override {
    if (processes_ != nullptr) {
      // Local processes outlive the executor: stopped here, then their files go.
      processes_->TerminateAll(0);
      processes_->WaitAll(30);
    }
    server_.reset();
    processes_.reset();
    store_.reset();
    testing_util::RemoveDataDir(dir_);
  }

  void Open() {
    StoreOptions options;
    options.batch_fault = [this]() -> Status {
      return broken_ ? Internal("disk I/O error (injected)") : Status::Ok();
    };
    auto s = ObjectStore::Open(dir_.string(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  // A server on the store (its reconciler built from it), as at start-up, with an
  // executor that records what it starts.
  void StartServer() {
    server_ =
        std::make_unique<Server>(*store_, clock_, log_, std::make_unique<RecordingExecutor>());
  }
  // The same with serve's local executor: pods are processes.
  LocalExecutor& StartLocalServer() {
    std::ostringstream kubelet_log;
    auto kubelet = MakeLocalKubelet(*store_, dir_.string(), KubeletOptions{}, kubelet_log);
    EXPECT_TRUE(kubelet.ok()) << kubelet.status().ToString();
    processes_ = std::move(kubelet->processes);
    LocalExecutor& local = *kubelet->executor;
    server_ = std::make_unique<Server>(*store_, clock_, log_, std::move(kubelet->executor));
    return local;
  }

  void Create(const std::string& resource, const std::string& ns, const json& object) {
    auto created =
        store_->Create({resource, ns, object["metadata"]["name"].get<std::string>()}, object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // One node of 4 GPUs and 64 CPUs, one ClusterQueue with all of it.
  void CreateConfig() {
    Create("nodes", "", control::testing::NodeObject("node-0", "64", "256Gi", "4"));
    Create("resourceflavors.kueue.x-k8s.io", "", control::testing::FlavorObject("gpu"));
    Create("clusterqueues.kueue.x-k8s.io", "",
           control::testing::ClusterQueueObject("cq", "gpu", 64, 4));
    Create("localqueues.kueue.x-k8s.io", "default",
           control::testing::LocalQueueObject("lq", "default", "cq"));
  }

  // An Indexed Job of `pods` pods, each with one CPU and `gpus` GPUs, running `command`.
  void CreateJob(const std::string& name, int pods, int gpus, const std::string& command = "true") {
    json requests = {{"cpu", "1"}};
    if (gpus > 0) requests["nvidia.com/gpu"] = std::to_string(gpus);
    json container = {{"name", "main"},
                      {"image", "busybox"},
                      {"command", {"sh", "-c", command}},
                      {"resources", {{"requests", requests}}}};
    Create(
        "jobs.batch", "default",
        {{"apiVersion", "batch/v1"},
         {"kind", "Job"},
         {"metadata",
          {{"name", name},
           {"namespace", "default"},
           {"labels", {{"kueue.x-k8s.io/queue-name", "lq"}}}}},
         {"spec",
          {{"parallelism", pods},
           {"completions", pods},
           {"completionMode", "Indexed"},
           {"template", {{"spec", {{"restartPolicy", "Never"}, {"containers", {container}}}}}}}}});
  }

  // A Pod bound to node-0 that no job owns and another scheduler placed.
  control::ObjectKey CreateStrayPod(const std::string& name) {
    Create("pods", "default",
           {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec",
             {{"nodeName", "node-0"},
              {"schedulerName", "elsewhere"},
              {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}});
    return {"pods", "default", name};
  }
  // `kubectl delete pod` as the API does it: marked with the pod's grace period,
  // still there.
  void DeleteGracefully(const control::ObjectKey& key) {
    auto marked = store_->Delete(key, std::nullopt, std::nullopt, [](const json& pod) {
      return PodDeletionGracePeriod(pod, std::nullopt);
    });
    ASSERT_TRUE(marked.ok()) << marked.status().ToString();
    ASSERT_TRUE(store_->Get(key).ok());
  }

  // The stored Workload of job `name` records an admission.
  bool StoredAdmission(const std::string& name) const {
    auto list = store_->List("workloads.kueue.x-k8s.io", "default");
    if (!list.ok()) return false;
    for (const json& w : list->items) {
      const json owners = w["metadata"].value("ownerReferences", json::array());
      if (owners.empty() || owners[0].value("name", "") != name) continue;
      return w.contains("status") && w["status"].contains("admission");
    }
    return false;
  }
  json ClusterQueueStatus() const {
    auto cq = store_->Get({"clusterqueues.kueue.x-k8s.io", "", "cq"});
    return cq.ok() ? cq->value("status", json::object()) : json::object();
  }
  // The ClusterQueue's stored usage of `resource` ("" when none is recorded).
  std::string StoredUsage(const std::string& resource) const {
    for (const json& f : ClusterQueueStatus().value("flavorsUsage", json::array())) {
      for (const json& r : f.value("resources", json::array())) {
        if (r.value("name", "") == resource) return r.value("total", "");
      }
    }
    return "";
  }
  int RunningInEngine() const {
    int n = 0;
    for (const auto& r : server_->reconciler->engine()->workloads()) {
      n += r.phase == engine::Phase::kRunning ? 1 : 0;
    }
    return n;
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  ManualClock clock_;
  std::vector<std::string> log_;
  std::unique_ptr<ProcessSupervisor> processes_;  // StartLocalServer's
  std::unique_ptr<Server> server_;
  bool broken_ = false;  // every commit fails, as on a full or failing disk
};

TEST_F(ServeStepTest, StoredStepStartsTheGangInTheSameStep) {
  StartServer();
  CreateJob("a", 2, 1);
  server_->Step();
  EXPECT_TRUE(StoredAdmission("a"));
  EXPECT_EQ(server_->recording().launches["default/a"], 1);
  EXPECT_EQ(server_->step->failed_steps(), 0);
  EXPECT_TRUE(log_.empty());
}

TEST_F(ServeStepTest, FailedBatchStartsNothingAndTheNextStepStartsTheGangOnce) {
  StartServer();
  CreateJob("a", 2, 1);
  broken_ = true;
  auto result = server_->Step();
  broken_ = false;
  // Admitted in the engine, told to the executor, but not stored: not started.
  EXPECT_TRUE(result.retry);
  EXPECT_EQ(RunningInEngine(), 1);
  EXPECT_EQ(server_->recording().started["default/a"], 1);
  EXPECT_EQ(server_->recording().launches["default/a"], 0);
  EXPECT_FALSE(StoredAdmission("a"));
  EXPECT_EQ(server_->step->failed_steps(), 1);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find("disk I/O error (injected)"), std::string::npos) << log_[0];
  EXPECT_FALSE(store_->write_health().writable);

  clock_.Advance(1);
  server_->Step();
  EXPECT_TRUE(StoredAdmission("a"));
  EXPECT_EQ(server_->recording().launches["default/a"], 1);
  EXPECT_EQ(server_->recording().started["default/a"], 1);  // the same admission, not a new one
  EXPECT_EQ(server_->step->failed_steps(), 0);
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[1], "store writes stored again after 1 failed step");
  EXPECT_TRUE(store_->write_health().writable);
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(1);
    server_->Step();
  }
  EXPECT_EQ(server_->recording().launches["default/a"], 1);
  // Quota charged once: the engine's one admission, and the stored queue status.
  EXPECT_EQ(RunningInEngine(), 1);
  EXPECT_EQ(ClusterQueueStatus().value("admittedWorkloads", -1), 1);
  EXPECT_EQ(StoredUsage("nvidia.com/gpu"), "2");
}

TEST_F(ServeStepTest, RepeatedFailuresLogOnceAndStartNothing) {
  StartServer();
  CreateJob("a", 1, 4);
  broken_ = true;
  for (int i = 0; i < 5; ++i) {
    server_->Step();
    clock_.Advance(1);
  }
  broken_ = false;
  EXPECT_EQ(server_->recording().launches["default/a"], 0);
  EXPECT_EQ(server_->step->failed_steps(), 5);
  EXPECT_EQ(log_.size(), 1u);
  EXPECT_EQ(RunningInEngine(), 1);
  server_->Step();
  EXPECT_EQ(server_->recording().launches["default/a"], 1);
  EXPECT_EQ(StoredUsage("nvidia.com/gpu"), "4");
}

TEST_F(ServeStepTest, OnlyTheGangsOfCommittedPartsStart) {
  StartServer();
  // More jobs than one transaction takes: the step writes them in parts, and the
  // store breaks once the first part committed (its gangs released).
  constexpr int kJobs = static_cast<int>(ServeStep::kJobsPerTransaction) + 8;
  for (int i = 0; i < kJobs; ++i) CreateJob("j" + std::to_string(i), 1, 0);
  server_->recording().on_release = [this] { broken_ = true; };
  server_->Step();
  server_->recording().on_release = nullptr;
  broken_ = false;
  ASSERT_EQ(RunningInEngine(), kJobs);
  int launched = 0;
  for (int i = 0; i < kJobs; ++i) {
    const std::string name = "j" + std::to_string(i);
    const int launches = server_->recording().launches["default/" + name];
    EXPECT_EQ(launches == 1, StoredAdmission(name)) << name;
    EXPECT_LE(launches, 1) << name;
    launched += launches;
  }
  EXPECT_GT(launched, 0);
  EXPECT_LT(launched, kJobs);
  clock_.Advance(1);
  server_->Step();
  for (int i = 0; i < kJobs; ++i) {
    const std::string name = "j" + std::to_string(i);
    EXPECT_EQ(server_->recording().launches["default/" + name], 1) << name;
    EXPECT_TRUE(StoredAdmission(name)) << name;
  }
  EXPECT_EQ(ClusterQueueStatus().value("admittedWorkloads", -1), kJobs);
}

TEST_F(ServeStepTest, RestartAfterAFailedBatchAdmitsAndStartsTheJobOnce) {
  StartServer();
  CreateJob("a", 2, 2);
  broken_ = true;
  server_->Step();
  broken_ = false;
  EXPECT_EQ(server_->recording().launches["default/a"], 0);
  // The server dies here: nothing of the admission is stored, nothing ran.
  server_.reset();
  StartServer();
  EXPECT_EQ(server_->recording().gangs.count("default/a"), 0u);  // nothing to adopt
  server_->Step();
  EXPECT_TRUE(StoredAdmission("a"));
  EXPECT_EQ(server_->recording().launches["default/a"], 1);
  EXPECT_EQ(RunningInEngine(), 1);
  EXPECT_EQ(StoredUsage("nvidia.com/gpu"), "4");
}

TEST_F(ServeStepTest, LocalExecutorForksNoProcessBeforeTheAdmissionIsStored) {
  LocalExecutor& local = StartLocalServer();
  CreateJob("a", 2, 1, "sleep 600");
  broken_ = true;
  server_->Step();
  broken_ = false;
  EXPECT_EQ(local.RunningProcesses(), 0);
  EXPECT_FALSE(StoredAdmission("a"));
  server_->Step();
  EXPECT_TRUE(StoredAdmission("a"));
  EXPECT_EQ(local.RunningProcesses(), 2);
  // Its pods' objects, which the broken store did not take at the start, are written.
  for (const char* pod : {"a-0", "a-1"}) {
    auto object = store_->Get({"pods", "default", pod});
    ASSERT_TRUE(object.ok()) << pod;
    EXPECT_FALSE(object->at("metadata").value("uid", "").empty()) << pod;
  }
  clock_.Advance(1);
  server_->Step();
  EXPECT_EQ(local.RunningProcesses(), 2);  // started once
}

TEST_F(ServeStepTest, LocalExecutorStopsAPodMarkedForDeletionThenDeletesIt) {
  LocalExecutor& local = StartLocalServer();
  CreateJob("a", 1, 0, "sleep 600");
  server_->Step();
  ASSERT_EQ(local.RunningProcesses(), 1);
  const control::ObjectKey key{"pods", "default", "a-0"};
  std::vector<json> written;  // the pod as each change left it
  bool deleted = false;
  auto subscription = store_->hub().Subscribe([&](const WatchHub::ChangePtr& c) {
    if (c->resource != "pods" || c->name != "a-0" || deleted) return;
    deleted = c->type == control::ChangeType::kDeleted;
    if (!deleted) written.push_back(c->Object());
  });
  // kubectl delete pod a-0: marked with its 30 s.
  ASSERT_NO_FATAL_FAILURE(DeleteGracefully(key));
  // The kubelet's pass sends SIGTERM; until a poll sees the process end the object
  // stays, Terminating.
  local.Run(clock_.Now());
  auto pod = store_->Get(key);
  ASSERT_TRUE(pod.ok()) << "Terminating while its process runs";
  EXPECT_TRUE(BeingDeleted(*pod));
  EXPECT_EQ(DeletionGracePeriod(*pod), 30);
  // Processes end in real time: steps until its end and delete, at most 20 s.
  for (int i = 0; i < 400 && !deleted; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    server_->Step();
  }
  store_->hub().Unsubscribe(subscription);
  EXPECT_TRUE(deleted) << "the kubelet deletes it once it ended";
  ASSERT_FALSE(written.empty());
  // Its end (SIGTERM, well within the period) was written before it went.
  const json& last = written.back()["status"];
  EXPECT_EQ(last.value("phase", ""), "Failed") << last.dump();
  EXPECT_NE(last.dump().find("killed by signal 15"), std::string::npos) << last.dump();
}

TEST_F(ServeStepTest, LocalExecutorDeletesAMarkedPodWithNoProcessAtOnce) {
  StartLocalServer();
  const control::ObjectKey key = CreateStrayPod("stray");
  ASSERT_NO_FATAL_FAILURE(DeleteGracefully(key));
  server_->Step();
  EXPECT_FALSE(store_->Get(key).ok()) << "nothing to stop: the kubelet deletes it";
}

TEST_F(ServeStepTest, APodMarkedBeforeAStartIsFinishedByTheNewExecutor) {
  // Marked while no server ran (or before a kill): no change will tell the executor.
  const control::ObjectKey key = CreateStrayPod("left");
  ASSERT_NO_FATAL_FAILURE(DeleteGracefully(key));
  StartLocalServer();
  server_->Step();
  EXPECT_FALSE(store_->Get(key).ok()) << "the start-up pass finds the mark";
}

}  // namespace
}  // namespace muster::server
