#include "control/gang_binder.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "control/json_fields.h"
#include "core/text.h"

namespace muster::control {
namespace {

using json = nlohmann::json;

std::string Label(const json& pod, const char* key) {
  return StringField(ObjectField(ObjectField(pod, "metadata"), "labels"), key);
}

std::string Annotation(const json& pod, const char* key) {
  return StringField(ObjectField(ObjectField(pod, "metadata"), "annotations"), key);
}

std::string LabelOrAnnotation(const json& pod, const char* key) {
  std::string v = Label(pod, key);
  return v.empty() ? Annotation(pod, key) : v;
}

int32_t ParseIndex(const std::string& text) {
  if (text.empty() || text.size() > 9) return -1;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
  }
  return static_cast<int32_t>(std::strtol(text.c_str(), nullptr, 10));
}

// The controlling owner's kind ("" if none).
std::string OwnerKind(const json& pod) {
  const json& md = ObjectField(pod, "metadata");
  auto refs = md.find("ownerReferences");
  if (refs == md.end() || !refs->is_array()) return "";
  for (const auto& o : *refs) {
    if (o.is_object() && o.value("controller", false)) return o.value("kind", "");
  }
  return "";
}

}  // namespace

std::optional<PodIdentity> IdentifyPod(const json& pod) {
  PodIdentity id;
  const int32_t completion =
      ParseIndex(LabelOrAnnotation(pod, "batch.kubernetes.io/job-completion-index"));
  if (std::string js = Label(pod, "jobset.sigs.k8s.io/jobset-name"); !js.empty()) {
    id.job_kind = "JobSet";
    id.job_name = js;
    id.pod_set = LabelOrAnnotation(pod, "jobset.sigs.k8s.io/replicatedjob-name");
    id.job_index = ParseIndex(LabelOrAnnotation(pod, "jobset.sigs.k8s.io/job-index"));
    id.index = completion;
    return id;
  }
  if (std::string kf = Label(pod, "training.kubeflow.org/job-name"); !kf.empty()) {
    std::string owner = OwnerKind(pod);
    id.job_kind = owner.empty() ? "PyTorchJob" : owner;
    id.job_name = kf;
    std::string type = Label(pod, "training.kubeflow.org/replica-type");
    if (type.empty()) type = Label(pod, "training.kubeflow.org/job-role");  // MPIJob v2
    id.pod_set = AsciiLower(type);
    id.index = ParseIndex(Label(pod, "training.kubeflow.org/replica-index"));
    if (id.pod_set == "launcher" && id.index < 0) id.index = 0;
    return id;
  }
  if (std::string vc = LabelOrAnnotation(pod, "volcano.sh/job-name"); !vc.empty()) {
    id.job_kind = "VolcanoJob";
    id.job_name = vc;
    id.pod_set = LabelOrAnnotation(pod, "volcano.sh/task-spec");
    id.index = ParseIndex(LabelOrAnnotation(pod, "volcano.sh/task-index"));
    if (id.index < 0) {
      // Volcano names pods "<job>-<task>-<index>".
      std::string name = StringField(ObjectField(pod, "metadata"), "name");
      auto dash = name.rfind('-');
      if (dash != std::string::npos) id.index = ParseIndex(name.substr(dash + 1));
    }
    return id;
  }
  std::string job = Label(pod, "batch.kubernetes.io/job-name");
  if (job.empty()) job = Label(pod, "job-name");
  if (!job.empty() && OwnerKind(pod) == "Job") {
    id.job_kind = "Job";
    id.job_name = job;
    id.pod_set = "main";
    id.index = completion;
    return id;
  }
  return std::nullopt;
}

bool PodTerminal(const json& pod) {
  std::string phase = StringField(ObjectField(pod, "status"), "phase");
  return phase == "Succeeded" || phase == "Failed";
}

WatchedPod MakeWatchedPod(const json& pod, const PodIdentity& identity) {
  WatchedPod view;
  view.pod_set = identity.pod_set;
  view.index = identity.index;
  view.job_index = identity.job_index;
  const json& spec = ObjectField(pod, "spec");
  view.node = StringField(spec, "nodeName");
  view.scheduler_name = spec.value("schedulerName", "default-scheduler");
  const std::string phase = StringField(ObjectField(pod, "status"), "phase");
  view.terminal = PodTerminal(pod);
  view.live = !view.terminal && !BeingDeleted(pod);
  view.ready = phase == "Running" || phase == "Succeeded";
  return view;
}

BindPlan PlanBindings(const std::vector<PlannedSlot>& slots, const std::vector<GangPod>& pods) {
  BindPlan out;
  // slot position by (pod set, index); which pod fills each slot.
  std::map<std::pair<std::string, int32_t>, size_t> slot_of;
  for (size_t i = 0; i < slots.size(); ++i) slot_of[{slots[i].pod_set, slots[i].index}] = i;
  std::vector<const GangPod*> filled(slots.size(), nullptr);

  std::vector<const GangPod*> ordered;
  ordered.reserve(pods.size());
  for (const auto& p : pods) ordered.push_back(&p);
  // Bound pods first (they keep their slot), then indexed ones, then by name.
  std::sort(ordered.begin(), ordered.end(), [](const GangPod* a, const GangPod* b) {
    bool ab = !a->node_name.empty(), bb = !b->node_name.empty();
    if (ab != bb) return ab;
    bool ai = a->index >= 0, bi = b->index >= 0;
    if (ai != bi) return ai;
    return a->name < b->name;
  });
  std::vector<const GangPod*> unplaced;
  for (const GangPod* p : ordered) {
    auto it = p->index >= 0 ? slot_of.find({p->pod_set, p->index}) : slot_of.end();
    if (it != slot_of.end() && filled[it->second] == nullptr) {
      filled[it->second] = p;
    } else {
      unplaced.push_back(p);
    }
  }
  // Pods without a usable index take the free slots of their pod set, in slot order.
  for (const GangPod* p : unplaced) {
    if (p->index >= 0 && slot_of.count({p->pod_set, p->index}) != 0) continue;  // duplicate index
    for (size_t i = 0; i < slots.size(); ++i) {
      if (filled[i] == nullptr && slots[i].pod_set == p->pod_set &&
          (p->node_name.empty() || p->node_name == slots[i].node)) {
        filled[i] = p;
        break;
      }
    }
  }
  std::map<std::string, int32_t> missing;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (filled[i] == nullptr) ++missing[slots[i].pod_set];
  }
  if (!missing.empty()) {
    std::string why = "waiting for the job's controller to create ";
    bool first = true;
    for (const auto& [set, n] : missing) {
      why += (first ? "" : ", ") + std::to_string(n) + " pod" + (n == 1 ? "" : "s") +
             " of pod set " + set;
      first = false;
    }
    out.waiting = why;
    return out;
  }
  out.ready = true;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (filled[i]->node_name.empty()) out.bindings.emplace_back(filled[i]->name, slots[i].node);
  }
  return out;
}

}  // namespace muster::control
