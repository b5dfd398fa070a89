#include "server/server_side_apply.h"

#include <algorithm>
#include <map>

#include "server/strategic_merge_patch.h"

namespace muster::server {
namespace {

using nlohmann::json;

bool IsMine(const json& entry, const ApplyOptions& options) {
  return entry.is_object() && entry.value("manager", "") == options.manager &&
         entry.value("operation", "") == "Apply" && entry.value("subresource", "").empty();
}

// As kube-apiserver names a manager in a conflict.
std::string Display(const json& entry) {
  std::string out = json(entry.value("manager", "")).dump();
  if (const std::string sub = entry.value("subresource", ""); !sub.empty()) {
    out += " with subresource " + json(sub).dump();
  }
  if (entry.value("operation", "") == "Update") out += " using " + entry.value("apiVersion", "");
  return out;
}

// What of the configuration is applied: not apiVersion and kind (the path's), not
// server-set metadata, not the status of a kind with a status subresource.
json Applied(const json& config, const ApplyOptions& options) {
  json out = config;
  if (options.has_status) out.erase("status");
  if (out.contains("metadata") && out["metadata"].is_object()) {
    for (const char* f : {"uid", "resourceVersion", "generation", "creationTimestamp",
                          "deletionTimestamp", "managedFields", "selfLink"}) {
      out["metadata"].erase(f);
    }
  }
  return out;
}

}  // namespace

json ApplyEntry(const ApplyOptions& options, json set) {
  return {{"manager", options.manager},        {"operation", "Apply"},
          {"apiVersion", options.api_version}, {"time", options.time},
          {"fieldsType", "FieldsV1"},          {"fieldsV1", std::move(set)}};
}

Result<ApplyResult> ServerSideApply(const json& current, const json& config,
                                    const ApplyOptions& options) {
  const json applied = Applied(config, options);
  const json new_set = FieldSetOf(applied, options.schema, options.has_status);
  json managed = ManagedEntries(current);
  json old_set = json::object();
  for (const json& e : managed) {
    if (IsMine(e, options)) old_set = e["fieldsV1"];
  }
  const std::vector<FieldPath> new_leaves = Leaves(new_set);
  ApplyResult result;
  for (json& e : managed) {
    if (IsMine(e, options)) continue;
    for (const FieldPath& path : new_leaves) {
      if (path.back().rfind("k:", 0) == 0) continue;  // an element itself holds no value
      if (!Owns(e["fieldsV1"], path)) continue;
      const json* want = ValueAt(applied, path);
      const json* have = ValueAt(current, path);
      if (want == nullptr || (have != nullptr && *want == *have)) continue;
      if (!options.force) {
        result.conflicts.push_back({Display(e), path});
        continue;
      }
      Disown(e["fieldsV1"], path);  // forced: the field changes hands
    }
  }
  if (!result.conflicts.empty()) return result;
  json object = current;
  for (const FieldPath& path : Leaves(old_set)) {
    if (OwnsAtOrUnder(new_set, path)) continue;
    const bool shared = std::any_of(managed.begin(), managed.end(), [&](const json& e) {
      return !IsMine(e, options) && OwnsAtOrUnder(e["fieldsV1"], path);
    });
    if (!shared) RemoveAt(object, path);
  }
  auto merged = ApplyStrategicMergePatch(std::move(object), applied, options.schema);
  if (!merged.ok()) return merged.status();
  json entries = json::array();
  bool recorded = false;
  for (json& e : managed) {
    if (IsMine(e, options)) {
      if (!recorded) entries.push_back(ApplyEntry(options, new_set));
      recorded = true;
      continue;
    }
    if (e["fieldsV1"].empty()) continue;
    entries.push_back(std::move(e));
  }
  if (!recorded) entries.push_back(ApplyEntry(options, new_set));
  result.object = std::move(*merged);
  result.object["metadata"]["managedFields"] = std::move(entries);
  return result;
}

std::string ConflictMessage(const std::vector<ApplyConflict>& conflicts) {
  if (conflicts.size() == 1) {
    return "Apply failed with 1 conflict: conflict with " + conflicts[0].manager + ": " +
           PathString(conflicts[0].path);
  }
  std::map<std::string, std::vector<std::string>> by_manager;
  for (const ApplyConflict& c : conflicts) by_manager[c.manager].push_back(PathString(c.path));
  std::string out = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
  bool first = true;
  for (const auto& [manager, paths] : by_manager) {
    out += (first ? "" : "\n") + std::string("conflict with ") + manager + ":";
    first = false;
    for (const std::string& p : paths) out += "\n- " + p;
  }
  return out;
}

}  // namespace muster::server
