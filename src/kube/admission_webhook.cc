#include "kube/admission_webhook.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "control/job_templates.h"
#include "control/json_fields.h"
#include "control/workload_objects.h"
#include "core/base64.h"

namespace muster::kube {
namespace {

using nlohmann::json;

constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";

enum class SuspendField {
  kSpecSuspend,       // spec.suspend
  kRunPolicySuspend,  // spec.runPolicy.suspend (Kubeflow's common RunPolicy)
  kNone,              // the kind has no suspend field
};

struct ManagedKind {
  std::string_view group;
  std::string_view kind;
  SuspendField suspend;
};

// The job kinds muster turns into Workloads. Matched on group and kind, not version,
// so a served version muster has not seen yet is still suspended.
constexpr std::array<ManagedKind, 6> kManagedKinds{{
    {"batch", "Job", SuspendField::kSpecSuspend},
    {"jobset.x-k8s.io", "JobSet", SuspendField::kSpecSuspend},
    {"kubeflow.org", "PyTorchJob", SuspendField::kRunPolicySuspend},
    {"kubeflow.org", "TFJob", SuspendField::kRunPolicySuspend},
    {"kubeflow.org", "MPIJob", SuspendField::kRunPolicySuspend},
    // Volcano Jobs have no suspend field and need none: Volcano's job controller creates
    // the pods only once the job's PodGroup is Inqueue ("delay pod creation"), which is
    // the scheduler's (muster's) call, and muster binds them only on admission. So they
    // are allowed unchanged and still wait for muster.
    {"batch.volcano.sh", "Job", SuspendField::kNone},
}};

const ManagedKind* FindManagedKind(std::string_view group, std::string_view kind) {
  for (const ManagedKind& k : kManagedKinds) {
    if (k.group == group && k.kind == kind) return &k;
  }
  return nullptr;
}

// "batch/v1" -> "batch"; "v1" (the core group) -> "".
std::string_view GroupOf(std::string_view api_version) {
  const size_t slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

const json* ObjectAt(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

// The API server requires the response's apiVersion to be the request's.
json Review(const std::string& api_version, json response) {
  return json{{"apiVersion", api_version.empty() ? "admission.k8s.io/v1" : api_version},
              {"kind", "AdmissionReview"},
              {"response", std::move(response)}};
}

json Allowed(const std::string& api_version, const std::string& uid) {
  return Review(api_version, json{{"uid", uid}, {"allowed", true}});
}

json Denied(const std::string& api_version, const std::string& uid, const std::string& why) {
  return Review(api_version, json{{"uid", uid},
                                  {"allowed", false},
                                  {"status",
                                   {{"status", "Failure"},
                                    {"reason", "BadRequest"},
                                    {"code", 400},
                                    {"message", "muster admission webhook: " + why}}}});
}

// The controlling owner is a job muster manages: that owner is the workload (a JobSet's
// child Jobs, an MPIJob's launcher Job), so the child must run when the owner does.
bool ControlledByManagedJob(const json& metadata) {
  auto refs = metadata.find("ownerReferences");
  if (refs == metadata.end() || !refs->is_array()) return false;
  for (const json& ref : *refs) {
    if (!ref.is_object()) continue;
    auto controller = ref.find("controller");
    if (controller == ref.end() || !controller->is_boolean() || !controller->get<bool>()) continue;
    return FindManagedKind(GroupOf(control::StringField(ref, "apiVersion")),
                           control::StringField(ref, "kind")) != nullptr;
  }
  return false;
}

bool NamesQueue(const json& metadata) {
  const json* labels = ObjectAt(metadata, "labels");
  return labels != nullptr && !control::StringField(*labels, kQueueNameLabel).empty();
}

// The JSON patch that sets `field` (a path below spec) to true, adding the objects on
// the way that the job lacks. Empty with `why` set when the job's shape is wrong.
json SuspendPatch(const json& object, SuspendField field, std::string& why) {
  const json* spec = ObjectAt(object, "spec");
  if (spec == nullptr) {
    if (object.contains("spec")) {
      why = "object.spec is not an object";
      return json::array();
    }
    json value = field == SuspendField::kSpecSuspend ? json{{"suspend", true}}
                                                     : json{{"runPolicy", {{"suspend", true}}}};
    return json::array({{{"op", "add"}, {"path", "/spec"}, {"value", std::move(value)}}});
  }
  const json* holder = spec;
  std::string path = "/spec";
  if (field == SuspendField::kRunPolicySuspend) {
    holder = ObjectAt(*spec, "runPolicy");
    if (holder == nullptr) {
      if (spec->contains("runPolicy")) {
        why = "object.spec.runPolicy is not an object";
        return json::array();
      }
      return json::array(
          {{{"op", "add"}, {"path", "/spec/runPolicy"}, {"value", {{"suspend", true}}}}});
    }
    path = "/spec/runPolicy";
  }
  auto suspend = holder->find("suspend");
  if (suspend != holder->end() && suspend->is_boolean() && suspend->get<bool>()) {
    return json::array();  // already suspended: nothing to change
  }
  // "add" replaces an existing member, so this also turns suspend: false into true.
  return json::array({{{"op", "add"}, {"path", path + "/suspend"}, {"value", true}}});
}

// "add" operations that give every pod template of `object` naming no scheduler
// `scheduler_name` (WebhookOptions::scheduler_name).
void AddSchedulerName(const json& object, const std::string& scheduler_name, json& patch) {
  if (scheduler_name.empty()) return;
  for (const std::string& path : control::PodTemplatePaths(object)) {
    json::json_pointer pointer;
    try {
      pointer = json::json_pointer(path + "/spec");
    } catch (const json::exception&) {
      continue;
    }
    if (!object.contains(pointer) || !object.at(pointer).is_object()) continue;
    const json& pod_spec = object.at(pointer);
    auto name = pod_spec.find("schedulerName");
    if (name != pod_spec.end() && name->is_string() && !name->get<std::string>().empty() &&
        name->get<std::string>() != "default-scheduler")
      continue;  // it names a scheduler: that one places its pods
    patch.push_back(
        {{"op", "add"}, {"path", path + "/spec/schedulerName"}, {"value", scheduler_name}});
  }
}

// Allowed, with `patch` (a JSON patch) when it changes anything.
json AllowedWith(const std::string& api_version, const std::string& uid, const json& patch) {
  json review_out = Allowed(api_version, uid);
  if (patch.empty()) return review_out;
  review_out["response"]["patchType"] = "JSONPatch";
  review_out["response"]["patch"] = EncodeBase64(patch.dump());
  return review_out;
}

// Kueue's ClusterQueue and ResourceFlavor webhooks: the resource-in-use finalizer, so
// that deleting the queue waits for what it admitted, and deleting the flavor for the
// ClusterQueues that name it (the reconciler takes it off).
json ResourceInUsePatch(const json& metadata) {
  const json finalizer = control::kResourceInUseFinalizer;
  auto list = metadata.find("finalizers");
  if (list == metadata.end() || !list->is_array()) {
    return json::array(
        {{{"op", "add"}, {"path", "/metadata/finalizers"}, {"value", json::array({finalizer})}}});
  }
  if (std::find(list->begin(), list->end(), finalizer) != list->end()) return json::array();
  return json::array({{{"op", "add"}, {"path", "/metadata/finalizers/-"}, {"value", finalizer}}});
}

json Decide(const json& review, const WebhookOptions& options) {
  if (!review.is_object()) return Denied("", "", "the AdmissionReview is not a JSON object");
  const std::string api_version = control::StringField(review, "apiVersion");
  if (api_version != "admission.k8s.io/v1" && api_version != "admission.k8s.io/v1beta1") {
    return Denied("", "", "apiVersion must be admission.k8s.io/v1, got \"" + api_version + "\"");
  }
  if (control::StringField(review, "kind") != "AdmissionReview") {
    return Denied(api_version, "", "kind must be AdmissionReview");
  }
  const json* request = ObjectAt(review, "request");
  if (request == nullptr) return Denied(api_version, "", "request is missing");
  const std::string uid = control::StringField(*request, "uid");
  if (uid.empty()) return Denied(api_version, "", "request.uid is missing");
  const std::string operation = control::StringField(*request, "operation");
  if (operation.empty()) return Denied(api_version, uid, "request.operation is missing");
  // Only creation is defaulted, as in Kueue: later suspends and resumes are muster's.
  if (operation != "CREATE") return Allowed(api_version, uid);

  const json* object = ObjectAt(*request, "object");
  if (object == nullptr) return Denied(api_version, uid, "request.object is missing");
  std::string group, kind;
  if (const json* gvk = ObjectAt(*request, "kind")) {
    group = control::StringField(*gvk, "group");
    kind = control::StringField(*gvk, "kind");
  } else {
    group = GroupOf(control::StringField(*object, "apiVersion"));
    kind = control::StringField(*object, "kind");
  }
  if (kind.empty()) return Denied(api_version, uid, "request.kind.kind is missing");
  const json* metadata = ObjectAt(*object, "metadata");
  if (metadata == nullptr) return Denied(api_version, uid, "request.object.metadata is missing");

  if (group == "kueue.x-k8s.io" && (kind == "ClusterQueue" || kind == "ResourceFlavor"))
    return AllowedWith(api_version, uid, ResourceInUsePatch(*metadata));
  const ManagedKind* managed = FindManagedKind(group, kind);
  // A kind muster does not manage (a webhook rule broader than muster's kinds) is let
  // through: refusing it would block that kind cluster-wide under failurePolicy Fail.
  if (managed == nullptr || managed->suspend == SuspendField::kNone) {
    return Allowed(api_version, uid);
  }
  if (ControlledByManagedJob(*metadata)) return Allowed(api_version, uid);
  if (!NamesQueue(*metadata) && !options.manage_jobs_without_queue_name) {
    return Allowed(api_version, uid);
  }
  std::string why;
  json patch = SuspendPatch(*object, managed->suspend, why);
  if (!why.empty()) return Denied(api_version, uid, why);
  AddSchedulerName(*object, options.scheduler_name, patch);
  return AllowedWith(api_version, uid, patch);
}

}  // namespace

json ReviewJobCreate(const json& admission_review, const WebhookOptions& options) {
  try {
    return Decide(admission_review, options);
  } catch (const json::exception& e) {
    // Decide checks every type it reads; this is the last line so that a shape it did
    // not foresee still gets an answer, not a crashed webhook.
    return Denied("", "", std::string("malformed AdmissionReview: ") + e.what());
  }
}

json ReviewJobCreateBody(std::string_view body, const WebhookOptions& options) {
  json review = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (review.is_discarded()) return Denied("", "", "the request body is not JSON");
  return ReviewJobCreate(review, options);
}

}  // namespace muster::kube
