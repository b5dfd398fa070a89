// JobTemplates: where each job kind keeps what admission changes — the suspend switch
// and the pod template of each pod set — and the edits `muster kube` makes there, as
// Kueue's job integrations do: on admission the flavors' node labels and tolerations
// are injected into the pod templates and the job is unsuspended; on eviction the job
// is suspended and, once stopped, the templates are restored from what was saved in
// an annotation at admission. Pure JSON edits: no I/O.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::control {

// Annotation on the job holding the pod templates' scheduling fields from before the
// injection: [{"path": "/spec/template", "nodeSelector": {...}, "tolerations": [...]}].
inline constexpr const char* kOriginalTemplatesAnnotation = "muster.dev/original-pod-templates";

// JSON pointer of the kind's suspend field ("/spec/suspend",
// "/spec/runPolicy/suspend"); nullopt for kinds without one (Volcano Job, kind "Job" of
// batch.volcano.sh: its pods are gated by binding instead, and its webhook refuses any
// spec change beyond minAvailable and replicas, so muster never writes its spec).
std::optional<std::string> SuspendPath(const std::string& kind, const std::string& api_version);

bool IsSuspended(const nlohmann::json& job);

// JSON pointer of the PodTemplateSpec behind pod set `pod_set` of `job`; nullopt if
// the kind or pod set is unknown.
std::optional<std::string> PodTemplatePath(const nlohmann::json& job, const std::string& pod_set);

// JSON pointers of every PodTemplateSpec of `job` (batch Job, JobSet, Kubeflow
// replica specs, Volcano tasks), in the order the kind lists them; empty for other
// kinds.
std::vector<std::string> PodTemplatePaths(const nlohmann::json& job);

// What admission injects into one pod set's template.
struct PodSetInjection {
  std::string pod_set;
  nlohmann::json node_selector = nlohmann::json::object();  // the flavors' spec.nodeLabels
  nlohmann::json tolerations = nlohmann::json::array();     // the flavors' spec.tolerations
};

// One injection per pod set from the flavors its assignment names (pod set -> flavor
// names); `flavors`: ResourceFlavor objects by name. Unknown flavors inject nothing.
std::vector<PodSetInjection> InjectionsFor(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& pod_set_flavors,
    const std::map<std::string, nlohmann::json>& flavors);

// The job, unsuspended, with the injections applied and the originals saved in the
// annotation (kept from an earlier admission if present, so originals are never
// overwritten by injected values).
Result<nlohmann::json> Admitted(const nlohmann::json& job,
                                const std::vector<PodSetInjection>& injections);

// The job suspended (templates untouched: a running batch Job's template is immutable
// until the job controller has stopped it).
Result<nlohmann::json> Suspended(const nlohmann::json& job);

// The job with its templates restored from the annotation and the annotation removed;
// nullopt when there is nothing to restore.
std::optional<nlohmann::json> Restored(const nlohmann::json& job);

}  // namespace muster::control
