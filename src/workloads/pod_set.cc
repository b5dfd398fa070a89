// Template -> PodSet: placement constraints, effective requests, topology request.
#include <string>

#include "workloads/build_internal.h"
#include "workloads/keys.h"
#include "workloads/pod_requests.h"

namespace muster::workloads::internal {
namespace {

std::string AnnotationPath(std::string_view field, std::string_view key) {
  return std::string(field) + ".metadata.annotations[" + std::string(key) + "]";
}

// Kueue's TAS annotations: at most one of required / preferred / unconstrained, the
// first two naming a Topology level (a node label key).
Result<model::TopologyRequest> TopologyFromAnnotations(const model::ObjectMeta& owner,
                                                       std::string_view field,
                                                       const model::StringMap& annotations) {
  model::TopologyRequest request;
  int given = 0;
  std::string first_key;
  auto note = [&](std::string_view key) {
    if (given++ == 0) first_key = std::string(key);
  };
  if (auto it = annotations.find(std::string(kRequiredTopologyAnnotation));
      it != annotations.end()) {
    note(kRequiredTopologyAnnotation);
    if (it->second.empty()) {
      return FieldError(owner, AnnotationPath(field, it->first),
                        "must name a topology level (a node label key)");
    }
    request.mode = model::TopologyRequest::Mode::kRequired;
    request.level = it->second;
  }
  if (auto it = annotations.find(std::string(kPreferredTopologyAnnotation));
      it != annotations.end()) {
    note(kPreferredTopologyAnnotation);
    if (it->second.empty()) {
      return FieldError(owner, AnnotationPath(field, it->first),
                        "must name a topology level (a node label key)");
    }
    request.mode = model::TopologyRequest::Mode::kPreferred;
    request.level = it->second;
  }
  if (auto it = annotations.find(std::string(kUnconstrainedTopologyAnnotation));
      it != annotations.end()) {
    note(kUnconstrainedTopologyAnnotation);
    if (it->second == "true") {
      request.mode = model::TopologyRequest::Mode::kUnconstrained;
    } else if (it->second != "false") {
      return FieldError(owner, AnnotationPath(field, it->first),
                        "\"" + it->second + "\" is not a boolean: use \"true\" or \"false\"");
    }
  }
  if (given > 1) {
    return FieldError(owner, AnnotationPath(field, first_key),
                      "only one of " + std::string(kRequiredTopologyAnnotation) + ", " +
                          std::string(kPreferredTopologyAnnotation) + " and " +
                          std::string(kUnconstrainedTopologyAnnotation) + " may be set");
  }
  return request;
}

}  // namespace

Status FieldError(const model::ObjectMeta& meta, std::string_view field, std::string_view message) {
  return InvalidArgument(meta.kind + " " + meta.Key() + ": " + std::string(field) + ": " +
                         std::string(message));
}

Result<model::PodSet> MakePodSet(const model::ObjectMeta& owner, std::string_view field,
                                 std::string name, int32_t count, const model::PodTemplate& tmpl) {
  if (count < 0) {
    return FieldError(owner, field,
                      "replica count " + std::to_string(count) + " is negative; must be 0 or more");
  }
  Result<model::TopologyRequest> topology = TopologyFromAnnotations(owner, field, tmpl.annotations);
  if (!topology.ok()) return topology.status();

  model::PodSet ps;
  ps.name = std::move(name);
  ps.count = count;
  ps.min_count = count;
  ps.requests = EffectivePodRequests(tmpl.spec);
  ps.node_selector = tmpl.spec.node_selector;
  ps.node_affinity = tmpl.spec.node_affinity;
  ps.tolerations = tmpl.spec.tolerations;
  ps.topology = std::move(*topology);
  ps.restart_policy = tmpl.spec.restart_policy;
  ps.tmpl = tmpl;
  return ps;
}

void NoteTemplateClass(const model::PodTemplate& tmpl, std::string_view field, PriorityRefs* refs) {
  if (!refs->template_class.empty() || tmpl.spec.priority_class_name.empty()) return;
  refs->template_class = tmpl.spec.priority_class_name;
  refs->template_field = std::string(field) + ".spec.priorityClassName";
}

}  // namespace muster::workloads::internal
