#include "control/pod_workloads.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <variant>

#include "api/decode.h"
#include "control/json_fields.h"
#include "control/workload_objects.h"
#include "workloads/workloads.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

const json& Meta(const json& object) {
  static const json kEmpty = json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

bool ControllerOwned(const json& meta) {
  auto refs = meta.find("ownerReferences");
  if (refs == meta.end() || !refs->is_array()) return false;
  for (const auto& r : *refs) {
    if (r.is_object() && r.value("controller", false)) return true;
  }
  return false;
}

// The pod as a batch Job of one pod: the decoder and the workload builder then read
// its requests, constraints, queue and priority as they read any job's.
json AsOnePodJob(const json& pod) {
  const json& meta = Meta(pod);
  json labels = meta.value("labels", json::object());
  json annotations = meta.value("annotations", json::object());
  json spec = pod.value("spec", json::object());
  if (spec.is_object()) {
    spec.erase("nodeName");  // set by muster once it runs
    // A Job refuses Always, a pod's default (BuildOne puts the pod's own back).
    if (PodRestartPolicy(pod) == "Always") spec["restartPolicy"] = "Never";
  }
  json job_meta = {{"name", meta.value("name", "")}, {"namespace", meta.value("namespace", "")}};
  if (labels.is_object()) job_meta["labels"] = labels;
  if (annotations.is_object()) job_meta["annotations"] = annotations;
  json tmpl = {{"spec", spec}};
  if (labels.is_object()) tmpl["metadata"]["labels"] = labels;
  if (annotations.is_object()) tmpl["metadata"]["annotations"] = annotations;
  return {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", job_meta},
      {"spec", {{"parallelism", 1}, {"completions", 1}, {"backoffLimit", 0}, {"template", tmpl}}}};
}

Result<model::Workload> BuildOne(const json& pod, const model::ManifestSet& config) {
  api::DecodeResult decoded;
  const std::string label = "pod " + Meta(pod).value("name", "");
  api::DecodeObject(AsOnePodJob(pod), label, decoded);
  for (const auto& d : decoded.diagnostics) {
    if (!d.warning) return InvalidArgument(d.ToString());
  }
  if (decoded.manifests.jobs.size() != 1) return InvalidArgument(label + ": cannot be decoded");
  auto* job = std::get_if<model::BatchJob>(&decoded.manifests.jobs.front());
  if (job == nullptr) return InvalidArgument(label + ": cannot be decoded");
  // The pod's own restartPolicy is what its template says: the kubelet of a cluster,
  // and serve's executor (server/container_restart.h), restart its container by it.
  job->spec.tmpl.spec.restart_policy = PodRestartPolicy(pod);
  return workloads::BuildWorkload(decoded.manifests.jobs.front(), config);
}

}  // namespace

std::string PodRestartPolicy(const json& pod) {
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return "Always";
  const auto policy = spec->find("restartPolicy");
  if (policy == spec->end() || policy->is_null()) return "Always";
  return policy->is_string() ? policy->get<std::string>() : "";
}

std::optional<PodWorkloadId> PodWorkloadOf(const json& pod) {
  const json& meta = Meta(pod);
  if (meta.empty() || ControllerOwned(meta)) return std::nullopt;
  const std::string phase = StringField(pod.value("status", json::object()), "phase");
  if (phase == "Succeeded" || phase == "Failed") return std::nullopt;
  PodWorkloadId id;
  id.namespace_ = meta.value("namespace", "");
  id.name = meta.value("name", "");
  const json labels = meta.value("labels", json::object());
  const json annotations = meta.value("annotations", json::object());
  const std::string group = StringField(labels, kPodGroupNameLabel);
  const std::string volcano = StringField(annotations, kVolcanoGroupAnnotation);
  if (!group.empty()) {
    id.group = true;
    id.name = group;
    // Kueue's webhook requires the total count on every pod of a group.
    const std::string text = StringField(annotations, kPodGroupTotalCountAnnotation);
    int32_t total = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), total);
    if (text.empty()) {
      id.problem = std::string("the pod is in group \"") + group + "\" but has no annotation " +
                   kPodGroupTotalCountAnnotation;
    } else if (ec != std::errc() || ptr != text.data() + text.size() || total < 1) {
      id.problem = std::string("annotation ") + kPodGroupTotalCountAnnotation + ": \"" + text +
                   "\" is not a positive integer";
    } else {
      id.total = total;
    }
  } else if (!volcano.empty()) {
    id.group = true;
    id.volcano = true;
    id.name = volcano;
    id.total = 0;
  }
  return id;
}

std::string PodSetNameFor(const PodWorkloadId& id, const std::string& pod_name) {
  // Kueue names a single pod's pod set "main"; a group's sets are its pods.
  if (!id.group) return "main";
  if (pod_name.size() <= 63) return pod_name;
  // A longer name: its head and a digest of the whole, so names stay distinct.
  uint32_t digest = 2166136261u;  // FNV-1a
  for (unsigned char c : pod_name) digest = (digest ^ c) * 16777619u;
  static const char kHex[] = "0123456789abcdef";
  std::string tail;
  for (int shift = 28; shift >= 0; shift -= 4) tail += kHex[(digest >> shift) & 0xf];
  std::string head = pod_name.substr(0, 54);
  while (!head.empty() && (head.back() == '-' || head.back() == '.')) head.pop_back();
  return head + "-" + tail;
}

std::optional<int32_t> PodGroupSize(const PodWorkloadId& id, const model::ManifestSet& config,
                                    std::string& why) {
  if (!id.volcano) return id.total;
  for (const model::PodGroup& pg : config.pod_groups) {
    if (pg.meta.name == id.name && pg.meta.namespace_ == id.namespace_) {
      return std::max(1, pg.min_member);
    }
  }
  why = "PodGroup " + id.namespace_ + "/" + id.name + " does not exist";
  return std::nullopt;
}

Result<model::Workload> BuildPodWorkload(const PodWorkloadId& id, const std::vector<json>& pods,
                                         const model::ManifestSet& config) {
  if (pods.empty()) return InvalidArgument("pod workload " + id.Key() + " has no pods");
  std::vector<const json*> sorted;
  sorted.reserve(pods.size());
  for (const json& p : pods) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
    return Meta(*a).value("name", "") < Meta(*b).value("name", "");
  });
  model::Workload out;
  for (size_t i = 0; i < sorted.size(); ++i) {
    Result<model::Workload> one = BuildOne(*sorted[i], config);
    if (!one.ok()) return one.status();
    model::PodSet ps = std::move(one->pod_sets.front());
    const std::string pod_name = Meta(*sorted[i]).value("name", "");
    ps.existing_pod = pod_name;
    ps.count = 1;
    ps.min_count = 1;
    ps.name = PodSetNameFor(id, pod_name);
    if (i == 0) {
      out = std::move(one).value();
      out.pod_sets.clear();
    }
    out.pod_sets.push_back(std::move(ps));
  }
  out.meta.kind = "Pod";
  out.meta.api_version = "v1";
  out.meta.name = id.name;
  out.meta.namespace_ = id.namespace_;
  out.key = id.Key();
  out.min_available = static_cast<int32_t>(out.pod_sets.size());
  out.elastic = model::ElasticSource::kNone;
  out.lifecycle.max_restarts = 0;
  out.lifecycle.restart_on_failure = false;
  return out;
}

json WithPodPending(const json& pod, const std::string& reason, const std::string& message,
                    const std::string& now) {
  json out = pod;
  json& status = out["status"];
  if (!status.is_object()) status = json::object();
  status["phase"] = "Pending";
  json conditions = json::array();
  json existing = status.value("conditions", json::array());
  if (existing.is_array()) {
    for (const auto& c : existing) {
      if (c.is_object() && c.value("type", "") == "PodScheduled") {
        if (c.value("status", "") == "False" && c.value("reason", "") == reason &&
            c.value("message", "") == message)
          return out;  // unchanged: keep its transition time
        continue;
      }
      conditions.push_back(c);
    }
  }
  conditions.push_back({{"type", "PodScheduled"},
                        {"status", "False"},
                        {"reason", reason},
                        {"message", message},
                        {"lastProbeTime", nullptr},
                        {"lastTransitionTime", now}});
  status["conditions"] = std::move(conditions);
  return out;
}

json ObjectEvent(const json& object, const EventSource& source, const std::string& type,
                 const std::string& reason, const std::string& message, Time time,
                 int64_t sequence) {
  const json& meta = Meta(object);
  const std::string name = meta.value("name", "");
  const std::string ns = meta.value("namespace", "");
  const std::string now = Rfc3339(time);
  std::string infix;
  for (char c : source.kind)
    infix += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", name + "." + infix + "." + std::to_string(sequence) + "." +
                         std::to_string(static_cast<int64_t>(time * 1000))},
            {"namespace", ns}}},
          {"involvedObject",
           {{"apiVersion", source.api_version},
            {"kind", source.kind},
            {"name", name},
            {"namespace", ns},
            {"uid", meta.value("uid", "")}}},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"count", 1},
          {"firstTimestamp", now},
          {"lastTimestamp", now},
          {"source", {{"component", source.component}}}};
}

json PodEvent(const json& pod, const std::string& type, const std::string& reason,
              const std::string& message, Time time, int64_t sequence) {
  static const EventSource kScheduler{"v1", "Pod", "muster-scheduler"};
  return ObjectEvent(pod, kScheduler, type, reason, message, time, sequence);
}

}  // namespace muster::control
