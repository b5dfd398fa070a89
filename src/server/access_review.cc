#include "server/access_review.h"

#include "server/api_status.h"
#include "server/yaml_json.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr char kPrefix[] = "/apis/authorization.k8s.io/v1/";
constexpr size_t kMaxReviewString = 1024;

std::optional<json> ParseReview(const ApiRequest& r) {
  if (r.content_type.find("yaml") != std::string::npos) {
    auto docs = ParseDocuments(r.body);
    if (!docs.ok() || docs->size() != 1) return std::nullopt;
    return std::move((*docs)[0]);
  }
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return std::nullopt;
  return body;
}

// A bounded string field of `object`; "" when absent or not a string.
std::string Str(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
  std::string s = object[key].get<std::string>();
  return s.size() > kMaxReviewString ? s.substr(0, kMaxReviewString) : s;
}

json Reply(json body, const std::string& kind) {
  body["apiVersion"] = "authorization.k8s.io/v1";
  body["kind"] = kind;
  body["metadata"] = {{"creationTimestamp", nullptr}};
  return body;
}

ApiResponse AccessReview(const ApiRequest& r, json body, const auth::RbacAuthorizer* authorizer) {
  const json spec = body.value("spec", json::object());
  const json ra = spec.is_object() ? spec.value("resourceAttributes", json()) : json();
  const json na = spec.is_object() ? spec.value("nonResourceAttributes", json()) : json();
  if (ra.is_object() == na.is_object()) {
    ApiError e = MakeError(422, "Invalid",
                           "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                           "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
                           "nonResourceAttributes or resourceAttributes must be specified");
    e.group = "authorization.k8s.io";
    e.kind = "SelfSubjectAccessReview";
    return ErrorResponse(e);
  }
  auth::RequestAttributes a;
  a.user = r.user;
  if (ra.is_object()) {
    a.resource_request = true;
    a.verb = Str(ra, "verb");
    a.api_group = Str(ra, "group");
    a.api_version = Str(ra, "version");
    a.resource = Str(ra, "resource");
    a.subresource = Str(ra, "subresource");
    a.namespace_ = Str(ra, "namespace");
    a.name = Str(ra, "name");
  } else {
    a.verb = Str(na, "verb");
    a.path = Str(na, "path");
  }
  json status;
  if (authorizer == nullptr) {
    status = {{"allowed", true}};
  } else {
    const auth::Decision d = authorizer->Authorize(a);
    status = {{"allowed", d.allowed}};
    if (!d.reason.empty()) status["reason"] = d.reason;
  }
  body["status"] = status;
  return {201, "application/json", Reply(std::move(body), "SelfSubjectAccessReview").dump()};
}

ApiResponse RulesReview(const ApiRequest& r, json body, const auth::RbacAuthorizer* authorizer) {
  const json spec = body.value("spec", json::object());
  const std::string ns = Str(spec, "namespace");
  json resource_rules = json::array();
  json url_rules = json::array();
  std::string error;
  if (authorizer == nullptr) {
    resource_rules.push_back({{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}});
    url_rules.push_back({{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}});
  } else {
    const auth::UserRules rules = authorizer->Rules(r.user, ns);
    for (const auto& rule : rules.resource_rules) {
      resource_rules.push_back({{"verbs", rule.verbs},
                                {"apiGroups", rule.api_groups},
                                {"resources", rule.resources},
                                {"resourceNames", rule.resource_names}});
    }
    for (const auto& rule : rules.non_resource_rules) {
      url_rules.push_back({{"verbs", rule.verbs}, {"nonResourceURLs", rule.non_resource_urls}});
    }
    for (const auto& e : rules.errors) error += (error.empty() ? "" : ", ") + e;
  }
  json status = {{"resourceRules", resource_rules},
                 {"nonResourceRules", url_rules},
                 {"incomplete", !error.empty()}};
  if (!error.empty()) status["evaluationError"] = error;
  body["status"] = status;
  return {201, "application/json", Reply(std::move(body), "SelfSubjectRulesReview").dump()};
}

}  // namespace

std::optional<ApiResponse> HandleAccessReview(const ApiRequest& request, const std::string& path,
                                              const auth::RbacAuthorizer* authorizer) {
  if (path.rfind(kPrefix, 0) != 0) return std::nullopt;
  const std::string resource = path.substr(sizeof(kPrefix) - 1);
  const bool access = resource == "selfsubjectaccessreviews";
  if (!access && resource != "selfsubjectrulesreviews") return std::nullopt;
  if (request.method != "POST") {
    return ErrorResponse(
        MakeError(405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource"));
  }
  auto body = ParseReview(request);
  if (!body) return ErrorResponse(BadRequest("the request body must be one JSON or YAML object"));
  return access ? AccessReview(request, std::move(*body), authorizer)
                : RulesReview(request, std::move(*body), authorizer);
}

}  // namespace muster::server
