// Inside ApiHandler: the write path's pieces that api_handler.cc (get, list, create,
// the routes) and api_writes.cc (update, patch) share. Not part of the server's API.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/resource_types.h"
#include "control/store_snapshot.h"
#include "core/status.h"
#include "server/api_handler.h"
#include "server/object_store.h"
#include "server/request_target.h"

namespace muster::server::api_internal {

// A write's answer: the object with the warnings about the fields muster stores but
// does not act on (the core kinds' and `field_warnings`, from the validating decode).
ApiResponse Written(int code, const control::ResourceType& type, const nlohmann::json& object,
                    const std::vector<std::string>& field_warnings = {});
// Decodes the object with the api layer, so the API accepts exactly what `muster
// validate` accepts (api_handler.cc says more); the error names each invalid field.
// `field_warnings`: the decode's warnings; `decoded`: a valid job, as the scheduler
// decodes it.
std::optional<ApiError> ValidateObject(
    const control::ResourceType& t, const nlohmann::json& object, const std::string& name,
    std::vector<std::string>* field_warnings = nullptr,
    std::shared_ptr<const control::DecodedJob>* decoded = nullptr);
// The Status for a store error on `t`'s object `name`.
ApiResponse StoreError(const Status& s, const RequestTarget& t, const std::string& name);
// A write by a named manager (?fieldManager=, which kubectl always sends) is recorded
// in managedFields as an Update (managed_fields.h); none on a subresource.
void RecordManager(const RequestTarget& t, const ApiRequest& r, const nlohmann::json* current,
                   nlohmann::json& next);

// POST of a collection. `managed_fields`: what a server-side apply that creates the
// object records (patch_request.h); a POST's own managedFields are dropped.
ApiResult HandleCreate(ObjectStore& store, RequestTarget t, const ApiRequest& r,
                       const nlohmann::json* managed_fields = nullptr);
// PUT of an object or its status (api_writes.cc).
ApiResult HandleUpdate(ObjectStore& store, const RequestTarget& t, const ApiRequest& r);
// PATCH of an object or its status, all four patch types; an apply of an object that
// is not there creates it (api_writes.cc).
ApiResult HandlePatch(ObjectStore& store, const RequestTarget& t, const ApiRequest& r);

}  // namespace muster::server::api_internal
