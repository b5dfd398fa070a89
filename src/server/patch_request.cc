#include "server/patch_request.h"

#include <ctime>

#include "server/json_merge_patch.h"
#include "server/json_patch.h"
#include "server/request_body.h"
#include "server/strategic_merge_patch.h"
#include "server/yaml_json.h"

namespace muster::server {
namespace {

using nlohmann::json;

// Strategic-merge-patch directives ($patch, $setElementOrder/..., $retainKeys) have
// no meaning in a JSON merge patch; dropping them keeps them out of the object.
void StripDirectives(json& patch) {
  if (patch.is_object()) {
    for (auto it = patch.begin(); it != patch.end();) {
      if (!it.key().empty() && it.key()[0] == '$') {
        it = patch.erase(it);
      } else {
        StripDirectives(it.value());
        ++it;
      }
    }
  } else if (patch.is_array()) {
    for (auto& v : patch) StripDirectives(v);
  }
}

// What kube-apiserver answers when a patch does not apply to the object: a generic
// 422 whose cause carries the patch library's message.
ApiError NotApplied(const std::string& message) {
  ApiError e =
      MakeError(422, "Invalid", "the server rejected our request due to an error in our request");
  e.causes.push_back({"UnexpectedServerResponse", message, ""});
  return e;
}

ApiError FromPatchStatus(const Status& s) {
  if (s.code() == StatusCode::kInvalidArgument) return BadRequest(s.message());
  return NotApplied(s.message());
}

ApiError InvalidPatchOptions(const std::string& field, const std::string& reason,
                             const std::string& detail) {
  ApiError e = MakeError(422, "Invalid",
                         "PatchOptions.meta.k8s.io \"\" is invalid: " + field + ": " + detail);
  e.group = "meta.k8s.io";
  e.kind = "PatchOptions";
  e.causes.push_back({reason, detail, field});
  return e;
}

}  // namespace

std::string NowRfc3339() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::optional<ApiError> ReadPatch(const ApiRequest& r, const RequestTarget& t,
                                  const std::string& now, PatchRequest& out) {
  const std::string media = MediaType(r.content_type);
  const bool built_in = IsBuiltInKind(*t.type);
  if (media == "application/json-patch+json") {
    out.type = PatchType::kJson;
  } else if (media == "application/merge-patch+json") {
    out.type = PatchType::kMerge;
  } else if (media == "application/strategic-merge-patch+json" && built_in) {
    out.type = PatchType::kStrategic;
  } else if (media == "application/apply-patch+yaml" && t.subresource.empty()) {
    out.type = PatchType::kApply;
  } else {
    std::string accepted = "application/json-patch+json, application/merge-patch+json";
    if (built_in) accepted += ", application/strategic-merge-patch+json";
    // muster keeps no managedFields of a subresource: no apply there.
    if (t.subresource.empty()) accepted += ", application/apply-patch+yaml";
    return UnsupportedMediaType(
        "the body of the request was in an unknown format - accepted media types include: " +
        accepted);
  }
  out.apply.schema = SchemaOf(*t.type);
  const std::string manager = QueryParam(r, "fieldManager");
  const std::string force = QueryParam(r, "force");
  if (out.type != PatchType::kApply && !force.empty()) {
    return InvalidPatchOptions("force", "FieldValueForbidden",
                               "Forbidden: may not be specified for non-apply patch");
  }
  if (out.type == PatchType::kApply && manager.empty()) {
    return InvalidPatchOptions("fieldManager", "FieldValueRequired",
                               "Required value: is required for apply patch");
  }
  if (out.type == PatchType::kApply) {
    auto docs = ParseDocuments(r.body);
    if (!docs.ok()) return BadRequest("error decoding YAML: " + docs.status().message());
    if (docs->size() != 1 || !(*docs)[0].is_object()) {
      return BadRequest("the apply configuration must be one object");
    }
    out.patch = std::move((*docs)[0]);
    // The configuration names the version and kind it is written in: the path's.
    const std::string expected = t.type->ApiVersion(t.version);
    const json& version = out.patch.contains("apiVersion") ? out.patch["apiVersion"] : json("");
    if (version != expected) {
      return BadRequest("Incorrect version specified in apply patch. Specified patch version: " +
                        (version.is_string() ? version.get<std::string>() : ToWire(version)) +
                        ", expected: " + expected);
    }
    if (!out.patch.contains("kind") || out.patch["kind"] != t.type->kind) {
      return BadRequest("the kind of the apply configuration (" +
                        ToWire(out.patch.value("kind", json())) +
                        ") does not match the resource (" + t.type->kind + ")");
    }
    out.apply.manager = manager;
    out.apply.force = force == "true" || force == "1";
    out.apply.api_version = t.type->ApiVersion(t.version);
    out.apply.time = now;
    out.apply.has_status = t.type->has_status;
    return std::nullopt;
  }
  out.patch = json::parse(r.body, nullptr, false);
  if (out.type == PatchType::kJson) {
    if (out.patch.is_discarded()) return BadRequest("error decoding patch: invalid JSON");
    if (out.patch.is_array() && out.patch.size() > kMaxJsonPatchOperations) {
      return MakeError(413, "RequestEntityTooLarge",
                       "Request entity too large: The allowed maximum operations in a JSON "
                       "patch is " +
                           std::to_string(kMaxJsonPatchOperations) + ", got " +
                           std::to_string(out.patch.size()));
    }
    return std::nullopt;
  }
  if (out.patch.is_discarded() || !out.patch.is_object()) {
    return BadRequest("the patch must be a JSON object");
  }
  if (out.type == PatchType::kMerge) StripDirectives(out.patch);
  return std::nullopt;
}

std::optional<ApiError> PatchObject(const PatchRequest& patch, const json& current, json& next) {
  switch (patch.type) {
    case PatchType::kMerge:
      next = current;
      ApplyMergePatch(next, patch.patch);
      return std::nullopt;
    case PatchType::kJson: {
      auto patched = ApplyJsonPatch(current, patch.patch);
      if (!patched.ok()) return FromPatchStatus(patched.status());
      next = std::move(*patched);
      return std::nullopt;
    }
    case PatchType::kStrategic: {
      auto patched = ApplyStrategicMergePatch(current, patch.patch, patch.apply.schema);
      if (!patched.ok()) return FromPatchStatus(patched.status());
      next = std::move(*patched);
      return std::nullopt;
    }
    case PatchType::kApply: {
      auto applied = ServerSideApply(current, patch.patch, patch.apply);
      if (!applied.ok()) return FromPatchStatus(applied.status());
      if (!applied->conflicts.empty()) {
        ApiError e = MakeError(409, "Conflict", ConflictMessage(applied->conflicts));
        for (const ApplyConflict& c : applied->conflicts) {
          e.causes.push_back(
              {"FieldManagerConflict", "conflict with " + c.manager, PathString(c.path)});
        }
        return e;
      }
      next = std::move(applied->object);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

json CreatedManagedFields(const PatchRequest& patch) {
  return json::array({ApplyEntry(
      patch.apply, FieldSetOf(patch.patch, patch.apply.schema, patch.apply.has_status))});
}

}  // namespace muster::server
