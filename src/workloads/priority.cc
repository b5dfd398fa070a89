// Priority resolution: Kueue WorkloadPriorityClass label, then the pod template's
// PriorityClass, then the job spec's class, then the global default PriorityClass.
#include "workloads/build_internal.h"
#include "workloads/keys.h"

namespace muster::workloads::internal {
namespace {

const model::PriorityClass* FindPriorityClass(const model::ManifestSet& manifests,
                                              const std::string& name) {
  for (const model::PriorityClass& pc : manifests.priority_classes) {
    if (pc.meta.name == name) return &pc;
  }
  return nullptr;
}

// The global default; when several claim it, the lowest value wins, as the Kubernetes
// priority admission plugin picks it.
const model::PriorityClass* GlobalDefault(const model::ManifestSet& manifests) {
  const model::PriorityClass* best = nullptr;
  for (const model::PriorityClass& pc : manifests.priority_classes) {
    if (pc.global_default && (best == nullptr || pc.value < best->value)) best = &pc;
  }
  return best;
}

void UsePriorityClass(const model::PriorityClass& pc, model::Workload* workload) {
  workload->priority = pc.value;
  workload->priority_class = pc.meta.name;
  workload->preemption_never = pc.preemption_never;
}

Status UnknownClass(const model::Workload& workload, std::string_view field, std::string_view kind,
                    const std::string& name) {
  return FieldError(
      workload.meta, field,
      std::string(kind) + " \"" + name + "\" not found; define it or remove the reference");
}

}  // namespace

Status ResolvePriority(const model::ManifestSet& manifests, const PriorityRefs& refs,
                       model::Workload* workload) {
  if (!refs.workload_priority_class.empty()) {
    for (const model::WorkloadPriorityClass& wpc : manifests.workload_priority_classes) {
      if (wpc.meta.name != refs.workload_priority_class) continue;
      workload->priority = wpc.value;
      workload->priority_class = wpc.meta.name;
      // A WorkloadPriorityClass has no preemption policy; the pods' own PriorityClass
      // still governs preemption by kube-scheduler, so honour it when it says Never.
      if (!refs.template_class.empty()) {
        if (const auto* pc = FindPriorityClass(manifests, refs.template_class)) {
          workload->preemption_never = pc->preemption_never;
        }
      }
      return Status::Ok();
    }
    return UnknownClass(*workload, "metadata.labels[" + std::string(kPriorityClassLabel) + "]",
                        "WorkloadPriorityClass", refs.workload_priority_class);
  }
  if (!refs.template_class.empty()) {
    const auto* pc = FindPriorityClass(manifests, refs.template_class);
    if (pc == nullptr) {
      return UnknownClass(*workload, refs.template_field, "PriorityClass", refs.template_class);
    }
    UsePriorityClass(*pc, workload);
    return Status::Ok();
  }
  if (!refs.spec_class.empty()) {
    const auto* pc = FindPriorityClass(manifests, refs.spec_class);
    if (pc == nullptr) {
      return UnknownClass(*workload, refs.spec_field, "PriorityClass", refs.spec_class);
    }
    UsePriorityClass(*pc, workload);
    return Status::Ok();
  }
  if (const auto* pc = GlobalDefault(manifests)) {
    workload->priority = pc->value;
    workload->preemption_never = pc->preemption_never;
    workload->priority_class = "";  // "" marks "default": Workload::priority_class doc
    return Status::Ok();
  }
  workload->priority = 0;
  workload->priority_class = "";
  workload->preemption_never = false;
  return Status::Ok();
}

}  // namespace muster::workloads::internal
