// JobSet policies in `muster serve` with local processes, end to end through a real
// store and the SchedulerController: startupPolicy InOrder and dependsOn hold a
// replicated job's pods Pending until the one before is Ready / Complete,
// successPolicy Any completes the JobSet (stopping its other pods) when one target
// Job succeeds, and failurePolicy.rules fail or restart it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "control/resource_types.h"
#include "server/process_test_util.h"
#include "server/scheduler_controller.h"
#include "server/yaml_json.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr auto kJobSetDeadline = std::chrono::seconds(60);

constexpr char kQueues[] = R"(
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: ml}
spec: {clusterQueue: cq}
)";

// A one-container pod template spec running `command` in sh.
std::string PodSpec(const std::string& command) {
  return "{terminationGracePeriodSeconds: 1, containers: [{name: c, image: busybox, command: "
         "[sh, -c, '" +
         command + "'], resources: {requests: {cpu: 100m}}}]}";
}

std::string ReplicatedJob(const std::string& name, const std::string& command,
                          const std::string& extra = "") {
  return "  - name: " + name + "\n" + extra +
         "    template: {spec: {parallelism: 2, template: {spec: " + PodSpec(command) + "}}}\n";
}

class JobSetServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-jobset-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(dir_);
    auto s = ObjectStore::Open(dir_.string());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    Apply(kQueues);
    controller_ = std::make_unique<SchedulerController>(ExecutorKind::kLocal);
    ServeContext context{*store_, dir_.string(), nullptr};
    Status started = controller_->Start(context);
    ASSERT_TRUE(started.ok()) << started.ToString();
  }
  void TearDown() override {
    // Local processes outlive a stopped controller: the jobs go first.
    store_->Delete({"jobsets.jobset.x-k8s.io", "ml", "js"});
    EXPECT_TRUE(WaitFor([&] { return Phases("js-").find("Running") == std::string::npos; }));
    controller_->Stop();
    controller_.reset();
    store_.reset();
    testing_util::RemoveDataDir(dir_);
  }

  void Apply(const std::string& yaml) {
    auto docs = ParseDocuments(yaml);
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    for (const json& object : *docs) {
      const auto* type =
          control::FindByKind(object.value("apiVersion", ""), object.value("kind", ""));
      ASSERT_NE(type, nullptr) << object.dump();
      const json& meta = object["metadata"];
      auto created = store_->Create(
          {type->StoreKey(), meta.value("namespace", ""), meta.value("name", "")}, object);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
    }
  }
  void ApplyJobSet(const std::string& spec) {
    Apply(
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: js\n  namespace: "
        "ml\n  labels: {kueue.x-k8s.io/queue-name: lq}\nspec:\n" +
        spec);
  }

  json Pod(const std::string& name) const {
    auto pod = store_->Get({"pods", "ml", name});
    return pod.ok() ? *pod : json::object();
  }
  std::string Phase(const std::string& name) const {
    return Pod(name).value("status", json::object()).value("phase", "");
  }
  // "name=phase " for each pod whose name starts with `prefix`.
  std::string Phases(const std::string& prefix) const {
    std::string out;
    auto list = store_->List("pods", "ml");
    if (!list.ok()) return out;
    for (const auto& pod : list->items) {
      std::string name = pod["metadata"].value("name", "");
      if (name.rfind(prefix, 0) != 0) continue;
      out += name + "=" + pod["status"].value("phase", "") + " ";
    }
    return out;
  }
  std::string WaitingMessage(const std::string& name) const {
    json status = Pod(name).value("status", json::object());
    for (const auto& c : status.value("containerStatuses", json::array())) {
      return c.value("state", json::object()).value("waiting", json::object()).value("message", "");
    }
    return "";
  }
  json JobSetStatus() const {
    auto js = store_->Get({"jobsets.jobset.x-k8s.io", "ml", "js"});
    return js.ok() ? js->value("status", json::object()) : json::object();
  }
  // "status reason" of condition `type` of the JobSet; empty when absent.
  std::string Condition(const std::string& type) const {
    for (const auto& c : JobSetStatus().value("conditions", json::array())) {
      if (c.value("type", "") == type) return c.value("status", "") + " " + c.value("reason", "");
    }
    return "";
  }

  static bool WaitFor(const std::function<bool()>& done) {
    return testing_util::WaitFor(done, kJobSetDeadline);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<SchedulerController> controller_;
};

TEST_F(JobSetServeTest, InOrderStartAndSuccessPolicyAnyStopsTheRest) {
  ApplyJobSet(
      "  startupPolicy: {startupPolicyOrder: InOrder}\n"
      "  successPolicy: {operator: Any, targetReplicatedJobs: [workers]}\n"
      "  replicatedJobs:\n" +
      ReplicatedJob("leader", "sleep 600") + ReplicatedJob("workers", "sleep 1"));
  // Watched all along: no worker runs while the leader has not started.
  std::string violation;
  ASSERT_TRUE(WaitFor([&] {
    const std::string leader = Phase("js-leader-0-0");
    const std::string worker = Phase("js-workers-0-0");
    if ((leader.empty() || leader == "Pending") && (worker == "Running" || worker == "Succeeded")) {
      violation = Phases("js-");
    }
    return Condition("Completed") == "True AllJobsCompleted";
  })) << Phases("js-")
      << JobSetStatus().dump();
  EXPECT_EQ(violation, "");
  EXPECT_EQ(Condition("StartupPolicyCompleted"), "True InOrderStartupPolicyCompleted");
  EXPECT_EQ(Condition("StartupPolicyInProgress"), "");  // replaced, as upstream
  EXPECT_EQ(Phase("js-workers-0-0"), "Succeeded");
  EXPECT_EQ(Phase("js-workers-0-1"), "Succeeded");
  // The leader is stopped once the JobSet completed, long before its sleep ends.
  EXPECT_TRUE(WaitFor([&] { return Phase("js-leader-0-0") != "Running"; })) << Phases("js-");
  const std::string leader = Pod("js-leader-0-0")["status"].value("startTime", "");
  for (const char* w : {"js-workers-0-0", "js-workers-0-1"}) {
    EXPECT_GE(Pod(w)["status"].value("startTime", ""), leader) << w;
  }
}

TEST_F(JobSetServeTest, DependsOnCompleteHoldsPodsPending) {
  ApplyJobSet(
      "  replicatedJobs:\n" + ReplicatedJob("prep", "sleep 2") +
      ReplicatedJob("main", "echo main", "    dependsOn: [{name: prep, status: Complete}]\n"));
  ASSERT_TRUE(WaitFor([&] { return Phase("js-prep-0-1") == "Running"; })) << Phases("js-");
  EXPECT_EQ(Phase("js-main-0-0"), "Pending");
  EXPECT_EQ(WaitingMessage("js-main-0-0"),
            "waiting for replicated job prep to be Complete (dependsOn)");
  ASSERT_TRUE(WaitFor([&] { return Condition("Completed") == "True AllJobsCompleted"; }))
      << Phases("js-");
  EXPECT_EQ(Phase("js-main-0-0"), "Succeeded");
  EXPECT_EQ(Condition("StartupPolicyCompleted"), "");  // only for startupPolicy InOrder
}

TEST_F(JobSetServeTest, FailJobSetRuleFailsDespiteRestartsLeft) {
  ApplyJobSet(
      "  failurePolicy:\n"
      "    maxRestarts: 3\n"
      "    rules: [{name: fatal, action: FailJobSet, targetReplicatedJobs: [bad]}]\n"
      "  replicatedJobs:\n" +
      ReplicatedJob("good", "sleep 600") + ReplicatedJob("bad", "exit 3"));
  ASSERT_TRUE(WaitFor([&] { return !Condition("Failed").empty(); })) << Phases("js-");
  EXPECT_EQ(Condition("Failed"), "True FailJobSetFailurePolicyAction");
  EXPECT_EQ(JobSetStatus().value("restarts", -1), 0);
}

TEST_F(JobSetServeTest, RestartIgnoringMaxRestartsKeepsTheBudget) {
  // maxRestarts 0 would fail the JobSet at its first failure without the rule.
  ApplyJobSet(
      "  failurePolicy:\n"
      "    rules: [{action: RestartJobSetAndIgnoreMaxRestarts, onJobFailureReasons: "
      "[BackoffLimitExceeded]}]\n"
      "  replicatedJobs:\n" +
      ReplicatedJob("w", "exit 1"));
  ASSERT_TRUE(WaitFor([&] { return JobSetStatus().value("restarts", 0) >= 2; }))
      << Phases("js-") << JobSetStatus().dump();
  EXPECT_EQ(JobSetStatus().value("restartsCountTowardsMax", -1), 0);
  EXPECT_EQ(Condition("Failed"), "");
}

}  // namespace
}  // namespace muster::server
