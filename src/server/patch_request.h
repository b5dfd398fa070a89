// The four PATCH body types kube-apiserver takes, read and applied as it does:
//   application/json-patch+json            RFC 6902 (json_patch.h)
//   application/merge-patch+json           RFC 7386 (json_merge_patch.h)
//   application/strategic-merge-patch+json built-in kinds only (strategic_merge_patch.h);
//                                          a custom resource answers 415, as upstream
//   application/apply-patch+yaml           server-side apply (server_side_apply.h),
//                                          ?fieldManager= required, ?force=true
// with the answers upstream gives a patch that does not apply: 400 for a body that
// is not a patch, 413 for a JSON patch of over 10,000 operations, 422 "the server
// rejected our request due to an error in our request" naming the failed operation,
// 409 naming the fields of an apply conflict.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/api_handler.h"
#include "server/api_status.h"
#include "server/request_target.h"
#include "server/server_side_apply.h"

namespace muster::server {

enum class PatchType { kJson, kMerge, kStrategic, kApply };

struct PatchRequest {
  PatchType type = PatchType::kMerge;
  nlohmann::json patch;
  ApplyOptions apply;  // kApply
};

// The patch `r` sends to `t` (whose kind decides the accepted media types); `now`
// (RFC 3339) is recorded in managedFields by an apply.
std::optional<ApiError> ReadPatch(const ApiRequest& r, const RequestTarget& t,
                                  const std::string& now, PatchRequest& out);

// `current` with the patch applied into `next`; the error kube-apiserver answers
// otherwise.
std::optional<ApiError> PatchObject(const PatchRequest& patch, const nlohmann::json& current,
                                    nlohmann::json& next);

// An apply of an absent object creates it: the managedFields it is created with.
nlohmann::json CreatedManagedFields(const PatchRequest& patch);

// The current time as managedFields record it ("2026-01-02T03:04:05Z").
std::string NowRfc3339();

}  // namespace muster::server
