#include "kube/api_writer.h"

#include <fmt/format.h>

#include <string_view>
#include <unordered_map>

#include "kube/object_parser.h"

namespace muster::kube {
namespace {

using json = nlohmann::json;

// Read in place: value("metadata", {}) would copy the whole metadata (labels,
// annotations, owner references) of every object written.
std::string MetaField(const json& object, const char* field) {
  if (!object.is_object()) return "";
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  auto it = md->find(field);
  return it != md->end() && it->is_string() ? it->get<std::string>() : "";
}

// A JSON string literal of `s`: the Binding is written by hand, not built as a DOM.
void AppendQuoted(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  out += '"';
}

Status StatusFromResponse(const HttpResponse& r, const std::string& what) {
  if (r.code == 0) return Status(StatusCode::kUnavailable, what + ": " + r.error);
  std::string message;
  json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object()) message = body.value("message", "");
  if (message.empty()) message = r.body.substr(0, 200);
  message = what + ": HTTP " + std::to_string(r.code) + ": " + message;
  switch (r.code) {
    case 404:
      return NotFound(message);
    case 409:
      return body.is_object() && body.value("reason", "") == "AlreadyExists"
                 ? AlreadyExists(message)
                 : Conflict(message);
    case 400:
    case 422:
      return InvalidArgument(message);
    case 410:
      return FailedPrecondition(message);
    default:
      return Status(r.code >= 500 ? StatusCode::kUnavailable : StatusCode::kFailedPrecondition,
                    message);
  }
}

}  // namespace

const control::ResourceType* TypeOfResource(const std::string& resource) {
  // Every write looks its type up: index the store keys once instead of building each
  // type's key per call.
  static const auto* const kByKey = [] {
    auto* m = new std::unordered_map<std::string, const control::ResourceType*>();
    for (const auto& t : control::ResourceTypes()) m->emplace(t.StoreKey(), &t);
    return m;
  }();
  auto it = kByKey->find(resource);
  return it == kByKey->end() ? nullptr : it->second;
}

Result<std::string> ApiWriter::Path(const std::string& resource, const std::string& namespace_,
                                    const std::string& name, const std::string& sub) {
  const control::ResourceType* type = TypeOfResource(resource);
  if (type == nullptr) return InvalidArgument("unknown resource " + resource);
  std::string path = ApiPrefix(type->group, type->versions.front());
  if (type->namespaced && !namespace_.empty()) path += "/namespaces/" + namespace_;
  path += "/" + type->plural;
  if (!name.empty()) path += "/" + name;
  if (!sub.empty()) path += "/" + sub;
  return path;
}

Status ApiWriter::SendIgnoringBody(const char* method, const std::string& path,
                                   const std::string& body, const char* content_type) {
  HttpResponse r = client_.Request(method, path, body, content_type);
  return r.ok() ? Status() : StatusFromResponse(r, std::string(method) + " " + path);
}

Result<json> ApiWriter::Send(const char* method, const std::string& path, const std::string& body,
                             const char* content_type) {
  HttpResponse r = client_.Request(method, path, body, content_type);
  if (!r.ok()) return StatusFromResponse(r, std::string(method) + " " + path);
  if (r.body.empty()) return json::object();
  json out = ParseApiObject(r.body);  // the object written, without managedFields
  if (out.is_discarded()) return Status(StatusCode::kUnavailable, path + ": response is not JSON");
  return out;
}

Result<json> ApiWriter::Get(const std::string& resource, const std::string& ns,
                            const std::string& name) {
  auto path = Path(resource, ns, name);
  if (!path.ok()) return path.status();
  return Send("GET", *path, "", "application/json");
}

Result<json> ApiWriter::Create(const std::string& resource, const json& object) {
  auto path = Path(resource, MetaField(object, "namespace"));
  if (!path.ok()) return path.status();
  return Send("POST", *path, object.dump(), "application/json");
}

Result<json> ApiWriter::Replace(const std::string& resource, const json& object) {
  auto path = Path(resource, MetaField(object, "namespace"), MetaField(object, "name"));
  if (!path.ok()) return path.status();
  return Send("PUT", *path, object.dump(), "application/json");
}

Result<json> ApiWriter::ReplaceStatus(const std::string& resource, const json& object) {
  auto path = Path(resource, MetaField(object, "namespace"), MetaField(object, "name"), "status");
  if (!path.ok()) return path.status();
  return Send("PUT", *path, object.dump(), "application/json");
}

Result<json> ApiWriter::MergePatchStatus(const std::string& resource, const std::string& ns,
                                         const std::string& name, const json& patch) {
  auto path = Path(resource, ns, name, "status");
  if (!path.ok()) return path.status();
  return Send("PATCH", *path, patch.dump(), "application/merge-patch+json");
}

Result<json> ApiWriter::JsonPatch(const std::string& resource, const std::string& ns,
                                  const std::string& name, const json& patch) {
  auto path = Path(resource, ns, name);
  if (!path.ok()) return path.status();
  return Send("PATCH", *path, patch.dump(), "application/json-patch+json");
}

Status ApiWriter::Delete(const std::string& resource, const std::string& ns,
                         const std::string& name) {
  auto path = Path(resource, ns, name);
  if (!path.ok()) return path.status();
  return SendIgnoringBody("DELETE", *path, "", "application/json");
}

Status ApiWriter::Bind(const std::string& ns, const std::string& pod, const std::string& node) {
  // One per pod: the body is formatted, and the answer (the Status or the pod) unread.
  std::string binding;
  binding.reserve(160 + ns.size() + pod.size() + node.size());
  binding += R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":)";
  AppendQuoted(binding, pod);
  binding += R"(,"namespace":)";
  AppendQuoted(binding, ns);
  binding += R"(},"target":{"apiVersion":"v1","kind":"Node","name":)";
  AppendQuoted(binding, node);
  binding += "}}";
  auto path = Path("pods", ns, pod, "binding");
  if (!path.ok()) return path.status();
  return SendIgnoringBody("POST", *path, binding, "application/json");
}

Status ApiWriter::CreateEvent(const json& event, bool repeat) {
  if (repeat) {
    auto path = Path("events", MetaField(event, "namespace"), MetaField(event, "name"));
    if (!path.ok()) return path.status();
    json patch = {{"count", event.value("count", 1)},
                  {"lastTimestamp", event.value("lastTimestamp", json())},
                  {"message", event.value("message", "")}};
    Status s = SendIgnoringBody("PATCH", *path, patch.dump(), "application/merge-patch+json");
    if (s.ok() || s.code() != StatusCode::kNotFound) return s;
  }
  auto path = Path("events", MetaField(event, "namespace"));
  if (!path.ok()) return path.status();
  return SendIgnoringBody("POST", *path, event.dump(), "application/json");
}

}  // namespace muster::kube
