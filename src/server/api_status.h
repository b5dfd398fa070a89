// metav1.Status: how every API error (and a successful delete, where asked) is
// written, with the HTTP code and machine-readable reason clients switch on
// (kubectl's IsNotFound, IsConflict, IsAlreadyExists...).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

struct StatusCause {
  std::string reason;  // "FieldValueInvalid"
  std::string message;
  std::string field;
};

struct ApiError {
  int code = 500;
  std::string reason;  // "NotFound", "AlreadyExists", "Conflict", "Invalid"...
  std::string message;
  // details: the object the error is about.
  std::string name;
  std::string group;
  std::string kind;  // the resource's plural, as the API server puts it
  std::vector<StatusCause> causes;

  nlohmann::json ToJson() const;
};

// The JSON text of a response. Messages quote what a request sent (a path, a
// selector), which need not be UTF-8: invalid bytes become U+FFFD instead of an
// exception.
std::string ToWire(const nlohmann::json& value);

ApiError MakeError(int code, std::string reason, std::string message);
ApiError BadRequest(std::string message);
ApiError MethodNotAllowed(std::string message);
ApiError UnsupportedMediaType(std::string message);
ApiError NotFoundError(std::string message);
ApiError Gone(std::string message);

// Maps a store Status to an API error about resource `plural`.`group` named `name`,
// with upstream's wording ("clusterqueues.kueue.x-k8s.io \"a\" not found").
ApiError FromStatus(const Status& status, const std::string& plural, const std::string& group,
                    const std::string& name);

}  // namespace muster::server
