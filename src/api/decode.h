// Decoding manifests (YAML documents or JSON) into model objects, with problems
// reported as Diagnostics naming file, line, kind, object and field.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "model/manifest_set.h"

namespace muster::api {

struct Diagnostic {
  std::string file;
  int line = 0;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string field;  // "spec.resourceGroups[0].flavors[1].resources[2].nominalQuota"
  std::string message;
  bool warning = false;

  // "<file>:<line>: <kind> <namespace>/<name>: <field.path>: [warning: ]<message>".
  // Cluster-scoped objects print "<kind> <name>"; parts that are unknown (no kind
  // for a YAML syntax error, no field for an object-level problem) are left out.
  std::string ToString() const;
};

// A field of one object that names another object (a LocalQueue's ClusterQueue, a
// job's LocalQueue, a flavor's Topology...). Recorded while decoding, where the
// field's line is known; resolved by ValidateCrossObject.
struct ObjectRef {
  Diagnostic at;  // file, line, kind, namespace, name and field of the referring field
  // "ClusterQueue", "LocalQueue", "ResourceFlavor", "Topology", "PriorityClass",
  // "WorkloadPriorityClass", "Cohort", "Queue" (Volcano).
  std::string target_kind;
  std::string target_namespace;  // "" for cluster-scoped targets
  std::string target_name;
};

// The message of the warning about a field no decoder read (warn_unread_fields).
inline constexpr const char* kUnreadFieldMessage =
    "unknown field, or one muster does not act on: ignored";

struct DecodeResult {
  model::ManifestSet manifests;
  std::vector<Diagnostic> diagnostics;
  std::vector<ObjectRef> references;
  // Files in input order; diagnostics are sorted by (file position, line).
  std::vector<std::string> files;
  // Valid objects that are neither a workload nor configuration of their own (bare
  // Pods, CronJobs): the serving modes act on them, `muster simulate` says it does not.
  // Each names its object (file, line, kind, namespace, name; no message).
  std::vector<Diagnostic> validated_only;
  int64_t next_order = 0;       // meta.order of the next decoded object
  int64_t generated_names = 0;  // counter for metadata.generateName
  // Set before decoding: also warn about every field no decoder read (a field muster
  // does not act on, or a typo), as `muster validate` and the API's writes do.
  bool warn_unread_fields = false;
  bool HasErrors() const;
};

// Decodes every document of `text` (YAML stream separated by ---, or JSON),
// appending objects to `out.manifests` and problems to `out.diagnostics`. Never
// throws, whatever the input. `file` names the source in diagnostics.
void DecodeText(std::string_view text, const std::string& file, DecodeResult& out);

// Decodes one object already parsed as JSON (an API request body, a stored object,
// a watch event) exactly as DecodeText decodes its text, without serialising it back
// to text first. Diagnostics carry line 1 (a JSON object has no lines once parsed).
void DecodeObject(const nlohmann::json& object, const std::string& file, DecodeResult& out);

// Reads PATHs as CONTRACT section 1 says (a file; a directory, recursively, files in
// name order; "-" for stdin), decodes them, then runs cross-object validation.
// `warn_unread_fields`: as DecodeResult's.
DecodeResult LoadPaths(const std::vector<std::string>& paths, bool warn_unread_fields = false);

// Cross-object checks (LocalQueue to a missing ClusterQueue, unknown flavors, cohort
// cycles, duplicate names...), appended to `result.diagnostics`.
// Errors: cohort cycles (ClusterQueue cohort / Cohort parentName / Volcano Queue
// parent), one name defined twice for the same kind. Warnings: references to
// objects not in the input. Problems inside one object (a flavor listed twice in a
// ClusterQueue, duplicated task names, negative quantities...) are reported by
// DecodeText, where the offending field's line is known.
void ValidateCrossObject(DecodeResult& result);

// Sorts diagnostics into input order: files as listed in `result.files`, then line.
void SortDiagnostics(DecodeResult& result);

}  // namespace muster::api
