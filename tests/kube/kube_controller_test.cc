// KubeController end to end against the fake API server: muster kube admits a queued
// job by writing its Workload and unsuspending it with the flavor injected, binds the
// gang only once every pod exists, preempts by suspending, restores the templates, and
// re-admits after the preemptor finishes. The test plays the Job controller (it makes
// and deletes the pods) and the kubelet (pod phases).
#include "kube/kube_controller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "api/decode.h"
#include "kube/fake_api_server.h"
#include "kube/reflector.h"
#include "kube/wait_for.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

json Cluster() {
  return json::parse(R"([
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "labels": {"pool": "a100"}},
     "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4", "pods": "110"}}},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-2", "labels": {"pool": "a100"}},
     "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "4", "pods": "110"}}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"},
     "value": 1000},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "a100"},
     "spec": {"nodeLabels": {"pool": "a100"}}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "research"},
     "spec": {"namespaceSelector": {}, "preemption": {"withinClusterQueue": "LowerPriority"},
              "resourceGroups": [{"coveredResources": ["cpu", "nvidia.com/gpu"], "flavors": [
                {"name": "a100", "resources": [{"name": "cpu", "nominalQuota": 64},
                                               {"name": "nvidia.com/gpu", "nominalQuota": 8}]}]}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
     "metadata": {"name": "research", "namespace": "default"}, "spec": {"clusterQueue": "research"}}
  ])");
}

json IndexedJob(const std::string& name, int pods, int gpus, const std::string& priority_class) {
  json job = json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "research"}},
    "spec": {"suspend": true, "completionMode": "Indexed",
             "template": {"spec": {"schedulerName": "muster", "restartPolicy": "Never",
                                   "containers": [{"name": "train", "image": "trainer"}]}}}})");
  job["metadata"]["name"] = name;
  job["spec"]["parallelism"] = pods;
  job["spec"]["completions"] = pods;
  job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] = {
      {"cpu", "1"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  if (!priority_class.empty())
    job["spec"]["template"]["spec"]["priorityClassName"] = priority_class;
  return job;
}

// What the Job controller makes once the job is unsuspended: one pod per index.
json PodOf(const json& job, int index) {
  std::string name = job["metadata"]["name"].get<std::string>();
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {
      {"name", name + "-" + std::to_string(index) + "-x"},
      {"namespace", "default"},
      {"labels", {{"batch.kubernetes.io/job-name", name}}},
      {"annotations", {{"batch.kubernetes.io/job-completion-index", std::to_string(index)}}},
      {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                        {"kind", "Job"},
                                        {"name", name},
                                        {"uid", job["metadata"]["uid"]},
                                        {"controller", true}}})}};
  pod["spec"] = job["spec"]["template"]["spec"];
  pod["status"] = {{"phase", "Pending"}};
  return pod;
}

class KubeControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& o : Cluster()) fake_.Create(o);
    client_ = std::make_unique<KubeClient>(fake_.connection());
    KubeOptions options;
    options.resync_seconds = 0.2;
    for (const control::ResourceType* t : WatchedResources()) {
      options.watched.push_back(t->StoreKey());
      reflectors_.push_back(std::make_unique<Reflector>(*client_, *t, cache_, ReflectorOptions{}));
    }
    controller_ = std::make_unique<KubeController>(*client_, cache_, options);
    controller_->Start();
    for (auto& r : reflectors_) r->Start();
  }
  void TearDown() override {
    controller_->Stop();
    for (auto& r : reflectors_) r->Stop();
  }

  json Get(const std::string& resource, const std::string& name,
           const std::string& ns = "default") {
    auto o = fake_.store().Get({resource, ns, name});
    return o.ok() ? *o : json();
  }
  json Job(const std::string& name) { return Get("jobs.batch", name); }
  json Workload(const std::string& job) { return Get("workloads.kueue.x-k8s.io", "job-" + job); }
  static std::string Condition(const json& object, const std::string& type) {
    if (!object.is_object()) return "";
    for (const auto& c :
         object.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == type) return c.value("status", "");
    }
    return "";
  }
  std::string NodeOf(const std::string& pod) {
    return Get("pods", pod).value("spec", json::object()).value("nodeName", "");
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    json p = Get("pods", pod);
    p["status"]["phase"] = phase;
    p["metadata"].erase("resourceVersion");
    ASSERT_TRUE(
        fake_.store().Update({"pods", "default", pod}, p, server::WriteScope::kStatus).ok());
  }
  void Finish(const std::string& job) {
    json j = Job(job);
    j["metadata"].erase("resourceVersion");
    j["status"]["conditions"] = json::array({{{"type", "Complete"}, {"status", "True"}}});
    ASSERT_TRUE(
        fake_.store().Update({"jobs.batch", "default", job}, j, server::WriteScope::kStatus).ok());
  }
  int64_t Cycles() { return controller_->stats().cycles; }

  FakeApiServer fake_;
  std::unique_ptr<KubeClient> client_;
  ObjectCache cache_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::unique_ptr<KubeController> controller_;
};

TEST_F(KubeControllerTest, AdmitsThroughSuspendAndBindsTheWholeGang) {
  json job = fake_.Create(IndexedJob("train", 2, 4, ""));
  ASSERT_TRUE(WaitFor([&] { return Condition(Workload("train"), "Admitted") == "True"; }))
      << Workload("train").dump(2);
  ASSERT_TRUE(WaitFor([&] { return !Job("train")["spec"].value("suspend", true); }));
  json admitted = Job("train");
  EXPECT_EQ(admitted["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a100");
  json wl = Workload("train");
  EXPECT_EQ(wl["status"]["admission"]["clusterQueue"], "research");
  EXPECT_EQ(wl["status"]["admission"]["podSetAssignments"][0]["flavors"]["nvidia.com/gpu"], "a100");
  json placement =
      json::parse(wl["metadata"]["annotations"]["muster.dev/placement"].get<std::string>());
  ASSERT_EQ(placement.size(), 2u);

  // One pod of two: nothing is bound (never a partial gang).
  fake_.Create(PodOf(admitted, 0));
  int64_t seen = Cycles();
  ASSERT_TRUE(WaitFor([&] { return Cycles() >= seen + 3; }));
  EXPECT_EQ(NodeOf("train-0-x"), "");

  fake_.Create(PodOf(admitted, 1));
  ASSERT_TRUE(
      WaitFor([&] { return !NodeOf("train-0-x").empty() && !NodeOf("train-1-x").empty(); }));
  EXPECT_EQ(NodeOf("train-0-x"), placement[0]["node"]);
  EXPECT_EQ(NodeOf("train-1-x"), placement[1]["node"]);
  EXPECT_NE(NodeOf("train-0-x"), NodeOf("train-1-x"));  // 4 GPUs each, 4 per node
  // Counted once the pass that bound them ends.
  EXPECT_TRUE(WaitFor([&] { return controller_->stats().bindings == 2; }));

  SetPhase("train-0-x", "Running");
  SetPhase("train-1-x", "Running");
  ASSERT_TRUE(WaitFor([&] { return Condition(Workload("train"), "PodsReady") == "True"; }));
  Finish("train");
  ASSERT_TRUE(WaitFor([&] { return Condition(Workload("train"), "Finished") == "True"; }));
  // Queue status counts what is admitted and pending.
  ASSERT_TRUE(WaitFor([&] {
    json cq = Get("clusterqueues.kueue.x-k8s.io", "research", "");
    return cq.value("status", json::object()).value("admittedWorkloads", -1) == 0;
  }));
}

TEST_F(KubeControllerTest, PreemptionSuspendsRestoresAndReadmits) {
  json low = fake_.Create(IndexedJob("low", 2, 4, ""));
  ASSERT_TRUE(WaitFor([&] { return !Job("low")["spec"].value("suspend", true); }));
  fake_.Create(PodOf(Job("low"), 0));
  fake_.Create(PodOf(Job("low"), 1));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("low-0-x").empty() && !NodeOf("low-1-x").empty(); }));

  // An urgent job needing every GPU: the low one is preempted by suspending it.
  fake_.Create(IndexedJob("urgent", 2, 4, "urgent"));
  ASSERT_TRUE(WaitFor([&] { return Job("low")["spec"].value("suspend", false); }));
  ASSERT_TRUE(WaitFor([&] { return Condition(Workload("low"), "Evicted") == "True"; }))
      << Workload("low").dump(2);
  // Its templates get back what admission injected once it is suspended.
  ASSERT_TRUE(WaitFor([&] {
    return !Job("low")["spec"]["template"]["spec"].contains("nodeSelector");
  })) << Job("low").dump(2);
  ASSERT_TRUE(WaitFor([&] { return !Job("urgent")["spec"].value("suspend", true); }));

  // The urgent gang is not bound while the victim's pods still hold the nodes.
  fake_.Create(PodOf(Job("urgent"), 0));
  fake_.Create(PodOf(Job("urgent"), 1));
  int64_t seen = Cycles();
  ASSERT_TRUE(WaitFor([&] { return Cycles() >= seen + 3; }));
  EXPECT_EQ(NodeOf("urgent-0-x"), "");
  // The Job controller removes the suspended job's pods.
  ASSERT_TRUE(fake_.store().Delete({"pods", "default", "low-0-x"}).ok());
  ASSERT_TRUE(fake_.store().Delete({"pods", "default", "low-1-x"}).ok());
  ASSERT_TRUE(
      WaitFor([&] { return !NodeOf("urgent-0-x").empty() && !NodeOf("urgent-1-x").empty(); }));

  // The urgent job finishes; the low one is admitted again.
  SetPhase("urgent-0-x", "Succeeded");
  SetPhase("urgent-1-x", "Succeeded");
  Finish("urgent");
  ASSERT_TRUE(WaitFor([&] { return !Job("low")["spec"].value("suspend", true); }));
  EXPECT_EQ(Condition(Workload("low"), "Admitted"), "True");
  EXPECT_EQ(Job("low")["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a100");
}

TEST_F(KubeControllerTest, UnsuspendedQueuedJobIsSuspendedUntilAdmittedAndUnqueuedJobIgnored) {
  // Too big to admit: it must stay suspended (and is suspended if created running).
  json big = IndexedJob("big", 3, 4, "");
  big["spec"]["suspend"] = false;
  fake_.Create(big);
  json plain = IndexedJob("plain", 1, 1, "");
  plain["metadata"].erase("labels");
  plain["spec"]["suspend"] = false;
  fake_.Create(plain);
  ASSERT_TRUE(WaitFor([&] { return Job("big")["spec"].value("suspend", false); }));
  ASSERT_TRUE(WaitFor([&] { return Condition(Workload("big"), "QuotaReserved") == "False"; }));
  EXPECT_FALSE(Workload("big")["status"]["conditions"].dump().empty());
  // A job without a queue is not muster's (manageJobsWithoutQueueName=false).
  int64_t seen = Cycles();
  ASSERT_TRUE(WaitFor([&] { return Cycles() >= seen + 3; }));
  EXPECT_FALSE(Job("plain")["spec"].value("suspend", false));
  EXPECT_TRUE(Workload("plain").is_null());
}

TEST_F(KubeControllerTest, AStatusWrittenBeforeTheUnsuspendIsNoConflict) {
  // The Job controller writes the new Job's status between muster's read and its
  // unsuspend: the unsuspend patches the spec on condition of the generation, so it
  // applies once, and the status stays as written.
  fake_.BeforeNext("PATCH", "/jobs/train", [&] {
    json j = Job("train");
    j["metadata"].erase("resourceVersion");
    j["status"]["conditions"] = json::array({{{"type", "Suspended"}, {"status", "True"}}});
    ASSERT_TRUE(fake_.store()
                    .Update({"jobs.batch", "default", "train"}, j, server::WriteScope::kStatus)
                    .ok());
  });
  fake_.Create(IndexedJob("train", 1, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return !Job("train")["spec"].value("suspend", true); }));
  EXPECT_EQ(controller_->stats().conflicts, 0);
  EXPECT_EQ(fake_.CountRequests("PATCH", "/jobs/train"), 1);
  EXPECT_EQ(fake_.CountRequests("PUT", "/jobs/train"), 0);
  EXPECT_EQ(Job("train")["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a100");
  EXPECT_EQ(Condition(Job("train"), "Suspended"), "True");
}

TEST_F(KubeControllerTest, ASpecChangedBeforeTheUnsuspendIsRetriedNotClobbered) {
  // Someone changes the spec between muster's read and its unsuspend: the patch's
  // generation test fails, and the unsuspend is made again on the fresh Job.
  fake_.BeforeNext("PATCH", "/jobs/train", [&] {
    json j = Job("train");
    j["metadata"].erase("resourceVersion");
    j["spec"]["activeDeadlineSeconds"] = 600;
    ASSERT_TRUE(fake_.store()
                    .Update({"jobs.batch", "default", "train"}, j, server::WriteScope::kSpec)
                    .ok());
    // And a plain 409 (the API server's own retries ran out) answers the retry, which
    // is tried again too. Armed for the next PATCH only: registered beside the spec
    // change, it answered this same PATCH, and whether the retry then met a second
    // conflict depended on how soon muster saw the new generation (a flake under ASan).
    fake_.BeforeNext("PATCH", "/jobs/train",
                     [&] { fake_.FailNext("PATCH", "/jobs/train", 409, 1); });
  });
  fake_.Create(IndexedJob("train", 1, 1, ""));
  ASSERT_TRUE(WaitFor([&] { return !Job("train")["spec"].value("suspend", true); }));
  EXPECT_GE(controller_->stats().conflicts, 2);
  EXPECT_GE(fake_.CountRequests("PATCH", "/jobs/train"), 3);
  EXPECT_EQ(Job("train")["spec"]["activeDeadlineSeconds"], 600);
  EXPECT_EQ(Job("train")["spec"]["template"]["spec"]["nodeSelector"]["pool"], "a100");
}

// A bare Pod handed to muster (spec.schedulerName), queued or in a Kueue pod group.
json BarePod(const std::string& name, int gpus, const std::string& group = "", int total = 0) {
  json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default",
      "labels": {"kueue.x-k8s.io/queue-name": "research"}},
    "spec": {"schedulerName": "muster", "restartPolicy": "Never",
      "containers": [{"name": "main", "image": "trainer",
                      "resources": {"requests": {"cpu": "1"}}}]}})");
  pod["metadata"]["name"] = name;
  pod["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = std::to_string(gpus);
  if (!group.empty()) {
    pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = group;
    pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] = std::to_string(total);
  }
  return pod;
}

TEST_F(KubeControllerTest, BindsABarePodAsAOnePodWorkloadThatFinishesWithIt) {
  fake_.Create(BarePod("solo", 2));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("solo").empty(); }));
  json wl = Get("workloads.kueue.x-k8s.io", "pod-solo");
  EXPECT_EQ(Condition(wl, "Admitted"), "True");
  EXPECT_EQ(wl["spec"]["queueName"], "research");
  json placement =
      json::parse(wl["metadata"]["annotations"]["muster.dev/placement"].get<std::string>());
  EXPECT_EQ(NodeOf("solo"), placement[0]["node"]);
  SetPhase("solo", "Running");
  SetPhase("solo", "Succeeded");
  ASSERT_TRUE(WaitFor([&] {
    return Condition(Get("workloads.kueue.x-k8s.io", "pod-solo"), "Finished") == "True";
  }));
}

TEST_F(KubeControllerTest, BindsAPodGroupOnlyOnceEveryPodExists) {
  fake_.Create(BarePod("g-a", 4, "g", 2));
  // Alone, the pod waits and says why.
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& c :
         Get("pods", "g-a").value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False")
        return c.value("message", "") == "waiting for the pods of group g: 1 of 2 exist";
    }
    return false;
  })) << Get("pods", "g-a").dump(2);
  EXPECT_EQ(NodeOf("g-a"), "");
  fake_.Create(BarePod("g-b", 4, "g", 2));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("g-a").empty() && !NodeOf("g-b").empty(); }));
  EXPECT_NE(NodeOf("g-a"), NodeOf("g-b"));  // 4 GPUs each, 4 per node
}

// The issue's elastic PyTorchJob (8 one-GPU workers, minReplicas 2) in a cluster, as
// Volcano runs it: the training operator (played by the test) makes all 8 pods;
// muster binds the 4 that fit while a blocker holds the other node, leaving the rest
// Pending and Unschedulable with a reason; binds the other 4 once the blocker ends;
// and when an urgent job needs a whole node, deletes the 4 highest-index pods it bound
// instead of suspending the job.
json ElasticPyTorchJob() {
  json job = json::parse(R"({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "elastic", "namespace": "default",
                 "labels": {"kueue.x-k8s.io/queue-name": "research"}},
    "spec": {"runPolicy": {"suspend": true},
             "elasticPolicy": {"rdzvBackend": "c10d", "minReplicas": 2, "maxReplicas": 8},
             "pytorchReplicaSpecs": {"Worker": {"replicas": 8, "restartPolicy": "OnFailure",
               "template": {"spec": {"schedulerName": "muster", "nodeSelector": {"pool": "a100"},
                 "containers": [{"name": "pytorch", "image": "trainer",
                   "resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]}}}}}})");
  // The flavor's node label already in the template: the fake API server (serve's
  // validation) refuses a change to the replica specs once the Workload is admitted.
  return job;
}

// What the training operator makes: worker `index` of the PyTorchJob.
json WorkerOf(const json& job, int index) {
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {{"name", "elastic-worker-" + std::to_string(index)},
                     {"namespace", "default"},
                     {"labels",
                      {{"training.kubeflow.org/job-name", "elastic"},
                       {"training.kubeflow.org/replica-type", "worker"},
                       {"training.kubeflow.org/replica-index", std::to_string(index)}}},
                     {"ownerReferences", json::array({{{"apiVersion", "kubeflow.org/v1"},
                                                       {"kind", "PyTorchJob"},
                                                       {"name", "elastic"},
                                                       {"uid", job["metadata"]["uid"]},
                                                       {"controller", true}}})}};
  pod["spec"] = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"];
  pod["status"] = {{"phase", "Pending"}};
  return pod;
}

TEST_F(KubeControllerTest, ElasticGangIsBoundInPartGrowsAndShrinksByItsHighestPods) {
  fake_.Create(IndexedJob("blocker", 1, 4, ""));
  ASSERT_TRUE(WaitFor([&] { return !Job("blocker")["spec"].value("suspend", true); }));
  fake_.Create(PodOf(Job("blocker"), 0));
  ASSERT_TRUE(WaitFor([&] { return !NodeOf("blocker-0-x").empty(); }));
  const std::string blocked = NodeOf("blocker-0-x");

  fake_.Create(ElasticPyTorchJob());
  auto job = [&] { return Get("pytorchjobs.kubeflow.org", "elastic"); };
  ASSERT_TRUE(WaitFor([&] { return !job()["spec"]["runPolicy"].value("suspend", true); }))
      << job().dump(2);
  for (int i = 0; i < 8; ++i) fake_.Create(WorkerOf(job(), i));
  auto bound = [&] {
    std::vector<int> out;
    for (int i = 0; i < 8; ++i) {
      if (!NodeOf("elastic-worker-" + std::to_string(i)).empty()) out.push_back(i);
    }
    return out;
  };
  ASSERT_TRUE(WaitFor([&] { return bound().size() == 4; }));
  EXPECT_EQ(bound(), (std::vector<int>{0, 1, 2, 3}));
  for (int i = 0; i < 4; ++i) EXPECT_NE(NodeOf("elastic-worker-" + std::to_string(i)), blocked);
  // The others wait, saying why (as Volcano marks the pods it does not allocate).
  ASSERT_TRUE(WaitFor([&] {
    json pod = Get("pods", "elastic-worker-7");
    for (const auto& c : pod.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False" &&
          c.value("reason", "") == "Unschedulable")
        return c.value("message", "").find("runs 4 of its 8 pods") != std::string::npos;
    }
    return false;
  })) << Get("pods", "elastic-worker-7").dump(2);

  // The blocker ends: the gang grows onto its node, binding the pending workers.
  SetPhase("blocker-0-x", "Succeeded");
  Finish("blocker");
  ASSERT_TRUE(WaitFor([&] { return bound().size() == 8; }));
  for (int i = 4; i < 8; ++i) EXPECT_EQ(NodeOf("elastic-worker-" + std::to_string(i)), blocked);
  ASSERT_TRUE(WaitFor([&] {
    json wl = Get("workloads.kueue.x-k8s.io", "pytorchjob-elastic");
    return wl["status"]["admission"]["podSetAssignments"][0].value("count", 0) == 8;
  }));

  // An urgent job needs a whole node: the gang shrinks to 4, muster deletes workers
  // 4-7 (the job keeps running, never suspended), and the urgent job takes their node.
  fake_.Create(IndexedJob("urgent", 1, 4, "urgent"));
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 4; i < 8; ++i) {
      if (!Get("pods", "elastic-worker-" + std::to_string(i)).is_null()) return false;
    }
    return true;
  }));
  for (int i = 0; i < 4; ++i)
    EXPECT_FALSE(Get("pods", "elastic-worker-" + std::to_string(i)).is_null());
  EXPECT_FALSE(job()["spec"]["runPolicy"].value("suspend", false));
  ASSERT_TRUE(WaitFor([&] { return !Job("urgent")["spec"].value("suspend", true); }));
  fake_.Create(PodOf(Job("urgent"), 0));
  ASSERT_TRUE(WaitFor([&] { return NodeOf("urgent-0-x") == blocked; }));
  // The operator makes the deleted workers again: they wait unbound.
  for (int i = 4; i < 8; ++i) fake_.Create(WorkerOf(job(), i));
  int64_t seen = Cycles();
  ASSERT_TRUE(WaitFor([&] { return Cycles() >= seen + 3; }));
  EXPECT_EQ(bound(), (std::vector<int>{0, 1, 2, 3}));
  // Events on the job record both resizes.
  auto events = fake_.store().List("events", "default");
  ASSERT_TRUE(events.ok());
  std::string reasons;
  for (const auto& e : events->items) {
    if (e["involvedObject"].value("name", "") == "elastic")
      reasons += e.value("reason", "") + ": " + e.value("message", "") + "\n";
  }
  EXPECT_NE(reasons.find("Resized: CapacityFreed: 4 -> 8 pods"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("Shrunk: Preempted: 8 -> 4 pods: InClusterQueue by default/urgent"),
            std::string::npos)
      << reasons;
}

// `muster kube --config` with Volcano's scheduler ConfigMap as Volcano deploys it:
// its configuration replaces the default (no binpack listed: Volcano's
// least-requested node order, muster's Spread), so two one-GPU jobs land on
// different nodes, where the default Binpack would stack them.
TEST_F(KubeControllerTest, VolcanoSchedulerConfigMapFromConfigSpreadsPods) {
  api::DecodeResult config;
  api::DecodeText(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins:
      - name: priority
      - name: gang
    - plugins:
      - name: predicates
      - name: nodeorder
)",
                  "volcano.yaml", config);
  ASSERT_FALSE(config.HasErrors());
  ASSERT_TRUE(config.manifests.scheduler_config.has_value());
  EXPECT_EQ(config.manifests.scheduler_config->mapped_from, "volcano-scheduler.conf");
  controller_->Stop();
  KubeOptions options;
  options.resync_seconds = 0.2;
  for (const control::ResourceType* t : WatchedResources())
    options.watched.push_back(t->StoreKey());
  options.scheduler_config = config.manifests.scheduler_config;
  controller_ = std::make_unique<KubeController>(*client_, cache_, options);
  controller_->Start();

  for (const char* name : {"a", "b"}) {
    fake_.Create(IndexedJob(name, 1, 1, ""));
    ASSERT_TRUE(WaitFor([&] { return !Job(name)["spec"].value("suspend", true); }));
    fake_.Create(PodOf(Job(name), 0));
    ASSERT_TRUE(WaitFor([&] { return !NodeOf(std::string(name) + "-0-x").empty(); }));
  }
  EXPECT_NE(NodeOf("a-0-x"), NodeOf("b-0-x"));
}

}  // namespace
}  // namespace muster::kube
