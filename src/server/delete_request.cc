#include "server/delete_request.h"

#include <optional>
#include <string>

#include "server/api_status.h"
#include "server/graceful_deletion.h"
#include "server/namespace_lifecycle.h"
#include "server/owner_graph.h"
#include "server/watch_stream.h"

namespace muster::server {
namespace {

using nlohmann::json;

ApiResponse Object(const json& object) { return {200, "application/json", ToWire(object)}; }
ApiResponse StoreError(const Status& s, const RequestTarget& t, const std::string& name) {
  return ErrorResponse(FromStatus(s, t.type->plural, t.type->group, name));
}

}  // namespace

ApiResult HandleDelete(ObjectStore& store, const RequestTarget& t, const ApiRequest& r) {
  if (t.collection() || !t.subresource.empty()) {
    return ErrorResponse(MethodNotAllowed("deletecollection is not supported; delete by name"));
  }
  std::optional<int64_t> rv;
  std::optional<std::string> uid;
  // DeleteOptions.propagationPolicy (query parameter or body), or the legacy
  // orphanDependents; absent, the kind's default: Orphan for batch/v1 Jobs (kept by
  // upstream for compatibility; kubectl asks for Background), Background otherwise.
  std::string policy = QueryParam(r, "propagationPolicy");
  std::optional<bool> orphan_dependents;
  if (const std::string o = QueryParam(r, "orphanDependents"); !o.empty())
    orphan_dependents = o == "true";
  if (!r.body.empty()) {
    json opts = json::parse(r.body, nullptr, false);
    if (opts.is_object() && opts.contains("preconditions") && opts["preconditions"].is_object()) {
      const json& pre = opts["preconditions"];
      rv = ParseResourceVersion(json{{"metadata", pre}});
      if (rv && *rv < 0) return ErrorResponse(BadRequest("invalid preconditions.resourceVersion"));
      if (pre.contains("uid") && pre["uid"].is_string()) uid = pre["uid"].get<std::string>();
    }
    if (opts.is_object() && opts.contains("propagationPolicy")) {
      if (!opts["propagationPolicy"].is_string()) {
        return ErrorResponse(BadRequest("propagationPolicy must be a string"));
      }
      policy = opts["propagationPolicy"].get<std::string>();
    }
    if (opts.is_object() && opts.contains("orphanDependents") &&
        opts["orphanDependents"].is_boolean()) {
      orphan_dependents = opts["orphanDependents"].get<bool>();
    }
  }
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    return ErrorResponse(
        MakeError(422, "Invalid",
                  "DeleteOptions.propagationPolicy: Unsupported value: \"" + policy +
                      "\": supported values: \"Foreground\", \"Background\", \"Orphan\""));
  }
  if (!policy.empty() && orphan_dependents) {
    return ErrorResponse(MakeError(422, "Invalid",
                                   "DeleteOptions.propagationPolicy: Invalid value: \"" + policy +
                                       "\": orphanDependents and deletionPropagation cannot be "
                                       "both set"));
  }
  if (policy.empty()) {
    if (orphan_dependents) {
      policy = *orphan_dependents ? "Orphan" : "Background";
    } else {
      const bool batch_v1_job =
          t.type->group == "batch" && t.version == "v1" && t.type->StoreKey() == "jobs.batch";
      policy = batch_v1_job ? "Orphan" : "Background";
    }
  }
  if (IsNamespaceType(*t.type)) {
    if (auto refused = RefuseNamespaceDelete(t.name)) return ErrorResponse(*refused);
  }
  const control::ObjectKey key{t.type->StoreKey(), t.namespace_, t.name};
  if (!QueryParam(r, "dryRun").empty()) {
    auto obj = store.Get(key);
    if (!obj.ok()) return StoreError(obj.status(), t, t.name);
    return Object(PresentObject(std::move(*obj), *t.type, t.version));
  }
  if (policy == "Orphan" || policy == "Foreground") {
    // As upstream: the owner carries the policy's finalizer. "orphan": the garbage
    // collector takes its dependents' references to it away instead of deleting them;
    // "foregroundDeletion": it stays, marked, until the collector has deleted its
    // dependents (owner_graph.h).
    const char* finalizer = policy == "Orphan" ? kOrphanFinalizer : kForegroundFinalizer;
    auto marked = store.Mutate(
        key,
        [&](const json& current) -> Result<json> {
          const json meta = current.value("metadata", json::object());
          if (rv && ParseResourceVersion(current) != rv) {
            return Status(StatusCode::kConflict, "the object has been modified");
          }
          if (uid && meta.value("uid", "") != *uid) {
            return Status(StatusCode::kConflict, "the UID in the precondition does not match");
          }
          json next = current;
          control::AddFinalizer(next, finalizer);
          return next;
        },
        WriteScope::kAll);
    if (!marked.ok()) return StoreError(marked.status(), t, t.name);
    rv.reset();  // the mark moved it on; the uid precondition still holds the object
  }
  auto deleted = store.Delete(key, rv, uid);
  if (!deleted.ok()) return StoreError(deleted.status(), t, t.name);
  // Still there (finalizers hold it: graceful_deletion.h). As kube-apiserver, 202
  // only for a client that asked for its dependents to go (orphanDependents=false);
  // 200 otherwise, which older clients expect.
  const int code = BeingDeleted(*deleted) && orphan_dependents == false ? 202 : 200;
  return ApiResponse{code, "application/json",
                     ToWire(PresentObject(std::move(*deleted), *t.type, t.version))};
}

}  // namespace muster::server
