#include "server/openapi_schemas.h"

#include <string_view>

namespace muster::server {
namespace {

using nlohmann::json;

constexpr const char* kApiVersionDoc =
    "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject "
    "unrecognized values.";
constexpr const char* kKindDoc =
    "Kind is a string value representing the REST resource this object represents. "
    "Servers may infer this from the endpoint the client submits requests to. Cannot be "
    "updated. In CamelCase.";
constexpr const char* kMetadataDoc =
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata";
constexpr const char* kSpecDoc = "The desired state, as the user writes it.";
constexpr const char* kStatusDoc =
    "The observed state, written by muster (read-only for users; the status subresource).";

json Open(json schema) {
  schema["x-kubernetes-preserve-unknown-fields"] = true;
  return schema;
}

json TypeSchema(std::string_view type) {
  if (type == "object") return Open({{"type", "object"}});
  if (type == "map") return {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}};
  if (type == "quantity") {
    return {{"anyOf", {{{"type", "integer"}}, {{"type", "string"}}}},
            {"x-kubernetes-int-or-string", true}};
  }
  if (type == "[]string") return {{"type", "array"}, {"items", {{"type", "string"}}}};
  if (type == "[]object") return {{"type", "array"}, {"items", Open({{"type", "object"}})}};
  return {{"type", std::string(type)}};
}

// The schema node the next path segment lives in: an object's properties, entering
// an array's items for "name[]".
json& Child(json& node, std::string_view segment) {
  const bool array = segment.size() > 2 && segment.substr(segment.size() - 2) == "[]";
  const std::string name(array ? segment.substr(0, segment.size() - 2) : segment);
  json& props = node["properties"];
  if (!props.contains(name)) props[name] = array ? TypeSchema("[]object") : TypeSchema("object");
  json& child = props[name];
  if (!array) return child;
  if (!child.contains("items")) child["items"] = Open({{"type", "object"}});
  return child["items"];
}

void Insert(json& root, const FieldDoc& f) {
  std::string_view path = f.path;
  json* node = &root;
  for (size_t dot; (dot = path.find('.')) != std::string_view::npos;) {
    node = &Child(*node, path.substr(0, dot));
    path.remove_prefix(dot + 1);
  }
  json& props = (*node)["properties"];
  const std::string name(path);
  json field = TypeSchema(f.type);
  // A field documented after its own sub-fields keeps them.
  if (props.contains(name)) {
    for (const char* k : {"properties", "items"}) {
      if (props[name].contains(k)) field[k] = props[name][k];
    }
  }
  field["description"] = f.description;
  props[name] = std::move(field);
}

const KindDoc* FindDoc(const control::ResourceType& type) {
  for (const auto& d : KindDocs()) {
    if (type.group == d.group && type.kind == d.kind) return &d;
  }
  return nullptr;
}

// "kueue.x-k8s.io" -> "io.x-k8s.kueue", as CRD schemas are named.
std::string Reversed(const std::string& group) {
  std::vector<std::string> parts;
  for (size_t pos = 0;;) {
    const size_t dot = group.find('.', pos);
    parts.push_back(group.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos));
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : ".") + *it;
  return out;
}

}  // namespace

bool IsBuiltInGroup(const std::string& group) {
  for (const char* g : {"", "batch", "scheduling.k8s.io", "coordination.k8s.io",
                        "rbac.authorization.k8s.io", "authorization.k8s.io"}) {
    if (group == g) return true;
  }
  return false;
}

std::string SchemaName(const control::ResourceType& type, const std::string& version) {
  std::string prefix;
  if (type.group.empty()) {
    prefix = "io.k8s.api.core";
  } else if (IsBuiltInGroup(type.group)) {
    // Built-in groups: k8s.io/api's package names ("rbac.authorization.k8s.io" -> rbac).
    prefix = "io.k8s.api." + type.group.substr(0, type.group.find('.'));
  } else {
    prefix = Reversed(type.group);
  }
  return prefix + "." + version + "." + type.kind;
}

json ObjectMetaSchema() {
  json props = {
      {"name", {{"type", "string"}, {"description", "Name must be unique within a namespace."}}},
      {"namespace",
       {{"type", "string"},
        {"description",
         "Namespace defines the space within which each name "
         "must be unique. Empty for cluster-scoped objects."}}},
      {"labels", TypeSchema("map")},
      {"annotations", TypeSchema("map")},
      {"uid",
       {{"type", "string"}, {"description", "Set by the server; unique in time and space."}}},
      {"resourceVersion",
       {{"type", "string"},
        {"description",
         "The version of this object the server holds, for optimistic concurrency "
         "and watches. Opaque to clients."}}},
      {"generation",
       {{"type", "integer"}, {"description", "A sequence number of the desired state (spec)."}}},
      {"creationTimestamp",
       {{"type", "string"}, {"format", "date-time"}, {"description", "Set by the server."}}},
      {"ownerReferences",
       {{"type", "array"},
        {"items", Open({{"type", "object"}})},
        {"description",
         "Objects this object depends on; it is garbage collected when they are "
         "all gone."}}},
      {"finalizers", TypeSchema("[]string")},
  };
  props["labels"]["description"] = "Map of string keys and values for selecting objects.";
  props["annotations"]["description"] = "Unstructured key value map set by tools and users.";
  props["finalizers"]["description"] = "Must be empty before the object is deleted.";
  return Open({{"type", "object"},
               {"description", "ObjectMeta is metadata that all persisted resources must have."},
               {"properties", std::move(props)}});
}

json KindSchema(const control::ResourceType& type, const std::string& version) {
  const KindDoc* doc = FindDoc(type);
  json root =
      Open({{"type", "object"}, {"description", doc != nullptr ? doc->description : type.kind}});
  root["properties"] = {
      {"apiVersion", {{"type", "string"}, {"description", kApiVersionDoc}}},
      {"kind", {{"type", "string"}, {"description", kKindDoc}}},
      {"metadata",
       {{"allOf", {{{"$ref", std::string("#/components/schemas/") + kObjectMetaSchema}}}},
        {"description", kMetadataDoc}}},
  };
  if (doc != nullptr) {
    for (const auto& f : doc->fields) {
      if (*f.version == '\0' || version == f.version) Insert(root, f);
    }
  }
  // Every stored kind has a spec or data of its own; say what spec and status are
  // where the table does not describe them.
  auto& props = root["properties"];
  if (props.contains("spec") && !props["spec"].contains("description")) {
    props["spec"]["description"] = kSpecDoc;
  }
  if (type.has_status) {
    if (!props.contains("status")) props["status"] = TypeSchema("object");
    if (!props["status"].contains("description")) props["status"]["description"] = kStatusDoc;
  }
  root["x-kubernetes-group-version-kind"] =
      json::array({{{"group", type.group}, {"kind", type.kind}, {"version", version}}});
  return root;
}

json CrdSchema(const control::ResourceType& type, const std::string& version) {
  json schema = KindSchema(type, version);
  schema.erase("x-kubernetes-group-version-kind");
  schema["properties"]["metadata"] = {{"type", "object"}};
  return schema;
}

}  // namespace muster::server
