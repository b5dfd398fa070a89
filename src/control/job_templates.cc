#include "control/job_templates.h"

#include <algorithm>

#include "core/text.h"

namespace muster::control {
namespace {

using json = nlohmann::json;
using Pointer = json::json_pointer;

const char* ReplicaSpecsField(const std::string& kind) {
  if (kind == "PyTorchJob") return "pytorchReplicaSpecs";
  if (kind == "TFJob") return "tfReplicaSpecs";
  if (kind == "MPIJob") return "mpiReplicaSpecs";
  return nullptr;
}

// JSON pointer tokens escape "~" and "/".
std::string Escape(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

bool Contains(const json& array, const json& value) {
  return std::find(array.begin(), array.end(), value) != array.end();
}

}  // namespace

std::optional<std::string> SuspendPath(const std::string& kind, const std::string& api_version) {
  if (kind == "Job" && api_version.rfind("batch.volcano.sh/", 0) == 0) return std::nullopt;
  if (kind == "Job" || kind == "JobSet" || kind == "TrainJob") return "/spec/suspend";
  if (ReplicaSpecsField(kind) != nullptr) return "/spec/runPolicy/suspend";
  return std::nullopt;  // Volcano Job: no suspend field
}

bool IsSuspended(const json& job) {
  auto path = SuspendPath(job.value("kind", ""), job.value("apiVersion", ""));
  if (!path) return false;
  Pointer p(*path);
  return job.contains(p) && job.at(p).is_boolean() && job.at(p).get<bool>();
}

std::optional<std::string> PodTemplatePath(const json& job, const std::string& pod_set) {
  const std::string kind = job.value("kind", "");
  const json spec = job.value("spec", json::object());
  if (kind == "Job" && job.value("apiVersion", "").rfind("batch/", 0) == 0) {
    if (pod_set == "main") return "/spec/template";
    return std::nullopt;
  }
  if (kind == "JobSet") {
    const json rjs = spec.value("replicatedJobs", json::array());
    for (size_t i = 0; i < rjs.size(); ++i) {
      if (rjs[i].value("name", "") == pod_set)
        return "/spec/replicatedJobs/" + std::to_string(i) + "/template/spec/template";
    }
    return std::nullopt;
  }
  if (const char* field = ReplicaSpecsField(kind)) {
    const json specs = spec.value(field, json::object());
    for (const auto& [type, rs] : specs.items()) {
      if (AsciiLower(type) == pod_set)
        return "/spec/" + std::string(field) + "/" + Escape(type) + "/template";
    }
    return std::nullopt;
  }
  if (kind == "Job") {  // Volcano batch.volcano.sh Job: tasks by name (default<i> unnamed)
    const json tasks = spec.value("tasks", json::array());
    for (size_t i = 0; i < tasks.size(); ++i) {
      std::string name = tasks[i].value("name", "");
      if (name.empty()) name = "default" + std::to_string(i);
      if (name == pod_set) return "/spec/tasks/" + std::to_string(i) + "/template";
    }
  }
  return std::nullopt;
}

std::vector<std::string> PodTemplatePaths(const json& job) {
  std::vector<std::string> out;
  const std::string kind = job.value("kind", "");
  const json spec = job.value("spec", json::object());
  if (!spec.is_object()) return out;
  if (kind == "Job" && job.value("apiVersion", "").rfind("batch/", 0) == 0) {
    out.push_back("/spec/template");
  } else if (kind == "JobSet") {
    const json rjs = spec.value("replicatedJobs", json::array());
    for (size_t i = 0; rjs.is_array() && i < rjs.size(); ++i)
      out.push_back("/spec/replicatedJobs/" + std::to_string(i) + "/template/spec/template");
  } else if (const char* field = ReplicaSpecsField(kind)) {
    const json specs = spec.value(field, json::object());
    if (specs.is_object()) {
      for (const auto& [type, rs] : specs.items())
        out.push_back("/spec/" + std::string(field) + "/" + Escape(type) + "/template");
    }
  } else if (kind == "Job") {
    const json tasks = spec.value("tasks", json::array());
    for (size_t i = 0; tasks.is_array() && i < tasks.size(); ++i)
      out.push_back("/spec/tasks/" + std::to_string(i) + "/template");
  }
  return out;
}

std::vector<PodSetInjection> InjectionsFor(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& pod_set_flavors,
    const std::map<std::string, json>& flavors) {
  std::vector<PodSetInjection> out;
  for (const auto& [pod_set, names] : pod_set_flavors) {
    PodSetInjection inj;
    inj.pod_set = pod_set;
    for (const auto& name : names) {
      auto it = flavors.find(name);
      if (it == flavors.end()) continue;
      const json spec = it->second.value("spec", json::object());
      const json labels = spec.value("nodeLabels", json::object());
      for (const auto& [k, v] : labels.items()) inj.node_selector[k] = v;
      for (const auto& t : spec.value("tolerations", json::array())) {
        if (!Contains(inj.tolerations, t)) inj.tolerations.push_back(t);
      }
    }
    out.push_back(std::move(inj));
  }
  return out;
}

Result<json> Admitted(const json& job, const std::vector<PodSetInjection>& injections) {
  json out = job;
  json& annotations = out["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  // Originals saved by an earlier admission stay: they predate any injection.
  const bool have_originals = annotations.contains(kOriginalTemplatesAnnotation);
  json originals = json::array();
  for (const auto& inj : injections) {
    auto path = PodTemplatePath(job, inj.pod_set);
    if (!path) {
      return InvalidArgument(job.value("kind", "") + " has no pod template for pod set \"" +
                             inj.pod_set + "\"");
    }
    json& pod_spec = out[Pointer(*path)]["spec"];
    originals.push_back({{"path", *path},
                         {"nodeSelector", pod_spec.value("nodeSelector", json())},
                         {"tolerations", pod_spec.value("tolerations", json())}});
    for (const auto& [k, v] : inj.node_selector.items()) pod_spec["nodeSelector"][k] = v;
    for (const auto& t : inj.tolerations) {
      json& tolerations = pod_spec["tolerations"];
      if (!tolerations.is_array()) tolerations = json::array();
      if (!Contains(tolerations, t)) tolerations.push_back(t);
    }
  }
  if (!have_originals) annotations[kOriginalTemplatesAnnotation] = originals.dump();
  if (auto path = SuspendPath(job.value("kind", ""), job.value("apiVersion", "")))
    out[Pointer(*path)] = false;
  return out;
}

Result<json> Suspended(const json& job) {
  auto path = SuspendPath(job.value("kind", ""), job.value("apiVersion", ""));
  if (!path) return FailedPrecondition(job.value("kind", "") + " has no suspend field");
  json out = job;
  out[Pointer(*path)] = true;
  return out;
}

std::optional<json> Restored(const json& job) {
  const json annotations = job.value("metadata", json::object()).value("annotations", json());
  if (!annotations.is_object() || !annotations.contains(kOriginalTemplatesAnnotation))
    return std::nullopt;
  json originals = json::parse(annotations[kOriginalTemplatesAnnotation].get<std::string>(),
                               nullptr, /*allow_exceptions=*/false);
  json out = job;
  if (originals.is_array()) {
    for (const auto& o : originals) {
      if (!o.is_object() || !o.contains("path") || !o["path"].is_string()) continue;
      Pointer path;
      try {
        path = Pointer(o["path"].get<std::string>());
      } catch (const json::exception&) {
        continue;  // an annotation edited by hand: nothing to restore there
      }
      if (!out.contains(path)) continue;
      json& pod_spec = out[path]["spec"];
      for (const char* field : {"nodeSelector", "tolerations"}) {
        if (o.contains(field) && !o[field].is_null()) {
          pod_spec[field] = o[field];
        } else if (pod_spec.is_object()) {
          pod_spec.erase(field);
        }
      }
    }
  }
  out["metadata"]["annotations"].erase(kOriginalTemplatesAnnotation);
  if (out["metadata"]["annotations"].empty()) out["metadata"].erase("annotations");
  return out;
}

}  // namespace muster::control
