#include "server/api_handler.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <random>

#include "api/decode.h"
#include "control/store_snapshot.h"
#include "server/access_review.h"
#include "server/api_handler_internal.h"
#include "server/api_status.h"
#include "server/auth/owner.h"
#include "server/auth/rbac_authorizer.h"
#include "server/batch_job_defaults.h"
#include "server/core_defaults.h"
#include "server/core_validation.h"
#include "server/crd_catalog.h"
#include "server/create_admission.h"
#include "server/cronjob_controller.h"
#include "server/delete_request.h"
#include "server/discovery.h"
#include "server/kueue_defaults.h"
#include "server/kueue_visibility.h"
#include "server/list_response.h"
#include "server/managed_fields.h"
#include "server/meta_validation.h"
#include "server/metrics.h"
#include "server/namespace_finalize.h"
#include "server/namespace_lifecycle.h"
#include "server/openapi.h"
#include "server/patch_request.h"
#include "server/patch_schema.h"
#include "server/path_segments.h"
#include "server/pod_binding.h"
#include "server/pod_exec.h"
#include "server/pod_log.h"
#include "server/pod_metrics.h"
#include "server/priority_classes.h"
#include "server/protobuf_body.h"
#include "server/rbac_escalation.h"
#include "server/rbac_validation.h"
#include "server/request_body.h"
#include "server/request_target.h"
#include "server/store_routes.h"
#include "server/table_printer.h"
#include "server/view_routes.h"

namespace muster::server {

using nlohmann::json;

ApiResponse JsonResponse(int code, const json& body) {
  return {code, "application/json", ToWire(body)};
}
ApiResponse ErrorResponse(const ApiError& e) { return JsonResponse(e.code, e.ToJson()); }
std::string QueryParam(const ApiRequest& r, const std::string& key) {
  auto it = r.query.find(key);
  return it == r.query.end() ? "" : it->second;
}
Result<int64_t> ParseIntParam(const std::string& key, const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument("invalid value \"" + text + "\" for query parameter " + key +
                           ": must be an integer");
  }
  return v;
}
Result<std::optional<int64_t>> IntQueryParam(const ApiRequest& r, const std::string& key) {
  auto it = r.query.find(key);
  if (it == r.query.end()) return std::optional<int64_t>();
  auto v = ParseIntParam(key, it->second);
  if (!v.ok()) return v.status();
  return std::optional<int64_t>(*v);
}
bool IsTrueParam(const std::string& v) { return v == "1" || v == "true" || v == "True"; }

namespace {

// Warnings about the fields a written object has that muster stores but does not act
// on: the core kinds' and `field_warnings`, those of ValidateObject's decode.
std::vector<std::string> WriteWarnings(const control::ResourceType& type, const json& object,
                                       const std::vector<std::string>& field_warnings) {
  std::vector<std::string> warnings = CoreWarnings(type, object);
  warnings.insert(warnings.end(), field_warnings.begin(), field_warnings.end());
  return warnings;
}

// A create's answer: the stored text itself when it is the object as presented in the
// requested version (the same bytes ToWire writes: keys sorted, compact, and valid
// UTF-8 since the store wrote it), so it is not serialised a second time.
ApiResponse CreatedResponse(const control::ResourceType& type, const std::string& version,
                            json created, const ObjectTextCache::Entry& text,
                            const std::vector<std::string>& field_warnings) {
  if (text == nullptr || text->api_version != type.ApiVersion(version) || text->kind != type.kind) {
    return api_internal::Written(201, type, PresentObject(std::move(created), type, version),
                                 field_warnings);
  }
  ApiResponse response{201, "application/json", text->text};
  response.warnings = WriteWarnings(type, created, field_warnings);
  return response;
}
ApiResponse TextResponse(int code, std::string text) {
  return {code, "text/plain; charset=utf-8", std::move(text)};
}

bool WantsTable(const ApiRequest& r) { return r.accept.find("as=Table") != std::string::npos; }

IncludeObject ParseInclude(const ApiRequest& r) {
  std::string v = QueryParam(r, "includeObject");
  if (v == "None") return IncludeObject::kNone;
  if (v == "Object") return IncludeObject::kObject;
  return IncludeObject::kMetadata;
}

int64_t NowUnix() { return static_cast<int64_t>(std::time(nullptr)); }

NameSuffixSource name_suffix_source = nullptr;  // tests only

std::string RandomSuffix() {
  if (name_suffix_source != nullptr) return name_suffix_source();
  static thread_local std::mt19937 rng(std::random_device{}());
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s += kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
  return s;
}

void EnsureNamespace(ObjectStore& store, const std::string& ns) {
  // Upstream rejects writes into a missing namespace; muster creates it instead,
  // so `kubectl apply -f` of a directory works in any order.
  if (ns.empty() || store.Get({"namespaces", "", ns}).ok()) return;
  store.Create({"namespaces", "", ns}, NewNamespace(ns));
}

ApiResult HandleWatch(ObjectStore& store, const RequestTarget& t, const ApiRequest& r,
                      Selectors sel) {
  WatchFilter f;
  f.type = t.type;
  f.version = t.version;
  f.namespace_ = t.namespace_;
  f.labels = std::move(sel.labels);
  f.fields = std::move(sel.fields);
  f.as_table = WantsTable(r);
  f.include = ParseInclude(r);
  f.bookmarks = IsTrueParam(QueryParam(r, "allowWatchBookmarks"));
  std::string rv_text = QueryParam(r, "resourceVersion");
  int64_t from = 0;
  std::vector<json> initial;
  if (rv_text.empty() || rv_text == "0") {
    // No starting point: the current objects as ADDED events, then changes.
    auto list = store.List(t.type->StoreKey(), t.namespace_);
    if (!list.ok()) return api_internal::StoreError(list.status(), t, "");
    from = list->resource_version;
    for (auto& o : list->items) {
      if (f.labels.Matches(o) && f.fields.Matches(o)) initial.push_back(std::move(o));
    }
  } else {
    json probe = {{"metadata", {{"resourceVersion", rv_text}}}};
    std::optional<int64_t> rv = ParseResourceVersion(probe);
    if (!rv || *rv < 0) return ErrorResponse(BadRequest("invalid resourceVersion " + rv_text));
    from = *rv;
    if (auto since = store.hub().Since(from, 1); !since.ok()) {
      return ErrorResponse(Gone(since.status().message()));
    }
  }
  int64_t timeout = 1800;
  if (std::string ts = QueryParam(r, "timeoutSeconds"); !ts.empty()) {
    timeout = std::clamp<int64_t>(std::strtoll(ts.c_str(), nullptr, 10), 1, 3600);
  }
  return std::make_unique<WatchStream>(store.hub(), std::move(f), from, std::move(initial),
                                       std::chrono::seconds(timeout));
}

ApiResult HandleGet(ObjectStore& store, const RequestTarget& t, const ApiRequest& r) {
  const control::ResourceType& type = *t.type;
  TableOptions topts;
  topts.include = ParseInclude(r);
  topts.now_unix = NowUnix();
  if (!t.collection()) {
    auto obj = store.Get({type.StoreKey(), t.namespace_, t.name});
    if (!obj.ok()) return api_internal::StoreError(obj.status(), t, t.name);
    json out = PresentObject(std::move(*obj), type, t.version);
    if (WantsTable(r) && t.subresource.empty()) {
      return JsonResponse(
          200, RenderTable(type, {out}, FieldValue(out, "metadata.resourceVersion"), topts));
    }
    return JsonResponse(200, out);
  }
  auto sel = ParseSelectors(r);
  if (!sel.ok()) return ErrorResponse(BadRequest(sel.status().message()));
  if (IsTrueParam(QueryParam(r, "watch"))) return HandleWatch(store, t, r, std::move(*sel));
  if (!WantsTable(r)) {
    return ApiResponse{200, "application/json",
                       WriteListBody(store.ListText(type.StoreKey(), t.namespace_), type, t.version,
                                     sel->labels, sel->fields)};
  }
  auto list = store.List(type.StoreKey(), t.namespace_);
  if (!list.ok()) return api_internal::StoreError(list.status(), t, "");
  std::vector<json> items;
  for (auto& o : list->items) {
    if (sel->labels.Matches(o) && sel->fields.Matches(o)) {
      items.push_back(PresentObject(std::move(o), type, t.version));
    }
  }
  return JsonResponse(200, RenderTable(type, items, std::to_string(list->resource_version), topts));
}

std::optional<ApiResponse> Discovery(const std::string& path, const std::string& address) {
  std::vector<std::string> seg = PathSegments(path);
  if (seg.size() == 1 && seg[0] == "version") return JsonResponse(200, VersionInfo());
  if (seg.size() >= 2 && seg[0] == "openapi" && seg[1] == "v3") {
    if (seg.size() == 2) return JsonResponse(200, OpenApiV3Index());
    std::optional<json> doc;
    if (seg.size() == 4 && seg[2] == "api") doc = OpenApiV3Document("", seg[3]);
    if (seg.size() == 5 && seg[2] == "apis") doc = OpenApiV3Document(seg[3], seg[4]);
    if (doc) return JsonResponse(200, *doc);
    return ErrorResponse(NotFoundError("the server could not find the requested resource"));
  }
  if (seg.empty() || seg.size() > 3) return std::nullopt;
  if (seg.size() == 2 && seg[0] == "openapi" && seg[1] == "v2") {
    // An empty OpenAPI v2 document (an empty protobuf message, which is what client-go
    // asks for): kubectl falls back to v2 for a kind neither v3 nor a CRD describes,
    // and without a document it failed with "error validating data" instead of
    // upstream's "no matches for kind ... ensure CRDs are installed first".
    return ApiResponse{200, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf", ""};
  }
  if (seg[0] == "openapi") {
    return ErrorResponse(NotFoundError("the server could not find the requested resource"));
  }
  if (seg[0] == "api") {
    if (seg.size() == 1) return JsonResponse(200, CoreApiVersions(address));
    if (seg.size() == 2) {
      auto list = ApiResourceList("", seg[1]);
      if (list) return JsonResponse(200, *list);
      return ErrorResponse(NotFoundError("the server could not find the requested resource"));
    }
    return std::nullopt;
  }
  if (seg[0] != "apis") return std::nullopt;
  if (seg.size() == 1) return JsonResponse(200, ApiGroupList());
  auto doc = seg.size() == 2 ? ApiGroupDocument(seg[1]) : ApiResourceList(seg[1], seg[2]);
  if (doc) return JsonResponse(200, *doc);
  return ErrorResponse(NotFoundError("the server could not find the requested resource"));
}

// muster_api_requests_total labels, verbs as the Kubernetes API server's
// apiserver_request_total: GET on a collection is LIST, or WATCH with ?watch.
Labels RequestMetricLabels(const ApiRequest& r, const ApiResult& result) {
  std::string path = r.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  std::string resource;
  std::string verb = r.method;
  if (auto target = ParseRequestTarget(path); target.ok() && target->type != nullptr) {
    resource = target->type->plural;
    if (verb == "GET" && target->collection())
      verb = IsTrueParam(QueryParam(r, "watch")) ? "WATCH" : "LIST";
  }
  const auto* response = std::get_if<ApiResponse>(&result);
  const int code = response != nullptr ? response->code : 200;  // streams start with 200
  return {{"verb", verb}, {"resource", resource}, {"code", std::to_string(code)}};
}

}  // namespace

namespace api_internal {
// A write's answer, with its WriteWarnings.
ApiResponse Written(int code, const control::ResourceType& type, const json& object,
                    const std::vector<std::string>& field_warnings) {
  ApiResponse response = JsonResponse(code, object);
  response.warnings = WriteWarnings(type, object, field_warnings);
  return response;
}

// Decodes the object with the api layer, so the API accepts exactly what
// `muster validate` accepts; warnings pass. With `field_warnings`, the decode's
// warnings (fields muster does not act on, in whole or in part, or that the kind does
// not have) are named there, for the response's Warning headers, as `muster validate`
// names them. One decode per write: a Job create is not decoded twice for them.
// With `decoded`, a valid job is kept there, decoded as the scheduler decodes the
// stored object (control::DecodeJob, under its source name), which it then takes
// instead of decoding the object again.
std::optional<ApiError> ValidateObject(const control::ResourceType& t, const json& object,
                                       const std::string& name,
                                       std::vector<std::string>* field_warnings,
                                       std::shared_ptr<const control::DecodedJob>* decoded) {
  if (field_warnings != nullptr) field_warnings->clear();
  if (IsRbacType(t) || IsCoreKind(t)) {
    auto causes = IsRbacType(t) ? ValidateRbacObject(t, object) : ValidateCoreObject(t, object);
    if (causes.empty()) return std::nullopt;
    return InvalidObject(t, name, std::move(causes));
  }
  // Bare Pods (their spec is a pod template's) and CronJobs (their Jobs are the
  // workloads) are validated too, though the table's `validated` also means "engine
  // configuration", which they are not.
  if (!t.validated && !(t.group.empty() && t.kind == "Pod") && !IsCronJob(t)) return std::nullopt;
  if (decoded != nullptr) decoded->reset();
  const bool job = decoded != nullptr && control::IsJobResource(t.StoreKey());
  api::DecodeResult result;
  result.warn_unread_fields = field_warnings != nullptr;
  // The source name is in no answer (causes and warnings name the field).
  api::DecodeObject(object, job ? control::JobDecodeSource(object) : "request", result);
  std::vector<StatusCause> causes;
  for (const auto& d : result.diagnostics) {
    if (!d.warning) {
      causes.push_back({"FieldValueInvalid", d.message, d.field});
    } else if (field_warnings != nullptr) {
      // A field not read at all, or read and acted on only in part (a Trainer
      // override, a JobSet rule action, a per-index Job limit: docs/*.md say which).
      field_warnings->push_back(d.field + ": " + d.message);
    }
  }
  if (IsPriorityClassType(t)) {
    for (StatusCause& c : ValidatePriorityClass(object)) causes.push_back(std::move(c));
  }
  // What the api layer cannot check without the time zone database.
  if (causes.empty() && IsCronJob(t) && !CronJobZone(object)) {
    causes.push_back({"FieldValueInvalid",
                      "unknown time zone " + FieldValue(object, "spec.timeZone"), "spec.timeZone"});
  }
  if (causes.empty()) {
    if (job && result.manifests.jobs.size() == 1) {
      *decoded = std::make_shared<const control::DecodedJob>(
          control::DecodedJob{std::move(result.manifests.jobs.front())});
    }
    return std::nullopt;
  }
  return InvalidObject(t, name, std::move(causes));
}

ApiResponse StoreError(const Status& s, const RequestTarget& t, const std::string& name) {
  return ErrorResponse(FromStatus(s, t.type->plural, t.type->group, name));
}

// A write by a named manager (?fieldManager=, which kubectl always sends) is recorded
// in managedFields as an Update (managed_fields.h); none on a subresource, whose
// managedFields muster does not keep.
void RecordManager(const RequestTarget& t, const ApiRequest& r, const json* current, json& next) {
  const std::string manager = QueryParam(r, "fieldManager");
  if (manager.empty() || !t.subresource.empty()) return;
  RecordUpdate(current, next,
               {manager, t.type->ApiVersion(t.version), NowRfc3339(), SchemaOf(*t.type),
                t.type->has_status});
}

// `managed_fields`: what a server-side apply that creates the object records
// (patch_request.h); a POST's own managedFields are dropped.
ApiResult HandleCreate(ObjectStore& store, RequestTarget t, const ApiRequest& r,
                       const json* managed_fields) {
  const control::ResourceType& type = *t.type;
  if (!t.subresource.empty()) return ErrorResponse(MethodNotAllowed("cannot create a status"));
  auto body = ParseRequestBody(r);
  if (!body.ok()) return ErrorResponse(BadRequest(body.status().message()));
  if (type.namespaced && t.namespace_.empty()) {
    // POST to the all-namespaces path: the body names the namespace.
    t.namespace_ = body->is_object() ? FieldValue(*body, "metadata.namespace") : "";
    if (t.namespace_.empty()) t.namespace_ = "default";
  }
  auto md = CheckBodyAgainstTarget(*body, t);
  if (!md.ok()) return ErrorResponse(BadRequest(md.status().message()));
  json& meta = **md;
  // Server-set: whatever the client wrote there is replaced (auth/owner.h).
  auth::RecordOwner(*body, r.owner.empty() ? auth::OwnerName(r.user) : r.owner);
  std::string name = FieldValue(*body, "metadata.name");
  const std::string generate = FieldValue(*body, "metadata.generateName");
  for (const char* f : {"uid", "resourceVersion", "creationTimestamp", "generation",
                        "deletionTimestamp", "managedFields", "selfLink"}) {
    meta.erase(f);
  }
  if (managed_fields != nullptr) meta["managedFields"] = *managed_fields;
  // A Node's capacity lives in its status, and upstream keeps a Node's status on
  // create; other kinds with a status subresource start without one.
  if (type.has_status && type.kind != "Node") body->erase("status");
  DefaultCoreObject(type, *body, nullptr);
  DefaultKueueObject(type, *body, nullptr);
  if (auto causes = ValidateObjectMeta(type, meta); !causes.empty()) {
    return ErrorResponse(InvalidObject(type, name, std::move(causes)));
  }
  if (managed_fields == nullptr) RecordManager(t, r, nullptr, *body);
  const bool dry_run = !QueryParam(r, "dryRun").empty();
  // As kube-apiserver since 1.32 (KEP 4420): a generated name that collides is drawn
  // again, up to 8 times, before the create fails with AlreadyExists.
  const bool generated = name.empty() && !generate.empty();
  std::vector<std::string> field_warnings;
  ObjectStore::WriteExtras extras;
  // A Job's selector and pod labels carry its uid: drawn before validation decodes it.
  std::optional<JobSelectorGeneration> job_selector;
  if (IsBatchJob(type)) job_selector.emplace(extras.uid = store.DrawUid());
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (generated) name = generate + RandomSuffix();
    meta["name"] = name;
    if (IsNamespaceType(type)) LabelNamespaceName(*body);
    if (job_selector) {
      if (auto causes = job_selector->Apply(*body, name); !causes.empty())
        return ErrorResponse(InvalidObject(type, name, std::move(causes)));
    }
    // NamespaceLifecycle (an admission step before validation upstream): nothing new
    // in a namespace being deleted.
    if (auto refused = RefuseCreateInTerminatingNamespace(store, type, t.namespace_, name))
      return ErrorResponse(*refused);
    if (auto invalid = ValidateObject(type, *body, name, &field_warnings, &extras.decoded)) {
      return ErrorResponse(*invalid);
    }
    // Quota and allocation, then the write, as one step (create_admission.h).
    std::unique_lock<std::mutex> admission(CreateAdmissionMutex(), std::defer_lock);
    if (CreateNeedsAdmissionLock(store, type, t.namespace_)) admission.lock();
    if (auto refused = AdmitCreate(store, type, t.namespace_, *body))
      return ErrorResponse(*refused);
    if (dry_run) return Written(201, type, *body, field_warnings);
    if (type.namespaced) EnsureNamespace(store, t.namespace_);
    auto created = store.Create({type.StoreKey(), t.namespace_, name}, *body, &extras);
    if (created.ok())
      return CreatedResponse(type, t.version, std::move(*created), extras.text, field_warnings);
    if (created.status().code() != StatusCode::kAlreadyExists || !generated) {
      return StoreError(created.status(), t, name);
    }
  }
  return ErrorResponse(FromStatus(AlreadyExists(name), type.plural, type.group, name));
}

}  // namespace api_internal

void SetNameSuffixSourceForTesting(NameSuffixSource source) { name_suffix_source = source; }

ApiHandler::ApiHandler(ObjectStore& store, std::string server_address)
    : store_(store), server_address_(std::move(server_address)) {}

ApiResult ApiHandler::Handle(const ApiRequest& request) {
  ApiResult result = [&]() -> ApiResult {
    try {
      if (MediaType(request.content_type) == kProtobufMediaType) {
        ApiRequest converted = request;  // typed kubectl commands (protobuf_body.h)
        if (auto bad = ConvertProtobufBody(converted.content_type, converted.body))
          return ErrorResponse(*bad);
        // Left as protobuf: a kind muster does not read. One it does not serve at all
        // (`kubectl create deployment`) is a 404, not a 415, as kube-apiserver
        // resolves the route before it reads the body.
        if (MediaType(converted.content_type) == kProtobufMediaType) {
          if (auto target = ParseRequestTarget(request.path);
              !target.ok() || target->type == nullptr) {
            return ErrorResponse(NotFoundError("the server could not find the requested resource"));
          }
        }
        return Dispatch(converted);
      }
      return Dispatch(request);
    } catch (const std::exception& e) {
      // Nothing a client sends may take the server down.
      return ErrorResponse(
          MakeError(500, "InternalError", std::string("internal error: ") + e.what()));
    }
  }();
  if (metrics_ != nullptr) metrics_->Add(kApiRequestsTotal, RequestMetricLabels(request, result));
  return result;
}

ApiResult ApiHandler::Dispatch(const ApiRequest& request) {
  std::string path = request.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (authorizer_ != nullptr && !request.user.name.empty()) {
    const auto attributes = auth::AttributesOf(request.method, path, request.query, request.user);
    const auth::Decision decision = authorizer_->Authorize(attributes);
    // A list of WorkloadViews across namespaces is cut to what the user may read
    // instead (view_routes.h).
    if (!decision.allowed && !IsReaderFilteredList(attributes))
      return ErrorResponse(auth::ForbiddenError(attributes, decision.reason));
    if (auto denied = CheckRbacEscalation(store_, authorizer_, request, path))
      return ErrorResponse(*denied);
  }
  if (path == "/healthz" || path == "/livez") return TextResponse(200, "ok");
  if (path == "/metrics" && request.method == "GET") {
    if (metrics_ == nullptr) return ErrorResponse(NotFoundError("metrics are not served"));
    return ApiResponse{200, kMetricsContentType, metrics_->Render()};
  }
  if (path == "/readyz") return HandleReadyz(store_, ready_, request);
  if (path == kSnapshotPath) return HandleSnapshot(store_, data_dir_, request);
  if (auto bad = CheckRequestBody(request)) return ErrorResponse(*bad);
  if (request.method == "GET") {
    if (auto d = Discovery(path, server_address_)) return std::move(*d);
  }
  if (views_ != nullptr) {
    if (auto view = HandleViewRoute(views_, request, authorizer_)) return std::move(*view);
  }
  if (auto pending = HandleVisibilityRoute(views_, store_, request)) return std::move(*pending);
  if (auto crd = HandleCrdRoute(request)) return std::move(*crd);
  if (auto metrics = HandleMetricsRoute(store_, pod_metrics_, request)) return std::move(*metrics);
  // The log subresource is read from the executor's files, not the store.
  if (auto log = MatchPodLogPath(path)) return HandlePodLog(store_, data_dir_, *log, request);
  if (auto exec = MatchPodExecPath(path)) return HandlePodExec(store_, pod_exec_, *exec, request);
  if (auto bind = MatchPodBindingPath(path)) return HandlePodBinding(store_, *bind, request);
  if (auto review = HandleAccessReview(request, path, authorizer_)) return std::move(*review);
  auto target = ParseRequestTarget(path);
  if (!target.ok()) return ErrorResponse(NotFoundError(target.status().message()));
  const RequestTarget& t = *target;
  const std::string& m = request.method;
  if (t.subresource == "finalize") return HandleNamespaceFinalize(store_, t, request);
  if (m == "GET") return HandleGet(store_, t, request);
  if (m == "POST" && t.collection()) return api_internal::HandleCreate(store_, t, request);
  if (m == "PUT" && !t.collection()) return api_internal::HandleUpdate(store_, t, request);
  if (m == "PATCH" && !t.collection()) return api_internal::HandlePatch(store_, t, request);
  if (m == "DELETE") return HandleDelete(store_, t, request);
  return ErrorResponse(
      MethodNotAllowed("the server does not allow this method on the requested "
                       "resource"));
}

}  // namespace muster::server
