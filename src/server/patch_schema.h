// The patch metadata of the built-in kinds muster serves: which lists are merged by
// a key instead of replaced, as k8s.io/api declares with the `patchStrategy` and
// `patchMergeKey` struct tags (containers by name, a container's env by name and
// volumeMounts by mountPath, Service ports by port, finalizers as a set...). A
// strategic merge patch and server-side apply read it; fields it does not name are
// maps merged key by key and lists replaced whole (upstream's atomic lists, such as
// tolerations, args and command).
#pragma once

#include <map>
#include <string>

#include "control/resource_types.h"

namespace muster::server {

struct PatchSchema;

struct PatchField {
  // patchStrategy "merge": a list merged by `merge_key` (lists of objects) or as a
  // set (lists of scalars, e.g. finalizers); otherwise a list is replaced whole.
  bool merge = false;
  // patchStrategy "retainKeys": the `$retainKeys` directive may clear the other
  // members of the list's elements (a volume's source).
  bool retain_keys = false;
  std::string merge_key;
  // The type of the field's value or of the list's elements; nullptr when nothing
  // under it has patch metadata.
  const PatchSchema* schema = nullptr;
};

struct PatchSchema {
  std::map<std::string, PatchField> fields;

  // The field `name`, or nullptr (a map merged key by key, or a list replaced).
  const PatchField* Find(const std::string& name) const;
};

// Kinds of the groups compiled into kubectl and kube-apiserver (core, batch,
// scheduling.k8s.io, rbac...), which accept a strategic merge patch; custom
// resources (Kueue, Volcano, Kubeflow, JobSet...) do not (415, as upstream).
bool IsBuiltInKind(const control::ResourceType& type);

// The schema of a whole object of a built-in `type` (metadata's finalizers and
// ownerReferences for every kind); nullptr for custom resources.
const PatchSchema* SchemaOf(const control::ResourceType& type);

}  // namespace muster::server
