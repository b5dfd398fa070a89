// ApiHandler's updates and patches (api_handler_internal.h): PUT and PATCH of an
// object or its status subresource, with the same defaults, validation, admission
// checks and dry runs as a create.

#include "server/api_handler_internal.h"
#include "server/auth/owner.h"
#include "server/batch_job_defaults.h"
#include "server/core_defaults.h"
#include "server/kueue_defaults.h"
#include "server/meta_validation.h"
#include "server/patch_request.h"
#include "server/priority_classes.h"
#include "server/request_body.h"
#include "server/update_validation.h"

namespace muster::server::api_internal {
namespace {

using nlohmann::json;

// Immutability and metadata rules of an update (update_validation.h).
std::optional<ApiError> CheckUpdate(const RequestTarget& t, const json& current, const json& next,
                                    bool admitted) {
  auto causes = ValidateUpdate(*t.type, current, next, UpdateContext{admitted});
  if (causes.empty()) return std::nullopt;
  return InvalidObject(*t.type, t.name, std::move(causes));
}

WriteScope ScopeOf(const RequestTarget& t) {
  if (t.subresource == "status") return WriteScope::kStatus;
  return t.type->has_status ? WriteScope::kSpec : WriteScope::kAll;
}

}  // namespace

ApiResult HandleUpdate(ObjectStore& store, const RequestTarget& t, const ApiRequest& r) {
  auto body = ParseRequestBody(r);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  auto md = CheckBodyAgainstTarget(*body, t);
  if (!md.ok()) return ErrorResponse(BadRequest(md.status().message()));
  const WriteScope scope = ScopeOf(t);
  std::vector<std::string> field_warnings;
  // A job's decode, kept for the scheduler as a create's (one decode per write).
  std::shared_ptr<const control::DecodedJob> decoded;
  if (scope != WriteScope::kStatus) {
    // Every kind DefaultCoreObject defaults (the core group's, Pods and LimitRanges
    // included, and batch's), as a create and a patch are.
    if (t.type->group.empty() || IsBatchJob(*t.type) || IsCronJob(*t.type)) {
      auto stored = store.Get({t.type->StoreKey(), t.namespace_, t.name});
      DefaultCoreObject(*t.type, *body, stored.ok() ? &*stored : nullptr);
    }
    if (auto invalid = ValidateObject(*t.type, *body, t.name, &field_warnings, &decoded)) {
      return ErrorResponse(*invalid);
    }
    if (IsPriorityClassType(*t.type)) {
      if (auto refused = AdmitPriorityClass(store, *body)) return ErrorResponse(*refused);
    }
  }
  const bool admitted = scope != WriteScope::kStatus && JobAdmitted(store, *t.type, *body);
  const bool dry_run = !QueryParam(r, "dryRun").empty();
  std::optional<ApiError> invalid;
  bool checked_dry_run = false;
  auto updated = store.Mutate(
      {t.type->StoreKey(), t.namespace_, t.name},
      [&](const json& current) -> Result<json> {
        auth::KeepOwner(current, *body);  // immutable: the value sent is ignored
        if (scope != WriteScope::kStatus) DefaultKueueObject(*t.type, *body, &current);
        KeepManagedFields(current, *body);
        RecordManager(t, r, &current, *body);
        if (scope != WriteScope::kStatus) invalid = CheckUpdate(t, current, *body, admitted);
        if (invalid) return InvalidArgument("invalid");
        // A dry run stops here, after every check, without writing.
        checked_dry_run = dry_run;
        if (dry_run) return InvalidArgument("dry run");
        return std::move(*body);
      },
      scope, &decoded);
  if (invalid) return ErrorResponse(*invalid);
  if (checked_dry_run) return Written(200, *t.type, *body, field_warnings);
  if (!updated.ok()) return StoreError(updated.status(), t, t.name);
  return Written(200, *t.type, PresentObject(std::move(*updated), *t.type, t.version),
                 field_warnings);
}

ApiResult HandlePatch(ObjectStore& store, const RequestTarget& t, const ApiRequest& r) {
  PatchRequest patch;
  if (auto bad = ReadPatch(r, t, NowRfc3339(), patch)) return ErrorResponse(*bad);
  const WriteScope scope = ScopeOf(t);
  const control::ObjectKey key{t.type->StoreKey(), t.namespace_, t.name};
  auto stored = store.Get(key);
  if (!stored.ok() && stored.status().code() == StatusCode::kNotFound &&
      patch.type == PatchType::kApply && scope != WriteScope::kStatus) {
    // An apply creates what is not there, through the create path (validation,
    // defaults, quota), its fields the applying manager's.
    ApiRequest create = r;
    create.method = "POST";
    create.content_type = "application/json";
    RequestTarget collection = t;
    collection.name.clear();
    if (!FieldValue(patch.patch, "metadata.name").empty() &&
        FieldValue(patch.patch, "metadata.name") != t.name) {
      return ErrorResponse(BadRequest("the name of the object (" +
                                      FieldValue(patch.patch, "metadata.name") +
                                      ") does not match the name on the URL (" + t.name + ")"));
    }
    create.body = [&] {
      json body = patch.patch;
      if (body.value("metadata", json::object()).is_object()) body["metadata"]["name"] = t.name;
      return ToWire(body);
    }();
    const json managed = CreatedManagedFields(patch);
    return HandleCreate(store, collection, create, &managed);
  }
  // The Priority plugin's one-default rule, asked of the patched object before the
  // write (the store's lock is held in Mutate).
  if (IsPriorityClassType(*t.type) && stored.ok() && scope != WriteScope::kStatus) {
    json next;
    if (!PatchObject(patch, *stored, next)) {
      if (auto refused = AdmitPriorityClass(store, next)) return ErrorResponse(*refused);
    }
  }
  const bool admitted =
      scope != WriteScope::kStatus && stored.ok() && JobAdmitted(store, *t.type, *stored);
  const bool dry_run = !QueryParam(r, "dryRun").empty();
  std::optional<ApiError> invalid;
  json dry_run_result;
  std::vector<std::string> field_warnings;
  std::shared_ptr<const control::DecodedJob> decoded;  // as HandleUpdate's
  auto patched = store.Mutate(
      key,
      [&](const json& current) -> Result<json> {
        json next;
        invalid = PatchObject(patch, current, next);
        if (invalid) return InvalidArgument("invalid");
        if (scope != WriteScope::kStatus) {
          DefaultCoreObject(*t.type, next, &current);
          DefaultKueueObject(*t.type, next, &current);
        }
        auth::KeepOwner(current, next);  // immutable: the value sent is ignored
        if (patch.type != PatchType::kApply) RecordManager(t, r, &current, next);
        RequestTarget same = t;
        auto md = CheckBodyAgainstTarget(next, same);
        if (!md.ok()) return md.status();
        if (scope != WriteScope::kStatus) {
          invalid = ValidateObject(*t.type, next, t.name, &field_warnings, &decoded);
          if (!invalid) invalid = CheckUpdate(t, current, next, admitted);
          if (invalid) return InvalidArgument("invalid");
        }
        // A dry run stops here, after every check, without writing.
        if (dry_run) {
          dry_run_result = std::move(next);
          return InvalidArgument("dry run");
        }
        return next;
      },
      scope, &decoded);
  if (invalid) return ErrorResponse(*invalid);
  if (dry_run && !dry_run_result.is_null()) {
    return Written(200, *t.type, PresentObject(std::move(dry_run_result), *t.type, t.version),
                   field_warnings);
  }
  if (!patched.ok()) return StoreError(patched.status(), t, t.name);
  return Written(200, *t.type, PresentObject(std::move(*patched), *t.type, t.version),
                 field_warnings);
}

}  // namespace muster::server::api_internal
