// Server-side apply (`kubectl apply --server-side`: PATCH with
// application/apply-patch+yaml and ?fieldManager=): the configuration a manager
// applies is merged into the object, each manager's fields are recorded in
// metadata.managedFields (operation Apply, fieldsType FieldsV1), the fields a
// manager applied before and now leaves out are removed unless another manager
// also owns them, and a field another manager owns with a different value is a
// conflict unless the apply forces it (then the field changes hands).
//
// Other writes that name their manager own what they change as Update entries
// (managed_fields.h), which an apply conflicts with too. Short of kube-apiserver's
// structured-merge-diff: list elements are keyed by the patch merge key alone
// (patch_schema.h) and lists of custom resources are atomic (src/server/README.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/managed_fields.h"
#include "server/patch_schema.h"

namespace muster::server {

struct ApplyOptions {
  std::string manager;      // ?fieldManager=
  bool force = false;       // ?force=true
  std::string api_version;  // the applied object's apiVersion, recorded per manager
  std::string time;         // RFC 3339, recorded per manager
  const PatchSchema* schema = nullptr;
  bool has_status = false;  // status is the status subresource's, never applied
};

struct ApplyConflict {
  std::string manager;  // as printed: "\"kubectl\"" or "\"x\" using v1"
  FieldPath path;
};

struct ApplyResult {
  nlohmann::json object;                 // valid when conflicts is empty
  std::vector<ApplyConflict> conflicts;  // what stopped the apply
};

// The managedFields entry of `manager`'s apply of `set`.
nlohmann::json ApplyEntry(const ApplyOptions& options, nlohmann::json set);

// `config` applied to the stored `current`.
Result<ApplyResult> ServerSideApply(const nlohmann::json& current, const nlohmann::json& config,
                                    const ApplyOptions& options);

// kube-apiserver's message for a failed apply: "Apply failed with 1 conflict:
// conflict with \"kubectl\": .spec.parallelism".
std::string ConflictMessage(const std::vector<ApplyConflict>& conflicts);

}  // namespace muster::server
