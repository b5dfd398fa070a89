// Opt-in end-to-end test against a real API server (kind or any cluster):
//   MUSTER_E2E_KUBECONFIG=~/.kube/config build/kube_test --gtest_filter='KubeE2E*'
// The cluster needs Kueue's CRDs (muster's own under deploy/crds/ will do) and must
// not run another Kueue: muster admits here. The test runs muster kube's controller
// in-process, queues a 2-pod Indexed Job (busybox) with schedulerName muster in a
// fresh namespace, and checks what issue #8 promises against the real Job controller
// and kubelets: the job stays suspended until muster admits it, the Workload records
// the admission, both pods are bound by muster and the job completes. Skipped (with a
// message) without MUSTER_E2E_KUBECONFIG.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>

#include "kube/api_writer.h"
#include "kube/cluster_connection.h"
#include "kube/kube_controller.h"
#include "kube/reflector.h"
#include "kube/wait_for.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;

TEST(KubeE2E, QueuedJobIsAdmittedBoundAndCompletes) {
  const char* kubeconfig = std::getenv("MUSTER_E2E_KUBECONFIG");
  if (kubeconfig == nullptr || *kubeconfig == '\0')
    GTEST_SKIP() << "set MUSTER_E2E_KUBECONFIG to a cluster's kubeconfig to run (docs/kube.md)";
  auto connection = LoadKubeconfig(kubeconfig, "");
  ASSERT_TRUE(connection.ok()) << connection.status().message();
  KubeClient client(*connection);
  ApiWriter api(client);
  const std::string ns =
      "muster-e2e-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 100000);

  auto nodes = client.Get("/api/v1/nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.code << " " << nodes.body << nodes.error;
  ASSERT_TRUE(
      api.Create("namespaces",
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
          .ok());
  auto flavor =
      api.Create("resourceflavors.kueue.x-k8s.io", {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                                                    {"kind", "ResourceFlavor"},
                                                    {"metadata", {{"name", ns}}},
                                                    {"spec", json::object()}});
  ASSERT_TRUE(flavor.ok()) << flavor.status().message() << " (are the CRDs installed?)";
  json cq = json::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
    "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"],
      "flavors": [{"resources": [{"name": "cpu", "nominalQuota": "1"},
                                 {"name": "memory", "nominalQuota": "1Gi"}]}]}]}})");
  cq["metadata"]["name"] = ns;
  cq["spec"]["resourceGroups"][0]["flavors"][0]["name"] = ns;
  ASSERT_TRUE(api.Create("clusterqueues.kueue.x-k8s.io", cq).ok());
  ASSERT_TRUE(
      api.Create("localqueues.kueue.x-k8s.io", {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                                                {"kind", "LocalQueue"},
                                                {"metadata", {{"name", "q"}, {"namespace", ns}}},
                                                {"spec", {{"clusterQueue", ns}}}})
          .ok());

  ObjectCache cache;
  KubeOptions options;
  std::vector<std::unique_ptr<Reflector>> reflectors;
  for (const control::ResourceType* t : WatchedResources()) {
    options.watched.push_back(t->StoreKey());
    reflectors.push_back(std::make_unique<Reflector>(client, *t, cache, ReflectorOptions{}));
  }
  KubeController controller(client, cache, options);
  controller.Start();
  for (auto& r : reflectors) r->Start();

  json job = json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "e2e", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
    "spec": {"suspend": true, "parallelism": 2, "completions": 2, "completionMode": "Indexed",
      "template": {"spec": {"schedulerName": "muster", "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "echo rank $JOB_COMPLETION_INDEX"],
                        "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}}}]}}}})");
  job["metadata"]["namespace"] = ns;
  ASSERT_TRUE(api.Create("jobs.batch", job).ok());

  auto workload_condition = [&](const std::string& type) {
    auto wl = api.Get("workloads.kueue.x-k8s.io", ns, "job-e2e");
    if (!wl.ok()) return std::string();
    for (const auto& c : (*wl).value("status", json::object()).value("conditions", json::array()))
      if (c.value("type", "") == type) return c.value("status", "");
    return std::string();
  };
  EXPECT_TRUE(WaitFor([&] { return workload_condition("Admitted") == "True"; }, 60));
  EXPECT_TRUE(WaitFor(
      [&] {
        auto j = api.Get("jobs.batch", ns, "e2e");
        if (!j.ok()) return false;
        for (const auto& c :
             (*j).value("status", json::object()).value("conditions", json::array()))
          if (c.value("type", "") == "Complete" && c.value("status", "") == "True") return true;
        return false;
      },
      300));
  EXPECT_TRUE(WaitFor([&] { return workload_condition("Finished") == "True"; }, 60));
  EXPECT_GE(controller.stats().bindings, 2);

  controller.Stop();
  for (auto& r : reflectors) r->Stop();
  (void)api.Delete("namespaces", "", ns);
  (void)api.Delete("localqueues.kueue.x-k8s.io", ns, "q");
  (void)api.Delete("clusterqueues.kueue.x-k8s.io", "", ns);
  (void)api.Delete("resourceflavors.kueue.x-k8s.io", "", ns);
}

}  // namespace
}  // namespace muster::kube
