#include "control/store_snapshot.h"

#include <algorithm>
#include <set>

#include "api/decode.h"
#include "control/resource_types.h"
#include "workloads/workloads.h"

namespace muster::control {
namespace {

const std::set<std::string, std::less<>>& JobResources() {
  static const std::set<std::string, std::less<>> kJobs = {"jobs.batch",
                                                           "jobs.batch.volcano.sh",
                                                           "pytorchjobs.kubeflow.org",
                                                           "tfjobs.kubeflow.org",
                                                           "mpijobs.kubeflow.org",
                                                           "jobsets.jobset.x-k8s.io",
                                                           "trainjobs.trainer.kubeflow.org"};
  return kJobs;
}

std::string ObjectLabel(const std::string& resource, const nlohmann::json& object) {
  const auto& meta = object.value("metadata", nlohmann::json::object());
  std::string ns = meta.value("namespace", "");
  std::string name = meta.value("name", "");
  return resource + "/" + ns + "/" + name;
}

std::string FirstError(const api::DecodeResult& result) {
  for (const auto& d : result.diagnostics) {
    if (!d.warning) return d.ToString();
  }
  return "";
}

}  // namespace

// Kinds the api layer decodes that are neither jobs nor runtime objects, and
// Namespaces (their labels, for ClusterQueues' namespaceSelector).
const std::vector<std::string>& ConfigResources() {
  static const std::vector<std::string> kConfig = [] {
    std::vector<std::string> out;
    for (const auto& type : ResourceTypes()) {
      std::string key = type.StoreKey();
      if ((type.validated && JobResources().count(key) == 0) || key == "namespaces")
        out.push_back(key);
    }
    return out;
  }();
  return kConfig;
}

bool IsConfigResource(std::string_view store_key) {
  const auto& config = ConfigResources();
  return std::find(config.begin(), config.end(), store_key) != config.end();
}

bool IsJobResource(std::string_view store_key) { return JobResources().count(store_key) != 0; }

std::string JobDecodeSource(const nlohmann::json& object) {
  return "store:" + object.value("kind", "") + " " +
         object.value("metadata", nlohmann::json::object()).value("name", "");
}

Result<model::Workload> DecodeJob(const nlohmann::json& object, const model::ManifestSet& config,
                                  const DecodedJob* decoded) {
  if (decoded != nullptr) return workloads::BuildWorkload(decoded->job, config);
  api::DecodeResult result;
  const std::string source = JobDecodeSource(object);
  api::DecodeObject(object, source, result);
  if (result.HasErrors()) return InvalidArgument(FirstError(result));
  if (result.manifests.jobs.size() != 1) {
    return InvalidArgument(source + ": not a job object muster runs");
  }
  return workloads::BuildWorkload(result.manifests.jobs.front(), config);
}

Result<model::ManifestSet> DecodeConfigObject(const std::string& resource,
                                              const nlohmann::json& object) {
  api::DecodeResult one;
  api::DecodeObject(object, "store:" + ObjectLabel(resource, object), one);
  if (one.HasErrors()) return InvalidArgument(FirstError(one));
  one.manifests.jobs.clear();
  return std::move(one.manifests);
}

std::vector<SnapshotJob> ReadJobs(const ObjectReader& store, const model::ManifestSet& config,
                                  std::map<std::string, std::string>& problems) {
  std::vector<SnapshotJob> jobs;
  for (const auto& resource : JobResources()) {
    auto list = store.List(resource, "");
    if (!list.ok()) {
      problems[resource] = list.status().message();
      continue;
    }
    for (const auto& object : list->items) {
      std::string label = ObjectLabel(resource, object);
      auto workload = DecodeJob(object, config);
      if (!workload.ok()) {
        problems[label] = workload.status().message();
        continue;
      }
      const auto& meta = object.value("metadata", nlohmann::json::object());
      SnapshotJob job;
      job.ref = {resource,
                 meta.value("namespace", ""),
                 meta.value("name", ""),
                 object.value("kind", ""),
                 object.value("apiVersion", ""),
                 meta.value("uid", "")};
      job.created = meta.value("creationTimestamp", "");
      job.workload = std::move(workload).value();
      jobs.push_back(std::move(job));
    }
  }
  std::sort(jobs.begin(), jobs.end(), [](const SnapshotJob& a, const SnapshotJob& b) {
    return std::tie(a.created, a.ref.namespace_, a.ref.name, a.ref.resource) <
           std::tie(b.created, b.ref.namespace_, b.ref.name, b.ref.resource);
  });
  return jobs;
}

Result<StoreSnapshot> ReadStoreSnapshot(const ObjectReader& store) {
  StoreSnapshot snapshot;
  api::DecodeResult config;
  for (const auto& resource : ConfigResources()) {
    auto list = store.List(resource, "");
    if (!list.ok()) return list.status();
    for (const auto& object : list->items) {
      // Decode each object alone so one bad object cannot hide the others.
      api::DecodeResult one;
      one.next_order = config.next_order;
      std::string label = ObjectLabel(resource, object);
      api::DecodeObject(object, "store:" + label, one);
      if (one.HasErrors()) {
        snapshot.problems[label] = FirstError(one);
        continue;
      }
      config.next_order = one.next_order;
      api::DecodeObject(object, "store:" + label, config);
    }
  }
  snapshot.config = std::move(config.manifests);
  snapshot.config.jobs.clear();
  snapshot.jobs = ReadJobs(store, snapshot.config, snapshot.problems);
  return snapshot;
}

}  // namespace muster::control
