#include "server/api_status.h"

namespace muster::server {

std::string ToWire(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json ApiError::ToJson() const {
  nlohmann::json j = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}};
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    details["causes"] = nlohmann::json::array();
    for (const auto& c : causes) {
      nlohmann::json cj = {{"reason", c.reason}, {"message", c.message}};
      if (!c.field.empty()) cj["field"] = c.field;
      details["causes"].push_back(std::move(cj));
    }
  }
  if (!details.empty()) j["details"] = std::move(details);
  return j;
}

ApiError MakeError(int code, std::string reason, std::string message) {
  ApiError e;
  e.code = code;
  e.reason = std::move(reason);
  e.message = std::move(message);
  return e;
}
ApiError BadRequest(std::string message) {
  return MakeError(400, "BadRequest", std::move(message));
}
ApiError MethodNotAllowed(std::string message) {
  return MakeError(405, "MethodNotAllowed", std::move(message));
}
ApiError UnsupportedMediaType(std::string message) {
  return MakeError(415, "UnsupportedMediaType", std::move(message));
}
ApiError NotFoundError(std::string message) {
  return MakeError(404, "NotFound", std::move(message));
}
ApiError Gone(std::string message) { return MakeError(410, "Expired", std::move(message)); }

ApiError FromStatus(const Status& status, const std::string& plural, const std::string& group,
                    const std::string& name) {
  const std::string qualified = group.empty() ? plural : plural + "." + group;
  ApiError e;
  e.name = name;
  e.group = group;
  e.kind = plural;
  switch (status.code()) {
    case StatusCode::kNotFound:
      e.code = 404;
      e.reason = "NotFound";
      e.message = qualified + " \"" + name + "\" not found";
      break;
    case StatusCode::kAlreadyExists:
      e.code = 409;
      e.reason = "AlreadyExists";
      e.message = qualified + " \"" + name + "\" already exists";
      break;
    case StatusCode::kConflict:
      e.code = 409;
      e.reason = "Conflict";
      e.message = "Operation cannot be fulfilled on " + qualified + " \"" + name +
                  "\": " + status.message();
      break;
    case StatusCode::kInvalidArgument:
      e.code = 400;
      e.reason = "BadRequest";
      e.message = status.message();
      break;
    case StatusCode::kFailedPrecondition:
      e.code = 410;
      e.reason = "Expired";
      e.message = status.message();
      break;
    case StatusCode::kUnavailable:
      e.code = 503;
      e.reason = "ServiceUnavailable";
      e.message = status.message();
      break;
    default:
      e.code = 500;
      e.reason = "InternalError";
      e.message = status.message();
      break;
  }
  return e;
}

}  // namespace muster::server
