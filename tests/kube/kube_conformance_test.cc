// Same engine, same answers: every conformance case (../shared/conformance/cases and
// the repository's tests/conformance/cases) is
// fed through the fake API server to muster kube's controller, and its first decisions
// — which workloads are admitted, to which ClusterQueue and flavors, and the node of
// every pod — must equal what `muster simulate` decides at time 0 for the same
// manifests. Jobs that arrive later in the simulation (sim.muster.dev/submit-at > 0)
// are left out on both sides: in a cluster they would arrive in wall-clock time.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "api/decode.h"
#include "kube/admission_webhook.h"
#include "kube/cluster_connection.h"
#include "kube/fake_api_server.h"
#include "kube/kube_controller.h"
#include "kube/reflector.h"
#include "kube/wait_for.h"
#include "server/yaml_json.h"
#include "sim/simulator.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

bool ArrivesLater(const json& object) {
  const json a = object.value("metadata", json::object()).value("annotations", json::object());
  auto it = a.find("sim.muster.dev/submit-at");
  if (it == a.end() || !it->is_string()) return false;
  return std::stod(it->get<std::string>()) > 0;
}

// The case's objects in file order (files in name order), later arrivals dropped.
std::vector<json> CaseObjects(const fs::path& input) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(input)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<json> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    auto docs = server::ParseDocuments(text.str());
    EXPECT_TRUE(docs.ok()) << f;
    if (!docs.ok()) continue;
    for (auto& d : *docs) {
      if (d.is_object() && !ArrivesLater(d)) out.push_back(std::move(d));
    }
  }
  return out;
}

struct Decision {
  bool admitted = false;
  std::string cluster_queue;
  std::map<std::string, std::map<std::string, std::string>> flavors;
  std::map<std::string, std::string> pods;  // "<podSet>/<index>" -> node
  bool operator==(const Decision&) const = default;
};

std::string Describe(const Decision& d) {
  std::string s = d.admitted ? "admitted to " + d.cluster_queue : "pending";
  for (const auto& [ps, res] : d.flavors)
    for (const auto& [r, f] : res) s += " " + ps + "." + r + "=" + f;
  for (const auto& [pod, node] : d.pods) s += " " + pod + "@" + node;
  return s;
}

std::map<std::string, Decision> Simulated(const std::vector<json>& objects) {
  api::DecodeResult decoded;
  for (const auto& o : objects) api::DecodeText(o.dump(), "case", decoded);
  api::ValidateCrossObject(decoded);
  EXPECT_FALSE(decoded.HasErrors());
  sim::SimOptions options;
  options.until = 0.5;  // the decisions of time 0
  auto result = sim::Simulate(decoded.manifests, options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  std::map<std::string, Decision> out;
  if (!result.ok()) return out;
  for (const auto& w : result->workloads) {
    Decision d;
    d.admitted = w.admit_time.has_value();
    if (d.admitted) {
      // A Volcano job's queue is its Volcano queue (what its Workload's admission names).
      d.cluster_queue = w.cluster_queue.value_or(w.queue.value_or(""));
      d.flavors = w.flavors;
      for (const auto& p : w.pods) d.pods[p.pod_set + "/" + std::to_string(p.index)] = p.node;
    }
    out[w.name] = d;
  }
  return out;
}

class KubeConformanceTest : public ::testing::TestWithParam<std::string> {};

// Where a case lives: "<dir>/<case>" names one of the case directories below.
fs::path CaseInput(const std::string& param) {
  std::string dir = param.substr(0, param.find('/'));
  std::string name = param.substr(param.find('/') + 1);
  fs::path root = dir == "repo" ? fs::path(MUSTER_SOURCE_DIR) / "tests" / "conformance" / "cases"
                                : fs::path(MUSTER_SHARED_DIR) / "conformance" / "cases";
  return root / name / "input";
}

TEST_P(KubeConformanceTest, FirstDecisionsEqualTheSimulation) {
  const fs::path input = CaseInput(GetParam());
  if (!fs::exists(input)) GTEST_SKIP() << input << " not found";
  std::vector<json> objects = CaseObjects(input);
  std::map<std::string, Decision> want = Simulated(objects);
  ASSERT_FALSE(want.empty());

  // A raw volcano-scheduler.conf is a file for Volcano's scheduler, not an API object:
  // muster kube takes it with --config (KubeOptions::scheduler_config).
  std::optional<model::SchedulerConfiguration> config_file;
  for (const json& o : objects) {
    if (!o.contains("kind")) {
      api::DecodeResult conf;
      api::DecodeText(o.dump(), "volcano-scheduler.conf", conf);
      ASSERT_FALSE(conf.HasErrors());
      ASSERT_TRUE(conf.manifests.scheduler_config.has_value());
      config_file = conf.manifests.scheduler_config;
      continue;
    }
    // Kubeflow Trainer's controller makes a TrainJob's JobSet on a cluster; muster kube
    // does not watch TrainJobs (docs/kubeflow-trainer.md).
    if (o.value("kind", "") == "TrainJob")
      GTEST_SKIP() << GetParam() << ": muster kube does not watch TrainJobs yet";
  }

  testing::FakeApiServer fake;
  for (json o : objects) {
    if (!o.contains("kind")) continue;  // --config above
    // Kueue's Configuration is a file upstream and carries no metadata; in the cluster
    // it is an object like any other, named here.
    if (!o.contains("metadata") || !o["metadata"].is_object()) o["metadata"] = {{"name", "config"}};
    if (!o["metadata"].contains("namespace") && o.value("kind", "") != "Node" &&
        o.value("apiVersion", "").find("kueue") == std::string::npos)
      o["metadata"]["namespace"] = "default";
    // The admission webhook's patch, as the API server would apply it on create.
    json review = {{"apiVersion", "admission.k8s.io/v1"},
                   {"kind", "AdmissionReview"},
                   {"request", {{"uid", "1"}, {"operation", "CREATE"}, {"object", o}}}};
    WebhookOptions wo;
    wo.manage_jobs_without_queue_name = true;
    json answer = ReviewJobCreate(review, wo);
    if (answer["response"].contains("patch")) {
      auto patch = DecodeBase64(answer["response"]["patch"].get<std::string>());
      ASSERT_TRUE(patch.ok());
      o = o.patch(json::parse(*patch));
    }
    fake.Create(o);
  }

  KubeClient client(fake.connection());
  ObjectCache cache;
  KubeOptions options;
  options.manage_jobs_without_queue_name = true;  // cases without queues admit directly
  options.resync_seconds = 0.1;
  options.scheduler_config = config_file;
  std::vector<std::unique_ptr<Reflector>> reflectors;
  for (const control::ResourceType* t : WatchedResources()) {
    options.watched.push_back(t->StoreKey());
    reflectors.push_back(std::make_unique<Reflector>(client, *t, cache, ReflectorOptions{}));
  }
  KubeController controller(client, cache, options);
  controller.Start();
  for (auto& r : reflectors) r->Start();

  // Decided: every workload is either admitted with its placement recorded or pending.
  std::map<std::string, Decision> got;
  auto read = [&] {
    got.clear();
    auto list = fake.store().List("workloads.kueue.x-k8s.io", "");
    if (!list.ok()) return false;
    for (const auto& wl : list->items) {
      const json& owner = wl["metadata"]["ownerReferences"][0];
      std::string key = wl["metadata"].value("namespace", "") + "/" + owner.value("name", "");
      Decision d;
      bool decided = false;
      for (const auto& c : wl.value("status", json::object()).value("conditions", json::array())) {
        if (c.value("type", "") == "QuotaReserved") decided = true;
        if (c.value("type", "") == "Admitted" && c.value("status", "") == "True") d.admitted = true;
      }
      if (!decided) return false;
      if (d.admitted) {
        const json admission = wl["status"]["admission"];
        d.cluster_queue = admission.value("clusterQueue", "");
        for (const auto& psa : admission.value("podSetAssignments", json::array())) {
          const json flavors = psa.value("flavors", json::object());
          for (const auto& [res, flavor] : flavors.items())
            d.flavors[psa.value("name", "")][res] = flavor.get<std::string>();
        }
        const json annotations = wl["metadata"].value("annotations", json::object());
        if (!annotations.contains("muster.dev/placement")) return false;
        for (const auto& p : json::parse(annotations["muster.dev/placement"].get<std::string>()))
          d.pods[p.value("podSet", "") + "/" + std::to_string(p.value("index", 0))] =
              p.value("node", "");
      }
      got[key] = d;
    }
    return got.size() == want.size();
  };
  bool decided = WaitFor(read, 30);
  controller.Stop();
  for (auto& r : reflectors) r->Stop();
  ASSERT_TRUE(decided) << "muster kube decided " << got.size() << " of " << want.size()
                       << " workloads";
  for (const auto& [key, d] : want) {
    auto it = got.find(key);
    ASSERT_NE(it, got.end()) << key;
    EXPECT_EQ(it->second, d) << key << "\n  simulate: " << Describe(d)
                             << "\n  kube:     " << Describe(it->second);
  }
}

std::vector<std::string> Cases() {
  std::vector<std::string> out;
  for (const auto& [prefix, dir] :
       {std::pair<std::string, fs::path>{"shared",
                                         fs::path(MUSTER_SHARED_DIR) / "conformance" / "cases"},
        {"repo", fs::path(MUSTER_SOURCE_DIR) / "tests" / "conformance" / "cases"}}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      out.push_back(prefix + "/" + e.path().filename().string());
    }
  }
  if (out.empty()) return {"shared/missing"};
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, KubeConformanceTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (auto& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace muster::kube
