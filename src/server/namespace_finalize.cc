#include "server/namespace_finalize.h"

#include <string>
#include <vector>

#include "server/api_status.h"
#include "server/namespace_lifecycle.h"
#include "server/request_body.h"
#include "server/watch_stream.h"

namespace muster::server {
namespace {

using nlohmann::json;

// What is wrong with `finalizers` (spec.finalizers of a finalize body), or "".
std::vector<StatusCause> FinalizerCauses(const json& finalizers) {
  std::vector<StatusCause> causes;
  if (finalizers.is_null()) return causes;
  if (!finalizers.is_array()) {
    causes.push_back({"FieldValueInvalid", "must be a list of strings", "spec.finalizers"});
    return causes;
  }
  for (size_t i = 0; i < finalizers.size(); ++i) {
    const std::string field = "spec.finalizers[" + std::to_string(i) + "]";
    const json& f = finalizers[i];
    if (!f.is_string() || f.get<std::string>().empty()) {
      causes.push_back({"FieldValueInvalid", "must be a non-empty string", field});
      continue;
    }
    const std::string name = f.get<std::string>();
    const size_t slash = name.find('/');
    if (name != kNamespaceFinalizer &&
        (slash == std::string::npos || slash == 0 || slash + 1 == name.size())) {
      causes.push_back({"FieldValueInvalid",
                        "Invalid value: \"" + name +
                            "\": name is neither a standard finalizer name nor is it fully "
                            "qualified",
                        field});
    }
  }
  return causes;
}

}  // namespace

ApiResult HandleNamespaceFinalize(ObjectStore& store, const RequestTarget& t, const ApiRequest& r) {
  if (r.method != "PUT") {
    return ErrorResponse(MethodNotAllowed("the finalize subresource takes PUT only"));
  }
  auto body = ParseRequestBody(r);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (!body->is_object()) return ErrorResponse(BadRequest("the body must be a Namespace"));
  const json spec = body->value("spec", json::object());
  const json finalizers = spec.is_object() ? spec.value("finalizers", json()) : json();
  if (auto causes = FinalizerCauses(finalizers); !causes.empty()) {
    ApiError e = MakeError(422, "Invalid",
                           "Namespace \"" + t.name + "\" is invalid: " + causes.front().field +
                               ": " + causes.front().message);
    e.name = t.name;
    e.kind = "Namespace";
    e.causes = std::move(causes);
    return ErrorResponse(e);
  }
  const auto rv = ParseResourceVersion(*body);
  auto updated = store.Mutate(
      {"namespaces", "", t.name},
      [&](const json& current) -> Result<json> {
        if (rv && ParseResourceVersion(current) != rv) {
          return Status(StatusCode::kConflict,
                        "the object has been modified; please apply your changes to the latest "
                        "version and try again");
        }
        json next = current;
        if (!next["spec"].is_object()) next["spec"] = json::object();
        next["spec"]["finalizers"] = finalizers.is_null() ? json::array() : finalizers;
        return next;
      },
      WriteScope::kSpec);
  if (!updated.ok()) {
    return ErrorResponse(FromStatus(updated.status(), "namespaces", "", t.name));
  }
  return JsonResponse(200, PresentObject(std::move(*updated), *t.type, t.version));
}

}  // namespace muster::server
