#include "server/request_body.h"

#include "control/resource_types.h"
#include "core/nesting_depth.h"
#include "core/text.h"
#include "server/yaml_json.h"

namespace muster::server {

using nlohmann::json;

std::string MediaType(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.front() == ' ') content_type.remove_prefix(1);
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  return AsciiLower(content_type);
}

std::optional<ApiError> CheckRequestBody(const ApiRequest& request) {
  if (request.body.empty()) return std::nullopt;
  const std::string media = MediaType(request.content_type);
  // PATCH bodies name their patch type in the media type; the patch handler
  // answers 415 for the ones it does not know.
  // No Content-Type reads as JSON, the first type kube-apiserver decodes (kubectl's
  // `replace --raw` sends none).
  if (request.method == "POST" || request.method == "PUT") {
    if (!media.empty() && media != "application/json" && media != "application/yaml") {
      return UnsupportedMediaType(
          "the body of the request was in an unknown format - accepted media types include: "
          "application/json, application/yaml");
    }
  }
  if (ExceedsNestingDepth(request.body, kMaxBodyNestingDepth)) {
    return BadRequest("the request body is nested deeper than " +
                      std::to_string(kMaxBodyNestingDepth) + " levels");
  }
  return std::nullopt;
}

Result<json> ParseRequestBody(const ApiRequest& r) {
  if (r.content_type.find("yaml") != std::string::npos) {
    auto docs = ParseDocuments(r.body);
    if (!docs.ok()) return docs.status();
    if (docs->size() != 1) return InvalidArgument("expected exactly one YAML document");
    return std::move((*docs)[0]);
  }
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded()) return InvalidArgument("request body is not valid JSON");
  return body;
}

Result<json*> CheckBodyAgainstTarget(json& body, const RequestTarget& t) {
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  if (body.contains("kind") && body["kind"] != t.type->kind) {
    return InvalidArgument("the kind of the object (" +
                           body["kind"].dump(-1, ' ', false, json::error_handler_t::replace) +
                           ") does not match the resource (" + t.type->kind + ")");
  }
  if (body.contains("apiVersion") && body["apiVersion"].is_string() &&
      control::FindByKind(body["apiVersion"].get<std::string>(), t.type->kind) != t.type) {
    return InvalidArgument("apiVersion " +
                           body["apiVersion"].dump(-1, ' ', false, json::error_handler_t::replace) +
                           " does not match " + t.type->ApiVersion(t.version));
  }
  body["apiVersion"] = t.type->ApiVersion(t.version);
  body["kind"] = t.type->kind;
  if (!body.contains("metadata") || body["metadata"].is_null()) body["metadata"] = json::object();
  json& md = body["metadata"];
  if (!md.is_object()) return InvalidArgument("metadata must be an object");
  if (t.type->namespaced) {
    if (md.contains("namespace") && md["namespace"].is_string() &&
        !md["namespace"].get<std::string>().empty() && md["namespace"] != t.namespace_) {
      return InvalidArgument(
          "the namespace of the provided object does not match the namespace sent on the "
          "request");
    }
    md["namespace"] = t.namespace_;
  } else {
    md.erase("namespace");
  }
  if (!t.name.empty()) {
    if (md.contains("name") && md["name"] != t.name) {
      return InvalidArgument("the name of the object (" +
                             md["name"].dump(-1, ' ', false, json::error_handler_t::replace) +
                             ") does not match the name on the URL (" + t.name + ")");
    }
    md["name"] = t.name;
  }
  return &md;
}

}  // namespace muster::server
