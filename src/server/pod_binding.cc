#include "server/pod_binding.h"

#include <vector>

#include "server/api_status.h"
#include "server/patch_request.h"

namespace muster::server {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* a, const char* b) {
  if (!object.is_object() || !object.contains(a) || !object[a].is_object()) return "";
  const json& inner = object[a];
  if (!inner.contains(b) || !inner[b].is_string()) return "";
  return inner[b].get<std::string>();
}

ApiError BindConflict(const std::string& pod, const std::string& why) {
  ApiError e = MakeError(409, "Conflict",
                         "Operation cannot be fulfilled on pods/binding \"" + pod + "\": " + why);
  e.name = pod;
  e.kind = "pods/binding";
  return e;
}

// PodScheduled=True, replacing an earlier PodScheduled condition (False while pending).
void SetScheduledCondition(json& pod) {
  if (!pod.contains("status") || !pod["status"].is_object()) pod["status"] = json::object();
  json& status = pod["status"];
  if (!status.contains("conditions") || !status["conditions"].is_array()) {
    status["conditions"] = json::array();
  }
  json kept = json::array();
  for (auto& c : status["conditions"]) {
    if (!(c.is_object() && c.value("type", "") == "PodScheduled")) kept.push_back(std::move(c));
  }
  kept.push_back({{"type", "PodScheduled"},
                  {"status", "True"},
                  {"lastProbeTime", nullptr},
                  {"lastTransitionTime", NowRfc3339()}});
  status["conditions"] = std::move(kept);
}

}  // namespace

std::optional<PodBindingTarget> MatchPodBindingPath(const std::string& path) {
  return MatchPodSubresourcePath(path, "binding");
}

ApiResult HandlePodBinding(ObjectStore& store, const PodBindingTarget& target,
                           const ApiRequest& request) {
  if (request.method != "POST") {
    return ErrorResponse(MethodNotAllowed("the server does not allow this method on pods/binding"));
  }
  json binding = json::parse(request.body, nullptr, false);
  if (binding.is_discarded() || !binding.is_object()) {
    return ErrorResponse(BadRequest("the request body must be a v1 Binding object"));
  }
  if (binding.contains("kind") && binding["kind"] != "Binding") {
    return ErrorResponse(BadRequest("the kind of the object must be Binding"));
  }
  const std::string name = StringAt(binding, "metadata", "name");
  // Upstream requires the name; muster's own server accepts a Binding that leaves it out.
  if (!name.empty() && name != target.name) {
    return ErrorResponse(BadRequest("name in URL does not match name in Binding object"));
  }
  const std::string ns = StringAt(binding, "metadata", "namespace");
  if (!ns.empty() && ns != target.namespace_) {
    return ErrorResponse(BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  const std::string target_kind = StringAt(binding, "target", "kind");
  const std::string node = StringAt(binding, "target", "name");
  std::vector<StatusCause> causes;
  if (!target_kind.empty() && target_kind != "Node") {
    causes.push_back({"FieldValueNotSupported", "must be empty or 'Node'", "target.kind"});
  }
  if (node.empty()) causes.push_back({"FieldValueRequired", "Required value", "target.name"});
  if (!causes.empty()) {
    ApiError e = MakeError(422, "Invalid", "Binding \"" + target.name + "\" is invalid");
    e.name = target.name;
    e.kind = "Binding";
    e.causes = std::move(causes);
    return ErrorResponse(e);
  }
  const std::string uid = StringAt(binding, "metadata", "uid");
  json annotations = json::object();
  if (binding["metadata"].is_object() && binding["metadata"].contains("annotations") &&
      binding["metadata"]["annotations"].is_object()) {
    annotations = binding["metadata"]["annotations"];
  }
  const bool dry_run = request.query.count("dryRun") > 0;

  std::optional<ApiError> refused;
  auto assign = [&](const json& current) -> Result<json> {
    const std::string bound = current.value("spec", json::object()).value("nodeName", "");
    if (!uid.empty() && StringAt(current, "metadata", "uid") != uid) {
      refused = BindConflict(target.name,
                             "Precondition failed: UID in precondition: " + uid +
                                 ", UID in object meta: " + StringAt(current, "metadata", "uid"));
    } else if (!bound.empty()) {
      refused = BindConflict(
          target.name, "pod " + target.name + " is already assigned to node \"" + bound + "\"");
    } else if (current.value("spec", json::object()).contains("schedulingGates") &&
               !current["spec"]["schedulingGates"].empty()) {
      refused =
          BindConflict(target.name, "pod " + target.name + " has non-empty .spec.schedulingGates");
    }
    if (refused) return FailedPrecondition(refused->message);
    json next = current;
    if (!next.contains("spec") || !next["spec"].is_object()) next["spec"] = json::object();
    next["spec"]["nodeName"] = node;
    if (!annotations.empty()) {
      json& md = next["metadata"];
      if (!md.contains("annotations") || !md["annotations"].is_object()) {
        md["annotations"] = json::object();
      }
      for (const auto& [k, v] : annotations.items()) md["annotations"][k] = v;
    }
    SetScheduledCondition(next);
    return next;
  };
  const control::ObjectKey key{"pods", target.namespace_, target.name};
  Status status = Status::Ok();
  if (dry_run) {
    auto current = store.Get(key);
    status = current.ok() ? assign(*current).status() : current.status();
  } else {
    status = store.Mutate(key, assign, WriteScope::kAll).status();
  }
  if (refused) return ErrorResponse(*refused);
  if (!status.ok()) return ErrorResponse(FromStatus(status, "pods", "", target.name));
  json success = {{"kind", "Status"},
                  {"apiVersion", "v1"},
                  {"metadata", json::object()},
                  {"status", "Success"},
                  {"code", 201}};
  return ApiResponse{201, "application/json", ToWire(success)};
}

}  // namespace muster::server
