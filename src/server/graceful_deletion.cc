#include "server/graceful_deletion.h"

#include <algorithm>

#include "control/job_deadlines.h"
#include "control/workload_objects.h"
#include "server/namespace_lifecycle.h"
#include "server/owner_graph.h"

namespace muster::server {
namespace {

using nlohmann::json;

const json* Finalizers(const json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  auto list = meta->find("finalizers");
  return list != meta->end() && list->is_array() ? &*list : nullptr;
}

}  // namespace

bool HeldByFinalizers(const json& object) {
  if (HeldBySpecFinalizers(object)) return true;
  const json* list = Finalizers(object);
  if (list == nullptr) return false;
  return std::any_of(list->begin(), list->end(),
                     [](const json& f) { return !(f.is_string() && f == kOrphanFinalizer); });
}

void MarkForDeletion(json& object, const std::string& now) {
  json& meta = object["metadata"];
  // A graceful mark's timestamp is in the future: a delete with no period moves it now.
  const std::optional<Time> set =
      control::ParseRfc3339(control::StringField(meta, "deletionTimestamp"));
  const std::optional<Time> at = control::ParseRfc3339(now);
  if (!BeingDeleted(object) || (set && at && *at < *set)) meta["deletionTimestamp"] = now;
  meta["deletionGracePeriodSeconds"] = 0;
  // kube-apiserver's namespace storage sets the phase with the mark.
  if (IsNamespaceObject(object)) {
    if (!object["status"].is_object()) object["status"] = json::object();
    object["status"]["phase"] = "Terminating";
  }
}

int64_t DeletionGracePeriod(const json& object) {
  return control::IntField(control::ObjectField(object, "metadata"), "deletionGracePeriodSeconds");
}

int64_t PodDeletionGracePeriod(const json& pod, std::optional<int64_t> requested) {
  const json& spec = control::ObjectField(pod, "spec");
  int64_t period = 30;
  if (requested) {
    period = *requested;
  } else if (spec.contains("terminationGracePeriodSeconds")) {
    period = control::IntField(spec, "terminationGracePeriodSeconds");
  }
  if (control::StringField(spec, "nodeName").empty()) return 0;
  const std::string phase = control::StringField(control::ObjectField(pod, "status"), "phase");
  if (phase == "Succeeded" || phase == "Failed") return 0;
  return period < 0 ? 1 : period;
}

bool MarkForGracefulDeletion(json& object, const std::string& now, int64_t grace) {
  const std::optional<Time> start = control::ParseRfc3339(now);
  if (grace <= 0 || !start) return false;
  json& meta = object["metadata"];
  if (BeingDeleted(object) && DeletionGracePeriod(object) <= grace) return false;
  meta["deletionTimestamp"] = control::Rfc3339(*start + static_cast<double>(grace));
  meta["deletionGracePeriodSeconds"] = grace;
  return true;
}

std::optional<TerminatingPod> TerminatingPodOf(const json& pod) {
  if (!BeingDeleted(pod)) return std::nullopt;
  const int64_t grace = DeletionGracePeriod(pod);
  if (grace <= 0) return std::nullopt;
  const json& md = control::ObjectField(pod, "metadata");
  return TerminatingPod{
      {"pods", control::StringField(md, "namespace"), control::StringField(md, "name")},
      control::StringField(md, "uid"),
      grace};
}

std::vector<TerminatingPod> TerminatingPods(const control::ObjectReader& store) {
  std::vector<TerminatingPod> out;
  auto pods = store.List("pods", "");
  if (!pods.ok()) return out;
  for (const json& pod : pods->items) {
    if (auto marked = TerminatingPodOf(pod)) out.push_back(std::move(*marked));
  }
  return out;
}

std::vector<std::string> AddedFinalizers(const json& current, const json& next) {
  std::vector<std::string> added;
  const json* after = Finalizers(next);
  if (after == nullptr) return added;
  const json* before = Finalizers(current);
  for (const json& f : *after) {
    if (!f.is_string()) continue;
    if (before != nullptr && std::find(before->begin(), before->end(), f) != before->end())
      continue;
    added.push_back(f.get<std::string>());
  }
  return added;
}

}  // namespace muster::server
