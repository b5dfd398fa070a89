#include "server/delete_request.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "control/json_fields.h"
#include "server/api_handler_internal.h"
#include "server/api_status.h"
#include "server/graceful_deletion.h"
#include "server/list_response.h"
#include "server/namespace_lifecycle.h"
#include "server/owner_graph.h"
#include "server/priority_classes.h"
#include "server/watch_stream.h"

namespace muster::server {
namespace {

using nlohmann::json;

struct DeleteOptions {
  std::optional<int64_t> rv;  // preconditions
  std::optional<std::string> uid;
  std::string policy;  // Orphan, Background or Foreground (the kind's default filled in)
  std::optional<bool> orphan_dependents;
  std::optional<int64_t> grace;  // gracePeriodSeconds: what a Pod waits for its kubelet
  bool dry_run = false;
};

// An integer query parameter or DeleteOptions field, else the error to answer.
std::variant<std::optional<int64_t>, ApiResponse> GracePeriodOption(const ApiRequest& r,
                                                                    const json& body) {
  if (body.is_object() && body.contains("gracePeriodSeconds") &&
      !body["gracePeriodSeconds"].is_null()) {
    if (!body["gracePeriodSeconds"].is_number_integer()) {
      return ErrorResponse(BadRequest("gracePeriodSeconds must be an integer"));
    }
    return std::optional<int64_t>(body["gracePeriodSeconds"].get<int64_t>());
  }
  auto v = IntQueryParam(r, "gracePeriodSeconds");
  if (!v.ok()) return ErrorResponse(BadRequest(v.status().message()));
  return *v;
}

// DeleteOptions from the query or the body, or the error to answer.
std::variant<DeleteOptions, ApiResponse> ParseDeleteOptions(const RequestTarget& t,
                                                            const ApiRequest& r) {
  DeleteOptions o;
  // DeleteOptions.propagationPolicy (query parameter or body), or the legacy
  // orphanDependents; absent, the kind's default: Orphan for batch/v1 Jobs (kept by
  // upstream for compatibility; kubectl asks for Background), Background otherwise.
  o.policy = QueryParam(r, "propagationPolicy");
  if (const std::string v = QueryParam(r, "orphanDependents"); !v.empty())
    o.orphan_dependents = v == "true";
  json opts = r.body.empty() ? json() : json::parse(r.body, nullptr, false);
  auto grace = GracePeriodOption(r, opts);
  if (auto* refused = std::get_if<ApiResponse>(&grace)) return std::move(*refused);
  o.grace = std::get<std::optional<int64_t>>(grace);
  if (!r.body.empty()) {
    if (opts.is_object() && opts.contains("preconditions") && opts["preconditions"].is_object()) {
      const json& pre = opts["preconditions"];
      o.rv = ParseResourceVersion(json{{"metadata", pre}});
      if (o.rv && *o.rv < 0)
        return ErrorResponse(BadRequest("invalid preconditions.resourceVersion"));
      if (pre.contains("uid") && pre["uid"].is_string()) o.uid = pre["uid"].get<std::string>();
    }
    if (opts.is_object() && opts.contains("propagationPolicy")) {
      if (!opts["propagationPolicy"].is_string()) {
        return ErrorResponse(BadRequest("propagationPolicy must be a string"));
      }
      o.policy = opts["propagationPolicy"].get<std::string>();
    }
    if (opts.is_object() && opts.contains("orphanDependents") &&
        opts["orphanDependents"].is_boolean()) {
      o.orphan_dependents = opts["orphanDependents"].get<bool>();
    }
  }
  const std::string& policy = o.policy;
  if (!policy.empty() && policy != "Orphan" && policy != "Background" && policy != "Foreground") {
    return ErrorResponse(
        MakeError(422, "Invalid",
                  "DeleteOptions.propagationPolicy: Unsupported value: \"" + policy +
                      "\": supported values: \"Foreground\", \"Background\", \"Orphan\""));
  }
  if (!policy.empty() && o.orphan_dependents) {
    return ErrorResponse(MakeError(422, "Invalid",
                                   "DeleteOptions.propagationPolicy: Invalid value: \"" + policy +
                                       "\": orphanDependents and deletionPropagation cannot be "
                                       "both set"));
  }
  if (policy.empty()) {
    if (o.orphan_dependents) {
      o.policy = *o.orphan_dependents ? "Orphan" : "Background";
    } else {
      const bool batch_v1_job =
          t.type->group == "batch" && t.version == "v1" && t.type->StoreKey() == "jobs.batch";
      o.policy = batch_v1_job ? "Orphan" : "Background";
    }
  }
  o.dry_run = !QueryParam(r, "dryRun").empty();
  return o;
}

// Deletes one object: what it is now (marked, when finalizers hold it), or the store's
// error.
Result<json> DeleteOne(ObjectStore& store, const control::ObjectKey& key, DeleteOptions o) {
  if (o.dry_run) return store.Get(key);
  if (o.policy == "Orphan" || o.policy == "Foreground") {
    // As upstream: the owner carries the policy's finalizer. "orphan": the garbage
    // collector takes its dependents' references to it away instead of deleting them;
    // "foregroundDeletion": it stays, marked, until the collector has deleted its
    // dependents (owner_graph.h).
    const char* finalizer = o.policy == "Orphan" ? kOrphanFinalizer : kForegroundFinalizer;
    auto marked = store.Mutate(
        key,
        [&](const json& current) -> Result<json> {
          const json meta = current.value("metadata", json::object());
          if (o.rv && ParseResourceVersion(current) != o.rv) {
            return Status(StatusCode::kConflict, "the object has been modified");
          }
          if (o.uid && meta.value("uid", "") != *o.uid) {
            return Status(StatusCode::kConflict, "the UID in the precondition does not match");
          }
          json next = current;
          control::AddFinalizer(next, finalizer);
          return next;
        },
        WriteScope::kAll);
    if (!marked.ok()) return marked.status();
    o.rv.reset();  // the mark moved it on; the uid precondition still holds the object
  }
  // A Pod stops first (graceful_deletion.h); other kinds have no grace period upstream.
  ObjectStore::GracePeriod grace;
  if (key.resource == "pods") {
    grace = [&o](const json& pod) { return PodDeletionGracePeriod(pod, o.grace); };
  }
  return store.Delete(key, o.rv, o.uid, grace);
}

// DELETE on a collection, kube-apiserver's DeleteCollection: each object of the
// namespace (of the cluster, for a cluster-scoped kind) that the label and field
// selectors match is deleted with the same options, 256 to a store transaction, and
// the answer lists them as the deletes left them (marked ones included). A failure is
// answered after the rest were tried, as upstream's workers do. Namespaces have no
// deletecollection upstream, nor has a namespaced kind across namespaces.
ApiResult DeleteCollection(ObjectStore& store, const RequestTarget& t, const ApiRequest& r,
                           const DeleteOptions& o) {
  if (IsNamespaceType(*t.type) || (t.type->namespaced && t.namespace_.empty())) {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the "
                         "requested resource"));
  }
  auto sel = ParseSelectors(r);
  if (!sel.ok()) return ErrorResponse(BadRequest(sel.status().message()));
  auto list = store.List(t.type->StoreKey(), t.namespace_);
  if (!list.ok()) return api_internal::StoreError(list.status(), t, "");
  std::vector<control::ObjectKey> keys;
  for (const json& object : list->items) {
    if (!sel->labels.Matches(object) || !sel->fields.Matches(object)) continue;
    const json& meta = control::ObjectField(object, "metadata");
    keys.push_back({t.type->StoreKey(), meta.value("namespace", ""), meta.value("name", "")});
  }
  json items = json::array();
  std::optional<std::pair<Status, std::string>> failed;
  auto delete_range = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      auto deleted = DeleteOne(store, keys[i], o);
      if (deleted.ok()) {
        items.push_back(PresentObject(std::move(*deleted), *t.type, t.version));
      } else if (deleted.status().code() != StatusCode::kNotFound && !failed) {
        failed.emplace(deleted.status(), keys[i].name);  // NotFound: gone meanwhile
      }
    }
  };
  constexpr size_t kPerBatch = 256;
  for (size_t begin = 0; begin < keys.size(); begin += kPerBatch) {
    const size_t end = std::min(keys.size(), begin + kPerBatch);
    if (o.dry_run) {
      delete_range(begin, end);
      continue;
    }
    Status s = store.Batch([&] { delete_range(begin, end); });
    if (!s.ok()) return api_internal::StoreError(s, t, "");
  }
  if (failed) return api_internal::StoreError(failed->first, t, failed->second);
  json out = {{"kind", t.type->kind + "List"},
              {"apiVersion", t.type->ApiVersion(t.version)},
              {"metadata", {{"resourceVersion", std::to_string(list->resource_version)}}},
              {"items", std::move(items)}};
  return ApiResponse{200, "application/json", ToWire(out)};
}

}  // namespace

ApiResult HandleDelete(ObjectStore& store, const RequestTarget& t, const ApiRequest& r) {
  if (!t.subresource.empty()) {
    return ErrorResponse(
        MethodNotAllowed("the server does not allow this method on the "
                         "requested resource"));
  }
  auto parsed = ParseDeleteOptions(t, r);
  if (auto* refused = std::get_if<ApiResponse>(&parsed)) return std::move(*refused);
  const DeleteOptions& o = std::get<DeleteOptions>(parsed);
  if (t.collection()) return DeleteCollection(store, t, r, o);
  if (IsNamespaceType(*t.type)) {
    if (auto refused = RefuseNamespaceDelete(t.name)) return ErrorResponse(*refused);
  }
  if (IsPriorityClassType(*t.type)) {
    if (auto refused = RefuseSystemPriorityClassDelete(t.name)) return ErrorResponse(*refused);
  }
  auto deleted = DeleteOne(store, {t.type->StoreKey(), t.namespace_, t.name}, o);
  if (!deleted.ok()) return api_internal::StoreError(deleted.status(), t, t.name);
  // Still there (finalizers hold it: graceful_deletion.h). As kube-apiserver, 202
  // only for a client that asked for its dependents to go (orphanDependents=false);
  // 200 otherwise, which older clients expect.
  const int code = !o.dry_run && BeingDeleted(*deleted) && o.orphan_dependents == false ? 202 : 200;
  return ApiResponse{code, "application/json",
                     ToWire(PresentObject(std::move(*deleted), *t.type, t.version))};
}

}  // namespace muster::server
